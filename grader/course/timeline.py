"""The wire inspector's model: a server session recorded as a timeline of events, no widgets.

A :class:`Recorder` starts a server command as a child through the probe harness, sends frames one
at a time and records everything that happens with its time: each frame sent and received, every
stderr line, a reply that never came, the end of stdin, the exit. Requests are linked to their
replies by id; a reply whose id has the right value but the wrong JSON type, a line that is not
JSON, an answer to a notification stand out (``flag``). The inspector widget and its plain-text
fallback both draw from a :class:`Timeline`; :mod:`.wirediff` compares two.

    >>> import sys
    >>> timeline = run([sys.executable, "-m", "reference.server"], [{"jsonrpc": "2.0", "id": 7, "method": "ping"}])
    >>> [(e.kind, timeline.get(e.link).kind) for e in timeline.frames()]  # each linked to the other
    [('request', 'response'), ('response', 'request')]
    >>> timeline.exit_code
    0
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from grader.checker.probe import Probe, same_id
from reference.framing import FrameError, decode, encode

from .expect import describe_id

REPLY_TIMEOUT = 3.0  # seconds to wait for the reply to one request
SETTLE = 0.25  # seconds of quiet that end a step once its reply is in (or when none is owed)
EXIT_WAIT = 2.0  # seconds a server has to exit after stdin closes (exit-on-eof)
SLICE = 0.05  # seconds between looks at stderr while waiting for stdout
CUT = 160  # characters of a frame on its one-line summary

Frame = dict[str, Any] | list[Any] | bytes | str  # a message, or a raw line as bytes or text


@dataclass
class Event:
    """One thing that happened: a frame either way, a stderr line, or a note (timeout, stdin closed, exit)."""

    n: int  # position in the timeline, from 1
    at: float  # seconds since the server started
    direction: str  # "sent", "received", "stderr" or "note"
    kind: str  # request, notification, response, error, batch, server-request, not-json, stderr, timeout, ...
    data: bytes = b""  # the line as on the wire, without its "\n"
    message: Any = None  # the decoded JSON; None when the line is not JSON
    step: int = 0  # the script step it happened in (0: before the first frame was sent)
    link: int | None = None  # request <-> its reply (the other event's n)
    flag: str = ""  # why it stands out (an id mismatch, not JSON, an answered notification, ...)
    text: str = ""  # the words of a stderr line or a note

    @property
    def is_frame(self) -> bool:
        return self.direction in ("sent", "received")

    era: str = ""  # "2026-07-28" or "legacy" where the frame (or its connection) shows which; "" before either

    def summary(self, limit: int = CUT) -> str:
        """The frame on one line (cut), its 2026-07-28 ``_meta`` collapsed; or the words of a stderr line or note."""
        text = (
            self.text if not self.is_frame else collapsed(self.message) or self.data.decode("utf-8", "backslashreplace")
        )
        return text if len(text) <= limit else f"{text[:limit]}... ({len(self.data) or len(text)} bytes)"

    def pretty(self) -> str:
        """A frame's JSON pretty-printed for reading (the wire carries it on one line); else its text."""
        if self.is_frame and self.message is not None:
            return json.dumps(self.message, indent=2, ensure_ascii=False)
        return self.data.decode("utf-8", "backslashreplace") if self.is_frame else self.text

    def line(self) -> str:
        """The event as one line of a plain-text transcript."""
        arrow = {"sent": "->", "received": "<-", "stderr": "2>", "note": ".."}[self.direction]
        link = f" (#{self.link})" if self.link is not None else ""
        era = f" [{self.era}]" if self.era else ""
        flag = f"   !! {self.flag}" if self.flag else ""
        return f"{self.at:7.3f} s  #{self.n:<3} {arrow} {self.kind}{link}{era}: {self.summary()}{flag}"


MODERN_KEYS = ("io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientCapabilities")
_FOLDED = "\u2026folded\u2026"


def _modern_meta(value: Any) -> bool:
    return isinstance(value, dict) and any(key.startswith("io.modelcontextprotocol/") for key in value)


def collapsed(message: Any) -> str:
    """A 2026-07-28 frame on one line with its ``_meta`` envelope folded to ``{…}`` (the same on every
    request, and long); "" for a frame that has none, which is shown as it came.

    >>> collapsed({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
    ...            "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}})
    '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{…}}}'
    """
    if not isinstance(message, dict):
        return ""
    folded = False
    shown = dict(message)
    for key in ("params", "result"):
        part = message.get(key)
        if isinstance(part, dict) and _modern_meta(part.get("_meta")):
            shown[key] = {**part, "_meta": _FOLDED}
            folded = True
    if not folded:
        return ""
    return encode(shown).decode("utf-8").rstrip("\n").replace(f'"{_FOLDED}"', "{…}")


