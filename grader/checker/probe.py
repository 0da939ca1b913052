"""The probe harness: one server process, spoken to frame by frame, every frame on record.

Built on :class:`reference.child.ChildProcess` (bounded reads, drained stderr, capped capture,
its own session killed on close) and the reference's framing, so the examiner and the answer key
share one implementation of each. A probe adds what an examiner needs: a timestamped transcript of
every frame sent and received, reply matching that notices near misses (``"7"`` back as ``7``),
and a record of every stdout line for the stdout rules.

    >>> import sys
    >>> with Probe([sys.executable, "-m", "reference.server"], timeout=5) as probe:
    ...     probe.request("ping", id=7).message
    {'jsonrpc': '2.0', 'id': 7, 'result': {}}
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from reference.child import ChildProcess, Line
from reference.framing import FrameError, decode, encode

CUT = 300  # characters of a frame kept in evidence
PATIENT_WINDOW = 1.0  # seconds: a patient wait goes on while the server used the CPU in the last window
# An exit wait (wait_exit's most) grows by the time the server waited for a CPU, up to this long in
# all: on a busy machine a grace counts the time it could run (a server asleep or busy on its own gets
# the grace, no more). Here, not in the sessions, so the course's drive shares it without their imports.
EXIT_STARVED = 30.0


def show(data: bytes, limit: int = CUT) -> str:
    """Bytes as a readable, cut string for evidence."""
    text = data.decode("utf-8", "backslashreplace")
    return text if len(text) <= limit else f"{text[:limit]}... ({len(data)} bytes)"


def show_json(value: Any, limit: int = CUT) -> str:
    """A decoded value as compact JSON for evidence (not Python's repr)."""
    try:
        data = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
    except (TypeError, ValueError):
        data = repr(value).encode()
    return show(data, limit)


@dataclass
class Frame:
    direction: str  # "sent" or "received"
    at: float  # seconds since the process started
    data: bytes
    stdin_open: bool = True

    def as_evidence(self) -> str:
        return show(self.data.rstrip(b"\n"))


@dataclass
class Received:
    """One stdout line and what it decoded to (``None`` when it is not JSON)."""

    line: Line
    message: Any = None
    json_ok: bool = False


@dataclass
class Reply:
    """The outcome of one request: the reply (or None), and the lines that came before it."""

    sent: dict[str, Any]
    message: dict[str, Any] | None
    elapsed: float
    others: list[Received] = field(default_factory=list)
    near_miss: Received | None = None  # a reply with the id's value but another JSON type
    spread: int = 0  # the reply came spread over this many lines (pretty-printed)
    why: str = ""  # the transport's own reason for no reply (over HTTP: a status, a broken stream)
    line: Line | None = None  # the line that carried the reply, stamped by the reader

    @property
    def result(self) -> Any:
        return self.message.get("result") if self.message else None

    @property
    def error(self) -> dict[str, Any] | None:
        error = self.message.get("error") if self.message else None
        return error if isinstance(error, dict) else None

    @property
    def code(self) -> Any:
        return self.error.get("code") if self.error else None


def _is_reply(data: bytes, want: Any) -> bool:
    try:
        message = json.loads(data)
    except ValueError:
        return False
    return isinstance(message, dict) and "method" not in message and same_id(message.get("id"), want)


def same_id(a: Any, b: Any) -> bool:
    """Same value and same JSON type: 7 and "7" differ, and so do 1 and true."""
    return type(a) is type(b) and a == b


class Probe:
    def __init__(
        self,
        argv: Sequence[str],
        timeout: float,
        env: Mapping[str, str] | None = None,
        name: str = "probe",
    ) -> None:
        self.name = name
        self.timeout = timeout
        self.frames: list[Frame] = []
        self.received: list[Received] = []
        self.stdin_open = True
        self.stalled = False  # a request went unanswered: later steps are skipped, not waited for
        self.in_flight: list[Any] = []  # ids of requests given up on (and cancelled), maybe still running
        self.child = ChildProcess(argv, env=env)  # OSError if the command cannot be started
        self.exit_code: int | None = None
        self.revision: str | None = None  # the protocol revision initialize negotiated

    def __enter__(self) -> Probe:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- sending ---------------------------------------------------------------------------
    def send_raw(self, data: bytes) -> bool:
        self.frames.append(Frame("sent", self.child.elapsed(), data))
        return self.child.send(data)

    def send(self, message: Any) -> bool:
        return self.send_raw(encode(message))

    def notify(self, method: str, params: dict[str, Any] | None = None) -> bool:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        return self.send(message)

    # -- receiving -------------------------------------------------------------------------
    def read(self, timeout: float, patience: float = 0.0) -> Received | None:
        """The next line within ``timeout``; with ``patience``, up to that long in all while the server
        is still on the CPU (a slow start on a busy machine, not silence: reference.child)."""
        line = self.child.read_line_patient(timeout, patience) if patience else self.child.read_line(timeout)
        if line is None:
            return None
        self.frames.append(Frame("received", line.at, line.data, self.stdin_open))
        item = Received(line)
        data = line.data.rstrip(b"\r")
        try:
            item.message = decode(data)
            item.json_ok = True
        except FrameError:
            # Match replies leniently (NaN, lone surrogates): strictness is the stdout rules' job.
            try:
                item.message = json.loads(data.decode("utf-8", "replace"))
                item.json_ok = True
            except ValueError:
                pass
        self.received.append(item)
        return item

    def read_for(self, seconds: float) -> list[Received]:
        """Every line that arrives within ``seconds`` (less if stdout closes)."""
        deadline = self.child.elapsed() + seconds
        lines = []
        while (left := deadline - self.child.elapsed()) > 0:
            item = self.read(left)
            if item is not None:
                lines.append(item)
            elif self.stdout_closed():
                break
        return lines

    def drain(self, wait: float = 0.0) -> list[Received]:
        """Lines already there, or arriving within ``wait`` seconds of each other."""
        lines = []
        while (item := self.read(wait)) is not None:
            lines.append(item)
        return lines

    def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        id: Any = None,
        timeout: float | None = None,
        give_up: bool = False,
        patience: float = 0.0,
    ) -> Reply:
        """Send a request and wait for the reply with the same id (value *and* type).

        With ``give_up``, a request still unanswered at ``timeout`` is cancelled
        (``notifications/cancelled``) and the probe goes on: it is work in flight, not a hang. With
        ``patience``, a server that has written nothing by ``timeout`` and is still on the CPU is
        waited for up to that much longer, while it works and writes nothing else.
        """
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": id if id is not None else method, "method": method}
        if params is not None:
            message["params"] = params
        reply = self.exchange(message, timeout, patience)
        if give_up and reply.message is None and reply.near_miss is None and not reply.spread and self.alive():
            self.stalled = False
            self.in_flight.append(message["id"])
            reason = f"mcp-lab check: no reply within {reply.elapsed:.0f} s"
            self.notify("notifications/cancelled", {"requestId": message["id"], "reason": reason})
        return reply

    def exchange(self, message: dict[str, Any], timeout: float | None = None, patience: float = 0.0) -> Reply:
        """Send ``message`` and wait for the response carrying its id (``patience``: see :meth:`request`)."""
        start = self.child.elapsed()
        limit = self.timeout if timeout is None else timeout
        reply = Reply(message, None, 0.0)
        if not self.send(message):
            reply.elapsed = self.child.elapsed() - start
            return reply
        want = message.get("id")
        loose: list[bytes] = []  # consecutive lines that are not JSON on their own
        while True:
            left = start + limit - self.child.elapsed()
            if left > 0:
                item = self.read(left)
            elif patience and not reply.others and not loose:
                item = self.read(PATIENT_WINDOW, patience)  # nothing written yet: a slow start?
                patience = 0.0
            else:
                break
            if item is None and (not patience or self.stdout_closed()):
                break
            if item is None:
                continue  # the timeout ran out: the patient wait, if it applies, is next
            if not item.json_ok:
                loose.append(item.line.data)
                if item.line.data.strip() == b"}" and _is_reply(b"\n".join(loose), want):
                    # One message spread over several lines: pretty-printed JSON. It was the
                    # reply, but no host would read it as one.
                    reply.spread = len(loose)
                    reply.others.append(item)
                    break
            else:
                loose.clear()
            candidate = item.message
            is_response = isinstance(candidate, dict) and "method" not in candidate and "id" in candidate
            if is_response and same_id(candidate["id"], want):
                reply.message = candidate
                reply.line = item.line
                break
            if is_response and json.dumps(candidate["id"]).strip('"') == json.dumps(want).strip('"'):
                # Our id's value in another JSON type ("7" back as 7): that was the reply.
                reply.near_miss = item
                reply.others.append(item)
                break
            reply.others.append(item)
        reply.elapsed = self.child.elapsed() - start
        if reply.message is None and self.alive():
            self.stalled = True
        return reply

    def alive(self) -> bool:
        return self.child.process.poll() is None

    def stdout_closed(self) -> bool:
        return self.child.stdout_closed.is_set()

    # -- ending ----------------------------------------------------------------------------
    def close_stdin(self) -> None:
        self.stdin_open = False
        self.child.close_stdin()

    def wait_exit(self, timeout: float, most: float = 0.0) -> int | None:
        """The exit status within ``timeout`` seconds, longer by the time the server waited for a CPU
        (``most`` in all: :meth:`~reference.child.ChildProcess.wait_patient`); None if it still runs."""
        code = self.child.wait(timeout) if most <= timeout else self.child.wait_patient(timeout, most)
        if code is not None:
            self.exit_code = code
        return code

    def close(self, grace: float = 0.5) -> int:
        """End the server in the spec's order: stdin closed, ``grace`` seconds, SIGTERM, SIGKILL."""
        self.stdin_open = False
        code = self.child.close(grace=grace)
        self.drain()  # whatever was still in the pipe belongs on the record
        if self.exit_code is None:
            self.exit_code = code
        return code

    def stderr_tail(self, limit: int = 1500) -> str:
        return self.child.stderr_tail(limit)

    def transcript(self, last: int = 12) -> list[str]:
        """The last frames as evidence lines: '-> ...' sent, '<- ...' received."""
        arrow = {"sent": "->", "received": "<-"}
        return [f"{arrow[f.direction]} {f.as_evidence()}" for f in self.frames[-last:]]
