"""Ask the user before cancelling an order (MCP 2026-07-28): a multi round-trip ``cancel_order``.

``cancel_order`` is destructive: the order's status is lost. In the modern era the server asks the
user itself, through the client, before it writes anything (:mod:`reference.mrtr`):

1. the first call answers ``input_required``: one form elicitation under the key ``confirm``, a
   message naming the order, a schema with one boolean; and a sealed ``requestState``;
2. the retry (a new id, the same name and arguments, ``inputResponses`` and the ``requestState``)
   is carried out only if the user accepted *and* ticked the box; a decline, a dismissal or an
   unticked box leaves the order as it is (a tool error says so); a missing answer asks again.

The question is asked only when the cancel would change something: arguments that break the
inputSchema, an order that does not exist or cannot be cancelled, and one already cancelled go
straight to the write tool, which refuses or leaves them as today. A client that did not declare
elicitation in this request's ``_meta`` gets -32021 (it could never answer).

The legacy era keeps today's behaviour: no question (see :mod:`reference.writes`).

    >>> from reference.mrtr import Sealer
    >>> gate = Confirmation(Sealer(key=b"k" * 32), lambda order_id: {"id": order_id, "status": "paid",
    ...     "customer": "Ann", "items": [{}], "total_cents": 1250})
    >>> schema = {"type": "object", "properties": {"order_id": {"type": "integer"}, "reason": {"type": "string"}}}
    >>> params = {"name": "cancel_order", "arguments": {"order_id": 7, "reason": "asked by phone"}}
    >>> asked = gate.decide(params, {"elicitation": {}}, schema).result
    >>> asked["resultType"], asked["inputRequests"]["confirm"]["params"]["message"][:40]
    ('input_required', 'Cancel order 7 (paid, 1 item, 12.50 in t')
    >>> retry = {**params, "requestState": asked["requestState"],
    ...          "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": True}}}}
    >>> gate.decide(retry, {}, schema).proceed
    True
    >>> no = {**retry, "inputResponses": {"confirm": {"action": "decline"}}}
    >>> gate.decide(no, {}, schema).refused
    'the user declined to cancel order 7'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import mrtr
from .errors import INVALID_PARAMS, RpcError
from .schema import problems
from .tools import json_type, text_result

ASKS_FIRST = ("cancel_order",)  # the write tools that ask their user in the modern era
KEY = "confirm"  # the inputRequests key, and the name of the form's one boolean
CANCELLABLE = ("pending", "paid")  # what reference.writes cancels; anything else is its to refuse


@dataclass(frozen=True)
class Decision:
    """What to do with one call: carry it out (``proceed``), or answer ``result`` instead.

    ``refused`` (a reason) when the answer is a refusal, to be audited; empty when it only asks.
    """

    result: dict[str, Any] | None = None
    refused: str = ""

    @property
    def proceed(self) -> bool:
        return self.result is None


class Confirmation:
    """The question before ``cancel_order``, and the checks of its answer."""

    def __init__(self, sealer: mrtr.Sealer, describe: Callable[[int], dict[str, Any] | None]) -> None:
        self.sealer = sealer
        self.describe = describe  # the order as get_order answers it; None when there is no such order

    def decide(self, params: dict[str, Any], capabilities: dict[str, Any], input_schema: dict[str, Any]) -> Decision:
        """The decision on one modern ``tools/call`` of ``cancel_order``; an RpcError is a refusal."""
        arguments = params.get("arguments")
        bound = mrtr.binding("tools/call", params["name"], arguments)
        retry = mrtr.read_retry(params)
        if retry.first:
            order = self._order_to_ask_about(arguments, input_schema)
            return Decision() if order is None else self._ask(order, arguments, bound, capabilities)
        if retry.state is None:
            raise RpcError(
                INVALID_PARAMS,
                '"inputResponses" came without "requestState": send back the requestState of the input_required '
                f"result unchanged with the answers ({mrtr.PAGE}: the client MUST echo it)",
            )
        self.sealer.open(retry.state, bound)  # ours, for these arguments, and fresh; or -32602
        answer = mrtr.read_elicit_result(retry.responses or {}, KEY)
        if answer is None:  # no answer: ask again (mrtr, Error Handling), with a fresh state
            order = self.describe(arguments["order_id"]) or {"id": arguments["order_id"]}
            return self._ask(order, arguments, bound, capabilities)
        action, content = answer
        order_id = arguments["order_id"]
        if action == "accept":
            ticked = content.get(KEY)
            if not isinstance(ticked, bool):
                raise RpcError(
                    INVALID_PARAMS,
                    f'inputResponses["{KEY}"].content.{KEY} must be a boolean, as the requestedSchema asked; '
                    f"got {json_type(ticked)}",
                )
            if ticked:
                return Decision()
            why = f"the user did not confirm the cancellation of order {order_id}"
        elif action == "decline":
            why = f"the user declined to cancel order {order_id}"
        else:
            why = f"the user dismissed the question about order {order_id}"
        text = f"{why}: order {order_id} was not cancelled, nothing was changed. Ask the user before calling again."
        return Decision(text_result(text, is_error=True), why)

    def _order_to_ask_about(self, arguments: Any, input_schema: dict[str, Any]) -> dict[str, Any] | None:
        """The order a first call would really cancel; ``None`` when the write tool answers it as today."""
        if not isinstance(arguments, dict) or problems(input_schema, arguments):
            return None
        order_id = arguments.get("order_id")
        if not isinstance(order_id, int) or isinstance(order_id, bool):
            return None
        order = self.describe(order_id)
        # An order described without its status (a server with no resources to read it from) is asked about.
        if order is None or order.get("status", CANCELLABLE[0]) not in CANCELLABLE:
            return None
        return order

    def _ask(
        self, order: dict[str, Any], arguments: dict[str, Any], bound: str, capabilities: dict[str, Any]
    ) -> Decision:
        order_id = arguments["order_id"]
        mrtr.require_form_elicitation(
            capabilities, f"cancel_order asks the user to confirm the cancel of order {order_id}"
        )
        field = {
            "type": "boolean",
            "title": f"Cancel order {order_id}",
            "description": "Tick to cancel the order; leave it to keep the order as it is.",
            "default": False,
        }
        request = mrtr.elicit_form(question(order, str(arguments.get("reason", ""))), {KEY: field}, [KEY])
        return Decision(mrtr.input_required({KEY: request}, self.sealer.seal(bound, ask=KEY)))


def question(order: dict[str, Any], reason: str) -> str:
    """The message the user reads: which order, what it holds, why, and that it cannot be undone.

    >>> question({"id": 3, "status": "pending", "customer": "Bo", "items": [{}, {}], "total_cents": 990}, "dup")
    'Cancel order 3 (pending, 2 items, 9.90 in total, for Bo)? Reason given: dup. The order cannot be un-cancelled.'
    """
    details = []
    if "status" in order:
        details.append(str(order["status"]))
    if isinstance(order.get("items"), list):
        count = len(order["items"])
        details.append(f"{count} item" + ("" if count == 1 else "s"))
    if isinstance(order.get("total_cents"), int):
        details.append(f"{order['total_cents'] / 100:.2f} in total")
    if order.get("customer"):
        details.append(f"for {order['customer']}")
    shown = f" ({', '.join(details)})" if details else ""
    reason = reason.rstrip(". ") if len(reason) <= 200 else reason[:197] + "..."
    return f"Cancel order {order['id']}{shown}? Reason given: {reason}. The order cannot be un-cancelled."
