"""The guard's rules for code itself, when grading asks (``MCP_LAB_CODE_GUARD=1``): only files run.

The answer key can come in as data as well as by name: the kit's bytecode in a string, loaded with
``marshal.loads`` or rebuilt by the pure-Python unpickler (``pickle._loads`` calling
``types.CodeType`` and ``types.FunctionType`` from ``pickle.py``'s own frames); source text decoded
and handed to ``exec``; a finder added to ``sys.meta_path`` that serves a module from memory;
``ctypes`` to patch the interpreter; a child Python given its code on its command line. While
graded, the learner's process runs code from files only, judged by where the code came from, never
by which frame asks for it. Every code object in the process is made one of these ways, each judged:

- ``compile`` (and ``exec``/``eval`` of text) of the text of a file as it is on disk, and not a
  file the learner's own process wrote (its owner is the grader, or it is in the read-only runtime
  or the standard library). The standard library's own templates are the one exception, checked
  by their shape: ``namedtuple``'s lambda and ``dataclasses``' methods call nothing but the few
  names those templates call (a field name that smuggles code in calls something else), a
  ``typing.ForwardRef`` is a type expression; ``ast.parse`` makes no code;
- ``marshal`` only for the import system loading a cached module of the runtime or the standard
  library, that very file's bytes;
- no code object built from parts (``code.__new__``, ``code.replace``), but for ``types.coroutine``
  setting one flag on a function's own code.

So a function (``function.__new__``, a ``__code__`` assigned) or an ``exec`` of a code object
only ever runs code made that way: each one's file is checked again there. The unpickler may not
look up a callable that makes code or imports (``pickle.find_class``); no import while
``sys.meta_path`` or ``sys.path_hooks`` holds a finder the guard did not see at its start; no
``ctypes``; no reading the guard's own frame (a refusal's traceback holds it), every object of the
process (``gc``), other threads' frames, or tracing: the guard's state is there. A child Python
runs under the guard; its ``-c`` text only if that is a string of one of the files that run here
(at most :data:`COMMAND` characters) or of the grader's request being served; never a program read
from stdin. In stage 05 the capstone (``my_server.py``) is one file of the learner's own: once it
runs, no other file of the submission compiles in its process or its children.

    >>> rules = CodeRules(trusted=("/usr/lib/python3",), uid=1000)
    >>> rules.refusal("code.__new__", (None,) * 18, None)
    'code.__new__: code built from parts, not from your files'
    >>> rules.refusal("import", ("ctypes", None, [], [], []), None)
    'import ctypes: ctypes is not available to your code while it is graded'
    >>> rules.refusal("pickle.find_class", ("types", "CodeType"), None)
    'pickle.find_class types.CodeType: unpickling code, or what makes or imports it'

A code object is run only if it, and every code inside it, comes from a trusted file or one this
process compiled:

    >>> module = compile("def f():\\n    return 1\\n", "/usr/lib/python3/json/f.py", "exec")
    >>> rules.refusal("exec", (module, {}, {}), None) is None
    True
    >>> elsewhere = compile("def g():\\n    return 2\\n", "/home/learner/g.py", "exec")
    >>> rules.refusal("exec", (elsewhere, {}, {}), None)
    'exec: a code object that was not compiled from your files'
    >>> inner = [c for c in elsewhere.co_consts if hasattr(c, "co_code")][0]
    >>> grafted = module.replace(co_consts=tuple(inner if hasattr(c, "co_code") else c for c in module.co_consts))
    >>> rules.refusal("exec", (grafted, {}, {}), None)
    'exec: a code object that was not compiled from your files'
"""

from __future__ import annotations

import ast
import os
import re
import sys
from types import AsyncGeneratorType, CodeType, CoroutineType, FrameType, GeneratorType, TracebackType

SHORT = 4096  # characters of text the standard library may compile from one of its templates
COMMAND = 1000  # characters of a child's -c text: a short helper, never a module carried as a string
CAPSTONE = "my_server.py"  # stage 05's capstone: one file of the learner's own
_HERE = os.path.dirname(os.path.abspath(__file__))
GUARD_FILES = frozenset({os.path.join(_HERE, "guard.py"), os.path.join(_HERE, "codeguard.py")})
# Reading these reaches a frame; the guard's own frame (in a refusal's traceback) holds its state.
FRAME_ATTRIBUTES = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame"})
# What reads every object or frame of the process, or traces it: the guard's state is among them.
INTROSPECTION = frozenset(
    {"gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys._current_frames", "sys.settrace", "sys.setprofile"}
)