def era_of(message: Any, sent: bool) -> str:
    """The era a frame shows by itself: a 2026-07-28 ``_meta`` or ``resultType``, or an ``initialize``."""
    if not isinstance(message, dict):
        return ""
    if sent:
        params = message.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        if isinstance(meta, dict) and any(key in meta for key in MODERN_KEYS):
            return "2026-07-28"
        return "legacy" if message.get("method") == "initialize" else ""
    result = message.get("result")
    return "2026-07-28" if isinstance(result, dict) and "resultType" in result else ""


@dataclass
class Timeline:
    """A recorded session: the command and its events in the order they happened."""

    command: list[str]
    events: list[Event] = field(default_factory=list)
    exit_code: int | None = None
    steps: int = 0  # how many frames the script sent

    def add(self, direction: str, kind: str, at: float, **details: Any) -> Event:
        event = Event(len(self.events) + 1, at, direction, kind, **details)
        self.events.append(event)
        return event

    def get(self, n: int | None) -> Event | None:
        return self.events[n - 1] if n is not None and 0 < n <= len(self.events) else None

    def frames(self) -> list[Event]:
        return [e for e in self.events if e.is_frame]

    def received(self, step: int) -> list[Event]:
        """What the server wrote to stdout during ``step``, and the notes of a reply that never came."""
        return [e for e in self.events if e.step == step and (e.direction == "received" or e.kind == "timeout")]

    def sent(self, step: int) -> Event | None:
        return next((e for e in self.events if e.step == step and e.direction == "sent"), None)

    def text(self) -> str:
        """The plain-text transcript: one line per event."""
        head = f"$ {' '.join(self.command)}"
        return "\n".join([head, *(e.line() for e in self.events)])


def to_bytes(frame: Frame) -> bytes:
    """A frame as the bytes to send: messages encoded, raw lines given a "\\n" if they lack one."""
    if isinstance(frame, dict | list):
        return encode(frame)
    data = frame.encode("utf-8") if isinstance(frame, str) else bytes(frame)
    return data if data.endswith(b"\n") else data + b"\n"


def _decode(data: bytes) -> tuple[Any, bool, str]:
    """(message, is JSON, why it is not strict): lenient like the probe, strict like a host."""
    line = data[:-1] if data.endswith(b"\r") else data
    try:
        return decode(line), True, ""
    except FrameError:
        pass
    try:
        message = json.loads(line.decode("utf-8", "replace"))
    except ValueError:
        return None, False, ""
    return message, True, "not strict JSON in UTF-8 (NaN, Infinity or bad bytes)"


def line_marks(data: bytes) -> list[str]:
    """What stands out in a stdout line by itself (not JSON, not strict JSON, a "\\r\\n" ending): the marks
    a transcript, the inspector and ``lab.watch`` print beside it.

    >>> line_marks(b"Server ready")
    ['not JSON: stdout must carry only JSON-RPC messages']
    >>> line_marks(b'{"jsonrpc":"2.0","id":1,"result":{}}')
    []
    """
    _, is_json, strict = _decode(data)
    marks = []
    if not is_json:
        marks.append("not JSON: stdout must carry only JSON-RPC messages")
    elif strict:
        marks.append(strict)
    if data.endswith(b"\r"):
        marks.append('ends in "\\r\\n", not "\\n"')
    return marks


def kind_of(message: Any, is_json: bool, sent: bool) -> str:
    """What a line is. Sent by the client: request, notification, response, batch, invalid or not-json;
    written by the server: response, error, batch, server-request, server-notification, invalid or not-json."""
    if not is_json:
        return "not-json"
    if isinstance(message, list):
        return "batch"
    if not isinstance(message, dict):
        return "invalid"
    if not sent:
        if "method" in message:
            return "server-request" if "id" in message else "server-notification"
        return "error" if "error" in message else "response" if "result" in message else "invalid"
    if "method" not in message:
        return "response" if "result" in message or "error" in message else "invalid"
    if "id" not in message:
        return "notification"
    ok = isinstance(message["id"], str) or (isinstance(message["id"], int) and not isinstance(message["id"], bool))
    return "request" if ok and isinstance(message["method"], str) else "invalid"


def _near(a: Any, b: Any) -> bool:
    """The same id value in another JSON type ("7" and 7)."""
    return json.dumps(a).strip('"') == json.dumps(b).strip('"')


