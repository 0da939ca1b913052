"""``mcp-lab``: the command line of MCP Wire Lab.

    mcp-lab serve [--db PATH]                 run the reference shop server on stdio
    mcp-lab session [--timeout S] -- CMD...   a scripted session against any server, as a transcript
    mcp-lab db build [PATH]                   build the shop database (default: the embedded one)

A wrong invocation gets one line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import NoReturn


class UsageError(Exception):
    pass


class Parser(argparse.ArgumentParser):
    """argparse, but a mistake is one line ("mcp-lab check: error: ...") and exit 2."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message} (see {self.prog} --help)")


def positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not 0 < value <= 600:
        raise argparse.ArgumentTypeError(f"expected seconds between 0 and 600, got {text!r}")
    return value


def build_parser() -> Parser:
    parser = Parser(prog="mcp-lab", description="MCP Wire Lab: learn, build and check stdio MCP servers.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser, metavar="COMMAND")

    serve = commands.add_parser("serve", help="run the reference shop server on stdin/stdout")
    serve.add_argument("--db", metavar="PATH", help="the shop database (default: the embedded one)")

    session = commands.add_parser("session", help="run a scripted session against a server command")
    session.add_argument("--timeout", type=positive_seconds, default=5.0, metavar="S", help="per reply")
    session.add_argument("server", nargs=argparse.REMAINDER, metavar="-- COMMAND [ARGS...]")

    db = commands.add_parser("db", help="the shop database")
    db_commands = db.add_subparsers(dest="db_command", required=True, parser_class=Parser, metavar="ACTION")
    build = db_commands.add_parser("build", help="build the shop database from data/")
    build.add_argument("path", nargs="?", help="where to write it (default: the embedded one)")
    return parser


def server_command(parser_prog: str, words: list[str]) -> list[str]:
    """The words after ``--``: the server command to run."""
    if words and words[0] == "--":
        words = words[1:]
    if not words:
        raise UsageError(
            f"{parser_prog}: no server command given (usage: {parser_prog} -- COMMAND [ARGS...])"
        )
    return words


def run(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "serve":
        from reference.server import run as serve

        return serve(args.db)
    if args.command == "session":
        from reference.session import run_session

        command = server_command("mcp-lab session", args.server)
        try:
            return run_session(command, timeout=args.timeout)
        except OSError as exc:
            raise UsageError(f"mcp-lab session: cannot start {command[0]}: {exc.strerror or exc}") from None
    if args.command == "db":
        from reference import database

        path = database.build(args.path)
        print(f"built the shop database at {path}")
        return 0
    raise UsageError(f"mcp-lab: unknown command {args.command}")


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return run(sys.argv[1:] if argv is None else argv)
    except UsageError as exc:
        print(exc, file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"mcp-lab: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
