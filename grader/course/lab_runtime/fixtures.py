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


class Answerer:
    """Stage 06's ``on_input``: answers each question of an ``input_required`` result, and records it.

    An ``elicitation/create`` form gets ``accept`` with a value for each field its schema names (a
    boolean True, a number 1, any other a string naming the key); anything else gets ``{}``.
    """

    def __init__(self) -> None:
        self.seen: list[Any] = []  # [key, request] for every call, in order

    def __call__(self, key: Any, request: Any) -> Any:
        self.seen.append([key, request])
        return answer(key, request)


def answer(key: Any, request: Any) -> Any:
    """What :class:`Answerer` answers to ``request`` under ``key`` (the checks compute it too)."""
    params = request.get("params") if isinstance(request, dict) else None
    if not isinstance(request, dict) or request.get("method") != "elicitation/create" or not isinstance(params, dict):
        return {}
    schema = params.get("requestedSchema")
    fields = schema.get("properties") if isinstance(schema, dict) else None
    content: dict[str, Any] = {}
    for name, spec in (fields or {}).items():
        kind = spec.get("type") if isinstance(spec, dict) else None
        content[name] = True if kind == "boolean" else 1 if kind in ("integer", "number") else f"{key}: yes"
    return {"action": "accept", "content": content}


FIXTURES = {"handlers": Handlers, "answerer": Answerer}
