"""``mcp-lab``: the command line of MCP Wire Lab.

    mcp-lab serve [--db PATH] [--allow-writes] [--http HOST:PORT [--auth-token TOKEN]]
                                              run the reference shop server on stdio (or Streamable HTTP)
    mcp-lab audit --db PATH                   the write audit of a database copy, one JSON object a line
    mcp-lab session [--timeout S] [--era auto|modern|legacy] [--yes] -- CMD...
                                              a scripted session against any server, as a transcript
    mcp-lab db build [PATH]                   build the shop database (default: the embedded one)
    mcp-lab check [--json] [--timeout S] [--call-timeout S] [--call-tools] [--era ERA] -- CMD...
                                              check any stdio MCP server, check by check, in each era
    mcp-lab check [--json] ... [--era ERA] --url URL [--header 'NAME: VALUE' ...]
                                              check a Streamable HTTP MCP endpoint, in each era
    mcp-lab gallery list [--reveal] | show NAME [--reveal] | run NAME
                                              the broken-server gallery (the instructor's view)
    mcp-lab clinic list | run CASE | log CASE | key
                                              your stage 08 cases (in your stage 08 folder)
    mcp-lab lab [--workspace DIR] [--setup-only] [-- JUPYTER-ARGS...]
                                              the learner's workspace (nbgrader's release), opened in JupyterLab
    mcp-lab progress [--workspace DIR]        per stage: do the public checks pass, and the first failure
    mcp-lab course init DIR | points          the instructor's nbgrader course; points per stage
    mcp-lab course kit DIR                    the learner kit of a graded class (no keys, no sources)
    mcp-lab course grade STAGE [--jobs N | --scheduler ADDRESS]
                                              grade every submission outside the learners' kernels (here, or on Dask)
    mcp-lab course export STAGE|--all         grades.csv: a row per student, with a status and the flags

A wrong invocation gets one line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Sequence
from typing import Any

from .checker import CALL_TIMEOUT, schema_formats
from .cli_errors import Parser, UsageError
from .clinic_cli import clinic_command


def positive_int(text: str) -> int:
    if not text.isdigit() or not 0 < int(text) <= 64:
        raise argparse.ArgumentTypeError(f"expected a whole number from 1 to 64, got {text!r}")
    return int(text)


def positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not 0 < value <= 600:
        raise argparse.ArgumentTypeError(f"expected seconds between 0 and 600, got {text!r}")
    return value


def era_name(text: str) -> str:
    """``--era``: modern, legacy or both (the checker's era.py says what each means)."""
    from .checker.era import parse_era

    try:
        return parse_era(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--era ")) from None


def build_parser() -> Parser:
    parser = Parser(prog="mcp-lab", description="MCP Wire Lab: learn, build and check stdio MCP servers.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser, metavar="COMMAND")

    from reference.server import add_serve_options

    serve = commands.add_parser("serve", help="run the reference shop server on stdin/stdout (or over HTTP)")
    add_serve_options(serve)

    audit = commands.add_parser("audit", help="print the write audit of a database copy, one JSON object a line")
    audit.add_argument("--db", metavar="PATH", required=True, help="the database copy the write tools wrote")

    session = commands.add_parser("session", help="run a scripted session against a server command")
    session.add_argument("--timeout", type=positive_seconds, default=5.0, metavar="S", help="per reply")
    session.add_argument(
        "--era",
        choices=("auto", "modern", "legacy"),
        default="auto",
        help="auto (default): probe with server/discover, fall back to initialize; modern: no fallback; "
        "legacy: initialize at once",
    )
    session.add_argument(
        "--yes",
        action="store_true",
        help="declare elicitation and answer the server's confirmations with yes (also calls cancel_order "
        "if the server offers it)",
    )
    session.add_argument("server", nargs=argparse.REMAINDER, metavar="-- COMMAND [ARGS...]")

    check = commands.add_parser(
        "check",
        help="check a stdio MCP server command (or a Streamable HTTP endpoint: --url)",
        description="Start COMMAND as a stdio MCP server (several times), or speak to the Streamable HTTP MCP "
        "endpoint at --url (in several sessions), probe it, and report check by check. Exit 0: no check failed; "
        "1: a check failed; 2: usage error, or the command could not be started or the URL not reached.",
    )
    check.add_argument("--url", metavar="URL", help="check the Streamable HTTP endpoint at URL instead of a command")
    check.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="with --url: send this header with every request (again for more), e.g. 'Authorization: Bearer TOKEN'",
    )
    check.add_argument("--json", action="store_true", help="print one JSON object (the stable contract)")
    check.add_argument("--timeout", type=positive_seconds, default=3.0, metavar="S", help="per reply (default 3)")
    check.add_argument(
        "--call-timeout",
        type=positive_seconds,
        default=CALL_TIMEOUT,
        metavar="S",
        help=f"per tools/call: a tool may run long (default {CALL_TIMEOUT:g}); "
        "past it the call is cancelled and the check goes on",
    )
    check.add_argument(
        "--call-tools", action="store_true", help="call every tool, not only those annotated readOnlyHint: true"
    )
    check.add_argument(
        "--era",
        type=era_name,
        default=None,
        metavar="ERA",
        help="modern (2026-07-28), legacy (initialize, 2025-11-25 and before) or both (default: every era the "
        "server speaks)",
    )
    check.add_argument("--verbose", "-v", action="store_true", help="show the evidence of passing checks too")
    check.add_argument("server", nargs=argparse.REMAINDER, metavar="-- COMMAND [ARGS...]")

    gallery = commands.add_parser("gallery", help="deliberately broken servers to diagnose")
    gallery_commands = gallery.add_subparsers(
        dest="gallery_command", required=True, parser_class=Parser, metavar="ACTION"
    )
    listing = gallery_commands.add_parser("list", help="with --reveal: names, checks and symptoms")
    listing.add_argument("--reveal", action="store_true", help="the exhibits' names give the defects away: list them")
    show = gallery_commands.add_parser("show", help="one exhibit: symptom, and with --reveal its defect")
    show.add_argument("name")
    show.add_argument("--reveal", action="store_true", help="say what is wrong and which check catches it")
    run_exhibit = gallery_commands.add_parser(
        "run", help="run an exhibit as a stdio server (an HTTP one listens on 127.0.0.1 and prints its URL)"
    )
    run_exhibit.add_argument("name")
    run_exhibit.add_argument(
        "--port", type=int, metavar="N", help="an HTTP exhibit's port on 127.0.0.1 (default: any free one)"
    )

    clinic = commands.add_parser("clinic", help="your stage 08 cases, drawn for you (run in your stage 08 folder)")
    clinic_commands = clinic.add_subparsers(dest="clinic_command", required=True, parser_class=Parser, metavar="ACTION")
    clinic_commands.add_parser("list", help="your cases: live server or host log, and what a host or user sees")
    clinic_run = clinic_commands.add_parser("run", help="run a live case (case-01, ...) as a stdio server")
    clinic_run.add_argument("case", metavar="CASE")
    clinic_log = clinic_commands.add_parser("log", help="a log case's host log, with line numbers")
    clinic_log.add_argument("case", metavar="CASE")
    clinic_commands.add_parser("key", help="the answer key of your own cases, for self-study")

    lab = commands.add_parser("lab", help="set up the learner's workspace and open it in JupyterLab")
    lab.add_argument("--workspace", metavar="DIR", help="the learner's folder (default: workspace/)")
    lab.add_argument("--setup-only", action="store_true", help="make or update the workspace; do not open JupyterLab")
    lab.add_argument("jupyter", nargs=argparse.REMAINDER, metavar="-- JUPYTER-ARGS", help="passed to jupyter lab")

    progress = commands.add_parser("progress", help="run each stage's public checks in the workspace")
    progress.add_argument("--workspace", metavar="DIR", help="the learner's folder (default: workspace/)")

    course = commands.add_parser("course", help="the instructor's nbgrader course")
    course_commands = course.add_subparsers(dest="course_command", required=True, parser_class=Parser, metavar="ACTION")
    init = course_commands.add_parser("init", help="make an nbgrader course folder from notebooks/")
    init.add_argument("directory", metavar="DIR")
    course_commands.add_parser("points", help="the points of every stage, and the total")
    kit = course_commands.add_parser(
        "kit",
        help="write the learner kit for a graded class: the course's runtime without its keys or sources",
        description="Write into DIR (a new folder) what a graded class's learners install: grader/ without "
        "grader/grading/, the reference as bytecode, data/, the stages' handed-out files, bin/mcp-lab and "
        "requirements.txt. No notebook text, hidden check or answer key goes in.",
    )
    kit.add_argument("directory", metavar="DIR")
    grade = course_commands.add_parser(
        "grade",
        help="grade every submission of a stage outside the learners' kernels (in a course folder)",
        description="Grade every submitted/STUDENT/STAGE/ of the course in the current folder: the learners' "
        "code runs in a sandbox, the verdicts go into nbgrader's gradebook (generate_feedback and export work "
        "as before), and a table shows each student's score, maximum and flags.",
    )
    grade.add_argument("stage", metavar="STAGE", help="the assignment, e.g. 02-messages")
    grade.add_argument("--jobs", type=positive_int, default=os.cpu_count() or 1, metavar="N", help="at once")
    grade.add_argument("--course", metavar="DIR", default=".", help="the course folder (default: here)")
    grade.add_argument(
        "--student", action="append", metavar="ID", help="grade only this student's submission (again for more)"
    )
    grade.add_argument(
        "--unsafe-no-sandbox",
        action="store_true",
        help="where no sandbox can be made (no bubblewrap, no unshare), run the learners' code anyway, with no "
        "private view of the files: it can read what its user can read (never run as root); with --scheduler, "
        "a worker without bubblewrap grades with what it has instead of refusing",
    )
    where = grade.add_mutually_exclusive_group()
    where.add_argument(
        "--scheduler", metavar="ADDRESS", help="grade on this Dask cluster (tcp://127.0.0.1:8786, tls://HOST:8786)"
    )
    where.add_argument("--scheduler-file", metavar="FILE", help="the Dask cluster whose `dask scheduler` wrote FILE")
    for name, what in (
        ("ca", "the certificate of the CA that signed the cluster's"),
        ("cert", "this machine's certificate"),
        ("key", "the private key of --tls-cert"),
    ):
        grade.add_argument(f"--tls-{name}", metavar="FILE", default="", help=f"tls:// only: {what}")

    export = course_commands.add_parser(
        "export",
        help="write grades.csv: one row per student and stage, with a status and the flags",
        description="One row per student on nbgrader's roster (and per student who handed in) for each stage: "
        "status (graded, not submitted, grading failed, unreadable, not graded), score, maximum and flags.",
    )
    which = export.add_mutually_exclusive_group(required=True)
    which.add_argument("stage", metavar="STAGE", nargs="?", help="the assignment, e.g. 02-messages")
    which.add_argument("--all", action="store_true", help="every released stage")
    export.add_argument("--to", metavar="FILE", default="grades.csv", help="the CSV to write (default: grades.csv)")
    export.add_argument("--course", metavar="DIR", default=".", help="the course folder (default: here)")

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
        raise UsageError(f"{parser_prog}: no server command given (usage: {parser_prog} -- COMMAND [ARGS...])")
    return words


def run(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "serve":
        from reference.server import run as serve

        return serve(args.db, args.allow_writes, args.http, args.auth_token)
    if args.command == "audit":
        return audit_command(args)
    if args.command == "session":
        from reference.session import run_session

        command = server_command("mcp-lab session", args.server)
        try:
            return run_session(command, timeout=args.timeout, era=args.era, yes=args.yes)
        except BrokenPipeError:
            raise  # our reader went away (`| head`): main() ends quietly, it is no start failure
        except OSError as exc:
            raise UsageError(f"mcp-lab session: cannot start {command[0]}: {exc.strerror or exc}") from None
    if args.command == "check":
        return check_command(args)
    if args.command == "gallery":
        return gallery_command(args)
    if args.command == "clinic":
        return clinic_command(args)
    if args.command in ("lab", "progress", "course"):
        return course_cli(args)
    if args.command == "db":
        from reference import database

        path = database.build(args.path)
        print(f"built the shop database at {path}")
        return 0
    raise UsageError(f"mcp-lab: unknown command {args.command}")


def audit_command(args: argparse.Namespace) -> int:
    import json
    import sqlite3
    from pathlib import Path

    from reference.audit import read

    path = Path(args.db)
    if not path.is_file():
        raise UsageError(f"mcp-lab audit: no database at {path}")
    try:
        for entry in read(path):
            print(json.dumps(entry, ensure_ascii=False))
    except sqlite3.Error as exc:
        raise UsageError(f"mcp-lab audit: cannot read the audit of {path}: {exc}") from None
    return 0


def check_command(args: argparse.Namespace) -> int:
    from .checker.check import run_check
    from .checker.report import write_json, write_text

    if args.url is not None:
        report = http_check(args)
    else:
        if args.header:
            raise UsageError("mcp-lab check: --header is for --url (a stdio server gets no HTTP headers)")
        command = server_command("mcp-lab check", args.server)
        try:
            report = run_check(
                command,
                timeout=args.timeout,
                call_tools=args.call_tools,
                call_timeout=args.call_timeout,
                era=args.era or "auto",
            )
        except OSError as exc:
            raise UsageError(f"mcp-lab check: cannot start {command[0]}: {exc.strerror or exc}") from None
    for error in report.internal_errors:
        # The checker's own bug, not the server's: say so, and still report what was found.
        print(f"mcp-lab check: internal error, some checks were not run (please report):\n{error}", file=sys.stderr)
    if args.json:
        write_json(report, sys.stdout)
    else:
        write_text(report, sys.stdout, verbose=args.verbose)
    return report.exit_code


def http_check(args: argparse.Namespace) -> Any:
    """``mcp-lab check --url URL [--header 'NAME: VALUE' ...]``: the checker over Streamable HTTP."""
    from .checker.check import run_http_check
    from .checker.http_probe import BadUrl

    if [w for w in args.server if w != "--"]:
        raise UsageError("mcp-lab check: give --url URL or -- COMMAND, not both")
    headers: dict[str, str] = {}
    for given in args.header:
        name, colon, value = given.partition(":")
        if not colon or not re.fullmatch(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+", name.strip()):
            raise UsageError(f"mcp-lab check: --header takes 'NAME: VALUE', got {given!r}")
        headers[name.strip()] = value.strip()
    try:
        return run_http_check(
            args.url,
            headers,
            timeout=args.timeout,
            call_tools=args.call_tools,
            call_timeout=args.call_timeout,
            era=args.era or "auto",
        )
    except BadUrl as exc:
        raise UsageError(f"mcp-lab check: {exc}") from None
    except OSError as exc:
        raise UsageError(f"mcp-lab check: {exc.strerror or exc}") from None


def course_cli(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .course import build

    workspace = Path(args.workspace).resolve() if getattr(args, "workspace", None) else build.WORKSPACE
    if args.command == "lab":
        from .course import launch

        extra = args.jupyter[1:] if args.jupyter[:1] == ["--"] else args.jupyter
        if extra and not args.jupyter[:1] == ["--"]:
            raise UsageError(f"mcp-lab lab: unexpected {extra[0]!r} (JupyterLab's own options go after --)")
        if args.setup_only:
            launch.prepare(workspace, each_stage=True)
            print(f"workspace ready: {workspace}")
            return 0
        launch.open_lab(workspace, extra)  # prepares the workspace as JupyterLab starts; runs until Ctrl-C
    if args.command == "progress":
        from .course.progress import progress, total_line

        if not workspace.is_dir():
            raise UsageError(f"mcp-lab progress: no workspace at {workspace} (make one with: make lab)")
        results = progress(workspace)
        width = max(len(r.stage) for r in results)
        for result in results:
            print(result.line(width))
        print(total_line(results, width))
        return 0
    from .course.kit import is_kit

    if is_kit() and args.course_command in ("grade", "init", "kit", "export"):
        name = args.course_command
        raise UsageError(f"mcp-lab course {name}: not in a learner kit (the instructor's repository does it)")
    if args.course_command == "kit":
        from .course.kit import make_kit

        target = Path(args.directory).resolve()
        try:
            files = make_kit(target)
        except FileExistsError as exc:
            raise UsageError(f"mcp-lab course kit: {exc}") from None
        print(f"wrote the learner kit {target} ({len(files)} files): install its requirements.txt, then run")
        print(f"  PYTHONPATH={target} jupyter lab    or    {target}/bin/mcp-lab check -- CMD")
        return 0
    if args.course_command == "grade":
        from .grading.command import GradeError
        from .grading.command import run as grade

        cluster = None
        if args.scheduler or args.scheduler_file:
            from .grading.cluster import Scheduler

            cluster = Scheduler(
                args.scheduler or "", args.scheduler_file or "", args.tls_ca, args.tls_cert, args.tls_key
            )
            cluster.unsafe = args.unsafe_no_sandbox  # the workers decide, each on its own machine
        elif args.unsafe_no_sandbox:  # the grading processes, forked later, read it
            os.environ["MCP_LAB_SANDBOX"] = "unsafe-none"
        try:
            return grade(Path(args.course).resolve(), args.stage.rstrip("/"), args.jobs, args.student, cluster)
        except GradeError as exc:
            raise UsageError(f"mcp-lab course grade: {exc}") from None
    if args.course_command == "export":
        from .grading.export import ExportError
        from .grading.export import run as export

        try:
            stage = None if args.all else args.stage.rstrip("/")
            return export(Path(args.course).resolve(), stage, Path(args.to))
        except ExportError as exc:
            raise UsageError(f"mcp-lab course export: {exc}") from None
    if args.course_command == "points":
        from .course.practice import PRACTICE, for_credit

        points = {stage.name: stage.points() for stage in build.stages()}
        width = max(len(name) for name in [*points, "total for credit"])
        for name, value in points.items():
            print(f"{name:<{width}}  {value:>3}" + (f"  {PRACTICE[name]}" if name in PRACTICE else ""))
        print(f"{'total':<{width}}  {sum(points.values()):>3}")
        print(f"{'total for credit':<{width}}  {for_credit(points):>3}  without the practice stages")
        return 0
    directory = Path(args.directory).resolve()
    try:
        chosen = build.init_course(directory)
    except FileExistsError as exc:
        raise UsageError(f"mcp-lab course init: {exc}") from None
    from .grading import secret

    secret.create(directory)
    print(f"made the nbgrader course {directory} with {len(chosen)} stages:")
    for stage in chosen:
        print(f"  source/{stage.name}/{stage.notebook}")
    print(f"next: cd {directory} && nbgrader generate_assignment {chosen[0].name}")
    return 0


def gallery_command(args: argparse.Namespace) -> int:
    from . import gallery

    if args.gallery_command == "list":
        if not args.reveal:
            # The names are the answers: a learner practises on the clinic's neutral cases.
            print("The gallery's names give each defect away, so they are listed only on request:")
            print("  mcp-lab gallery list --reveal    (the instructor's view: names, checks, symptoms)")
            print("To practise diagnosis, list your cases instead (neutral names, symptoms only):")
            print("  mcp-lab clinic list")
            return 0
        exhibits = gallery.exhibits()
        over_http = gallery.http_exhibits()
        width = max(len(e.name) for e in exhibits + over_http)
        check_width = max(len(e.check) for e in exhibits + over_http)
        for exhibit in exhibits:
            print(f"{exhibit.name:<{width}}  {exhibit.check:<{check_width}}  {exhibit.symptom}")
        print("\nOver Streamable HTTP (each prints its URL on stderr):")
        for exhibit in over_http:
            print(f"{exhibit.name:<{width}}  {exhibit.check:<{check_width}}  {exhibit.symptom}")
        print("\nRun one: mcp-lab check -- mcp-lab gallery run NAME; explained: mcp-lab gallery show NAME --reveal")
        print("Over HTTP: mcp-lab gallery run NAME --port 8000, then mcp-lab check --url http://127.0.0.1:8000/mcp")
        return 0
    try:
        exhibit = gallery.get(args.name)
    except KeyError as exc:
        raise UsageError(f"mcp-lab gallery: {exc.args[0]}") from None
    if args.gallery_command == "show":
        print(f"{exhibit.name}: {exhibit.symptom}")
        print(f"source: {exhibit.path}")
        if args.reveal:
            print(f"defect: {exhibit.explanation}")
            print(f"caught by: {exhibit.check} ({exhibit.expect})")
        elif exhibit.transport == "http":
            print(f"Diagnose it first: mcp-lab gallery run {exhibit.name} --port 8000, then, beside it:")
            print("  mcp-lab check --url http://127.0.0.1:8000/mcp")
            print(f"Then: mcp-lab gallery show {exhibit.name} --reveal")
        else:
            print("Diagnose it first: mcp-lab check -- mcp-lab gallery run " + exhibit.name)
            print(f"Then: mcp-lab gallery show {exhibit.name} --reveal")
        return 0
    if args.port is not None and exhibit.transport != "http":
        raise UsageError(f"mcp-lab gallery run: {exhibit.name} is a stdio server: --port is for HTTP exhibits")
    if args.port is not None and not 0 <= args.port <= 65535:
        raise UsageError(f"mcp-lab gallery run: --port takes 0 to 65535, got {args.port}")
    command = gallery.command(exhibit.name, args.port)
    # Become the exhibit: same pid, same pipes, so the caller talks to it directly.
    os.execv(command[0], command)


def main(argv: Sequence[str] | None = None) -> int:
    # No command here checks a "format" (JupyterLab, which does, runs in a process of its own): jsonschema's
    # format libraries cost a second of CPU in each command that imports it (nbgrader's, the checker's).
    schema_formats.leave_out()
    try:
        code = run(sys.argv[1:] if argv is None else argv)
        sys.stdout.flush()  # here, not at exit: a reader that went away is handled below
        return code
    except BrokenPipeError:
        # The reader closed the pipe (`mcp-lab gallery list | head -1`): nothing left to say.
        # Point stdout at /dev/null so that the flush at exit does not complain either.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, as a command killed by the signal reports it
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
