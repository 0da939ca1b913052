"""What a stage notebook imports: the ``%%module`` cell magic, the graded checks, and ways to watch a server.

A stage's set-up cell calls :func:`setup`. From then on a cell that starts with ``%%module framing``
is saved as ``framing.py`` beside the notebook *and* run in the kernel, so the learner can try the
functions at once. The graded cells call :func:`check`: it runs that cell's public checks against
the ``%%module`` files, in processes of their own (a loop or a crash in the learner's code costs
the cell, never the kernel). Grading runs the same checks, and hidden ones, outside this kernel:
nothing done here changes a grade.

    >>> request("ping", id=7)
    {'jsonrpc': '2.0', 'id': 7, 'method': 'ping'}
    >>> frame_bytes("hello?")
    b'hello?\\n'
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import json
import keyword
import signal
import sys
import types
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reference import MODERN_REVISION, PROTOCOL_REVISION, database
from reference.framing import encode

from . import runtime
from .drive import REPLY_TIMEOUT, Server, fresh_id, initialize, modern, notification, request
from .expect import Failure, show
from .pysource import parse as parse_source
from .work import Work

_STAGE: list[str] = []  # the stage this kernel's notebook is, set by setup()


# -- set-up and the %%module magic --------------------------------------------------------------
def setup(stage: str) -> None:
    """Register ``%%module`` in this kernel and say which revision and database the stage uses."""
    _STAGE[:] = [stage]
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - the course always runs in IPython
        ip = None
    else:
        ip = get_ipython()
    if ip is not None:
        ip.register_magic_function(module_magic, magic_kind="cell", magic_name="module")
    # The course teaches the current revision; the legacy handshake is what old clients still send.
    print(f"Stage {stage} | MCP {MODERN_REVISION} (legacy: {PROTOCOL_REVISION}) | shop database {shop_db()}")


def stage() -> str:
    if not _STAGE:
        raise Failure("module", "run the notebook's first code cell (lab.setup) first")
    return _STAGE[0]


def shop_db() -> Path:
    """The course's shop database, built on first use."""
    return database.ensure_default()


def module_magic(line: str, cell: str) -> None:
    """``%%module NAME``: save the cell as NAME.py beside the notebook, then run it here."""
    name = line.strip()
    if not name.isidentifier() or keyword.iskeyword(name) or name in ("reference", "lab_runtime", "grader"):
        raise Failure("module", f"%%module needs a Python module name of your own, got {name!r}")
    path = Path.cwd() / f"{name}.py"
    path.write_text(cell, encoding="utf-8")
    importlib.invalidate_caches()
    _warn_imports(name, cell)
    # Run it as the module NAME, the way the file runs in a process: `if __name__ == "__main__":`
    # stays false (a server's loop never starts on the kernel's own stdin), `import NAME` gives
    # this module, and a traceback shows the lines of NAME.py.
    module = types.ModuleType(name)
    module.__file__ = str(path)
    sys.modules[name] = module
    # The checks' processes find the course's small programs as the top-level package lab_runtime
    # (stage 07's chatty library): so does the kernel.
    sys.modules.setdefault("lab_runtime", importlib.import_module("grader.course.lab_runtime"))
    exec(compile(cell, str(path), "exec"), module.__dict__)
    from IPython import get_ipython

    # Then its names are the notebook's too, so the next cells can try them.
    get_ipython().user_ns.update({k: v for k, v in vars(module).items() if not k.startswith("__")})


def _warn_imports(name: str, source: str) -> None:
    """Say at once when a module imports a course piece that the checks' runtime will not have."""
    if not _STAGE:
        return
    allowed = runtime.plan(_STAGE[0]).may_import
    try:
        tree = parse_source(source)
    except SyntaxError:
        return  # running it shows the error
    for node in ast.walk(tree):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        for imported in names:
            top, _, rest = imported.partition(".")
            piece = rest.partition(".")[0]
            if (top == "reference" and piece not in allowed) or top in ("grader", "nbgrader"):
                print(
                    f"note: {name}.py imports {imported}, which this stage's checks do not provide: "
                    f"they run your code with the course pieces {sorted(allowed) or 'none'} only "
                    f"(stage {_STAGE[0]} teaches the rest)",
                    file=sys.stdout,
                )


