"""What one defect leaves on the wire, read from every probe's frames: the evidence of root causes.

- held: requests whose reply was held back in the server's buffer (see :mod:`grader.checker.flush`);
- noise: stdout lines that are not JSON, each with its kind (a piece of a pretty-printed
  message, a Content-Length header, a log record, other) and the request it came during;
- near misses: replies carrying a request's id in another JSON type (``1`` back as ``"1"``);
- killers: the lines after which a server died with stdin still open;
- bad results: tools/call results that are not a CallToolResult, by tool name.

    >>> kind_of(b"2025-01-01 12:00:00,001 DEBUG shop: tools/call")
    'log'
    >>> kind_of(b"Content-Length: 120")
    'header'
    >>> kind_of(b"Shop server started")
    'other'
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from reference.framing import encode

from .flush import late_replies
from .nudge import PREFIX, NudgingProbe
from .probe import Probe, show
from .tool_calls import result_problem

_LOG = re.compile(rb"^\s*(\[?\d{4}-\d\d-\d\d|\[?\d\d:\d\d:\d\d|\[?(DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)\b)")
_HEADER = re.compile(rb"(?i)^\s*content-(length|type):")
SPREAD_LIMIT = 2000  # lines one pretty-printed message may span (longer runs are not joined)


@dataclass(frozen=True)
class Noise:
    text: str  # the line as evidence shows it
    kind: str  # "spread", "header", "log" or "other"
    during: str | None  # the method of the request awaiting its reply when it came, if any


@dataclass(frozen=True)
class NearMiss:
    request: str  # the request as evidence shows it
    reply: str  # the reply as evidence shows it


@dataclass
class Signatures:
    held: list[str] = field(default_factory=list)  # held-back requests and replies, as evidence shows them
    noise: list[Noise] = field(default_factory=list)
    near_misses: list[NearMiss] = field(default_factory=list)
    killers: list[str] = field(default_factory=list)
    crlf_json: int = 0  # lines ending in "\r\n" that are JSON otherwise
    crlf_other: int = 0  # lines ending in "\r\n" that are not JSON either
    bad_results: dict[str, str] = field(default_factory=dict)  # tool name -> what is wrong


def kind_of(data: bytes) -> str:
    """What a non-JSON line looks like (a piece of pretty-printed JSON is found by :func:`gather`)."""
    if _HEADER.match(data) or not data.strip():
        return "header"
    return "log" if _LOG.match(data) else "other"


def _noise(data: bytes, during: str | None) -> Noise:
    return Noise(show(data), kind_of(data), during)


def _decode(data: bytes) -> Any:
    try:
        return json.loads(data.rstrip(b"\r"))
    except ValueError:
        return None


def _near(sent: Any, got: Any) -> bool:
    """The same value in another JSON type: 7 and "7"."""
    blind = json.dumps(sent, ensure_ascii=False).strip('"') == json.dumps(got, ensure_ascii=False).strip('"')
    return blind and type(sent) is not type(got)


def held_answers(probe: Probe, held: list[str]) -> list[str]:
    """Bad lines whose answers were held back too.

    The checker sends a bad line and a ping together; a server answers in order. When the ping's
    reply came out only at EOF right after an id-less (null id) error, that error was the bad
    line's answer, held in the same buffer.
    """
    before: dict[str, str] = {}  # request as shown -> the bad line sent just before it
    last_line: str | None = None
    found: list[str] = []
    previous: Any = None
    for frame in probe.frames:
        message = _decode(frame.data)
        shown = show(frame.data.rstrip(b"\n"))
        if frame.direction == "sent":
            is_request = isinstance(message, dict) and "method" in message and "id" in message
            if is_request and last_line is not None:
                before[shown] = last_line
            last_line = None if is_request else shown
            continue
        answered_null = isinstance(previous, dict) and "method" not in previous and previous.get("id") is None
        if not frame.stdin_open and answered_null and isinstance(message, dict):
            request = next((r for r in before if r in held and _same_id(r, message.get("id"))), None)
            if request is not None:
                found.append(before[request])
        previous = message
    return found


def _same_id(shown_request: str, reply_id: Any) -> bool:
    request = _decode(shown_request.encode())
    return isinstance(request, dict) and type(request.get("id")) is type(reply_id) and request.get("id") == reply_id


def gather(probes: Iterable[Probe]) -> Signatures:
    """The signatures of every probe's session."""
    probes = list(probes)
    found = Signatures()
    for late in late_replies(probes):
        found.held += [show(encode(late.request).rstrip(b"\n")), show(late.line)]
    for probe in probes:
        _read_session(probe, found)
    return found


def _read_session(probe: Probe, found: Signatures) -> None:
    waiting: dict[str, dict[str, Any]] = {}  # id (as JSON) -> request, awaiting a reply
    requests: list[tuple[dict[str, Any], str]] = []  # every request sent, as evidence shows it
    run: list[tuple[bytes, str | None]] = []  # consecutive non-JSON lines
    last_received = -1
    for n, frame in enumerate(probe.frames):
        message = _decode(frame.data)
        if frame.direction == "sent":
            is_request = isinstance(message, dict) and "method" in message and "id" in message
            if is_request and not str(message["id"]).startswith(PREFIX):
                waiting[json.dumps(message["id"])] = message
                requests.append((message, show(frame.data.rstrip(b"\n"))))
            continue
        last_received = n
        if frame.data.endswith(b"\r"):
            if isinstance(message, dict):
                found.crlf_json += 1
            else:
                found.crlf_other += 1
        if not isinstance(message, dict):
            during = next(reversed(waiting.values()))["method"] if waiting else None
            run.append((frame.data, during))
            if len(run) > SPREAD_LIMIT:
                found.noise.append(_noise(*run.pop(0)))
            # A pretty-printed message ends with a line "}": only then is the run worth joining.
            whole = _decode(b"\n".join(d for d, _ in run)) if frame.data.strip() == b"}" else None
            if isinstance(whole, dict):
                found.noise += [Noise(show(d), "spread", w) for d, w in run]
                run.clear()
            continue
        found.noise += [_noise(d, w) for d, w in run]
        run.clear()
        if "method" in message:
            continue  # the server's own request or notification
        reply_id = message.get("id")
        request = waiting.pop(json.dumps(reply_id), None)
        if request is None:
            # (A null id is JSON-RPC's "the id could not be read": never a near miss.)
            miss = next((r for r in requests if _near(r[0]["id"], reply_id)), None)
            if miss is not None and reply_id is not None and not str(reply_id).startswith(PREFIX):
                found.near_misses.append(NearMiss(miss[1], show(frame.data)))
                waiting.pop(json.dumps(miss[0]["id"]), None)
            continue
        if request.get("method") == "tools/call" and isinstance(message.get("result"), (dict, list, str)):
            name = str((request.get("params") or {}).get("name"))
            if (problem := result_problem(message["result"])) is not None:
                found.bad_results.setdefault(name, problem)
    found.noise += [_noise(d, w) for d, w in run]
    found.held += held_answers(probe, found.held)
    if isinstance(probe, NudgingProbe) and probe.ended_by_itself:
        after = [f for f in probe.frames[last_received + 1 :] if f.direction == "sent"]
        if after:
            found.killers.append(show(after[0].data.rstrip(b"\n")))
