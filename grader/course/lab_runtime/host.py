"""The course's server with one piece taken from the learner: a stage's code as a real server process.

A stage teaches one piece. To test it the way a host meets it, the course runs a whole server
with that piece taken from the learner's file, so a bug in an earlier or later piece can never
cost points here; the stage's runtime holds no answer key for the piece itself:

    python -S host.py framing FOLDER    # stage 01: the runtime's reference.framing is FOLDER/framing.py
    python -S host.py messages FOLDER   # stage 02: handle_line(line, methods) of messages.py answers every line
    python -S host.py tool_list FOLDER  # stage 04: list_tools(params) of tool_list.py answers tools/list
    python -S host.py shop_resources FOLDER   # stage 10: the server's resources and prompts are the learner's
    python -S host.py shop_writes FOLDER --allow-writes --db COPY   # stage 11: their write tools and audit

Run with the stage's runtime as the import path; FOLDER (the learner's) comes first on it. The
guard is in place before the learner's code is imported. Usage errors are one line on stderr and exit status 2.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

from lab_runtime import guard

# What each piece must define for the course's server to run with it.
PIECES = {
    "framing": ("encode", "decode", "read_frame", "write_frame"),
    "messages": ("handle_line",),
    "tool_list": ("all_tools", "list_tools"),
    "shop_resources": ("list_resources", "list_templates", "read_resource"),
    "shop_writes": ("write_tools", "writable_copy", "call_write"),
}
# The learner's other modules a piece's server runs with, and what each must define.
ALSO = {
    "shop_resources": {"shop_prompts": ("list_prompts", "get_prompt")},
    "shop_writes": {"shop_audit": ("summary", "record")},
}
# Pieces whose server takes the options of `mcp-lab serve` after FOLDER (--allow-writes, --db FILE).
WITH_OPTIONS = ("shop_writes",)


def log(message: str) -> None:
    sys.stderr.write(f"[course host] {message}\n")
    sys.stderr.flush()


def framing() -> int:
    # reference.framing *is* the learner's framing.py in this runtime: the reference server as it is.
    from reference.server import make_server

    return make_server().serve(sys.stdin.buffer, sys.stdout.buffer)


def messages() -> int:
    """A loop of the runtime's framing, the lifecycle and the shop's tools around the learner's
    ``handle_line``: stage 02's runtime holds no dispatcher (that is the stage's answer)."""
    import messages as learner

    from reference.database import ensure_default, open_readonly
    from reference.framing import read_frame, write_frame
    from reference.lifecycle import Session
    from reference.shop import shop_toolbox

    session = Session()
    toolbox = shop_toolbox(open_readonly(ensure_default()))
    info = {"name": "mcp-wire-lab-shop", "version": "0.1.0"}

    def initialized(params: Any) -> None:
        session.initialized = True

    methods = {
        "initialize": lambda params: session.initialize(params, info, {"tools": {"listChanged": False}}),
        "ping": lambda params: {},
        "tools/list": lambda params: toolbox.list(params, session.structured_output),
        "tools/call": lambda params: toolbox.call(
            params, session.bad_arguments_are_tool_errors, session.structured_output
        ),
        "notifications/initialized": initialized,
        "notifications/cancelled": lambda params: None,
    }
    while True:
        try:
            line = read_frame(sys.stdin.buffer)
        except ValueError as exc:
            reply: Any = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": f"Parse error: {exc}"}}
        else:
            if line is None:
                return 0
            if not line.strip():
                continue
            reply = learner.handle_line(line, dict(methods))
        if reply is not None:
            write_frame(sys.stdout.buffer, reply)


def tool_list() -> int:
    """The reference server, its tools/list answered by the learner's ``list_tools``; a call runs the
    course's query for every tool the learner declared under a known name, with their schema."""
    import tool_list as learner

    from reference import catalog, shop
    from reference.database import ensure_default, open_readonly
    from reference.server import Server
    from reference.tools import TOOL_NAME, Tool, Toolbox

    answers = shop.answers(open_readonly(ensure_default()))
    usable = [t for t in catalog.TOOLS if t["name"] in answers and TOOL_NAME.match(t["name"])]
    server = Server(Toolbox([Tool.declared(t, answers[t["name"]]) for t in usable]))
    server.dispatcher.methods["tools/list"] = learner.list_tools
    return server.serve(sys.stdin.buffer, sys.stdout.buffer)


def shop_resources(options: list[str]) -> int:
    """The reference server as it is: in stage 10's runtime its resources and prompts *are* the
    learner's shop_resources.py and shop_prompts.py (the shims)."""
    from reference.server import make_server

    return make_server().serve(sys.stdin.buffer, sys.stdout.buffer)


def shop_writes(options: list[str]) -> int:
    """``mcp-lab serve OPTIONS``, in stage 11's runtime: its write tools and their audit are the
    learner's shop_writes.py and shop_audit.py (the shims)."""
    from reference.server import main as serve

    return serve(options)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) < 2 or args[0] not in PIECES or (len(args) > 2 and args[0] not in WITH_OPTIONS):
        print(f"usage: python -S host.py {{{','.join(PIECES)}}} FOLDER [OPTIONS]", file=sys.stderr)
        return 2
    piece, options = args[0], args[2:]
    folder = os.path.realpath(args[1])
    needed = {piece: PIECES[piece], **ALSO.get(piece, {})}
    for name in needed:
        if not os.path.isfile(os.path.join(folder, f"{name}.py")):
            print(f"course host: there is no {name}.py in {folder}", file=sys.stderr)
            return 2
    sys.path[0] = folder  # the learner's folder first, as for `python FILE`
    os.chdir(folder)
    guard.install(folder)
    for name, functions in needed.items():
        learner = importlib.import_module(name)
        missing = [function for function in functions if not callable(getattr(learner, function, None))]
        if missing:
            print(f"course host: {name}.py defines no {', '.join(missing)}", file=sys.stderr)
            return 2
    log(f"the course's server with your {', '.join(f'{name}.py' for name in needed)} in it")
    runs = {
        "framing": framing,
        "messages": messages,
        "tool_list": tool_list,
        "shop_resources": lambda: shop_resources(options),
        "shop_writes": lambda: shop_writes(options),
    }
    try:
        return runs[piece]()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