# -- the graded checks -------------------------------------------------------------------------
def work() -> Work:
    """The learner's files in this notebook's folder, for this stage, with the answers that are values."""
    from . import clinic
    from .checks import VALUES

    answers: dict[str, Any] = {}
    try:
        from IPython import get_ipython

        namespace = get_ipython().user_ns if get_ipython() is not None else {}
    except ImportError:  # pragma: no cover - the course always runs in IPython
        namespace = {}
    for name in VALUES.get(stage(), ()):
        if name in namespace:
            answers[name] = namespace[name]
    return Work(Path.cwd(), stage(), answers=answers, student=clinic.student(), salt=clinic.salt())


def check(grade_id: str) -> None:
    """Run the public checks of the graded cell ``grade_id`` on your files; a failure says what rule broke."""
    from grader.checker import schema_formats

    from .checks import cell, run

    # The kernel checks no "iri" format: its grammar's import costs a second of CPU at the first check.
    schema_formats.leave_out(schema_formats.SLOWEST)
    entry = cell(stage(), grade_id)
    with work() as mine:
        run(entry, mine)
    print(f"public checks passed: {entry.says}")


# -- servers to run and watch ------------------------------------------------------------------
def program(name: str) -> list[str]:
    """The command that runs your ``%%module NAME`` file as a whole server."""
    return work().program(name)


def host(piece: str) -> list[str]:
    """The command that runs the course's server with your ``piece`` (a ``%%module``) in it."""
    return work().host(piece)


def reference() -> list[str]:
    """The command that runs the course's finished server (the answer key)."""
    return [sys.executable, "-m", "reference.server"]


def adversary(name: str) -> list[str]:
    """The command that runs a server with a hard habit (stage 06): polite, reverse, chatty, mute,
    babbler, vanish, noisy, deaf or stubborn; for the eras, legacy (legacy:CODE, legacy:silent),
    future or asker (asker:SEED)."""
    with work() as mine:
        return mine.command(mine.peer("adversaries", name))


def exhibit(name: str) -> list[str]:
    """The command that runs a gallery exhibit: a server with one deliberate defect."""
    from grader.gallery import command

    return command(name)


def demo_session(argv: Sequence[str] | None = None) -> None:
    """Run a whole scripted session against ``argv`` (the reference by default), frame by frame."""
    from reference.session import run_session

    run_session(list(argv) if argv else reference(), out=sys.stdout)


def frame_bytes(frame: Any) -> bytes:
    """What is sent for ``frame``: a message as one JSON line; text or bytes as the raw line it is."""
    if isinstance(frame, bytes):
        return frame if frame.endswith(b"\n") else frame + b"\n"
    if isinstance(frame, str):
        return frame.encode("utf-8") + (b"" if frame.endswith("\n") else b"\n")
    return encode(frame)


def inspect(
    argv: Sequence[str],
    frames: Sequence[Any] | None = None,
    against: Sequence[str] | None = None,
    timeout: float = REPLY_TIMEOUT,
) -> None:
    """Show a session with ``argv`` in the wire inspector: each frame with its time, pretty-printed on a
    click, requests linked to replies; with ``against``, that server's session beside it and the first
    frame that differs, with the rule it breaks. A box below sends any line you type to a live copy.
    A frame is a message (a dict or list, sent as one JSON line) or a raw line (text or bytes, sent as
    it is). The frames default to the handshake and a ping; ``timeout`` bounds the wait for each
    reply. Where no widgets show, the transcript is the output."""
    from .inspector import show as show_inspector

    script = (
        frames
        if frames is not None
        else [initialize(id=1), notification("notifications/initialized"), request("ping", id=2)]
    )
    show_inspector(argv, script, against, timeout=timeout)