def _guards(frame: FrameType) -> bool:
    return frame.f_code.co_filename in GUARD_FILES or os.path.abspath(frame.f_code.co_filename) in GUARD_FILES


def _caller(frame: FrameType | None) -> FrameType | None:
    """The first frame that is not this guard's."""
    while frame is not None and _guards(frame):
        frame = frame.f_back
    return frame


_PYTHON = re.compile(r"^python[\d.]*$")
COURSE_PROGRAMS = ("run.py", "harness.py", "host.py", "http_host.py", "guarded.py")
_SHELLS = ("sh", "bash", "dash", "zsh", "ksh", "ash", "busybox")
# What the unpickler may not look up: what makes code, imports, runs text or reaches the interpreter.
_UNPICKLE_MODULES = (
    "marshal", "importlib", "imp", "runpy", "code", "codeop", "ctypes", "_ctypes", "zipimport", "pkgutil",
    "os", "posix", "nt", "subprocess", "sys", "operator", "_operator", "pickle", "_pickle", "gc", "inspect",
    "pydoc", "timeit", "pdb", "bdb", "builtins", "__builtin__", "types", "_imp", "_frozen_importlib",
    "_frozen_importlib_external", "functools", "_functools", "lab_runtime", "reference", "grader", "nbgrader",
)  # fmt: skip
_UNPICKLE_SAFE = {
    "builtins": {
        "set", "frozenset", "dict", "list", "tuple", "bytes", "bytearray", "str", "int", "float", "complex",
        "bool", "range", "slice", "object", "Exception", "ValueError", "KeyError", "TypeError", "RuntimeError",
    },
    "__builtin__": {"set", "frozenset", "dict", "list", "tuple", "bytes", "str", "int", "float", "object"},
    "types": {"SimpleNamespace"},
}  # fmt: skip
# What a standard-library template calls (collections.namedtuple, dataclasses._create_fn): code
# smuggled into one (a field name that is not a name) calls something else, or imports.
_TEMPLATE_CALLS = {"_tuple_new", "hash", "type", "super", "FrozenInstanceError"}
_TEMPLATE_METHODS = {"__setattr__", "__delattr__", "__post_init__"}
_FRAME_OWNERS = (TracebackType, GeneratorType, CoroutineType, AsyncGeneratorType)
_TYPE_NODES = (ast.Expression, ast.Name, ast.Attribute, ast.Subscript, ast.Constant, ast.Tuple, ast.List, ast.Load)


def _flat(value: object) -> list[object]:
    if isinstance(value, list | tuple):
        return [w for v in value for w in _flat(v)]
    return [value]


def _text(value: object) -> str | None:
    """``value`` as an exact ``str`` without running any method of the learner's (a subclass's
    ``__str__`` or ``__fspath__`` would run inside the guard), or None when it is not text."""
    if isinstance(value, str):
        return "".join([value])  # a new exact str: no method of a subclass runs
    if isinstance(value, bytes):
        return os.fsdecode(b"".join([value]))
    return None


def _path(value: object) -> object:
    """A path of the standard library's own making (``pathlib``) as its text; anything else as it is."""
    pathlib = sys.modules.get("pathlib")
    if pathlib is not None and type(value) in (pathlib.PosixPath, pathlib.PurePosixPath):
        return str(value)
    return value


def _python_mode(options: list[str]) -> tuple[str, str, list[str]]:
    """What an interpreter's command line runs: ("c", text), ("m", module), ("file", path) or ("stdin", ""),
    and the words after it."""
    i = 0
    while i < len(options):
        word = options[i]
        if word == "-":
            return "stdin", "", options[i + 1 :]
        if not word.startswith("-") or word == "--":
            at = i + (word == "--")
            return ("file", options[at], options[at + 1 :]) if at < len(options) else ("stdin", "", [])
        if word.startswith("--"):
            i += 1
            continue
        for j, letter in enumerate(word[1:], 1):
            if letter in "cmXW":
                value = word[j + 1 :] or (options[i + 1] if i + 1 < len(options) else "")
                after = options[i + (1 if word[j + 1 :] else 2) :]
                if letter in "cm":
                    return letter, value, after
                i += 0 if word[j + 1 :] else 1
                break
        i += 1
    return "stdin", "", []


def _strings(value: object, depth: int = 0) -> set[str]:
    """Every string in a request's data (lists and dicts, a few levels deep; exact types only: no
    method of the learner's runs inside the guard)."""
    if isinstance(value, str):
        return {"".join([value])}
    if depth > 6:
        return set()
    if type(value) is dict:
        return {s for v in dict.values(value) for s in _strings(v, depth + 1)}
    if type(value) in (list, tuple):
        return {s for v in value for s in _strings(v, depth + 1)}  # type: ignore[attr-defined]
    return set()


