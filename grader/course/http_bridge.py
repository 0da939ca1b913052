"""The learner's HTTP server at a URL on this machine, wherever their code runs (stage 12).

Over stdio the checks meet the learner's server through its pipes, sandbox or not. Over HTTP they
need an address, and the grading sandbox has a network namespace of its own: a server in it can
reach nothing outside (no internet, no other submission's server, no port of this machine) and
nothing outside can reach it. That stays so. Instead of a hole in it, the pipes carry the bytes:

- inside, ``lab_runtime/http_host.py`` builds the learner's server with their
  ``make_server(("127.0.0.1", 0), token)`` and relays each channel of its stdin and stdout to a
  TCP connection of its own to that server;
- here, :class:`HttpBridge` starts it (as the stage's :class:`~grader.course.work.Runner` starts
  any learner's process: sandboxed when grading, a plain child on the learner's machine), listens
  on 127.0.0.1 on a free port, and makes each connection accepted there a channel.

So a client of any kind (``mcp-lab check --url``, the official SDK's HTTP client, the MCP
Inspector's CLI, ``http.client``) speaks real HTTP to :attr:`HttpBridge.url`, byte for byte what
the learner's server reads and writes; the learner's server sees connections from 127.0.0.1, the
``Host`` the client sent (this listener's address) and nothing of the relay. Every wait is
bounded: the start by ``START_TIMEOUT``, each socket operation by a timeout; :meth:`close` kills
the whole process group, and the threads here end with their sockets.

    >>> import sys, tempfile, pathlib, http.client
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "hello.py").write_text(
    ...     "from http.server import HTTPServer, BaseHTTPRequestHandler\\n"
    ...     "class H(BaseHTTPRequestHandler):\\n"
    ...     "    def do_GET(self):\\n"
    ...     "        self.send_response(200); self.send_header('Content-Length', '2'); self.end_headers()\\n"
    ...     "        self.wfile.write(b'hi')\\n"
    ...     "def make_server(address, token=None):\\n"
    ...     "    return HTTPServer(address, H)\\n")
    >>> from grader.course.work import Work
    >>> with Work(folder, "12") as work, serve(work, "hello") as bridge:
    ...     conn = http.client.HTTPConnection("127.0.0.1", bridge.port, timeout=5)
    ...     conn.request("GET", "/mcp"); response = conn.getresponse()
    ...     (response.status, response.read())
    (200, b'hi')
"""

from __future__ import annotations

import base64
import collections
import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Sequence
from typing import Any

from reference.child import close_after_readers

from .expect import Failure
from .work import Work

START_TIMEOUT = 30.0  # seconds for the module to import and make_server to return (seconds on a busy machine)
IO_TIMEOUT = 10.0  # seconds one send to a client may block before the connection is dropped
POLL = 0.5  # seconds between looks at the closed flag, for the thread that accepts connections
STDERR_KEPT = 64 << 10  # bytes of the host's stderr kept (the most recent)
MAX_LINE = 1 << 20  # bytes of one channel line (the host sends at most 64 KiB of base64)
STUB_GRACE = 3.0  # seconds a failed check waits for a stub's traceback to arrive on stderr
READER_END = 2.0  # seconds close() waits for a reader of the host's pipes to reach their end


def host_command(work: Work, module: str, token: str | None = None) -> list[str]:
    """The command that serves the learner's ``MODULE.py`` (its ``make_server``) through the pipes."""
    work.file(module)
    host = "/".join([work.runner.inside(work.runtime), "lab_runtime", "http_host.py"])
    args = [module] + ([token] if token is not None else [])
    return work.command([*work.python(), host, work.runner.inside(work.folder), *args])


def serve(work: Work, module: str, token: str | None = None) -> HttpBridge:
    """The learner's ``MODULE.py`` server, started (``make_server(address, token)``) and reachable."""
    return HttpBridge(host_command(work, module, token), module)


