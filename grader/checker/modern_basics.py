"""JSON-RPC as the modern session sees it: ids of every type, notifications, bad input.

The same rules as the legacy session's (the checks ``id-echo``, ``notification-silence``,
``parse-error``, ``invalid-request``, ``method-not-found``, ``survives-bad-input``), with
``server/discover`` where the legacy session pings (``ping`` is gone in 2026-07-28) and the unknown
method sent with the envelope; the same bad lines (:data:`grader.checker.bad_input.BAD_INPUTS`).

    >>> [what for _, _, _, _, what in modern_inputs()][-2:]
    ['a request without a method', 'an unknown method (with _meta)']
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from reference.stateless import MODERN

from .bad_input import BAD_INPUTS, LENIENT, is_answer
from .context import no_reply_evidence, why_no_reply
from .main_session import judge_silence
from .modern_wire import IDS, META_UNKNOWN, NOTIFICATIONS, Revised
from .probe import same_id, show

if TYPE_CHECKING:
    from .modern_session import ModernSession


def ids_and_notifications(s: ModernSession) -> None:
    f, probe = Revised(s.f), s.probe
    for request_id in IDS:
        reply = s.request("server/discover", id=request_id)
        if reply.message is None:
            shown = json.dumps(request_id)
            f.failed(
                "id-echo",
                f"server/discover with id {shown}: {why_no_reply(probe, reply, 'it')}",
                {**no_reply_evidence(probe, reply, f"a reply with id {shown} (same JSON type)"),
                 "near_miss": show(reply.near_miss.line.data) if reply.near_miss else None},
            )  # fmt: skip
            return
    f.passed("id-echo", f'ids 0, 42, "abc" and "7" came back with the same value and type ({MODERN})')
    for method, params in NOTIFICATIONS:
        probe.notify(method, params)
    reply = s.request("server/discover", id="after-notifications")
    judge_silence(f, reply, [m for m, _ in NOTIFICATIONS], "server/discover", "an unknown notification or to cancelled")


def modern_inputs() -> list[tuple[str, bytes, int, tuple[Any, ...], str]]:
    """The legacy session's bad lines, the unknown method with the envelope."""
    inputs = [entry for entry in BAD_INPUTS if entry[0] != "method-not-found"]
    return [*inputs, ("method-not-found", META_UNKNOWN, -32601, (11,), "an unknown method (with _meta)")]


def bad_input(s: ModernSession) -> bool:
    """The bad inputs of the legacy session, each followed by server/discover (ping is gone);
    an unknown method comes with the envelope. False when the server stopped answering."""
    f, probe = Revised(s.f), s.probe
    inputs = modern_inputs()
    passed: dict[str, list[str]] = {}
    for n, (check, line, code, ids, what) in enumerate(inputs):
        probe.send_raw(line + b"\n")
        alive = s.request("server/discover", id=f"alive-{n}")
        answers = [o for o in alive.others if is_answer(o, probe.in_flight)]
        message = answers[0].message if answers else {}
        error = message.get("error") if isinstance(message.get("error"), dict) else None
        got = error.get("code") if error else None
        evidence = {
            "sent": show(line),
            "received": show(answers[0].line.data) if answers else None,
            "expected": f"an error with code {code} and id {' or '.join(map(str, ids)).replace('None', 'null')}",
        }
        if not answers:
            f.failed(check, f"no reply to {what}", evidence)
        elif got != code and error and what in LENIENT:
            f.warned(check, f"{what} got code {got}, not {code} (decoded leniently)", evidence, rule="lenient")
        elif got != code:
            f.failed(check, f"{what} got {'code ' + str(got) if error else 'a result'}, not {code}", evidence)
        elif not any(same_id(message.get("id"), i) for i in ids):
            f.failed(check, f"{what} got {code} but with id {message.get('id')!r}", evidence)
        else:
            passed.setdefault(check, []).append(what)
        if alive.message is None:
            f.failed(
                "survives-bad-input",
                f"after {what}, {why_no_reply(probe, alive, 'server/discover')}",
                {**no_reply_evidence(probe, alive, "the reply to server/discover"), "bad_input": show(line)},
            )
            return False
    for check, whats in passed.items():
        code = -32601 if check == "method-not-found" else next(c for k, _, c, _, _ in BAD_INPUTS if k == check)
        f.passed(check, f"{code} for {', '.join(whats)} ({MODERN})")
    f.passed("survives-bad-input", f"answered server/discover after each of {len(inputs)} bad inputs")
    return True
