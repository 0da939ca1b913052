"""The guard's rules for code itself, when grading asks (``MCP_LAB_CODE_GUARD=1``): only files run.

The answer key can come in as data as well as by name: the kit's bytecode in a string, loaded with
``marshal.loads`` and made a function with ``types.FunctionType``; source text decoded and handed
to ``exec``; a finder added to ``sys.meta_path`` that serves a module from memory; ``ctypes`` to
patch the interpreter. While graded, the learner's process runs code from files only:

- ``compile`` (and ``exec``/``eval`` of text) of the text of a file as it is on disk, and not a
  file the learner's own process wrote (its owner is the grader, or it is in the read-only runtime
  or the standard library); the standard library may compile short text of its own making
  (``dataclasses``, ``namedtuple``) and ``ast.parse`` makes no code;
- ``marshal`` only for the import system loading a cached module of the runtime or the standard
  library, that very file's bytes;
- no code object built from parts (``code.__new__``, ``code.replace``), no import while
  ``sys.meta_path`` or ``sys.path_hooks`` holds a finder the guard did not see at its start, no ``ctypes``.

    >>> rules = CodeRules(trusted=("/usr/lib/python3",), uid=1000)
    >>> rules.refusal("code.__new__", (None,) * 18, None)
    'code.__new__: code built from parts, not from your files'
    >>> rules.refusal("import", ("ctypes", None, [], [], []), None)
    'import ctypes: ctypes is not available to your code while it is graded'
"""

from __future__ import annotations

import os
import re
import sys
from types import FrameType

SHORT = 4096  # characters of text the standard library may compile of its own making
_IMPORT_FRAMES = ("<frozen importlib._bootstrap_external>", "<frozen importlib._bootstrap>")


def _caller(frame: FrameType | None) -> FrameType | None:
    """The first frame that is not the import system's plumbing nor this guard."""
    while frame is not None and (
        frame.f_code.co_filename == __file__ or frame.f_code.co_filename.endswith(("/guard.py", "/codeguard.py"))
    ):
        frame = frame.f_back
    return frame


_PYTHON = re.compile(r"^python[\d.]*$")
COURSE_PROGRAMS = ("run.py", "harness.py", "host.py", "http_host.py", "guarded.py")


def _flat(value: object) -> list[object]:
    if isinstance(value, list | tuple):
        return [w for v in value for w in _flat(v)]
    return [value]


