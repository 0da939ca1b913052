"""stdout-flush, judged wherever it shows: a reply held back until the next write or until EOF.

A server that flushes some replies and not others answers most requests on time; the unflushed
replies wait in its buffer until it flushes something else (:mod:`grader.checker.nudge` sees that: the
reply comes out the moment the checker writes a ping) or until it exits when stdin closes. Either
is the signature of a missing flush, in whatever step of whatever session it happens.

    >>> import sys
    >>> from grader.checker.nudge import NudgingProbe
    >>> from grader.checker.verdicts import Findings
    >>> found = Findings()
    >>> with NudgingProbe([sys.executable, "-m", "reference.server"], timeout=5) as probe:
    ...     _ = probe.request("ping", id=1)
    >>> judge_flush([probe], found)
    >>> found.status("stdout-flush") is None  # nothing held back: no finding (the main session passes it)
    True
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from reference.framing import encode

from .nudge import EXIT_WITHIN, PREFIX, Late, NudgingProbe
from .probe import Probe, show, show_json


def held_at_eof(probe: NudgingProbe) -> list[Late]:
    """Replies that came out right after stdin closed, to requests that got no reply before."""
    if probe.closed_at is None:
        return []
    sent: list[tuple[float, dict[str, Any]]] = []
    answered: list[Any] = []
    held: list[Late] = []
    # A last line without "\n" comes out at EOF because it was never ended, not because it was
    # never flushed (Content-Length framing does that): not a held reply.
    unended = {id(item.line.data) for item in probe.received if not item.line.complete}
    for frame in probe.frames:
        if id(frame.data) in unended:
            continue
        try:
            message = json.loads(frame.data)
        except ValueError:
            continue
        if not isinstance(message, dict) or "id" not in message:
            continue
        if frame.direction == "sent":
            if "method" in message and not str(message["id"]).startswith(PREFIX):
                sent.append((frame.at, message))
            continue
        if "method" in message:
            continue  # a request of the server's own
        reply_id = message.get("id")
        request = next((m for _, m in sent if _same(m.get("id"), reply_id)), None)
        if request is None or any(_same(a, reply_id) for a in answered):
            continue
        if not frame.stdin_open and 0 <= frame.at - probe.closed_at <= EXIT_WITHIN:
            at = next(t for t, m in sent if m is request)
            held.append(Late(request, at, probe.closed_at, frame.at, "stdin closed", frame.data))
        answered.append(reply_id)
    return held


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def late_replies(probes: Iterable[Probe]) -> list[Late]:
    """Every held-back reply any probe saw, nudged out or out at EOF."""
    found: list[Late] = []
    for probe in probes:
        if isinstance(probe, NudgingProbe):
            found += probe.late + held_at_eof(probe)
    return found


def describe(late: Late) -> str:
    method = late.request.get("method")
    request_id = json.dumps(late.request.get("id"), ensure_ascii=False)
    held = late.trigger_at - late.sent_at
    return (
        f"the reply to {method} (id {request_id}) was held back {held:.1f} s and came out only when "
        f"{'the checker wrote a ping' if late.trigger == 'a ping' else 'stdin closed'}"
    )


def judge_flush(probes: Iterable[Probe], found: Any) -> None:
    """A stdout-flush failure for every reply held back (none: leave the verdict to the session)."""
    late = late_replies(probes)
    if not late or found.status("stdout-flush") == "fail":
        return
    first = late[0]
    more = f" ({len(late)} replies held back in all)" if len(late) > 1 else ""
    found.failed(
        "stdout-flush",
        f"{describe(first)}: the server does not flush every reply{more}",
        {
            "sent": show(encode(first.request).rstrip(b"\n")),
            "received": show(first.line),
            "expected": "each reply flushed as it is written, while the client waits for it",
            "came_out_seconds_after_the_trigger": round(first.arrived_at - first.trigger_at, 3),
            "held_back": [describe(x) for x in late[:8]],
            "requests_held": [show_json(x.request.get("id")) for x in late],
        },
    )
