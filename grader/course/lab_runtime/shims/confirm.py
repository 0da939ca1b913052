"""reference.confirm, in stage 11's runtime: the learner's ``ask_first`` (shop_state.py) asks the user.

Before a 2026-07-28 ``cancel_order`` writes, the course's server asks this module for a
:class:`Decision`. The course decides whether there is anything to ask about (arguments that break
the inputSchema, an order that does not exist or cannot be cancelled go straight to the learner's
``call_write``, which refuses or leaves them as in the legacy era); the question, the sealed state
and the answer are the learner's: ``ask_first(key, params, capabilities, now)`` returns ``None`` (go
ahead) or the result to answer instead, or raises ``RpcError`` (-32021, -32602).
"""

from dataclasses import dataclass
from typing import Any

from .errors import INTERNAL_ERROR, RpcError
from .schema import problems

ASKS_FIRST = ("cancel_order",)
CANCELLABLE = ("pending", "paid")


@dataclass(frozen=True)
class Decision:
    """Carry the call out (``proceed``), or answer ``result``; ``refused``: the reason to audit."""

    result: dict[str, Any] | None = None
    refused: str = ""

    @property
    def proceed(self) -> bool:
        return self.result is None


class Confirmation:
    def __init__(self, sealer: Any, describe: Any) -> None:
        self.sealer = sealer
        self.describe = describe

    def decide(self, params: dict[str, Any], capabilities: dict[str, Any], input_schema: dict[str, Any]) -> Decision:
        first = "inputResponses" not in params and "requestState" not in params
        if first and not self._worth_asking(params.get("arguments"), input_schema):
            return Decision()
        import shop_state as _learner  # the learner's, first on the import path (loaded only when asked)

        got = _learner.ask_first(self.sealer.key, params, capabilities, self.sealer.clock())
        if got is None:
            return Decision()
        if not isinstance(got, dict):
            raise RpcError(INTERNAL_ERROR, "ask_first() returned neither None nor a result object")
        if got.get("isError") is True:
            texts = [c.get("text") for c in got.get("content", []) if isinstance(c, dict)]
            return Decision(got, " ".join(t for t in texts if isinstance(t, str)) or "the user did not confirm")
        return Decision(got)

    def _worth_asking(self, arguments: Any, input_schema: dict[str, Any]) -> bool:
        """Whether the cancel would change something: otherwise the write tool answers it as it is."""
        if not isinstance(arguments, dict) or problems(input_schema, arguments):
            return False
        order_id = arguments.get("order_id")
        if not isinstance(order_id, int) or isinstance(order_id, bool):
            return False
        order = self.describe(order_id)
        return order is not None and order.get("status", CANCELLABLE[0]) in CANCELLABLE