class Recorder:
    """A server child driven frame by frame; everything it does lands in ``self.timeline``.

    Every read is bounded (``timeout`` for a reply, ``settle`` for quiet); :meth:`close` always
    ends the child (stdin closed, then SIGTERM, then SIGKILL for its whole session).
    """

    def __init__(
        self,
        argv: Sequence[str],
        timeout: float = REPLY_TIMEOUT,
        settle: float = SETTLE,
        env: dict[str, str] | None = None,
    ) -> None:
        self.timeline = Timeline(list(argv))
        self.timeout = timeout
        self.settle = settle
        self.step = 0
        self.closed = False
        self._pending: list[Event] = []  # sent requests still owed a reply
        self._near_misses: list[Event] = []  # requests answered so far only with a near-miss id
        self._stderr_seen = 0
        self._stderr_partial = b""
        self._era = ""  # the connection's era, once a frame has chosen one
        self._lock = threading.RLock()
        try:
            self.probe: Probe | None = Probe(list(argv), timeout, env=env, name="inspector")
        except OSError as exc:  # no such command: on the record, not an exception in a notebook
            self.probe = None
            self.closed = True
            self.timeline.add("note", "not-started", 0.0, text=f"the command could not be started: {exc}")

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- sending ---------------------------------------------------------------------------------
    def send(self, frame: Frame) -> list[Event]:
        """Send one frame and record what comes back; returns the events this step added."""
        with self._lock:
            first = len(self.timeline.events)
            if self.closed or self.probe is None:
                self.timeline.add("note", "closed", self._now(), text="the session is over: start a new one")
                return self.timeline.events[first:]
            self.step += 1
            self.timeline.steps = self.step
            data = to_bytes(frame)
            message, is_json, _ = _decode(data.rstrip(b"\n"))
            kind = kind_of(message, is_json, sent=True)
            sent = self._add("sent", kind, self._now(), data=data.rstrip(b"\n"), message=message)
            sent.era = era_of(message, sent=True) or self._era if kind != "not-json" else ""
            self._era = self._era or sent.era
            if kind == "request":
                self._pending.append(sent)
            if not self.probe.send_raw(data):
                self._add("note", "send-failed", self._now(), text="could not send: the server no longer reads stdin")
                return self.timeline.events[first:]
            owed = kind in ("request", "not-json", "invalid") or (kind == "batch" and _batch_owed(message))
            self._await(sent if owed else None)
            return self.timeline.events[first:]

    def _await(self, sent: Event | None) -> None:
        """Read until the reply to ``sent`` is in and ``settle`` passes quietly, or the timeout."""
        assert self.probe is not None
        start = self._now()
        answered = sent is None
        quiet_since = start
        while True:
            now = self._now()
            if answered and now - quiet_since >= self.settle:
                return
            if not answered and now - start >= self.timeout:
                if sent is not None:
                    why = "the server has exited" if self.probe.stdout_closed() else "the server is still running"
                    text = f"no reply to #{sent.n} within {self.timeout:g} s ({why})"
                    self._add("note", "timeout", self._now(), text=text, link=sent.n)
                return
            item = self.probe.read(SLICE)
            self._poll_stderr()
            if item is None:
                if self.probe.stdout_closed():  # the server has gone: nothing more will come
                    answered = True
                    if sent is not None and sent.link is None:
                        text = f"no reply to #{sent.n}: the server closed its stdout (it has exited)"
                        self._add("note", "timeout", self._now(), text=text, link=sent.n)
                    return
                continue
            event = self._received(item.line.data, item.line.at)
            quiet_since = self._now()
            if sent is not None and not answered and self._answers(event, sent):
                answered = True

    def _answers(self, event: Event, sent: Event) -> bool:
        if sent.kind == "batch":
            return event.kind == "batch" or event.link == sent.n
        return event.link == sent.n

    # -- receiving -------------------------------------------------------------------------------
    def _received(self, data: bytes, at: float) -> Event:
        message, is_json, _ = _decode(data)
        kind = kind_of(message, is_json, sent=False)
        event = self._add("received", kind, at, data=data, message=message)
        flags = line_marks(data)
        if kind in ("response", "error"):
            flags.append(self._link(event))
        sent = self.timeline.sent(self.step)
        if kind == "batch" and sent is not None and sent.kind == "batch" and sent.link is None:
            self._pair(event, sent)
        late = not self.probe or not self.probe.stdin_open
        if late and kind in ("response", "error", "batch"):
            flags.append("arrived only after stdin closed: a reply that sat in a buffer (a missing flush?)")
        event.flag = "; ".join(f for f in flags if f)
        request = self.timeline.get(event.link)
        event.era = era_of(message, sent=False) or (request.era if request is not None else "") if is_json else ""
        return event

    def _link(self, event: Event) -> str:
        """Link a reply to the request it answers; say what is wrong when the id does not match."""
        got = event.message.get("id")
        sent = self.timeline.sent(self.step)
        for request in self._pending:
            if same_id(request.message["id"], got):
                return self._pair(event, request)
        for request in self._near_misses:
            # The true reply after a near miss (a forged or mangled id came first): it is the answer.
            if same_id(request.message["id"], got):
                self._near_misses.remove(request)
                event.link, request.link = request.n, event.n
                return ""
        for request in self._pending:
            if "id" in event.message and _near(request.message["id"], got):
                self._pair(event, request)
                self._near_misses.append(request)
                return f"id mismatch: sent {describe_id(request.message['id'])}, got {describe_id(got)}"
        if got is None:  # the reply to a line whose id could not be read: the oldest such line unanswered
            bad = [e for e in self.timeline.events if e.direction == "sent" and e.kind in _BAD and e.link is None]
            if bad:
                self._pair(event, bad[0])
                return ""
        if got is None and sent is not None and sent.kind == "request" and sent.link is None:
            self._pair(event, sent)
            self._pending.remove(sent)
            return f"id null, but the request's id {describe_id(sent.message['id'])} could be read"
        if sent is not None and sent.kind in ("notification", "response"):
            return f"a reply to a {sent.kind}: a {sent.kind} must get no reply at all"
        return f"answers no request: no request with id {describe_id(got, 'id' in event.message)} is waiting"

    def _pair(self, event: Event, request: Event) -> str:
        event.link, request.link = request.n, event.n
        if request in self._pending:
            self._pending.remove(request)
        return ""

    def _poll_stderr(self) -> None:
        """Record the stderr lines that arrived since the last look (timed when seen, within SLICE)."""
        assert self.probe is not None
        child = self.probe.child
        total = child.stderr_bytes
        if total == self._stderr_seen:
            return
        new = total - self._stderr_seen
        tail = child.stderr_tail(1 << 16).encode("utf-8")
        chunk = tail[-new:] if new <= len(tail) else tail
        self._stderr_seen = total
        lines = (self._stderr_partial + chunk).split(b"\n")
        self._stderr_partial = lines.pop()
        for line in lines:
            self._stderr_line(line)

    def _stderr_line(self, line: bytes) -> None:
        text = line.decode("utf-8", "replace").rstrip("\r")
        self._add("stderr", "stderr", self._now(), data=line, text=text)

    # -- ending ----------------------------------------------------------------------------------
    def close(self, exit_wait: float = EXIT_WAIT) -> Timeline:
        """Close stdin, record what still arrives and the exit status; the child is always ended."""
        with self._lock:
            if self.closed or self.probe is None:
                return self.timeline
            self.closed = True
            probe = self.probe
            try:
                self.step += 1
                probe.close_stdin()
                self._add("note", "stdin-closed", self._now(), text="stdin closed: the client ends the session")
                deadline = self._now() + exit_wait
                while self._now() < deadline:
                    item = probe.read(SLICE)
                    self._poll_stderr()
                    if item is not None:
                        self._received(item.line.data, item.line.at)
                    elif probe.stdout_closed() and not probe.alive():
                        break
                code = probe.wait_exit(0)
                if code is None:
                    text = f"still running {exit_wait:g} s after stdin closed: ended with SIGTERM/SIGKILL"
                    self._add("note", "no-exit", self._now(), text=text)
            finally:
                code = probe.close()
            self._poll_stderr()
            if self._stderr_partial:
                self._stderr_line(self._stderr_partial)
                self._stderr_partial = b""
            self.timeline.exit_code = code
            self._add("note", "exit", self._now(), text=f"exit status {code}", flag="" if code == 0 else "not 0")
            return self.timeline

    def _now(self) -> float:
        return self.probe.child.elapsed() if self.probe is not None else 0.0

    def _add(self, direction: str, kind: str, at: float, **details: Any) -> Event:
        return self.timeline.add(direction, kind, at, step=self.step, **details)


_BAD = ("not-json", "invalid", "batch")  # lines whose reply (an error) carries id null


def _batch_owed(message: list[Any]) -> bool:
    """A batch is owed a reply unless it holds only notifications (and is not empty)."""
    return not message or any(not isinstance(m, dict) or "id" in m for m in message)


def run(
    argv: Sequence[str], script: Sequence[Frame], timeout: float = REPLY_TIMEOUT, settle: float = SETTLE
) -> Timeline:
    """Run ``script`` against ``argv`` frame by frame, then close stdin; the whole session recorded."""
    recorder = Recorder(argv, timeout, settle)
    try:
        for frame in script:
            if recorder.closed:
                break
            recorder.send(frame)
    finally:
        recorder.close()
    return recorder.timeline
