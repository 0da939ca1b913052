"""The learner's functions and objects, seen from the checks: proxies to a harness process.

The checks call the learner's code as if it were here: ``module.handle_line(line, methods)``,
``conn.execute(sql).fetchone()``, ``client.request("ping")``. Each call is a request to
:mod:`lab_runtime.harness` in a child process and waits a bounded time for the answer; what the
learner's code raises comes back as an exception of the same name that derives from the same
standard class (a learner's ``ValueError`` is a ``ValueError`` here, their ``ToolError`` an
``Exception`` named ``ToolError``), carrying the line of their code it came from.

    >>> import sys
    >>> from grader.course import runtime
    >>> harness = Harness([sys.executable, "-S", str(runtime.cached("01") / "lab_runtime" / "harness.py"), "."],
    ...                   env={"PYTHONPATH": str(runtime.cached("01"))})
    >>> buffer = harness.stdlib("io.BytesIO")(b"one\\ntwo\\n")
    >>> buffer.readline(), buffer.getvalue()
    (b'one\\n', b'one\\ntwo\\n')
    >>> harness.close()

A call that does not return within its limit ends the process (:class:`RemoteTimeout`); a process
that dies on its own reports :class:`RemoteDied`. Both restart the harness on the next call.
"""

from __future__ import annotations

import builtins
import contextlib
import itertools
import json
import sys
import time
from collections.abc import Sequence
from typing import Any

from reference import thread_state
from reference.child import ChildProcess, Line

from .expect import Failure
from .lab_runtime import wire
from .lab_runtime.guard import MARK

DEFAULT_LIMIT = 10.0  # seconds one call may take, unless the check says otherwise
START_LIMIT = 10.0  # seconds for the harness to import the learner's module
MAX_REPLY = 64 << 20  # bytes of one answer kept (a learner's function may return a lot)
# A call's limit is on the time the harness could run: it grows by what its threads waited for a CPU
# (a busy machine), by this much at most. A call blocked on a read, or looping while it gets the CPU,
# ends at its limit, however busy the machine.
MOST_WAIT_FOR_CPU = 30.0


class RemoteError(Exception):
    """The harness could not give an answer."""


class RemoteTimeout(RemoteError):
    def __init__(self, what: str, limit: float, waited: float = 0.0) -> None:
        self.limit = limit
        self.waited = waited
        super().__init__(f"{what} did not return {self.within}")

    @property
    def within(self) -> str:
        """The limit as the message says it: "within 4 s", and what a busy machine added to it."""
        if self.waited < 0.05:
            return f"within {self.limit:g} s"
        return f"within {self.limit:g} s of the time it could run (it waited {self.waited:.1f} s more for a CPU)"


class RemoteDied(RemoteError):
    def __init__(self, what: str, code: int | None, stderr: str) -> None:
        self.code = code
        self.stderr = stderr
        super().__init__(f"the process running your code ended during {what} (exit status {code})")


class RemoteRaised(Exception):
    """Mixed into the class of an exception the learner's code raised in the harness."""

    kinds: list[list[str]]
    where: str
    remote_traceback: str


_CLASSES: dict[tuple[tuple[str, str], ...], type] = {}


def _local_class(module: str, qualname: str) -> type | None:
    """The standard exception class ``module.qualname`` in this process, if there is one.

    The names are the learner's process's text: a module already loaded here is looked up, never
    imported (an exception whose ``__module__`` says ``"this"`` must not run ``this`` in the grader)."""
    if not isinstance(module, str) or not isinstance(qualname, str):
        return None
    if module != "builtins" and module.partition(".")[0] not in sys.stdlib_module_names:
        return None  # never the learner's modules
    found: Any = builtins if module == "builtins" else sys.modules.get(module)
    if found is None:
        return None
    try:
        for part in qualname.split("."):
            found = getattr(found, part)
    except AttributeError:
        return None
    return found if isinstance(found, type) and issubclass(found, BaseException) else None


