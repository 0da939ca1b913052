"""The answers behind the shop's tools: one parameterised query each (stage 05 of the course).

The tools' declarations (names, descriptions, schemas) are :mod:`reference.catalog`; here each
gets the function that answers it. Every query is parameterised (``?`` placeholders): a value
from a request never becomes SQL.

    >>> from reference.database import ensure_default, open_readonly
    >>> box = shop_toolbox(open_readonly(ensure_default()))
    >>> box.call({"name": "count_orders", "arguments": {"status": "refunded"}}, True)  # doctest: +NORMALIZE_WHITESPACE
    {'content': [{'type': 'text', 'text': '{"status": "refunded", "count": 187}'}],
     'structuredContent': {'status': 'refunded', 'count': 187}, 'isError': False}
    >>> box.call({"name": "count_orders", "arguments": {}}, False, structured_output=False)  # 2025-03-26
    {'content': [{'type': 'text', 'text': '{"count": 3000}'}], 'isError': False}
    >>> box.call({"name": "count_orders", "arguments": {"status": "lost"}}, True)["content"][0]["text"]
    "unknown status 'lost'. Valid statuses: pending, paid, shipped, delivered, cancelled, refunded."
"""

from __future__ import annotations

import sqlite3
from typing import Any

from .catalog import STATUS_TEXT, STATUSES, TOOLS
from .tools import Tool, Toolbox, ToolError

__all__ = ["STATUSES", "answers", "shop_toolbox", "shop_tools"]


def _status(args: dict[str, Any]) -> str | None:
    status = args.get("status")
    if status is not None and status not in STATUSES:
        # A tool execution error, not a schema violation: the model can read this and retry.
        raise ToolError(f"unknown status {status!r}. Valid statuses: {STATUS_TEXT}.")
    return status


def _rows(cursor: sqlite3.Cursor) -> list[dict[str, Any]]:
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor]


def answers(conn: sqlite3.Connection) -> dict[str, Any]:
    """The function that answers each tool, by name: the tool's arguments in, its JSON object out."""

    def count_orders(args: dict[str, Any]) -> dict[str, Any]:
        status = _status(args)
        if status is None:
            (count,) = conn.execute("SELECT count(*) FROM orders").fetchone()
        else:
            (count,) = conn.execute("SELECT count(*) FROM orders WHERE status = ?", (status,)).fetchone()
        return {"status": status, "count": count} if status else {"count": count}

    def list_orders(args: dict[str, Any]) -> dict[str, Any]:
        # One fixed SQL text whatever the filters: an absent filter is a NULL parameter that lets
        # every row through, so no SQL is ever put together from pieces (ruff's S608 checks it).
        customer_id = args.get("customer_id")
        filters = {
            "status": _status(args),
            "customer_id": None if customer_id is None else int(customer_id),
            "limit": int(args.get("limit", 20)),
            "offset": int(args.get("offset", 0)),
        }
        orders = _rows(
            conn.execute(
                """SELECT o.id, o.status, o.created_at, o.customer_id, c.name AS customer,
                          (SELECT sum(quantity * unit_price_cents) FROM order_items
                            WHERE order_id = o.id) AS total_cents
                     FROM orders o JOIN customers c ON c.id = o.customer_id
                    WHERE (:status IS NULL OR o.status = :status)
                      AND (:customer_id IS NULL OR o.customer_id = :customer_id)
                    ORDER BY o.id LIMIT :limit OFFSET :offset""",
                filters,
            )
        )
        (total,) = conn.execute(
            """SELECT count(*) FROM orders o
                WHERE (:status IS NULL OR o.status = :status)
                  AND (:customer_id IS NULL OR o.customer_id = :customer_id)""",
            filters,
        ).fetchone()
        return {"total": total, "offset": filters["offset"], "orders": orders}

    def get_order(args: dict[str, Any]) -> dict[str, Any]:
        order_id = int(args["order_id"])
        found = _rows(
            conn.execute(
                """SELECT o.id, o.status, o.created_at, o.customer_id, c.name AS customer, c.email
                     FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.id = ?""",
                (order_id,),
            )
        )
        if not found:
            (low, high) = conn.execute("SELECT min(id), max(id) FROM orders").fetchone()
            raise ToolError(f"no order with id {order_id}. Order ids run from {low} to {high}.")
        order = found[0]
        order["items"] = _rows(
            conn.execute(
                """SELECT p.id AS product_id, p.sku, p.name, i.quantity, i.unit_price_cents
                     FROM order_items i JOIN products p ON p.id = i.product_id
                    WHERE i.order_id = ? ORDER BY p.id""",
                (order_id,),
            )
        )
        order["total_cents"] = sum(i["quantity"] * i["unit_price_cents"] for i in order["items"])
        return order

    def search_products(args: dict[str, Any]) -> dict[str, Any]:
        query = args["query"]
        limit = int(args.get("limit", 10))
        # Escape LIKE's wildcards so that "100%" searches for a percent sign.
        pattern = "%" + query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        products = _rows(
            conn.execute(
                """SELECT id, sku, name, category, price_cents, stock FROM products
                    WHERE name LIKE ? ESCAPE '\\' OR category LIKE ? ESCAPE '\\' OR sku LIKE ? ESCAPE '\\'
                    ORDER BY id LIMIT ?""",
                (pattern, pattern, pattern, limit),
            )
        )
        return {"query": query, "products": products}

    return {
        "count_orders": count_orders,
        "list_orders": list_orders,
        "get_order": get_order,
        "search_products": search_products,
    }


def shop_tools(conn: sqlite3.Connection) -> list[Tool]:
    """The shop's tools: each declaration of :mod:`reference.catalog` with the query that answers it."""
    found = answers(conn)
    return [Tool.declared(tool, found[tool["name"]]) for tool in TOOLS]


def shop_toolbox(conn: sqlite3.Connection) -> Toolbox:
    return Toolbox(shop_tools(conn))