class _Client:
    """One connection accepted on the listener: its socket and which sides have ended."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.client_done = False  # the client sent all it will send
        self.server_done = False  # the learner's server closed its side
        self.answered = False  # the learner's server sent something on it
        self.closed = False


class HttpBridge:
    """The learner's server started with ``argv`` (:func:`host_command`), reachable at :attr:`url`."""

    def __init__(self, argv: Sequence[str], module: str, start_timeout: float = START_TIMEOUT) -> None:
        self.module = module  # the learner's module, as its tracebacks name it
        self.closed = False
        self.lock = threading.Lock()  # writes to the host's stdin, and the table of clients
        self._stderr_lock = threading.Lock()
        self.clients: dict[int, _Client] = {}
        self.closed_unanswered = False  # a connection the learner's server closed without a byte sent on it
        self.next_conn = 1
        self.started = threading.Event()
        self.start_problem = ""  # the traceback make_server ended with
        self.inner_port: int | None = None
        self._stderr: collections.deque[bytes] = collections.deque()
        self._stderr_size = 0
        self.process = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            bufsize=0,
            start_new_session=True,  # one group: close() ends the sandbox and all it started
        )
        # Read by file descriptor: close() closes each pipe only once its reader has ended.
        self._readers = [
            (threading.Thread(target=self._read_stderr, daemon=True), self.process.stderr),
            (threading.Thread(target=self._read_channel, daemon=True), self.process.stdout),
        ]
        for reader, _ in self._readers:
            reader.start()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(POLL)
        self.port = self.listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        try:
            self._wait_started(start_timeout)
        except BaseException:
            self.close()
            raise
        threading.Thread(target=self._accept, daemon=True).start()

    def __enter__(self) -> HttpBridge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the start ---------------------------------------------------------------------------------
    def _wait_started(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not self.started.wait(0.05):
            if self.process.poll() is not None or time.monotonic() > deadline:
                break
        if not self.started.is_set() and self.process.poll() is not None:
            # It ended: its last lines (a start that failed says why) are read by the channel's reader,
            # which sets ``started`` at the channel's end. Judged before that, a busy machine's reader
            # had not yet read the traceback, and the learner heard only that the process ended.
            self.started.wait(READER_END)
        if self.inner_port is not None:
            return
        if self.start_problem:
            raise self._start_failure()
        with contextlib.suppress(subprocess.TimeoutExpired):  # its channel closed: it is ending
            self.process.wait(1.0 if self.started.is_set() else 0.0)
        if self.process.poll() is not None:
            time.sleep(0.1)  # its last words on stderr
            raise Failure(
                "http-server",
                f"the process serving your {self.module}.py ended (exit status {self.process.returncode}) "
                "before make_server returned",
                stderr=self.stderr_tail(),
            )
        raise Failure(
            "http-server",
            f"make_server(address, token) did not return within {timeout:g} s",
            hint="it builds the server and returns it: serve_forever() is the caller's (main's) to call",
            stderr=self.stderr_tail(),
        )

    def _start_failure(self) -> Failure:
        text = self.start_problem.strip()
        last = text.splitlines()[-1] if text else "?"
        where = _learner_frame(text, self.module)
        if last.startswith("NotImplementedError"):
            name = where[1] if where else "make_server"
            return Failure("http-server", f"{name} is not written yet (it raises NotImplementedError)")
        details: dict[str, Any] = {"where": f"{where[2]}   (line {where[0]} of {self.module}.py)"} if where else {}
        return Failure("http-server", f"building your server failed: {last}", **details, stderr=self.stderr_tail())

    # -- what the host says -----------------------------------------------------------------------
    def _read_channel(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        try:
            reader = _Lines(stdout.fileno())
        except ValueError:  # close() came first
            self.started.set()
            return
        for line in reader:
            words = line.split()
            if len(words) < 2 or not words[0].isdigit():
                continue
            conn, kind = int(words[0]), words[1].decode("ascii", "replace")
            data = _b64(words[2]) if len(words) == 3 else b""
            if conn == 0:
                self._host_says(kind, data)
                continue
            client = self.clients.get(conn)
            if client is None or client.closed:
                continue  # a connection already given up: what comes for it is dropped
            if kind == "data":
                client.answered = True
                try:
                    client.sock.sendall(data)
                except OSError:
                    self._end(conn, client)
            elif kind == "eof":
                client.server_done = True
                self.closed_unanswered |= not client.answered
                with contextlib.suppress(OSError):
                    client.sock.shutdown(socket.SHUT_WR)
                if client.client_done:
                    self._end(conn, client)
        self.started.set()  # the host ended: nobody waits for a start any more

    def _host_says(self, kind: str, data: bytes) -> None:
        if kind == "ready" and self.inner_port is None:
            try:
                self.inner_port = int(json.loads(data)["port"])
            except (ValueError, KeyError, TypeError):
                self.start_problem = "the course's host sent a start line it cannot read"
            self.started.set()
        elif kind == "fail":
            self.start_problem = data.decode("utf-8", "replace")
            self.started.set()

    def _read_stderr(self) -> None:
        stderr = self.process.stderr
        assert stderr is not None
        while True:
            try:
                chunk = os.read(stderr.fileno(), 1 << 16)
            except (OSError, ValueError):  # ValueError: close() closed the pipe while this thread read
                return
            if not chunk:
                return
            with self._stderr_lock:
                self._stderr.append(chunk)
                self._stderr_size += len(chunk)
                while self._stderr_size - len(self._stderr[0]) >= STDERR_KEPT:
                    self._stderr_size -= len(self._stderr.popleft())

    def stderr_tail(self, limit: int = 2000) -> str:
        """The last ``limit`` bytes the learner's server (and the host) wrote to stderr."""
        with self._stderr_lock:
            data = b"".join(self._stderr)
        return data[-limit:].decode("utf-8", "replace")

    def not_written(self) -> str | None:
        """The name of the learner's function whose NotImplementedError shows on stderr, if any (a stub
        of the release that a request ran into: the server then closes the connection unanswered).

        The traceback is written before the connection closes, but it reaches us on another pipe, read by
        another thread: on a busy machine the close can be seen first. So once a connection was closed
        unanswered (a stub's symptom, never a hang's), this waits up to ``STUB_GRACE`` seconds for it."""
        deadline = time.monotonic() + (STUB_GRACE if self.closed_unanswered else 0.0)
        while "NotImplementedError" not in (text := self.stderr_tail(8000)):
            if time.monotonic() >= deadline or not self._readers[0][0].is_alive():  # nothing more can come
                return None
            time.sleep(0.05)
        where = _learner_frame(text, self.module)
        return where[1] if where else "a function of yours"

    # -- the connections --------------------------------------------------------------------------
    def _tell(self, conn: int, kind: str, data: bytes | None = None) -> bool:
        line = f"{conn} {kind}" + (f" {base64.b64encode(data).decode('ascii')}" if data is not None else "")
        stdin = self.process.stdin
        assert stdin is not None
        with self.lock:
            try:
                stdin.write(line.encode("ascii") + b"\n")
                return True
            except (OSError, ValueError):
                return False

    def _accept(self) -> None:
        while not self.closed:
            try:
                sock, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            sock.settimeout(IO_TIMEOUT)  # a send to a client that does not read ends (a recv just waits again)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self.lock:
                conn, self.next_conn = self.next_conn, self.next_conn + 1
                client = self.clients[conn] = _Client(sock)
            if not self._tell(conn, "open"):
                self._end(conn, client)
                continue
            threading.Thread(target=self._pump, args=(conn, client), daemon=True).start()

    def _pump(self, conn: int, client: _Client) -> None:
        """What the client sends on ``conn``, forwarded until it is done (or the bridge is)."""
        while not (self.closed or client.closed):
            try:
                data = client.sock.recv(48 << 10)
            except TimeoutError:
                continue
            except OSError:
                data = b""
            if not data:
                client.client_done = True
                self._tell(conn, "eof")
                if client.server_done:
                    self._end(conn, client)
                return
            if not self._tell(conn, "data", data):
                self._end(conn, client)
                return

    def _end(self, conn: int, client: _Client) -> None:
        if client.closed:
            return
        client.closed = True
        self._tell(conn, "close")
        _drop(client.sock)

    # -- the end ----------------------------------------------------------------------------------
    def close(self) -> None:
        """Stop listening, end every connection, kill the host's process group (the sandbox with it)."""
        if self.closed:
            return
        self.closed = True
        with contextlib.suppress(OSError):
            self.listener.close()
        for client in list(self.clients.values()):
            if not client.closed:
                client.closed = True
                _drop(client.sock)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(5)
        with contextlib.suppress(OSError):
            if self.process.stdin is not None:
                self.process.stdin.close()
        close_after_readers(self._readers, READER_END)  # they end at end of file: the group is gone


class _Lines:
    """The lines of a pipe, each at most ``MAX_LINE`` bytes (a longer one is skipped), until it closes."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __iter__(self) -> Any:
        buffer = b""
        skipping = False
        while True:
            try:
                chunk = os.read(self.fd, 1 << 16)
            except OSError:
                return
            if not chunk:
                return
            buffer += chunk
            while True:
                end = buffer.find(b"\n")
                if end < 0:
                    if len(buffer) > MAX_LINE:
                        buffer, skipping = b"", True
                    break
                line, buffer = buffer[:end], buffer[end + 1 :]
                if skipping:
                    skipping = False
                    continue
                yield line


def _drop(sock: socket.socket) -> None:
    """Close a client's connection; shut down first, so that a thread blocked on it wakes up."""
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()


def _b64(word: bytes) -> bytes:
    try:
        return base64.b64decode(word, validate=True)
    except ValueError:
        return b""


def _learner_frame(traceback_text: str, module: str) -> tuple[str, str, str] | None:
    """(line number, function, source line) of the last frame of ``module``.py in a traceback's text."""
    pattern = re.compile(rf'File "[^"]*\b{re.escape(module)}\.py", line (\d+), in (\w+)\n(?:    (.*)\n)?')
    found = pattern.findall(traceback_text + "\n")
    if not found:
        return None
    line, function, source = found[-1]
    return line, function, source.strip()