def exception_class_key(kinds: Any) -> tuple[tuple[str, str], ...]:
    """``kinds`` as the learner's process sent it, kept only where it is pairs of text."""
    if not isinstance(kinds, list | tuple):
        return ()
    pairs = [k for k in kinds[:32] if isinstance(k, list | tuple) and len(k) == 2]
    return tuple((k[0], k[1]) for k in pairs if isinstance(k[0], str) and isinstance(k[1], str))


def exception_class(kinds: Sequence[Sequence[str]]) -> type:
    """A class named like the remote one (``kinds[0]``) deriving from the nearest standard one."""
    key = exception_class_key(kinds)
    if key not in _CLASSES:
        base: type = Exception
        for module, qualname in key:
            local = _local_class(module, qualname)
            if local is not None:
                base = local if issubclass(local, Exception) else Exception
                break
        module, qualname = key[0] if key else ("builtins", "Exception")
        name = qualname.rpartition(".")[2] if qualname.rpartition(".")[2].isidentifier() else "Exception"
        with contextlib.suppress(TypeError):  # a base that refuses to be subclassed
            _CLASSES[key] = type(name, (RemoteRaised, base), {"__module__": module})
        _CLASSES.setdefault(key, type(name, (RemoteRaised,), {"__module__": module}))
    return _CLASSES[key]


def rebuild(raised: dict[str, Any]) -> BaseException:
    """The learner's exception from its text (the learner's process wrote it: every field is checked)."""
    raised = raised if isinstance(raised, dict) else {}
    kind = exception_class(raised.get("kinds", ()))
    message = str(raised.get("message", ""))[:4000]
    exc = kind.__new__(kind)
    Exception.__init__(exc, message)
    exc.kinds = [list(k) for k in exception_class_key(raised.get("kinds", ()))]
    exc.where = str(raised.get("where", ""))[:2000]
    exc.remote_traceback = str(raised.get("traceback", ""))[:8000]
    exc.args = (message,)
    fields = raised.get("fields", {})
    for name, value in fields.items() if isinstance(fields, dict) else ():
        if value is None and name in _OS_FIELDS:
            continue  # an OSError's unset errno and strerror would hide its message
        if isinstance(name, str) and name.isidentifier() and not name.startswith("_") and name not in _OWN:
            with contextlib.suppress(AttributeError, TypeError):
                setattr(exc, name, value)
    return exc


_OS_FIELDS = frozenset({"errno", "strerror", "filename", "filename2", "winerror"})
_OWN = frozenset({"kinds", "where", "remote_traceback", "args", "with_traceback", "add_note"})


def is_a(exc: BaseException | None, name: str) -> bool:
    """Whether ``exc`` (from the learner's process, or not) is of a class named ``name``, or derives from one."""
    if exc is None:
        return False
    kinds = getattr(exc, "kinds", None)
    if kinds is not None:
        return any(qualname.rpartition(".")[2] == name for _, qualname in kinds)
    return any(kind.__name__ == name for kind in type(exc).__mro__)


def type_name(value: Any) -> str:
    """``module.qualname`` of the learner's object behind a proxy (or of a local value)."""
    if isinstance(value, Remote):
        return value._type
    kind = type(value)
    return f"{kind.__module__}.{kind.__qualname__}"


