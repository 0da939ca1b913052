"""The shop's tools as the course promises them, written out by hand: the test oracle.

Tests compare what the reference lists (in process and over the wire) with this literal, and check
results and bad arguments against these schemas, never against the ones the code under test
builds: a weakened schema in reference/shop.py must fail a test, not move the expectation with it.
A deliberate change to a tool (its schemas, or the description a model reads) is made twice, here
and in the code.
"""

from __future__ import annotations

from typing import Any

PINNED_TOOLS: list[dict[str, Any]] = [
    {
        "name": "count_orders",
        "title": "Count orders",
        "description": "Count the shop's orders, all of them or only those with one status. Use this for questions "
        'such as \'how many orders are still pending?\'. Returns JSON {"status": ..., "count": N}. '
        "An unknown status is reported as an error that lists the valid ones: pending, paid, "
        "shipped, delivered, cancelled, refunded.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "status": {
                    "type": "string",
                    "description": "Only orders with this status. One of: pending, "
                    "paid, shipped, delivered, cancelled, refunded.",
                }
            },
            "additionalProperties": False,
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "status": {
                    "type": "string",
                    "enum": ["pending", "paid", "shipped", "delivered", "cancelled", "refunded"],
                    "description": "The status counted; absent when every order was counted.",
                },
                "count": {"type": "integer", "minimum": 0},
            },
            "required": ["count"],
            "additionalProperties": False,
        },
        "annotations": {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False},
    },
    {
        "name": "list_orders",
        "title": "List orders",
        "description": "List orders, oldest first, optionally only one status or one customer. Each order has its "
        "id, status, created_at (UTC), customer_id, customer name and total_cents (money is in "
        'integer cents). Returns JSON {"total": N, "offset": N, "orders": [...]}; page through long '
        "lists with offset. Use get_order for an order's line items.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "status": {
                    "type": "string",
                    "description": "Only orders with this status. One of: pending, "
                    "paid, shipped, delivered, cancelled, refunded.",
                },
                "customer_id": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 2147483647,
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
                    "maximum": 2147483647,
                    "default": 0,
                    "description": "Skip this many orders first (default 0).",
                },
            },
            "additionalProperties": False,
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "total": {"type": "integer", "minimum": 0, "description": "How many orders match, on every page."},
                "offset": {"type": "integer", "minimum": 0},
                "orders": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "id": {"type": "integer", "description": "The order's id."},
                            "status": {
                                "type": "string",
                                "enum": ["pending", "paid", "shipped", "delivered", "cancelled", "refunded"],
                            },
                            "created_at": {
                                "type": "string",
                                "description": "When the order was placed (ISO 8601, UTC).",
                            },
                            "customer_id": {"type": "integer"},
                            "customer": {"type": "string", "description": "The customer's name."},
                            "total_cents": {
                                "type": ["integer", "null"],
                                "minimum": 0,
                                "description": "The order's total in cents; null for an order without line items.",
                            },
                        },
                        "required": ["id", "status", "created_at", "customer_id", "customer", "total_cents"],
                        "additionalProperties": False,
                    },
                },
            },
            "required": ["total", "offset", "orders"],
            "additionalProperties": False,
        },
        "annotations": {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False},
    },
    {
        "name": "get_order",
        "title": "Get one order",
        "description": "Get one order by its numeric id: status, created_at (UTC), the customer's name and email, "
        "the line items (product, quantity, unit price in cents) and total_cents. An id that does "
        "not exist is reported as an error that says which ids exist.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "order_id": {"type": "integer", "minimum": 1, "maximum": 2147483647, "description": "The order's id."}
            },
            "required": ["order_id"],
            "additionalProperties": False,
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "id": {"type": "integer", "description": "The order's id."},
                "status": {
                    "type": "string",
                    "enum": ["pending", "paid", "shipped", "delivered", "cancelled", "refunded"],
                },
                "created_at": {"type": "string", "description": "When the order was placed (ISO 8601, UTC)."},
                "customer_id": {"type": "integer"},
                "customer": {"type": "string", "description": "The customer's name."},
                "email": {"type": "string"},
                "items": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "product_id": {"type": "integer"},
                            "sku": {"type": "string"},
                            "name": {"type": "string"},
                            "quantity": {"type": "integer", "minimum": 1},
                            "unit_price_cents": {"type": "integer", "minimum": 1},
                        },
                        "required": ["product_id", "sku", "name", "quantity", "unit_price_cents"],
                        "additionalProperties": False,
                    },
                },
                "total_cents": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "The sum of quantity * unit_price_cents.",
                },
            },
            "required": ["id", "status", "created_at", "customer_id", "customer", "email", "items", "total_cents"],
            "additionalProperties": False,
        },
        "annotations": {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False},
    },
    {
        "name": "search_products",
        "title": "Search products",
        "description": "Find products whose name, category or SKU contains the query text (case-insensitive for "
        'ASCII letters). Returns JSON {"query": ..., "products": [...]} with id, sku, name, '
        "category, price_cents and stock. An empty list means nothing matched: try a shorter or "
        "more general word. Categories: kitchen, office, garden, outdoor, toys, electronics.",
        "inputSchema": {
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
        "outputSchema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "The query, as given."},
                "products": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "id": {"type": "integer"},
                            "sku": {"type": "string"},
                            "name": {"type": "string"},
                            "category": {"type": "string"},
                            "price_cents": {"type": "integer", "minimum": 1},
                            "stock": {"type": "integer", "minimum": 0},
                        },
                        "required": ["id", "sku", "name", "category", "price_cents", "stock"],
                        "additionalProperties": False,
                    },
                },
            },
            "required": ["query", "products"],
            "additionalProperties": False,
        },
        "annotations": {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False},
    },
]

INPUT_SCHEMAS: dict[str, dict[str, Any]] = {t["name"]: t["inputSchema"] for t in PINNED_TOOLS}
OUTPUT_SCHEMAS: dict[str, dict[str, Any]] = {t["name"]: t["outputSchema"] for t in PINNED_TOOLS}


def pinned_listing(structured_output: bool = True) -> dict[str, Any]:
    """The whole tools/list result; before 2025-06-18 no tool declares an outputSchema."""
    if structured_output:
        return {"tools": PINNED_TOOLS}
    return {"tools": [{k: v for k, v in tool.items() if k != "outputSchema"} for tool in PINNED_TOOLS]}
