"""The learner's module in a process of its own, its functions called over a pipe.

The checks never call the learner's code in their own process: a learner's function that loops
forever, crashes the interpreter or patches the checks would take the checks with it. Instead
the checks start this harness (``python -S harness.py FOLDER``, the stage's runtime as the import
path) and send it one request per line; it answers one line each:

    -> {"id":1,"op":"import","module":"messages"}
    <- {"id":1,"ok":{"$ref":1,"type":"builtins.module","repr":"<module 'messages' ...>","callable":false}}
    -> {"id":2,"op":"get","target":{"$ref":1},"name":"valid_id"}
    -> {"id":3,"op":"call","target":{"$ref":2},"args":[7],"kwargs":{}}
    <- {"id":3,"ok":true}

An exception comes back as ``raised``: its type (and the types it derives from), its message and
the line of the learner's code it came from. The requests arrive on a copy of the original stdin
and the answers leave on a copy of the original stdout; the learner's code sees an empty stdin,
and what it prints goes to stderr, so nothing it does can mix with the answers.

Ops: ``import`` (a module of the learner's folder), ``stdlib`` (a standard-library attribute such as
``io.BytesIO``, for the objects the checks hand over), ``fixture`` (an object of
:mod:`lab_runtime.fixtures`), ``get``, ``call``, ``list``, ``len``, ``release``.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import traceback
from typing import Any

from lab_runtime import guard, wire


def _plain(value: Any, depth: int = 0) -> bool:
    """Whether ``value`` is plain JSON data a check may read (an RpcError's ``code``, its ``data``)."""
    if value is None or isinstance(value, bool | int | float | str):
        return True
    if depth >= 4 or not isinstance(value, dict | list) or len(value) > 20:
        return False
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v, depth + 1) for k, v in value.items())
    return all(_plain(v, depth + 1) for v in value)


class Harness:
    def __init__(self, folder: str) -> None:
        self.folder = os.path.realpath(folder)
        self.objects: dict[int, Any] = {}
        self.next_ref = 1

    def keep(self, value: Any) -> int:
        ref = self.next_ref
        self.next_ref += 1
        self.objects[ref] = value
        return ref

    def resolve(self, data: dict[str, Any]) -> Any:
        ref = data["$ref"]
        if ref not in self.objects:
            raise LookupError(f"no object {ref} in this process (it was released, or the process restarted)")
        return self.objects[ref]

    # -- the ops -----------------------------------------------------------------------------
    def op_import(self, module: str) -> Any:
        if module in sys.modules:
            return sys.modules[module]
        path = os.path.join(self.folder, f"{module}.py")
        if not module.isidentifier() or not os.path.isfile(path):
            raise ModuleNotFoundError(f"there is no {module}.py in your folder")
        spec = importlib.util.spec_from_file_location(module, path)
        if spec is None or spec.loader is None:
            raise ModuleNotFoundError(f"cannot load {module}.py")
        loaded = importlib.util.module_from_spec(spec)
        sys.modules[module] = loaded  # `import NAME` in the learner's other files finds this one
        try:
            spec.loader.exec_module(loaded)
        except BaseException:
            del sys.modules[module]
            raise
        return loaded

    def op_stdlib(self, name: str) -> Any:
        module_name, _, attribute = name.rpartition(".")
        if module_name.partition(".")[0] not in sys.stdlib_module_names:
            raise PermissionError(f"{name} is not in the standard library")
        return getattr(importlib.import_module(module_name), attribute)

    def handle(self, request: dict[str, Any]) -> Any:
        op = request["op"]
        if op == "import":
            return self.op_import(request["module"])
        if op == "stdlib":
            return self.op_stdlib(request["name"])
        if op == "fixture":
            from lab_runtime.fixtures import FIXTURES

            return FIXTURES[request["name"]]()
        if op == "release":
            for ref in request["refs"]:
                self.objects.pop(ref, None)
            return None
        target = request["target"]
        if op == "get":
            return getattr(target, request["name"])
        if op == "call":
            return target(*request.get("args", []), **request.get("kwargs", {}))
        if op == "list":
            return list(target)
        if op == "len":
            return len(target)
        raise ValueError(f"unknown op {op!r}")

    def raised(self, exc: BaseException) -> dict[str, Any]:
        kinds = [[k.__module__, k.__qualname__] for k in type(exc).__mro__ if issubclass(k, BaseException)]
        try:
            message = str(exc)
        except Exception:
            message = "(its message could not be shown)"
        frames = traceback.extract_tb(exc.__traceback__)
        theirs = [f for f in frames if os.path.realpath(f.filename).startswith(self.folder + os.sep)]
        where = (
            f"{theirs[-1].line}   (line {theirs[-1].lineno} of {os.path.basename(theirs[-1].filename)})"
            if theirs
            else ""
        )
        shown = traceback.format_exception(type(exc), exc, exc.__traceback__)
        fields: dict[str, Any] = {}  # plain attributes a check may read: an RpcError's code, say
        for name in dir(exc):
            if name.startswith("_") or name in ("args", "with_traceback", "add_note"):
                continue
            try:
                value = getattr(exc, name)
            except Exception:
                continue
            if _plain(value):
                fields[name] = value
        return {
            "kinds": kinds,
            "message": message[:2000],
            "where": where,
            "traceback": "".join(shown)[-4000:],
            "fields": fields,
        }


def main() -> int:
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        print("usage: python -S harness.py FOLDER", file=sys.stderr)
        return 2
    folder = os.path.realpath(sys.argv[1])
    os.chdir(folder)
    requests = os.fdopen(os.dup(0), "rb")
    answers = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)  # the learner's code reads an empty stdin, never our requests
    os.dup2(2, 1)  # and what it prints goes to stderr, never among our answers
    sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115 - lives as long as the process
    sys.stdout = sys.stderr
    sys.path[0] = folder  # not lab_runtime/: the learner's folder, as for `python FILE`
    harness = Harness(folder)
    guard.install(folder)
    for line in requests:
        request: dict[str, Any] = {}
        try:
            request = wire.loads(line, harness.resolve)
            reply: dict[str, Any] = {"id": request.get("id"), "ok": harness.handle(request)}
        except BaseException as exc:  # the learner's SystemExit and KeyboardInterrupt too
            reply = {"id": request.get("id"), "raised": harness.raised(exc)}
        try:
            text = wire.dumps(reply, harness.keep)
        except BaseException as exc:  # a value that will not encode, e.g. a str with a lone surrogate
            text = wire.dumps({"id": request.get("id"), "raised": harness.raised(exc)}, harness.keep)
        answers.write(text.encode("utf-8", "backslashreplace") + b"\n")
        answers.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
