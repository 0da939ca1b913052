"""Any Python the learner's code starts while graded: the guard first, then what was asked for.

When grading, the guard (:mod:`lab_runtime.codeguard`) rewrites every ``subprocess`` start of a
Python interpreter from ``python [OPTIONS] (-c CODE | -m MODULE | FILE | -) [ARGS]`` to
``python -S guarded.py [OPTIONS] ...``: this program reads the interpreter's options, installs the
guard, and runs the code, the module or the file as the interpreter would have. The child then
keeps every rule of its parent's (the answer key by name or as data, writes outside its folder):
a subprocess is no way around the guard.
"""

from __future__ import annotations

import os
import runpy
import sys

sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the runtime, for lab_runtime
from lab_runtime import guard  # noqa: E402

WITH_VALUE = ("-X", "-W", "-Q")


def main() -> None:
    args = sys.argv[1:]
    while args and args[0].startswith("-") and args[0] not in ("-", "-c", "-m"):
        option = args.pop(0)
        if option in WITH_VALUE and args:
            args.pop(0)
        elif option[1:2] in ("c", "m") and len(option) > 2:  # -cCODE, -mMODULE
            args[:0] = [option[:2], option[2:]]
        elif "c" in option[2:] or "m" in option[2:]:  # -Sc CODE: the last letter takes the value
            args.insert(0, "-" + option[-1])
    os.environ["MCP_LAB_CODE_GUARD"] = "1"
    folder = os.getcwd()
    if not args or args[0] in ("-", "-c"):
        code = sys.stdin.read() if not args or args[0] == "-" else args[1]
        sys.argv = ["-c", *args[2:]] if args and args[0] == "-c" else ["-", *args[1:]]
        sys.path[0] = ""
        compiled = compile(code, "<string>", "exec")  # the text the parent chose, before the guard refuses text
        guard.install(folder)
        exec(compiled, {"__name__": "__main__", "__builtins__": __builtins__})
    elif args[0] == "-m":
        sys.argv = [args[1], *args[2:]] if len(args) > 1 else ["-m"]
        sys.path[0] = folder
        guard.install(folder)
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    else:
        path = os.path.abspath(args[0])
        sys.argv = [path, *args[1:]]
        sys.path[0] = os.path.dirname(path)
        guard.install(folder)
        runpy.run_path(path, run_name="__main__")


if __name__ == "__main__":
    main()
