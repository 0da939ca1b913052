"""Objects the checks hand to the learner's functions, made in the learner's process.

A check of ``handle_line(line, methods)`` needs ``methods``: handlers the test controls (one that
crashes, one that refuses with an RpcError, one that records a notification's params). Functions
cannot cross a pipe, so the harness makes them here, on request (``{"op": "fixture", ...}``), and
the check reads what they recorded afterwards.
"""

from __future__ import annotations

from typing import Any


class Handlers:
    """Stage 02's ``methods``: every kind of handler, and a record of the notifications seen."""

    def __init__(self) -> None:
        self.seen: list[Any] = []

    @property
    def methods(self) -> dict[str, Any]:
        from reference.errors import INVALID_PARAMS, RpcError

        def refuse(params: Any) -> Any:
            raise RpcError(INVALID_PARAMS, "unknown tool 'refund_order'")

        def crash(params: Any) -> Any:
            return 1 // 0

        def boom(params: Any) -> Any:
            raise RuntimeError("a notification handler failed")

        return {
            "ping": lambda params: {},
            "echo": lambda params: {"got": params},
            "refuse": refuse,
            "crash": crash,
            "notifications/seen": self.seen.append,
            "notifications/boom": boom,
        }


FIXTURES = {"handlers": Handlers}
