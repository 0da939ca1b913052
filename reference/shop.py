"""The shop's tools. Each description is the manual a model reads before it calls the tool.

Every query is parameterised (``?`` placeholders): a value from a request never becomes SQL.

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

from .tools import Tool, Toolbox, ToolError

STATUSES = ("pending", "paid", "shipped", "delivered", "cancelled", "refunded")
STATUS_TEXT = ", ".join(STATUSES)
# Bounds keep every number inside SQLite's 64-bit integers (1e300 is an "integer" to JSON Schema).
MAX_ID = 2**31 - 1


def _exact(properties: dict[str, Any], optional: tuple[str, ...] = ()) -> dict[str, Any]:
    """An object schema for a result: these members, every one required unless optional, no others."""
    return {
        "type": "object",
        "properties": properties,
        "required": [name for name in properties if name not in optional],
        "additionalProperties": False,
    }


# The outputSchemas (2025-06-18 on): what each tool really returns, as a client may check it.
_STATUS_OUT = {"type": "string", "enum": list(STATUSES)}
_ORDER_OUT = {
    "id": {"type": "integer", "description": "The order's id."},
    "status": _STATUS_OUT,
    "created_at": {"type": "string", "description": "When the order was placed (ISO 8601, UTC)."},
    "customer_id": {"type": "integer"},
    "customer": {"type": "string", "description": "The customer's name."},
}
COUNT_ORDERS_OUT = _exact(
    {
        "status": {**_STATUS_OUT, "description": "The status counted; absent when every order was counted."},
        "count": {"type": "integer", "minimum": 0},
    },
    optional=("status",),
)
LIST_ORDERS_OUT = _exact(
    {
        "total": {"type": "integer", "minimum": 0, "description": "How many orders match, on every page."},
        "offset": {"type": "integer", "minimum": 0},
        "orders": {
            "type": "array",
            "items": _exact(
                {
                    **_ORDER_OUT,
                    # SUM over no rows is NULL: an order without line items would have no total.
                    "total_cents": {
                        "type": ["integer", "null"],
                        "minimum": 0,
                        "description": "The order's total in cents; null for an order without line items.",
                    },
                }
            ),
        },
    }
)
GET_ORDER_OUT = _exact(
    {
        **_ORDER_OUT,
        "email": {"type": "string"},
        "items": {
            "type": "array",
            "items": _exact(
                {
                    "product_id": {"type": "integer"},
                    "sku": {"type": "string"},
                    "name": {"type": "string"},
                    "quantity": {"type": "integer", "minimum": 1},
                    "unit_price_cents": {"type": "integer", "minimum": 1},
                }
            ),
        },
        "total_cents": {"type": "integer", "minimum": 0, "description": "The sum of quantity * unit_price_cents."},
    }
)
SEARCH_PRODUCTS_OUT = _exact(
    {
        "query": {"type": "string", "description": "The query, as given."},
        "products": {
            "type": "array",
            "items": _exact(
                {
                    "id": {"type": "integer"},
                    "sku": {"type": "string"},
                    "name": {"type": "string"},
                    "category": {"type": "string"},
                    "price_cents": {"type": "integer", "minimum": 1},
                    "stock": {"type": "integer", "minimum": 0},
                }
            ),
        },
    }
)


def _status(args: dict[str, Any]) -> str | None:
    status = args.get("status")
    if status is not None and status not in STATUSES:
        # A tool execution error, not a schema violation: the model can read this and retry.
        raise ToolError(f"unknown status {status!r}. Valid statuses: {STATUS_TEXT}.")
    return status


def _rows(cursor: sqlite3.Cursor) -> list[dict[str, Any]]:
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor]


def shop_tools(conn: sqlite3.Connection) -> list[Tool]:
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

    status_property = {
        "type": "string",
        "description": f"Only orders with this status. One of: {STATUS_TEXT}.",
    }
    return [
        Tool(
            "count_orders",
            "Count orders",
            "Count the shop's orders, all of them or only those with one status. Use this for "
            "questions such as 'how many orders are still pending?'. Returns JSON "
            '{"status": ..., "count": N}. An unknown status is reported as an error that lists '
            f"the valid ones: {STATUS_TEXT}.",
            {
                "type": "object",
                "properties": {"status": status_property},
                "additionalProperties": False,
            },
            count_orders,
            output_schema=COUNT_ORDERS_OUT,
        ),
        Tool(
            "list_orders",
            "List orders",
            "List orders, oldest first, optionally only one status or one customer. Each order has "
            "its id, status, created_at (UTC), customer_id, customer name and total_cents (money is "
            'in integer cents). Returns JSON {"total": N, "offset": N, "orders": [...]}; page '
            "through long lists with offset. Use get_order for an order's line items.",
            {
                "type": "object",
                "properties": {
                    "status": status_property,
                    "customer_id": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": MAX_ID,
                        "description": "Only this customer's orders.",
                    },
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": 100,
                        "default": 20,
                        "description": "At most this many orders (1-100, default 20).",
                    },
                    "offset": {
                        "type": "integer",
                        "minimum": 0,
                        "maximum": MAX_ID,
                        "default": 0,
                        "description": "Skip this many orders first (default 0).",
                    },
                },
                "additionalProperties": False,
            },
            list_orders,
            output_schema=LIST_ORDERS_OUT,
        ),
        Tool(
            "get_order",
            "Get one order",
            "Get one order by its numeric id: status, created_at (UTC), the customer's name and "
            "email, the line items (product, quantity, unit price in cents) and total_cents. An id "
            "that does not exist is reported as an error that says which ids exist.",
            {
                "type": "object",
                "properties": {
                    "order_id": {"type": "integer", "minimum": 1, "maximum": MAX_ID, "description": "The order's id."}
                },
                "required": ["order_id"],
                "additionalProperties": False,
            },
            get_order,
            output_schema=GET_ORDER_OUT,
        ),
        Tool(
            "search_products",
            "Search products",
            "Find products whose name, category or SKU contains the query text (case-insensitive "
            'for ASCII letters). Returns JSON {"query": ..., "products": [...]} with id, sku, '
            "name, category, price_cents and stock. An empty list means nothing matched: try a "
            "shorter or more general word. Categories: kitchen, office, garden, outdoor, toys, "
            "electronics.",
            {
                "type": "object",
                "properties": {
                    "query": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": 100,
                        "description": "Text to look for, e.g. 'mug' or 'garden'.",
                    },
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": 50,
                        "default": 10,
                        "description": "At most this many products (1-50, default 10).",
                    },
                },
                "required": ["query"],
                "additionalProperties": False,
            },
            search_products,
            output_schema=SEARCH_PRODUCTS_OUT,
        ),
    ]


def shop_toolbox(conn: sqlite3.Connection) -> Toolbox:
    return Toolbox(shop_tools(conn))