def watch(argv: Sequence[str], frames: Sequence[Any], wait: float = 0.5) -> None:
    """Send ``frames`` one by one (messages, or raw lines as text or bytes) and print, with times,
    what comes back while stdin stays open; then close stdin and print what arrives after that.

    A reply that shows up only after ``stdin closed`` was sitting in an unflushed buffer. A stdout
    line that is not JSON is marked so (``!! not JSON``), as the inspector marks it.
    """
    from .timeline import line_marks

    def received(item: Any) -> str:
        marks = "".join(f"   !! {mark}" for mark in line_marks(item.line.data))
        return f"{item.line.at:6.2f} s  <- {show(item.line.data)}{marks}"

    with Server(argv, judge=False) as server:  # it shows what came; the checks judge it
        probe = server.probe
        for frame in frames:
            data = frame_bytes(frame)
            probe.send_raw(data)
            print(f"{probe.child.elapsed():6.2f} s  -> {show(data)}")
            for item in probe.read_for(wait):
                print(received(item))
        closed = probe.child.elapsed()  # taken before closing: what the server writes next comes after it
        probe.close_stdin()
        print(f"{closed:6.2f} s  (stdin closed)")
        for item in probe.read_for(wait):
            print(received(item))
        code = probe.wait_exit(wait)
        print(f"{probe.child.elapsed():6.2f} s  (exit status {code if code is not None else 'none yet'})")


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Stop the code inside after ``seconds`` (a cell that tries the learner's code must end).

    It raises TimeoutError in the kernel's main thread, through any ``sleep`` or blocking read.
    """

    def stop(signum: int, frame: Any) -> None:
        raise TimeoutError(f"stopped after {seconds:g} s: something waited without a timeout")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def inspector_command(name: str) -> str:
    """The command that opens your ``%%module NAME`` server in the MCP Inspector."""
    from .checks.stage05 import INSPECTOR  # the version the graded cell runs, as bench/install_corpus.sh pins it

    return f"npx -y {INSPECTOR} {sys.executable} {work().file(name)}"


# -- Streamable HTTP (stage 12) ----------------------------------------------------------------------
@contextlib.contextmanager
def serve_http(name: str, token: str | None = None) -> Iterator[str]:
    """Run your ``%%module NAME`` HTTP server in a process of its own, built by its ``make_server`` as
    the checks build it; yield its URL. When the block ends it is stopped, and what it wrote to
    stderr is shown."""
    from .http_bridge import serve

    with work() as mine, serve(mine, name, token) as bridge:
        try:
            yield bridge.url
        finally:
            lines = [x for x in bridge.stderr_tail(3000).splitlines() if not x.startswith("[course http host]")]
            if lines:
                print("your server's stderr (last lines):", *(f"  {line}" for line in lines[-12:]), sep="\n")


@dataclass
class HttpReply:
    """An HTTP response as :func:`http` got it (``status`` 0 and ``error`` when none came)."""

    status: int
    reason: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    error: str = ""

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers.items() if k.lower() == name.lower()), None)

    @property
    def session(self) -> str | None:
        """The Mcp-Session-Id the response carries, if any."""
        return self.header("Mcp-Session-Id")

    def json(self) -> Any:
        return json.loads(self.body)


_QUIET_HEADERS = ("date", "server")  # the same on every response: not shown


def http(
    url: str,
    method: str = "POST",
    message: Any = None,
    headers: dict[str, str | None] | None = None,
    timeout: float = REPLY_TIMEOUT,
) -> HttpReply:
    """Send one HTTP request to ``url`` and print it and its response as they go over the wire.

    A POST gets ``Content-Type: application/json`` and ``Accept: application/json, text/event-stream``
    unless ``headers`` says otherwise (a value of None leaves a header out); ``message`` is a message
    (sent as compact JSON) or the raw body (text or bytes)."""
    import http.client
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    sent: dict[str, str] = {}
    if method == "POST":
        sent = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    for name, value in (headers or {}).items():
        sent = {k: v for k, v in sent.items() if k.lower() != name.lower()}
        if value is not None:
            sent[name] = value
    body = None if message is None else frame_bytes(message).rstrip(b"\n")
    print(f"{method} {parts.path} HTTP/1.1", *(f"{k}: {v}" for k, v in sent.items()), sep="\n")
    print(f"\n{body.decode('utf-8', 'backslashreplace')}\n" if body else "")
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        conn.request(method, parts.path, body=body, headers=sent)
        response = conn.getresponse()
        reply = HttpReply(response.status, response.reason, dict(response.getheaders()), response.read())
    except (OSError, http.client.HTTPException) as exc:
        print(f"(no response: {type(exc).__name__}: {exc})\n")
        return HttpReply(0, error=f"{type(exc).__name__}: {exc}")
    finally:
        conn.close()
    shown = [f"{k}: {v}" for k, v in reply.headers.items() if k.lower() not in _QUIET_HEADERS]
    print(f"HTTP/1.1 {reply.status} {reply.reason}", *shown, sep="\n")
    print(f"\n{reply.body.decode('utf-8', 'backslashreplace').rstrip()}\n" if reply.body else "")
    return reply


def pretty(value: Any) -> str:
    """A frame pretty-printed for reading (never for sending: one message is one line)."""
    return json.dumps(value, indent=2, ensure_ascii=False)


__all__ = [
    "adversary",
    "check",
    "demo_session",
    "exhibit",
    "fresh_id",
    "host",
    "http",
    "initialize",
    "inspect",
    "inspector_command",
    "modern",
    "notification",
    "pretty",
    "program",
    "reference",
    "request",
    "serve_http",
    "setup",
    "shop_db",
    "time_limit",
    "watch",
    "work",
]
