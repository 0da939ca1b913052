"""Stage 05's four tools, each against the reference on the same database (cells ``test_count_orders``,
``test_list_orders``, ``test_get_order``, ``test_search_products``).

The learner's ``count_orders(conn, args)`` and the others run in the learner's process on a
read-only connection; what they return is compared with what the reference's tools return (they
are tested against plain SQL), and a tool that cannot answer must raise ``ToolError`` with a text
that helps the model call again. The hidden cells draw the arguments:

    >>> import random
    >>> [sorted(arguments) for arguments in hidden_arguments(random.Random(1), "list_orders")]
    [['limit', 'offset', 'status'], ['customer_id', 'limit'], ['offset']]
"""

from __future__ import annotations

import json
import random
from typing import Any

from reference.catalog import STATUSES
from reference.database import ensure_default, open_readonly
from reference.shop import shop_tools
from reference.tools import ToolError as ReferenceToolError

from ...calls import outcome
from ...expect import Failure, equal, show
from ...remote import is_a
from ...work import Work
from .. import public

VISIBLE: dict[str, list[dict[str, Any]]] = {
    "count_orders": [{}, {"status": "paid"}, {"status": "lost"}, {"status": "x' OR '1'='1"}],
    "list_orders": [
        {},
        {"status": "shipped", "limit": 2},
        {"customer_id": 7, "limit": 3, "offset": 1},
        {"customer_id": 999},
        {"status": "nope"},
    ],
    "get_order": [{"order_id": 1}, {"order_id": 3000}, {"order_id": 999999}],
    "search_products": [{"query": "mug"}, {"query": "100%"}, {"query": "桜", "limit": 50}, {"query": "zzz"}],
}


def _tool_cell(name: str, points_text: str) -> None:
    @public("05", f"test_{name}", f"{name}(conn, args) against the shop: {points_text}")
    def run(work: Work) -> None:
        check_tool(work, name, VISIBLE[name])


_tool_cell("count_orders", "all, paid, an unknown status, a status that is SQL")


_tool_cell("list_orders", "filters, a page, a customer with no orders, an unknown status")


_tool_cell("get_order", "the first and the last order, one that does not exist")


_tool_cell("search_products", 'mug, "100%", a non-ASCII query, no match')


def hidden_arguments(rng: random.Random, tool: str) -> list[dict[str, Any]]:
    if tool == "count_orders":
        return [{"status": s} for s in rng.sample(STATUSES, 3)] + [{"status": "o'brien"}]
    if tool == "list_orders":
        return [
            {"status": rng.choice(STATUSES), "limit": rng.randint(1, 30), "offset": rng.randint(0, 400)},
            {"customer_id": rng.randint(1, 48), "limit": 100},
            {"offset": rng.randint(2990, 3100)},
        ]
    if tool == "get_order":
        return [{"order_id": rng.randint(1, 3000)} for _ in range(4)] + [{"order_id": rng.randint(3001, 10**6)}]
    return [{"query": rng.choice(["kit", "OFF-00", "garden", "_", "mug", "lamp"]), "limit": rng.randint(1, 20)}]


def _connection(work: Work) -> Any:
    """A read-only connection in the learner's process, for their functions to use."""
    return work.stdlib("sqlite3.connect")(f"file:{work.inside(work.db)}?mode=ro", uri=True)


def _reference(tool: str, arguments: dict[str, Any]) -> tuple[Any, str | None]:
    """The reference's answer (in this process): (value, None), or (None, the tool error's text)."""
    tools = {t.name: t for t in shop_tools(open_readonly(ensure_default()))}
    try:
        return tools[tool].run(arguments), None
    except ReferenceToolError as exc:
        return None, str(exc)


def check_tool(work: Work, tool: str, argument_sets: list[dict[str, Any]]) -> None:
    function = getattr(work.module("shop_server"), tool)
    conn = _connection(work)
    try:
        for arguments in argument_sets:
            want, error_text = _reference(tool, arguments)
            got, error = outcome(function, "shop-contract", conn, arguments)
            shown = f"{tool}(conn, {json.dumps(arguments, ensure_ascii=False)})"
            if error_text is not None:
                if not is_a(error, "ToolError"):
                    raise Failure(
                        "shop-contract",
                        f"{shown} must raise ToolError: the tool ran and cannot answer",
                        expected=f"ToolError, with a text such as: {error_text}",
                        received=show(got) if error is None else f"{type(error).__name__}: {error}",
                    )
                _error_text_helps(tool, arguments, str(error))
                continue
            if error is not None:
                raise Failure("shop-contract", f"{shown} raised {type(error).__name__}: {error}")
            equal(got, want, "shop-contract", f"{shown} did not return what the shop holds")
    finally:
        conn.close()


def _error_text_helps(tool: str, arguments: dict[str, Any], text: str) -> None:
    if "status" in arguments:
        missing = [s for s in STATUSES if s not in text]
        if missing:
            raise Failure(
                "shop-contract",
                "the error text must list the valid statuses so that the model can call again",
                received=text,
                hint=f"it does not mention {', '.join(missing)}",
            )
    if "order_id" in arguments and not any(ch.isdigit() for ch in text.replace(str(arguments["order_id"]), "")):
        raise Failure("shop-contract", "the error text must say which order ids exist", received=text)
