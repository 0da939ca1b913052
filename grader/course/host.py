"""The reference server with one of its pieces replaced by the learner's: a stage's code as a process.

A stage teaches one piece. To test it the way a host meets it, the course runs the reference
server's loop with that piece taken from the learner's file, so a bug in an earlier or later piece
can never cost points here:

    python -m grader.course.host framing  framing.py    # stage 01: encode, decode, read_frame, write_frame
    python -m grader.course.host messages messages.py   # stage 02: handle_line(line, methods)
    python -m grader.course.host tool_list tool_list.py # stage 04: list_tools(params), the tools/list handler

Usage errors are one line on stderr and exit status 2.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from reference import envelope
from reference.errors import PARSE_ERROR
from reference.server import Server, log, make_server

PIECES = {
    "framing": ("encode", "decode", "read_frame", "write_frame"),
    "messages": ("handle_line",),
    "tool_list": ("list_tools",),
}


def load(path: Path, name: str) -> ModuleType:
    """Import the learner's file under a private name (their ``framing`` is not ours)."""
    spec = importlib.util.spec_from_file_location(f"learner_{name}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def with_framing(server: Server, learner: ModuleType) -> Server:
    def handle_line(line: bytes) -> Any:
        try:
            message = learner.decode(line)
        except ValueError as exc:  # the lesson's contract: every framing failure is a ValueError
            return envelope.error_message(None, PARSE_ERROR, str(exc))
        return server.dispatcher.handle_decoded(message)

    server.read_frame = learner.read_frame
    server.write_frame = learner.write_frame
    server.handle_line = handle_line
    return server


def with_messages(server: Server, learner: ModuleType) -> Server:
    # The learner's dispatcher gets every method and notification the reference serves.
    methods = {**server.dispatcher.methods, **server.dispatcher.notifications}
    server.handle_line = lambda line: learner.handle_line(line, methods)
    return server


def with_tool_list(server: Server, learner: ModuleType) -> Server:
    server.dispatcher.methods["tools/list"] = learner.list_tools
    return server


PLUG = {"framing": with_framing, "messages": with_messages, "tool_list": with_tool_list}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2 or args[0] not in PIECES:
        print(f"usage: python -m grader.course.host {{{','.join(PIECES)}}} FILE.py", file=sys.stderr)
        return 2
    piece, path = args[0], Path(args[1])
    if not path.is_file():
        print(f"grader.course.host: no file {path}", file=sys.stderr)
        return 2
    learner = load(path, piece)
    missing = [name for name in PIECES[piece] if not callable(getattr(learner, name, None))]
    if missing:
        print(f"grader.course.host: {path.name} defines no {', '.join(missing)}", file=sys.stderr)
        return 2
    server = make_server()
    server = PLUG[piece](server, learner)
    log(f"the reference server with the {piece} of {path.name}")
    try:
        return server.serve(sys.stdin.buffer, sys.stdout.buffer)
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
