"""The guard: an audit hook (PEP 578) that runs before the learner's code and refuses the answer key.

A stage's code may use the reference pieces of earlier stages; the pieces a stage teaches are not
in its runtime at all. What the runtime cannot hide, the guard refuses: importing the grader or
nbgrader, starting a process that runs the reference server or the grader, writing outside the
learner's folder and the temporary folder. Each refusal is also reported on a private copy of
stderr, one line starting with :data:`MARK`, and, when grading asks for it (``$MCP_LAB_GUARD_PIPE``),
on a pipe the grader reads (a FIFO the guard opens before the learner's code runs, and which that code
may not open itself): what went down a pipe cannot be erased or rewritten, so grading can flag it.
The learner's code can write down that pipe too (it holds the descriptor): the guard's records carry a
token and a number that code never sees (:class:`Channel`), so what else is on the pipe is flagged.
An audit hook cannot be removed once added (``sys.addaudithook``); its state (the rules, the token,
the flag that keeps its own events unjudged) is out of the learner's reach while grading: the guard's
frame in a refusal's traceback, the garbage collector's lists of objects, other threads' frames and
tracing are refused (:mod:`lab_runtime.codeguard`).

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
import select
import sys
import threading
import time

from .codeguard import INTROSPECTION, CodeRules

MARK = "[mcp-lab guard] "
FORBIDDEN_MODULES = ("grader", "nbgrader")
# What in a command line runs the reference, the grader or the course's command line.
_PROGRAMS = ("mcp-lab", "nbgrader")
_FILE = re.compile(r"(^|/)(reference|grader)/[\w/]*\.py$")
_CODE = re.compile(r"\b(import|from)\s+(reference|grader|nbgrader)\b")
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC


def _exact(value: object) -> str | None:
    """``value`` as an exact ``str``, running no method of the learner's (a subclass's ``split`` or a
    path's ``__fspath__`` would run inside the guard, unjudged); the standard library's paths as text."""
    if isinstance(value, str):
        return "".join([value])
    if isinstance(value, bytes):
        return os.fsdecode(b"".join([value]))
    pathlib = sys.modules.get("pathlib")
    if pathlib is not None and type(value) in (pathlib.PosixPath, pathlib.PurePosixPath):
        return str(value)
    return None


def _words(value: object) -> list[str]:
    text = _exact(value)
    if text is not None:
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
        name = (_exact(args[0]) if args else None) or ""
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
        shown = _exact(mode) if isinstance(mode, str) else None
        writes = (shown is not None and any(c in shown for c in "wax+")) or (
            type(flags) is int and flags & _WRITE_FLAGS
        )
        text = _exact(path)
        if writes and text is not None:
            full = os.path.realpath(text)
            if not any(full == folder or full.startswith(folder + os.sep) for folder in allowed):
                return f"open {full} for writing: outside your folder"
    return None


def _stage() -> dict[str, object]:
    """What the course wrote beside the guard about this runtime's stage (its number, what it teaches)."""
    try:
        with open(os.path.join(os.path.dirname(__file__), "stage.json"), encoding="utf-8") as file:
            found = json.load(file)
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _answers() -> tuple[str, ...]:
    """The reference modules this runtime's stage teaches (written beside the guard by the course)."""
    return tuple(str(a) for a in _stage().get("answers", ()) or ())