class CodeRules:
    def __init__(self, trusted: tuple[str, ...], uid: int, runtime: str = "") -> None:
        self.trusted = tuple(os.path.realpath(t) for t in trusted)
        self.runtime = runtime  # the stage's runtime: lab_runtime/guarded.py guards a Python child
        self.uid = uid
        self.meta_path = [id(f) for f in sys.meta_path]
        self.path_hooks = [id(h) for h in sys.path_hooks]

    def _trusted(self, path: str) -> bool:
        full = os.path.realpath(path)
        return any(full == t or full.startswith(t + os.sep) for t in self.trusted)

    def _a_file(self, source: object, filename: object) -> bool:
        """Whether ``source`` is the text of the file ``filename`` as it is, a file not of this process's making."""
        if not isinstance(filename, str | bytes) or not isinstance(source, str | bytes):
            return False
        path = os.fsdecode(filename)
        try:
            info = os.stat(path)
            with open(path, "rb") as file:
                data = file.read()
        except OSError:
            return False
        text = source.encode("utf-8") if isinstance(source, str) else source
        if data != text and data.replace(b"\r\n", b"\n") != text:
            return False
        return self._trusted(path) or info.st_uid != self.uid or self.uid == 0

    def _from_stdlib(self, frame: FrameType | None) -> tuple[bool, str]:
        if frame is None:
            return False, ""
        name = frame.f_code.co_filename
        return (name.startswith("<frozen ") or self._trusted(name)) and "lab_runtime" not in name, frame.f_code.co_name

    def child(self, executable: object, argv: object) -> str | None:
        """A Python child gets the guard (its argv is rewritten in place to go through guarded.py); a
        shell that would start one is refused; any other program runs as asked."""
        if not isinstance(argv, list) or not argv:
            return None
        words = [os.fsdecode(w) if isinstance(w, str | bytes) else "" for w in argv]
        program = os.fsdecode(executable) if isinstance(executable, str | bytes) else words[0]
        if os.path.basename(program) in ("sh", "bash", "dash") and "python" in " ".join(words[1:]):
            return "subprocess.Popen: a shell that starts Python runs it without the guard; start it with subprocess"
        python = _PYTHON.search(os.path.basename(program)) or os.path.realpath(program) == os.path.realpath(
            sys.executable
        )
        if not python:
            return None
        script = next((w for w in words[1:] if not w.startswith("-")), "")
        lab = os.path.join(self.runtime, "lab_runtime")
        if os.path.dirname(os.path.realpath(script)) == os.path.realpath(lab) and os.path.basename(script) in (
            COURSE_PROGRAMS
        ):
            return None  # the course's own programs install the guard themselves
        if os.path.dirname(os.path.realpath(script)).startswith(os.path.realpath(lab)):
            return None  # the course's peers: no learner's code in them
        argv[1:1] = ["-S", os.path.join(lab, "guarded.py")]
        return None

    def refusal(self, event: str, args: tuple, frame: FrameType | None) -> str | None:
        if event == "code.__new__":
            stdlib, _ = self._from_stdlib(_caller(frame))
            if stdlib:
                return None  # types.coroutine sets a flag on a function's own code (asyncio uses it)
            return "code.__new__: code built from parts, not from your files"
        if event in ("marshal.loads", "marshal.load"):
            caller = _caller(frame)
            if caller is not None and caller.f_code.co_name == "_compile_bytecode":
                path = caller.f_locals.get("bytecode_path")
                data = args[0] if args else None
                if isinstance(path, str) and self._trusted(path) and isinstance(data, bytes | memoryview):
                    try:
                        with open(path, "rb") as file:
                            if file.read()[16:] == bytes(data):  # the import system hands a memoryview
                                return None
                    except OSError:
                        pass
            return f"{event}: loading code (or data) from bytes, not from your files"
        if event == "import":
            name = args[0] if args and isinstance(args[0], str) else ""
            if name.partition(".")[0] in ("ctypes", "_ctypes"):
                return f"import {name}: ctypes is not available to your code while it is graded"
            if [id(f) for f in sys.meta_path] != self.meta_path or [id(h) for h in sys.path_hooks] != self.path_hooks:
                return f"import {name}: an import hook was added (sys.meta_path or sys.path_hooks)"
            return None
        if event.startswith("ctypes."):
            return f"{event}: ctypes is not available to your code while it is graded"
        if event == "subprocess.Popen" and len(args) > 1:
            return self.child(args[0], args[1])
        if event in ("os.exec", "os.posix_spawn", "os.spawn", "os.system"):
            words = [os.fsdecode(w) for w in _flat(args) if isinstance(w, str | bytes)]
            if any(_PYTHON.search(os.path.basename(w)) for w in words) or "python" in " ".join(words):
                return f"{event}: a Python started this way runs without the guard; start it with subprocess"
        if event in ("compile", "exec"):
            source = args[0] if args else None
            if event == "exec" and not isinstance(source, str | bytes):
                return None  # a code object: it came from a file, or was refused when it was made
            filename = args[1] if event == "compile" and len(args) > 1 else None
            if self._a_file(source, filename):
                return None
            named = isinstance(filename, str | bytes) and not os.fsdecode(filename).startswith("<")
            caller = _caller(frame)
            stdlib, function = self._from_stdlib(caller)
            if caller is not None and caller.f_code.co_filename.startswith("<frozen "):
                stdlib = False  # the import system compiles files: judged by the file alone, above
            short = isinstance(source, str | bytes) and len(source) <= SHORT and not named
            if stdlib and (function == "parse" or short):
                return None  # ast.parse makes no code; dataclasses and namedtuple compile a few lines
            shown = repr(source)[:40] if isinstance(source, str | bytes) else type(source).__name__
            return f"{event} of {shown}: code that is not one of your files"
        return None