def _command_line(pid: str) -> list[str]:
    """The argv of process ``pid`` ([] once it has ended, or where /proc cannot tell)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return [word.decode(errors="replace") for word in cmdline.read().split(b"\0")[:-1]]
    except OSError:
        return []


class Harness:
    """One harness process, started on first use and again after it died or was stopped."""

    def __init__(
        self,
        argv: Sequence[str],
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        program: Sequence[str] = (),
        peers: str = "",
    ) -> None:
        self.argv = list(argv)
        self.env = env
        self.cwd = cwd
        # Who the clock forgives (forgiven_delays): the harness's own command line and the folder of
        # the course's peer servers, as the learner's processes see them.
        self.program, self.peers = list(program), peers
        self.child: ChildProcess | None = None
        self.generation = 0
        self._threads_seen = 0  # the generation whose threads the child's last full reading found
        self._ids = itertools.count(1)

    # -- the process -------------------------------------------------------------------------
    def _process(self) -> ChildProcess:
        if self.child is None:
            self.child = ChildProcess(self.argv, env=self.env, cwd=self.cwd, max_line=MAX_REPLY)
            self.generation += 1
        return self.child

    def stderr(self) -> str:
        """What the learner's code printed (stderr and stdout both land there), the guard's lines left out."""
        if self.child is None:
            return ""
        text = self.child.stderr_tail(4000)
        return "\n".join(line for line in text.split("\n") if not line.startswith(MARK))

    def refusals(self) -> list[str]:
        if self.child is None:
            return []
        lines = self.child.stderr_tail(64 << 10).split("\n")
        return [json.loads(line[len(MARK) :]).get("why", "") for line in lines if line.startswith(MARK)]

    def forgiven_delays(self) -> dict[str, float]:
        """How long each thread whose waits a time limit forgives has waited for a CPU so far, by thread:
        the harness process's (its main thread runs the learner's call and the client's clock; the
        client's own threads pump the server's output to it) and the course's peer servers'. Never a
        process of the learner's own making: CPU-bound processes started on purpose wait for a CPU
        most of the time, and would buy a late timeout that time. Empty where ``/proc`` cannot tell
        (then nothing is forgiven)."""
        if self.child is None or not self.program:
            return {}
        threads = []
        for pid in self.child.group_stats():
            argv = _command_line(pid)
            if argv == self.program or self._runs_a_peer(argv):
                threads += thread_state.of_process(pid)
        return ChildProcess.thread_run_delays(threads)

    def _runs_a_peer(self, argv: list[str]) -> bool:
        """Whether ``argv`` runs a file of the course's peer servers (in the read-only runtime, when graded)."""
        python = self.program[:-2]  # [python, -S] of [python, -S, harness.py, folder]
        script = argv[len(python)] if len(argv) > len(python) and argv[: len(python)] == python else ""
        return bool(self.peers) and script.startswith(self.peers + "/")

    def forgiven_wait(self, before: dict[str, float]) -> float:
        """Seconds the most-delayed forgiven thread waited for a CPU since ``before`` (:meth:`forgiven_delays`;
        a peer started since counts its whole wait)."""
        return max((d - before.get(t, 0.0) for t, d in self.forgiven_delays().items()), default=0.0)

    def stop(self) -> None:
        if self.child is not None:
            self.child.kill()
            with contextlib.suppress(Exception):
                self.child.close(grace=0)
            self.child = None

    close = stop

    # -- requests ----------------------------------------------------------------------------
    def request(self, what: str, limit: float, **message: Any) -> Any:
        child = self._process()
        generation = self.generation
        message["id"] = next(self._ids)
        text = json.dumps(wire.encode(message, self._ref), separators=(",", ":"), ensure_ascii=False)
        if not child.send(text.encode("utf-8") + b"\n"):
            raise self._died(what)
        line, waited = self._reply(child, limit)
        if line is not None and self._threads_seen < generation:
            # The first reply of this process: it and the learner's code in it are up now (before,
            # the group held only what started them). Its threads, once: the baseline of later calls.
            child.run_delays()
            self._threads_seen = generation
        if line is None:
            if child.stdout_closed.is_set() or child.process.poll() is not None:
                raise self._died(what)
            self.stop()
            raise RemoteTimeout(what, limit, waited)
        try:
            reply = wire.loads(line.data, lambda data: Remote(self, generation, data))
        except Exception:  # the learner's code wrote on the harness's channel: its bytes, not a reply
            reply = None
        if not isinstance(reply, dict):
            self.stop()
            raise Failure(
                "module",
                f"during {what}, the process running your code wrote something that is not the course's reply "
                "on the course's own channel (a file descriptor your code does not own)",
            )
        if "raised" in reply:
            raise rebuild(reply["raised"])
        return reply.get("ok")

    @staticmethod
    def _reply(child: ChildProcess, limit: float) -> tuple[Line | None, float]:
        """The next line within ``limit`` seconds of the time the harness could run, and the seconds
        its threads waited for a CPU meanwhile (up to :data:`MOST_WAIT_FOR_CPU`); ``None`` for the line
        if none came, or stdout closed."""
        start = time.monotonic()
        before = child.known_run_delays()  # a few file reads: the threads found after the first reply
        deadline, waited = start + limit, 0.0
        while True:
            line = child.read_line(deadline - time.monotonic())
            if line is not None or child.stdout_closed.is_set() or not before:
                return line, waited
            waited = min(child.starved_known(before), MOST_WAIT_FOR_CPU)
            later = start + limit + waited
            if later <= time.monotonic() + 0.05:
                return None, waited
            deadline = later

    def _died(self, what: str) -> RemoteDied:
        child = self.child
        code = child.wait(1.0) if child is not None else None
        stderr = self.stderr()
        self.stop()
        return RemoteDied(what, code, stderr)

    def _ref(self, value: Any) -> int:
        if isinstance(value, Remote):
            if value._harness is not self or value._generation != self.generation:
                raise RemoteError("an object from an earlier run of your code (the process was restarted)")
            return value._ref
        raise TypeError(f"cannot send a {type(value).__name__} to your code's process")

    # -- what the checks use -----------------------------------------------------------------
    def module(self, name: str, limit: float = START_LIMIT) -> Any:
        return self.request(f"import {name}", limit, op="import", module=name)

    def stdlib(self, name: str) -> Any:
        return self.request(name, DEFAULT_LIMIT, op="stdlib", name=name)

    def fixture(self, name: str) -> Any:
        return self.request(f"the fixture {name}", DEFAULT_LIMIT, op="fixture", name=name)