def _template(maker: str, text: str) -> bool:
    """Whether ``text`` has the shape of what the standard library's ``maker`` compiles of its own:
    its calls are the template's (no other call, no decorator), it imports and defines no class."""
    try:
        tree = ast.parse(text, mode="eval" if maker != "dataclasses" else "exec")
    except (SyntaxError, ValueError, RecursionError):
        return False
    nodes = list(ast.walk(tree))
    if maker == "typing":
        return all(isinstance(n, _TYPE_NODES) for n in nodes) and not any(
            isinstance(n, ast.Attribute) and n.attr.startswith("__") for n in nodes
        )
    for node in nodes:
        if isinstance(node, ast.Import | ast.ImportFrom | ast.Global | ast.Nonlocal | ast.ClassDef):
            return False
        if isinstance(node, ast.AsyncFunctionDef | ast.Await | ast.Yield | ast.YieldFrom | ast.NamedExpr):
            return False
        if isinstance(node, ast.Lambda) and not (maker == "namedtuple" and node is tree.body):
            return False
        if isinstance(node, ast.FunctionDef) and node.decorator_list:
            return False  # a decorator is a call the tree does not show as one
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and (func.id in _TEMPLATE_CALLS or func.id.startswith("_dflt_")):
                continue
            if isinstance(func, ast.Attribute) and func.attr in _TEMPLATE_METHODS:
                continue
            return False
    return True


