"""Stage 11's sealed ``requestState`` (cell ``test_request_state``; MCP 2026-07-28,
``basic/patterns/mrtr.mdx``): ``binding()``, ``seal()`` and ``open_state()``: a state opens until it
expires; a tampered, foreign or other-request state is refused, and ``open_state`` never raises.

    >>> _flip("abcd", 1), _flip("AAAA", 0)
    ('aAcd', 'BAAA')
"""

from __future__ import annotations

import base64
import json
from typing import Any

from ...calls import call
from ...expect import Failure, show
from ...work import Work
from .. import public


@public(
    "11",
    "test_request_state",
    "binding(), seal(), open_state(): a state opens until it expires; tampered, foreign, other-request refused",
)
def request_state_cell(work: Work) -> None:
    arguments = {"order_id": 9, "reason": "the customer asked by phone"}
    other = {"order_id": 10, "reason": "the customer asked by phone"}
    check_request_state(work.module("shop_state"), (STATE_KEY, b"another-server-key".ljust(32, b"x")),
                        (arguments, other), STATE_NOW)  # fmt: skip


STATE_TTL_S = 300  # what the lesson gives as TTL_S


STATE_KEY = b"course-public-key-".ljust(32, b"k")


STATE_NOW = 1_800_000_000


def _flip(text: str, at: int) -> str:
    """``text`` with the character at ``at`` changed for another base64 character."""
    return text[:at] + ("A" if text[at] != "A" else "B") + text[at + 1 :]


def check_request_state(
    module: Any, keys: tuple[bytes, bytes], calls: tuple[dict[str, Any], dict[str, Any]], now: float
) -> None:
    """binding(), seal() and open_state() of ``module``: a good state opens until it expires; a changed
    MAC, a changed payload, another key, another request, an expired state and text that is no state
    are refused with a reason, and open_state never raises. ``calls``: two cancel_order argument sets
    (the second another request); ``now``: the clock the checks pass in."""
    key, other_key = keys
    arguments, other = calls
    rule = "modern-request-state"
    bound = call(module.binding, rule, "cancel_order", arguments)
    if not isinstance(bound, str) or not bound:
        raise Failure(rule, "binding() must return a non-empty string (canonical JSON)", received=show(bound))
    reordered = dict(reversed(list(arguments.items())))
    if call(module.binding, rule, "cancel_order", reordered) != bound:
        raise Failure(
            rule,
            "binding() gave another text for the same arguments with their keys in another order: sort the keys",
            sent=show(reordered),
        )
    distinct = [
        ("add_order_note", arguments),
        ("cancel_order", other),
        ("cancel_order", {**arguments, "order_id": str(arguments["order_id"])}),
    ]
    for name, args in distinct:
        if call(module.binding, rule, name, args) == bound:
            raise Failure(
                rule,
                f"binding({name!r}, {show(args)}) is the same text as for {show(arguments)}: a state bound to one "
                "request would open on the other",
            )
    other_bound = call(module.binding, rule, "cancel_order", other)

    state = call(module.seal, rule, key, bound, now)
    if not isinstance(state, str) or state.count(".") != 1:
        raise Failure(rule, "seal() must return the text PAYLOAD.MAC (one dot)", received=show(state))
    payload, mac = state.split(".")

    def opened(candidate: Any, bound_to: str, at: float, why: str) -> Any:
        got = call(module.open_state, rule, key, candidate, bound_to, at)
        if got is not None and not (isinstance(got, str) and got.strip()):
            raise Failure(
                rule,
                f"open_state() must return None or a sentence saying why not; for {why} it returned {show(got)}",
            )
        return got

    for late, when in ((0, "just sealed"), (60, "a minute later"), (STATE_TTL_S - 2, "just before it expires")):
        got = opened(state, bound, now + late, when)
        if got is not None:
            raise Failure(
                rule,
                f"open_state() refused a state it sealed itself, {when} (now + {late} s): {got}",
                sent=state,
            )
    refusals = [
        (_flip(state, len(payload) + 1 + len(mac) // 2), bound, now + 1, "a state whose MAC was changed"),
        (_flip(state, len(payload) // 2), bound, now + 1, "a state whose payload was changed"),
        (call(module.seal, rule, other_key, bound, now), bound, now + 1, "a state sealed with another key"),
        (state, other_bound, now + 1, f"the state of {show(arguments)} sent with {show(other)}"),
        (state, bound, now + STATE_TTL_S + 2, f"a state {STATE_TTL_S + 2} s old (it lasts {STATE_TTL_S} s)"),
        (state, bound, now + 30 * 86400, "a state a month old"),
        (payload, bound, now + 1, "the payload without its MAC"),
        ("", bound, now + 1, "an empty string"),
        (f"{state}.{mac}", bound, now + 1, "a state with a second MAC"),
        ("not base64 é.and no mac", bound, now + 1, "text that is no state"),
        (None, bound, now + 1, "null"),
        (7, bound, now + 1, "a number"),
    ]
    # A payload rewritten by the client, its MAC kept: a longer life, then another request.
    forged = {"for": bound, "exp": now + 10 * 86400}
    encoded = base64.urlsafe_b64encode(json.dumps(forged).encode()).rstrip(b"=").decode()
    refusals.append((f"{encoded}.{mac}", bound, now + STATE_TTL_S + 2, "a payload rewritten for a later expiry"))
    forged = {"for": other_bound, "exp": now + STATE_TTL_S}
    encoded = base64.urlsafe_b64encode(json.dumps(forged).encode()).rstrip(b"=").decode()
    refusals.append((f"{encoded}.{mac}", other_bound, now + 1, "a payload rewritten for another request"))
    for candidate, bound_to, at, why in refusals:
        if opened(candidate, bound_to, at, why) is None:
            raise Failure(
                rule,
                f"open_state() accepted {why}: a state must be refused unless its MAC matches (hmac.compare_digest), "
                "it was sealed for this request and it has not expired",
                sent=show(candidate),
            )
