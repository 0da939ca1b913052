"""Stage 11's ``ask_first`` in the course's server, over stdio in MCP 2026-07-28 (cell
``test_ask_first``): the question first (``input_required``), -32021 for a client that cannot be
asked, a bad state refused, a no writes nothing, a yes cancels.

    >>> _modern("cancel_order", {"order_id": 9}, {"name": "c", "version": "1"}, {})["params"]["name"]
    'cancel_order'
"""

from __future__ import annotations

import random
from typing import Any

from grader.checker.catalogue import CATALOGUE

from ...drive import Server, request
from ...expect import Failure, show
from ...work import Work
from .. import public
from .copies import entries, orders_by_status, shop_copy, status_of
from .request_state import _flip


@public(
    "11",
    "test_ask_first",
    "cancel_order in 2026-07-28, served: asked first, -32021, a bad state refused, a no writes nothing, a yes cancels",
)
def ask_first_cell(work: Work) -> None:
    check_ask_first(work, random.Random(11), {"name": "course-session", "version": "3.1"})


def _modern(name: str, arguments: Any, client: dict[str, str], capabilities: Any, **more: Any) -> dict[str, Any]:
    """A 2026-07-28 tools/call: its revision, capabilities and client in ``_meta``, ``more`` beside them."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": dict(client),
    }
    return request("tools/call", params={"name": name, "arguments": arguments, **more, "_meta": meta})


def _retry_rule() -> dict[str, str]:
    """The rule a retry that lacks its answer breaks (the checker's words), and the lesson's fix."""
    rule = CATALOGUE["modern-input-required"].rule_named("retry")
    return {
        "rule": f"{rule.source} ({rule.keyword}): {rule.text}",
        "fix": 'in ask_first, a retry whose inputResponses has no answer under "confirm" (none at all, {}, or only '
        "other keys) returns the question again, as a first call does: never None",
    }


_RETRY_RULE = _retry_rule()


def _asked_again(answer: Any, sent: dict[str, Any]) -> None:
    """A retry with a good requestState but no answer to the question: it is asked again, and nothing is
    written (MRTR > Error Handling: the missing information is requested again, rather than an error)."""
    got = answer(sent, "modern-input-required").get("result")
    asked = got.get("inputRequests") if isinstance(got, dict) else None
    question = asked.get("confirm") if isinstance(asked, dict) else None
    if not (
        isinstance(got, dict)
        and got.get("resultType") == "input_required"
        and isinstance(question, dict)
        and question.get("method") == "elicitation/create"
        and isinstance(got.get("requestState"), str)
    ):
        raise Failure(
            "modern-input-required",
            'a retry with a good requestState but no answer under "confirm" is asked again (input_required, the '
            "question and a requestState), not served as a yes or refused",
            sent=show(sent),
            received=show(got),
            **_RETRY_RULE,
        )


def check_ask_first(work: Work, rng: random.Random, client: dict[str, str]) -> None:
    """The course's server with the learner's ask_first, over stdio in MCP 2026-07-28: the question,
    -32021 for a client that cannot be asked, a state refused on another request and when changed,
    a retry without an answer asked again, a decline that writes nothing, an accepted retry that
    cancels; every refusal audited, the questions not."""
    with shop_copy(work) as (here, there):
        by_status = orders_by_status(here)
        order, other = rng.sample([*by_status["pending"], *by_status["paid"]], 2)
        reason = rng.choice(["the customer asked by phone", "a duplicate order", "paid twice, said the customer"])
        arguments = {"order_id": order, "reason": reason}
        elicits = {"elicitation": rng.choice([{}, {"form": {}}])}
        before = status_of(here, order)
        with Server(work.host("shop_writes", "--allow-writes", "--db", there)) as server:

            def answer(sent: dict[str, Any], check: str) -> dict[str, Any]:
                server.send(sent)
                reply = server.next_line(sent, check)
                if not isinstance(reply, dict) or reply.get("id") != sent["id"]:
                    raise Failure(check, "the reply to this request", sent=show(sent), received=show(reply))
                return reply

            def refused(sent: dict[str, Any], code: int, check: str, why: str) -> dict[str, Any]:
                reply = answer(sent, check)
                error = reply.get("error")
                if not isinstance(error, dict) or error.get("code") != code:
                    raise Failure(check, f"{why}: a JSON-RPC error {code}", sent=show(sent), received=show(reply))
                if status_of(here, order) != before:
                    raise Failure(check, f"{why}: the order must be left as it was", sent=show(sent))
                return error

            first = _modern("cancel_order", arguments, client, elicits)
            got = answer(first, "modern-input-required").get("result")
            asked = got.get("inputRequests") if isinstance(got, dict) else None
            question = asked.get("confirm") if isinstance(asked, dict) else None
            state = got.get("requestState") if isinstance(got, dict) else None
            if (
                not isinstance(got, dict)
                or got.get("resultType") != "input_required"
                or not isinstance(question, dict)
                or question.get("method") != "elicitation/create"
                or not isinstance(state, str)
            ):
                raise Failure(
                    "modern-input-required",
                    "a first 2026-07-28 cancel_order asks before it writes: resultType input_required, the "
                    'question under inputRequests["confirm"] (an elicitation/create request) and a requestState',
                    sent=show(first),
                    received=show(got),
                )
            if status_of(here, order) != before:
                raise Failure("modern-input-required", "the question must change nothing", sent=show(first))
            error = refused(
                _modern("cancel_order", arguments, client, {}),
                -32021,
                "modern-input-required",
                "a client whose _meta declares no elicitation cannot be asked",
            )
            data = error.get("data")
            if not isinstance(data, dict) or not isinstance(data.get("requiredCapabilities"), dict):
                raise Failure(
                    "modern-input-required",
                    "-32021 says what to declare: data.requiredCapabilities",
                    expected=show({"requiredCapabilities": {"elicitation": {}}}),
                    received=show(error),
                )
            yes = {"confirm": {"action": "accept", "content": {"confirm": True}}}
            moved = {**arguments, "order_id": other}
            refused(
                _modern("cancel_order", moved, client, elicits, inputResponses=yes, requestState=state),
                -32602,
                "modern-request-state",
                f"the requestState of order {order}'s question sent with a cancel of order {other}",
            )
            if status_of(here, other) == "cancelled":
                raise Failure("modern-request-state", f"order {other} was cancelled with another order's state")
            payload, _, mac = state.rpartition(".")
            changed = f"{payload}.{_flip(mac, len(mac) // 2)}" if payload else _flip(state, len(state) // 2)
            refused(
                _modern("cancel_order", arguments, client, elicits, inputResponses=yes, requestState=changed),
                -32602,
                "modern-request-state",
                "a requestState with one character changed",
            )
            for missing in ({}, {"inputResponses": {}}, {"inputResponses": {"other": yes["confirm"]}}):
                _asked_again(answer, _modern("cancel_order", arguments, client, elicits, requestState=state, **missing))
                if status_of(here, order) != before:
                    raise Failure(
                        "modern-input-required",
                        'a retry with no answer under "confirm" must not cancel: ask again',
                        **_RETRY_RULE,
                    )
            no = rng.choice(
                [{"action": "decline"}, {"action": "cancel"}, {"action": "accept", "content": {"confirm": False}}]
            )
            sent = _modern(
                "cancel_order", arguments, client, elicits, inputResponses={"confirm": no}, requestState=state
            )
            got = answer(sent, "modern-input-required").get("result")
            if not isinstance(got, dict) or got.get("isError") is not True or status_of(here, order) != before:
                raise Failure(
                    "modern-input-required",
                    "a retry whose answer is not a ticked box cancels nothing: a tool error (isError: true)",
                    sent=show(sent),
                    received=show(got),
                )
            sent = _modern("cancel_order", arguments, client, elicits, inputResponses=yes, requestState=state)
            got = answer(sent, "modern-input-required").get("result")
            if not isinstance(got, dict) or got.get("isError") is not False or status_of(here, order) != "cancelled":
                raise Failure(
                    "modern-input-required",
                    "the retry with the user's yes and the requestState unchanged cancels the order",
                    sent=show(sent),
                    received=show(got),
                )
        outcomes = [entry["outcome"] for entry in entries(here)]
        want = ["rejected"] * 4 + ["ok"]
        if outcomes != want:
            raise Failure(
                "write-audit",
                "a question (the first, and each one asked again) writes and audits nothing; each refusal after it "
                "(-32021, two bad states, the user's no) is audited as rejected, the cancel as ok",
                expected=show(want),
                received=show(outcomes),
            )
