"""Any Python the learner's code starts while graded: the guard first, then what was asked for.

When grading, the guard (:mod:`lab_runtime.codeguard`) rewrites every ``subprocess`` start of a
Python interpreter from ``python [OPTIONS] (-c CODE | -m MODULE | FILE | -) [ARGS]`` to
``python -S guarded.py [--alone] [OPTIONS] ...``: this program reads the interpreter's options,
installs the guard, and runs the code, the module or the file as the interpreter would have. The
child then keeps every rule of its parent's (the answer key by name or as data, writes outside its
folder, stage 05's capstone alone with ``--alone``): a subprocess is no way around the guard.

What the child runs is code of a file: a ``-c`` text only as the parent's guard let it start (a
string of a file that runs there, or of the grader's request); a module of the learner's folder or
of the standard library, but none of those that run text they are given (``timeit``, ``code``,
``pdb``...); never a program read from stdin.
"""

from __future__ import annotations

import importlib.util
import os
import runpy
import sys

sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the runtime, for lab_runtime
from lab_runtime import guard  # noqa: E402

WITH_VALUE = ("-X", "-W", "-Q")
# Standard-library modules that run code they are handed (text, a file of another's, stdin).
RUNNERS = frozenset(
    {"code", "codeop", "pdb", "bdb", "timeit", "cProfile", "profile", "trace", "runpy", "doctest", "pydoc"}
    | {"idlelib", "compileall", "py_compile", "zipapp", "venv", "ensurepip", "pip", "site", "pickle", "pickletools"}
    | {"lab_runtime", "reference", "grader", "nbgrader", "unittest", "test", "turtledemo", "ast", "dis", "tokenize"}
)


def refuse(why: str) -> None:
    """Refuse through the guard (a refusal the grader sees, as any other), and end."""
    try:
        sys.audit(guard.REFUSE, why)
    except PermissionError as refused:
        print(refused, file=sys.stderr)
    sys.exit(1)


def module_allowed(name: str, folder: str) -> bool:
    """A module of the learner's folder, or of the standard library that runs nothing it is handed."""
    top = name.partition(".")[0]
    if top in RUNNERS:
        return False
    try:
        spec = importlib.util.find_spec(top)  # the top level only: finding a submodule imports its package
    except (ImportError, ValueError):
        return True  # runpy says it is missing, as the interpreter would
    origin = os.path.realpath(spec.origin) if spec is not None and spec.origin else ""
    return origin.startswith(os.path.realpath(folder) + os.sep) or top in sys.stdlib_module_names


def main() -> None:
    args = sys.argv[1:]
    alone = bool(args) and args[0] == "--alone"
    args = args[1:] if alone else args
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
    if not args or args[0] == "-":
        guard.install(folder, alone)
        refuse("python reading its program from stdin: code that is not one of your files")
    elif args[0] == "-c":
        code = args[1] if len(args) > 1 else ""
        sys.argv = ["-c", *args[2:]]
        sys.path[0] = ""
        compiled = compile(code, "<string>", "exec")  # the text the parent's guard let start (a file's string)
        guard.install(folder, alone)
        exec(compiled, {"__name__": "__main__", "__builtins__": __builtins__})
    elif args[0] == "-m":
        name = args[1] if len(args) > 1 else ""
        sys.argv = [name, *args[2:]] if len(args) > 1 else ["-m"]
        sys.path[0] = folder
        guard.install(folder, alone)
        if not module_allowed(name, folder):
            refuse(f"python -m {name}: a module that is not yours and runs what it is handed")
        runpy.run_module(name, run_name="__main__", alter_sys=True)
    else:
        path = os.path.abspath(args[0])
        sys.argv = [path, *args[1:]]
        sys.path[0] = os.path.dirname(path)
        guard.install(folder, alone)
        runpy.run_path(path, run_name="__main__")


if __name__ == "__main__":
    main()
