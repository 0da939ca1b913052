"""The shop's tools as the manual a model reads: names, descriptions, schemas, annotations.

This is what ``tools/list`` shows (stage 04 of the course): declarations only, no code. The
answers behind them are :mod:`reference.shop`'s queries. Each description tells a model when to
use the tool, what it returns and what an error will say; each schema bounds every number.

    >>> [tool["name"] for tool in TOOLS]
    ['count_orders', 'list_orders', 'get_order', 'search_products']
    >>> TOOLS[2]["inputSchema"]["required"], TOOLS[2]["annotations"]["readOnlyHint"]
    (['order_id'], True)
    >>> "outputSchema" in listing({}, structured_output=False)["tools"][0]
    False
"""

from __future__ import annotations

import copy
from typing import Any

from .errors import INVALID_PARAMS, RpcError, json_type

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

# What every shop tool promises a host: it only reads, and the same call gives the same answer.
READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}


def _declare(
    name: str, title: str, description: str, input_schema: dict[str, Any], output_schema: dict[str, Any]
) -> dict[str, Any]:
    """One tool as tools/list shows it (from 2025-06-18 on, with its outputSchema)."""
    return {
        "name": name,
        "title": title,
        "description": description,
        "inputSchema": input_schema,
        "outputSchema": output_schema,
        "annotations": dict(READ_ONLY),
    }


def _tools() -> list[dict[str, Any]]:
    status_property = {
        "type": "string",
        "description": f"Only orders with this status. One of: {STATUS_TEXT}.",
    }
    return [
        _declare(
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
            COUNT_ORDERS_OUT,
        ),
        _declare(
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
            LIST_ORDERS_OUT,
        ),
        _declare(
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
            GET_ORDER_OUT,
        ),
        _declare(
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
            SEARCH_PRODUCTS_OUT,
        ),
    ]


TOOLS = _tools()


def described(tool: dict[str, Any], structured_output: bool = True) -> dict[str, Any]:
    """A declaration as a session on this revision sees it: no outputSchema before 2025-06-18."""
    if structured_output:
        return copy.deepcopy(tool)
    return {key: copy.deepcopy(value) for key, value in tool.items() if key != "outputSchema"}


def list_result(tools: list[dict[str, Any]], params: dict[str, Any]) -> dict[str, Any]:
    """The tools/list result for ``tools``: one page holds every tool, so any cursor is refused."""
    cursor = params.get("cursor")
    if cursor is None:
        return {"tools": tools}
    if not isinstance(cursor, str):
        # Not a cursor at all: say what a cursor is, rather than that this one is unknown.
        raise RpcError(
            INVALID_PARAMS, f'"cursor" must be a string (an opaque token from nextCursor), got {json_type(cursor)}'
        )
    # We never hand out a cursor (one page holds every tool), so any cursor is unusable.
    raise RpcError(INVALID_PARAMS, "unknown cursor: tools/list has a single page")


_DESCRIBED = {flag: [described(tool, flag) for tool in TOOLS] for flag in (True, False)}


def listing(params: dict[str, Any], structured_output: bool = True) -> dict[str, Any]:
    """The shop's tools/list result; ``structured_output``: the session negotiated 2025-06-18 or later."""
    return list_result(_DESCRIBED[structured_output], params)