class Remote:
    """An object of the learner's process: attributes, calls, iteration and len go over the pipe."""

    def __init__(self, harness: Harness, generation: int, data: dict[str, Any]) -> None:
        object.__setattr__(self, "_harness", harness)
        object.__setattr__(self, "_generation", generation)
        object.__setattr__(self, "_ref", data["$ref"])
        object.__setattr__(self, "_type", data.get("type", "?"))
        object.__setattr__(self, "_repr", data.get("repr", "?"))
        object.__setattr__(self, "_callable", data.get("callable", False))

    @property
    def __name__(self) -> str:
        name = self._repr
        for prefix in ("<function ", "<bound method ", "<class '"):
            if name.startswith(prefix):
                return name[len(prefix) :].split(" ")[0].rstrip("'>").rpartition(".")[2]
        return self._type.rpartition(".")[2]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return self._harness.request(f"reading .{name}", DEFAULT_LIMIT, op="get", target=self, name=name)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("the learner's objects are read and called, not changed, by the checks")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.invoke(args, kwargs, DEFAULT_LIMIT)

    def invoke(self, args: Sequence[Any], kwargs: dict[str, Any], limit: float) -> Any:
        what = f"{self.__name__}(...)"
        return self._harness.request(what, limit, op="call", target=self, args=list(args), kwargs=kwargs)

    def __iter__(self) -> Any:
        return iter(self._harness.request("list(...)", DEFAULT_LIMIT, op="list", target=self))

    def __len__(self) -> int:
        return self._harness.request("len(...)", DEFAULT_LIMIT, op="len", target=self)

    def __bool__(self) -> bool:
        return True

    def __repr__(self) -> str:
        return self._repr
