"""The guard: an audit hook (PEP 578) that runs before the learner's code and refuses the answer key.

A stage's code may use the reference pieces of earlier stages; the pieces a stage teaches are not
in its runtime at all. What the runtime cannot hide, the guard refuses: importing the grader or
nbgrader, starting a process that runs the reference server or the grader, writing outside the
learner's folder and the temporary folder. Each refusal is also reported on a private copy of
stderr, one line starting with :data:`MARK`, and, when grading asks for it (``$MCP_LAB_GUARD_PIPE``),
on a pipe the grader reads (a FIFO the guard opens before the learner's code runs, and which that code
may not open itself): what went down a pipe cannot be erased or rewritten, so grading can flag it.
An audit hook cannot be removed once added (``sys.addaudithook``).

    >>> refusal("import", ("grader.checker",))
    'import grader.checker: the grader is not available to your code'
    >>> print(refusal("subprocess.Popen", ("python3", ["python3", "-m", "reference.server"], None, None)))
    subprocess.Popen python3 -m reference.server: runs the course's answer key
    >>> refusal("import", ("json",)) is None
    True
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import threading

from .codeguard import CodeRules

MARK = "[mcp-lab guard] "
FORBIDDEN_MODULES = ("grader", "nbgrader")
# What in a command line runs the reference, the grader or the course's command line.
_PROGRAMS = ("mcp-lab", "nbgrader")
_FILE = re.compile(r"(^|/)(reference|grader)/[\w/]*\.py$")
_CODE = re.compile(r"\b(import|from)\s+(reference|grader|nbgrader)\b")
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC


def _words(value: object) -> list[str]:
    if isinstance(value, bytes | str | os.PathLike):
        text = os.fsdecode(value)
        return text.split() if isinstance(value, str | bytes) and " " in text else [text]
    if isinstance(value, list | tuple):
        return [w for v in value for w in _words(v)]
    return []


def runs_answer_key(words: list[str]) -> bool:
    """Whether a command line runs the reference, the grader or the course's command line.

    >>> runs_answer_key(["python3", "-m", "reference.server"]), runs_answer_key(["python3", "server.py"])
    (True, False)
    """
    if _CODE.search(" ".join(words)):
        return True
    for i, word in enumerate(words):
        if os.path.basename(word) in _PROGRAMS or _FILE.search(word):
            return True
        module = words[i + 1] if word == "-m" and i + 1 < len(words) else word[2:] if word.startswith("-m") else ""
        if module.partition(".")[0] in ("reference", "grader", "nbgrader"):
            return True
    return False


def refusal(event: str, args: tuple, allowed: tuple[str, ...] = (), answers: tuple[str, ...] = ()) -> str | None:
    """Why ``event`` with ``args`` is refused (None: it is not). ``allowed``: folders one may write in;
    ``answers``: the reference modules the stage teaches (not in its runtime: asking for one is noted)."""
    if event == "import":
        name = args[0] if args and isinstance(args[0], str) else ""
        top = name.partition(".")[0]
        if top in FORBIDDEN_MODULES:
            return f"import {name}: the grader is not available to your code"
        if top == "reference" and name.partition(".")[2].partition(".")[0] in answers:
            return f"import {name}: the answer key of this stage is not available to your code"
        return None
    if event in ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn"):
        words = _words(args[1] if event == "subprocess.Popen" and len(args) > 1 else args[:2])
        if runs_answer_key(words):
            return f"{event} {' '.join(words)[:120]}: runs the course's answer key"
        return None
    if event == "open" and len(args) >= 3 and allowed:
        path, mode, flags = args[0], args[1], args[2]
        writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            isinstance(flags, int) and flags & _WRITE_FLAGS
        )
        if writes and isinstance(path, str | bytes | os.PathLike):
            full = os.path.realpath(os.fsdecode(path))
            if not any(full == folder or full.startswith(folder + os.sep) for folder in allowed):
                return f"open {full} for writing: outside your folder"
    return None


def _answers() -> tuple[str, ...]:
    """The reference modules this runtime's stage teaches (written beside the guard by the course)."""
    try:
        with open(os.path.join(os.path.dirname(__file__), "stage.json"), encoding="utf-8") as file:
            return tuple(json.load(file).get("answers", ()))
    except (OSError, ValueError):
        return ()


def _open_channel(path: str) -> tuple[int, tuple[int, int] | None]:
    """The grader's pipe, opened now, before the learner's code runs (the guard's own opens are not
    refused); ``(-1, None)`` when grading did not ask for one or its reader is gone."""
    if not path:
        return -1, None
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        found = os.fstat(fd)
    except OSError:
        return -1, None
    return fd, (found.st_dev, found.st_ino)


def _is_channel(path: object, channel: tuple[int, int]) -> bool:
    """Whether ``path`` (a name, or a file descriptor) is the grader's pipe, by any name or link."""
    try:
        found = os.stat(path) if isinstance(path, str | bytes | int | os.PathLike) else None
    except (OSError, ValueError):
        return False
    return found is not None and (found.st_dev, found.st_ino) == channel


CODE_EVENTS = frozenset(
    {"compile", "exec", "marshal.loads", "marshal.load", "code.__new__", "import"}
    | {"subprocess.Popen", "os.exec", "os.posix_spawn", "os.spawn", "os.system"}
)


def _code_rules() -> CodeRules:
    """The rules for code (:mod:`lab_runtime.codeguard`): files of the runtime and the standard library
    are trusted as they are on disk (read-only in the sandbox)."""
    runtime = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    stdlib = os.path.dirname(os.path.realpath(os.__file__))
    return CodeRules(trusted=(runtime, stdlib, sys.base_prefix), uid=os.getuid(), runtime=runtime)


def install(folder: str) -> None:
    """Add the hook for a learner's process working in ``folder``."""
    allowed = tuple(os.path.realpath(p) for p in (folder, tempfile.gettempdir(), "/tmp", os.devnull))
    answers = _answers()
    report = os.fdopen(os.dup(2), "w", encoding="utf-8", errors="replace", closefd=True)
    log, channel = _open_channel(os.environ.get("MCP_LAB_GUARD_PIPE", ""))
    code = _code_rules() if os.environ.get("MCP_LAB_CODE_GUARD") == "1" else None
    inside = threading.local()  # the guard's own opens and frame reads raise events too: not judged

    def hook(event: str, args: tuple) -> None:
        if getattr(inside, "busy", False):
            return
        inside.busy = True
        try:
            why = refusal(event, args, allowed, answers)
            if why is None and channel is not None and event == "open" and args and _is_channel(args[0], channel):
                why = "open the guard's channel: it is the grader's"
            if why is None and code is not None and (event in CODE_EVENTS or event.startswith("ctypes.")):
                why = code.refusal(event, args, sys._getframe(1))
        finally:
            inside.busy = False
        if why is None:
            return
        line = json.dumps({"event": event, "why": why[:1000]}) + "\n"  # one write under PIPE_BUF: whole
        try:
            report.write(MARK + line)
            report.flush()
            if log >= 0:
                os.write(log, line.encode("utf-8", "replace"))
        except (OSError, ValueError):
            pass
        raise PermissionError(f"refused by the course: {why}")

    sys.addaudithook(hook)