class Channel:
    """The guard's end of the grader's pipe (a FIFO): each record one whole write, signed.

    A learner's process can write down the same pipe (it finds the descriptor in ``/proc/self/fd``),
    so each record carries this process's *token*, 16 random bytes made here before the learner's code
    runs and never written anywhere that code can read (the pipe is write-only to it), and a sequence
    number: the grader (:mod:`grader.grading.refusals`) takes the lines with a token it saw open
    (``"n": 0``) and the numbers in order as the guard's; anything else on the pipe is flagged, and a
    number missing is a record lost. A record starts with a newline, so a partial line the learner's
    code left on the pipe ends there and never swallows the guard's. A full pipe is waited for (the
    grader drains it), a descriptor closed or replaced by the learner's code is opened again."""

    LIMIT = 4000  # bytes of one record: under PIPE_BUF (4096), so one write is never interleaved
    WAIT = 10.0  # seconds a record waits for room in a full pipe

    def __init__(self, path: str) -> None:
        self.path = path
        self.token = os.urandom(16).hex()
        self.number = 0
        self.fd, self.channel = self._open()
        self.lock = threading.RLock()  # a refusal in a signal handler, while this thread writes one
        if self.fd >= 0:
            self.send({"open": os.getpid()})

    def _open(self) -> tuple[int, tuple[int, int] | None]:
        """The pipe, opened for writing (the guard's own opens are not refused); ``(-1, None)`` when
        grading did not ask for one or its reader is gone."""
        if not self.path:
            return -1, None
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            found = os.fstat(fd)
        except OSError:
            return -1, None
        return fd, (found.st_dev, found.st_ino)

    def _intact(self) -> bool:
        try:
            found = os.fstat(self.fd)
        except OSError:
            return False
        return (found.st_dev, found.st_ino) == self.channel

    def send(self, record: dict[str, object]) -> None:
        with self.lock:
            if self.fd < 0:
                return
            if self.number and not self._intact():  # closed, or another file put in its place
                self.fd, self.channel = self._open()
                if self.fd < 0:
                    return
                self._write({"reopened": True})
            self._write(record)

    def _write(self, record: dict[str, object]) -> None:
        data = {"g": self.token, "n": self.number, **record}
        line = json.dumps(data)
        while len(line.encode("utf-8")) + 2 > self.LIMIT and isinstance(data.get("why"), str):
            data["why"] = str(data["why"])[: len(str(data["why"])) // 2]
            line = json.dumps(data)
        self.number += 1
        payload = b"\n" + line.encode("utf-8", "replace") + b"\n"
        deadline = time.monotonic() + self.WAIT
        while True:
            try:
                os.write(self.fd, payload)  # all of it or nothing: a pipe write under PIPE_BUF
                return
            except BlockingIOError:
                left = deadline - time.monotonic()
                if left <= 0:
                    return  # lost: the grader sees the number missing
                select.select([], [self.fd], [], min(left, 0.5))
            except OSError:
                return


def _is_channel(path: object, channel: tuple[int, int]) -> bool:
    """Whether ``path`` (a name, or a file descriptor) is the grader's pipe, by any name or link."""
    try:
        found = os.stat(path) if isinstance(path, str | bytes | int) else None
    except (OSError, ValueError):
        return False
    return found is not None and (found.st_dev, found.st_ino) == channel


CODE_EVENTS = frozenset(
    {"compile", "exec", "marshal.loads", "marshal.load", "code.__new__", "import", "function.__new__"}
    | {"pickle.find_class", "object.__setattr__", "object.__getattr__"}
    | INTROSPECTION
    | {"subprocess.Popen", "os.exec", "os.posix_spawn", "os.spawn", "os.system"}
)


def _code_rules(alone: bool) -> CodeRules:
    """The rules for code (:mod:`lab_runtime.codeguard`): files of the runtime and the standard library
    are trusted as they are on disk (read-only in the sandbox)."""
    runtime = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    stdlib = os.path.dirname(os.path.realpath(os.__file__))
    stage = str(_stage().get("stage", ""))
    return CodeRules(
        trusted=(runtime, stdlib, sys.base_prefix), uid=os.getuid(), runtime=runtime, stage=stage, alone=alone
    )


def temporary_folder() -> str:
    """The folder ``tempfile.gettempdir()`` gives, found as tempfile finds it: the first of ``$TMPDIR``,
    ``$TEMP``, ``$TMP``, ``/tmp``, ``/var/tmp``, ``/usr/tmp`` and the working folder that takes a new
    file. Not imported: tempfile brings shutil, random and hashlib, 14 ms of CPU in each of the fifty
    processes a grading starts, for one call made before the learner's code runs.

    >>> import tempfile
    >>> temporary_folder() == tempfile.gettempdir()
    True
    """
    folders = [os.environ[name] for name in ("TMPDIR", "TEMP", "TMP") if os.environ.get(name)]
    folders += ["/tmp", "/var/tmp", "/usr/tmp"]
    try:
        folders.append(os.getcwd())
    except OSError:
        folders.append(os.curdir)
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    for folder in folders:
        folder = os.path.abspath(folder) if folder != os.curdir else folder
        for attempt in range(100):
            name = os.path.join(folder, f"tmp{os.getpid()}-{attempt}-{os.urandom(4).hex()}")
            try:
                file = os.open(name, flags, 0o600)
            except FileExistsError:
                continue
            except OSError:
                break
            try:
                os.write(file, b"blat")
            finally:
                os.close(file)
            os.unlink(name)
            return folder
    raise FileNotFoundError(f"No usable temporary directory found in {folders}")


def install(folder: str, alone: bool = False) -> None:
    """Add the hook for a learner's process working in ``folder`` (``alone``: a child of stage 05's
    capstone, which may run no other file of the submission)."""
    allowed = tuple(os.path.realpath(p) for p in (folder, temporary_folder(), "/tmp", os.devnull))
    answers = _answers()
    report = os.fdopen(os.dup(2), "w", encoding="utf-8", errors="replace", closefd=True)
    log = Channel(os.environ.get("MCP_LAB_GUARD_PIPE", ""))
    code = _code_rules(alone) if os.environ.get("MCP_LAB_CODE_GUARD") == "1" else None
    inside = threading.local()  # the guard's own opens and frame reads raise events too: not judged

    def hook(event: str, args: tuple) -> None:
        if getattr(inside, "busy", False):
            return
        inside.busy = True
        try:
            why = refusal(event, args, allowed, answers)
            opened = (args[0] if isinstance(args[0], int) else _exact(args[0])) if event == "open" and args else None
            if why is None and log.channel is not None and opened is not None and _is_channel(opened, log.channel):
                why = "open the guard's channel: it is the grader's"
            if why is None and event == REFUSE:
                why = _exact(args[0] if args else "") or "refused"
            if why is None and code is not None and (event in CODE_EVENTS or event.startswith("ctypes.")):
                why = code.refusal(event, args, sys._getframe(1))
        finally:
            inside.busy = False
        if why is None:
            return
        try:
            report.write(MARK + json.dumps({"event": event, "why": why[:1000]}) + "\n")
            report.flush()
        except (OSError, ValueError):
            pass
        inside.busy = True
        try:
            log.send({"event": event, "why": why[:1000]})
        finally:
            inside.busy = False
        raise PermissionError(f"refused by the course: {why}")

    sys.addaudithook(hook)


REFUSE = "mcp-lab.refuse"  # an event the course's own programs raise for what they refuse to run (guarded.py)