class CodeRules:
    def __init__(
        self, trusted: tuple[str, ...], uid: int, runtime: str = "", stage: str = "", alone: bool = False
    ) -> None:
        self.trusted = tuple(os.path.realpath(t) for t in trusted)
        self.runtime = runtime  # the stage's runtime: lab_runtime/guarded.py guards a Python child
        self.uid = uid
        self.meta_path = [id(f) for f in sys.meta_path]
        self.path_hooks = [id(h) for h in sys.path_hooks]
        self.stdlib = os.path.dirname(os.path.realpath(os.__file__))
        self.compiled: set[str] = set()  # the files (real paths) whose text this process compiled
        self.capstone = stage[:2] == "05"  # where my_server.py must stand alone
        self.alone = "*" if alone else ""  # the capstone running here: its path ("*": a child of it)

    def _trusted(self, path: str) -> bool:
        return self._under_trusted(os.path.realpath(path))

    def _under_trusted(self, full: str) -> bool:
        return any(full == t or full.startswith(t + os.sep) for t in self.trusted)

    def _a_file(self, source: object, filename: object) -> bool:
        """Whether ``source`` is the text of the file ``filename`` as it is, a file not of this process's making."""
        path, text = _text(filename), _text(source) if isinstance(source, str) else source
        if path is None or not isinstance(text, str | bytes):
            return False
        try:
            info = os.stat(path)
            with open(path, "rb") as file:
                data = file.read()
        except OSError:
            return False
        raw = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else b"".join([text])
        if data != raw and data.replace(b"\r\n", b"\n") != raw:
            return False
        return self._trusted(path) or info.st_uid != self.uid or self.uid == 0

    def _maker(self, frame: FrameType | None) -> str:
        """Which of the standard library's code templates ``frame`` is compiling, if any ("" if none)."""
        if frame is None:
            return ""
        code = frame.f_code
        known = {
            ("collections/__init__.py", "namedtuple"): "namedtuple",
            ("dataclasses.py", "_create_fn"): "dataclasses",
            ("typing.py", "__init__"): "typing",
            ("ast.py", "parse"): "parse",
        }
        for (name, function), maker in known.items():
            if code.co_name == function and os.path.realpath(code.co_filename) == os.path.join(self.stdlib, name):
                return maker
        return ""

    def _made_here(self, code: object, judged: dict[str, bool] | None = None) -> bool:
        """Whether a code object was made in a way the guard judged: from a file this process compiled
        or the trusted files, or by a template (a name in angle brackets), and so is each code inside it.
        ``judged``: the files judged so far in this walk (a module's functions share its file, so each
        file is resolved once: a module's code held hundreds of codes, each resolved on its own)."""
        if not isinstance(code, CodeType):
            return True  # not code: the call fails on its own
        judged = {} if judged is None else judged
        name = code.co_filename
        if name not in judged:
            made = name.startswith("<") or name in self.compiled
            full = name if made else os.path.realpath(name)
            judged[name] = made or full in self.compiled or self._under_trusted(full)
        if not judged[name]:
            return False
        return all(self._made_here(c, judged) for c in code.co_consts if isinstance(c, CodeType))

    def _alone(self, path: str) -> str | None:
        """Stage 05: once the capstone runs in this process, no other file of the submission compiles."""
        if not self.capstone or self._trusted(path):
            return None
        full = os.path.realpath(path)
        if os.path.basename(full) == CAPSTONE and self.alone in ("", full):
            self.alone = full
            return None
        if self.alone:
            return (
                f"compile {os.path.basename(full)}: {CAPSTONE} is graded as one file of your own; it may not run "
                "another file of your submission (paste the pieces in)"
            )
        return None

    def _command_text(self, text: str, frame: FrameType | None) -> bool:
        """Whether a child's ``-c`` text is code of a file that runs here (a string in it), or the text of
        the grader's own request being served (the harness's frame below the call)."""
        for path in sorted(self.compiled):
            try:
                with open(path, "rb") as file:
                    tree = ast.parse(file.read())
            except (OSError, SyntaxError, ValueError, RecursionError):
                continue
            if any(isinstance(n, ast.Constant) and n.value == text for n in ast.walk(tree)):
                return True
        harness = os.path.join(self.runtime, "lab_runtime", "harness.py")
        while frame is not None:
            if frame.f_code.co_name == "handle" and os.path.realpath(frame.f_code.co_filename) == harness:
                return text in _strings(frame.f_locals.get("request"))
            frame = frame.f_back
        return False

    def child(self, executable: object, argv: object, frame: FrameType | None = None) -> str | None:
        """A Python child gets the guard (its argv is rewritten in place to go through guarded.py) and its
        ``-c`` text is judged here; a shell or a launcher that would start one is refused; any other
        program runs as asked."""
        if type(argv) is not list or not argv:  # exactly a list: no method of the learner's runs here
            return None
        words = [_text(_path(w)) for w in argv]
        if any(w is None for w in words) or (executable is not None and _text(_path(executable)) is None):
            return "subprocess.Popen: a command of anything but strings and paths (the guard reads it as it runs)"
        text = [w or "" for w in words]
        argv[:] = text  # what runs is what the guard read
        program = _text(_path(executable)) or "" if executable is not None else text[0]
        if os.path.basename(program) in _SHELLS and "python" in " ".join(text[1:]):
            return "subprocess.Popen: a shell that starts Python runs it without the guard; start it with subprocess"
        if not self._is_python(program):
            if any(self._is_python(w) for w in text[1:]):
                return f"subprocess.Popen {os.path.basename(program)}: a program that starts Python runs it unguarded"
            return None
        lab = os.path.realpath(os.path.join(self.runtime, "lab_runtime"))
        rest = text[1:]
        while True:
            mode, value, rest = _python_mode(rest)
            if mode != "file" or os.path.realpath(value) != os.path.join(lab, "guarded.py"):
                break  # guarded.py's own arguments are an interpreter's: read them as one
            rest = [w for w in rest if w != "--alone"]
        if mode == "c" and (len(value) > COMMAND or not self._command_text(value, _caller(frame))):
            return f"subprocess.Popen python -c {value[:40]!r}: code that is not one of your files"
        if (
            mode == "file"
            and os.path.dirname(os.path.realpath(value)) == lab
            and os.path.basename(value) in (COURSE_PROGRAMS)
        ):
            if self.alone and os.path.basename(value) != "guarded.py":
                return f"subprocess.Popen {os.path.basename(value)}: {CAPSTONE} is graded as one file of your own"
            if os.path.basename(value) != "guarded.py" or not self.alone:
                return None  # the course's own programs install the guard themselves
        elif mode == "file" and os.path.dirname(os.path.realpath(value)).startswith(lab):
            return None  # the course's peers: no learner's code in them
        argv[1:1] = ["-S", os.path.join(lab, "guarded.py"), *(["--alone"] if self.alone else [])]
        return None

    def _frame_read(self, owner: object, name: str, frame: FrameType | None) -> str | None:
        """A frame read from a traceback (or a generator): refused when it is the guard's own, unless the
        harness (trusted) is formatting the traceback of what it reports, through traceback.py alone."""
        if type(owner) not in _FRAME_OWNERS:  # a learner's object named so (sys.audit) would run its code here
            return None
        try:
            seen = getattr(owner, name)  # inside the guard: this read raises no event of its own
        except Exception:
            return None
        if not isinstance(seen, FrameType) or not _guards(seen):
            return None
        caller = _caller(frame)
        traceback = os.path.join(self.stdlib, "traceback.py")
        while caller is not None and os.path.realpath(caller.f_code.co_filename) == traceback:
            caller = caller.f_back
        harness = os.path.join(os.path.realpath(self.runtime), "lab_runtime", "harness.py")
        if (
            caller is not None
            and caller.f_code.co_name == "raised"
            and os.path.realpath(caller.f_code.co_filename) == (harness)
        ):
            return None
        return f"{name}: the guard's own frame is not available to your code"

    def _is_python(self, program: str) -> bool:
        return bool(_PYTHON.search(os.path.basename(program))) or (
            os.path.basename(program) == os.path.basename(sys.executable)
            and os.path.realpath(program) == os.path.realpath(sys.executable)
        )

    def refusal(self, event: str, args: tuple, frame: FrameType | None) -> str | None:
        if event == "code.__new__":
            caller = _caller(frame)
            code = caller.f_code if caller is not None else None
            if (
                code is not None
                and code.co_name == "coroutine"
                and os.path.realpath(code.co_filename) == (os.path.join(self.stdlib, "types.py"))
            ):
                return None  # types.coroutine sets a flag on a function's own code (asyncio uses it)
            return "code.__new__: code built from parts, not from your files"
        if event in ("function.__new__", "exec") or (
            event == "object.__setattr__" and len(args) > 1 and type(args[1]) is str and args[1] == "__code__"
        ):
            code = args[2] if event == "object.__setattr__" and len(args) > 2 else args[0] if args else None
            if isinstance(code, str | bytes):
                return self._compile(code, None, frame, event)
            if self._made_here(code):
                return None
            return f"{event}: a code object that was not compiled from your files"
        if event in INTROSPECTION:
            return (
                f"{event}: reading every object or frame of the process, or tracing it, is not available to your code"
            )
        if event == "object.__getattr__" and len(args) > 1 and type(args[1]) is str and args[1] in FRAME_ATTRIBUTES:
            return self._frame_read(args[0], args[1], frame)
        if event == "pickle.find_class":
            module, name = (_text(a) or "" for a in [*args, "", ""][:2])
            top = module.partition(".")[0]
            if top in _UNPICKLE_MODULES and name not in _UNPICKLE_SAFE.get(module, ()):
                return f"pickle.find_class {module}.{name}: unpickling code, or what makes or imports it"
            return None
        if event in ("marshal.loads", "marshal.load"):
            caller = _caller(frame)
            if caller is not None and caller.f_code.co_name == "_compile_bytecode":
                path = _text(caller.f_locals.get("bytecode_path"))
                given = args[0] if args else None
                data = b"".join([given]) if isinstance(given, bytes) else None
                data = bytes(given) if type(given) is memoryview else data
                if path is not None and self._trusted(path) and data is not None:
                    try:
                        with open(path, "rb") as file:
                            if file.read()[16:] == data:  # the import system hands a memoryview
                                return None
                    except OSError:
                        pass
            return f"{event}: loading code (or data) from bytes, not from your files"
        if event == "import":
            name = _text(args[0]) if args else ""
            name = name or ""
            if name.partition(".")[0] in ("ctypes", "_ctypes"):
                return f"import {name}: ctypes is not available to your code while it is graded"
            if [id(f) for f in sys.meta_path] != self.meta_path or [id(h) for h in sys.path_hooks] != self.path_hooks:
                return f"import {name}: an import hook was added (sys.meta_path or sys.path_hooks)"
            return None
        if event.startswith("ctypes."):
            return f"{event}: ctypes is not available to your code while it is graded"
        if event == "subprocess.Popen" and len(args) > 1:
            return self.child(args[0], args[1], frame)
        if event in ("os.exec", "os.posix_spawn", "os.spawn", "os.system"):
            words = [w for w in (_text(v) for v in _flat(args)) if w is not None]
            if any(_PYTHON.search(os.path.basename(w)) for w in words) or "python" in " ".join(words):
                return f"{event}: a Python started this way runs without the guard; start it with subprocess"
        if event == "compile":
            return self._compile(args[0] if args else None, args[1] if len(args) > 1 else None, frame, event)
        return None

    def _compile(self, source: object, filename: object, frame: FrameType | None, event: str) -> str | None:
        if self._a_file(source, filename):
            path = os.path.realpath(_text(filename) or "")
            why = self._alone(path)
            if why is None:
                self.compiled |= {path, _text(filename) or path}
            return why
        caller = _caller(frame)
        maker = self._maker(caller)
        text = _text(source)
        if maker == "parse":
            return None  # ast.parse makes no code
        if maker and text is not None and len(text) <= SHORT and _template(maker, text):
            return None  # namedtuple, dataclasses and typing compile a few lines of their own templates
        shown = repr(text)[:40] if text is not None else type(source).__name__
        return f"{event} of {shown}: code that is not one of your files"
