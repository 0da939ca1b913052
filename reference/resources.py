"""Resources (MCP 2025-11-25): data a host reads by URI, beside the tools a model calls.

A tool is the model's choice; a resource is the host's (or its user's): it names data by a URI
and the host decides what goes into the context. The shop offers one fixed resource, its schema
(``resources/list``), and two URI templates (``resources/templates/list``; RFC 6570 level 1, where
``{name}`` stands for one percent-encoded value): one order and one product, as JSON.

``resources/read`` answers a URI with its contents. A URI that names nothing, or that is not one
of ours at all, is -32002 "Resource not found" with the URI in ``data`` (Resources > Error
Handling, 2025-11-25; a 2026-07-28 request gets -32602 instead: :mod:`reference.stateless`); a
request without a ``uri`` string is malformed: -32602. Every URI is checked against
the exact form the server hands out (``shop://orders/7``, never ``shop://orders/007``) before any
SQL runs, and the SQL is parameterised, on the read-only connection.

    >>> from reference.database import ensure_default, open_readonly
    >>> shop = Resources(open_readonly(ensure_default()))
    >>> [r["uri"] for r in shop.list({})["resources"]]
    ['shop://schema']
    >>> [t["uriTemplate"] for t in shop.templates({})["resourceTemplates"]]
    ['shop://orders/{order_id}', 'shop://products/{product_id}']
    >>> shop.read({"uri": "shop://products/1"})["contents"][0]["mimeType"]
    'application/json'
    >>> shop.read({"uri": "shop://orders/0"})
    Traceback (most recent call last):
    ...
    reference.errors.RpcError: Resource not found
    >>> match("shop://orders/{order_id}", "shop://orders/42"), expand("shop://orders/{order_id}", order_id=42)
    ({'order_id': '42'}, 'shop://orders/42')
"""

from __future__ import annotations

import json
import re
import sqlite3
from typing import Any
from urllib.parse import quote, unquote

from .catalog import MAX_ID
from .errors import INVALID_PARAMS, RESOURCE_NOT_FOUND, RpcError
from .shop import shop_tools
from .tools import ToolError, json_type

SCHEMA_URI = "shop://schema"
ORDER_TEMPLATE = "shop://orders/{order_id}"
PRODUCT_TEMPLATE = "shop://products/{product_id}"
JSON_TYPE = "application/json"
SQL_TYPE = "application/sql"  # RFC 6922

RESOURCES = [
    {
        "uri": SCHEMA_URI,
        "name": "schema",
        "title": "The shop's database schema",
        "description": "The SQL that made the shop's tables (customers, products, orders, order_items) "
        "and indexes: what every tool and resource reads. Money is in integer cents.",
        "mimeType": SQL_TYPE,
    }
]
TEMPLATES = [
    {
        "uriTemplate": ORDER_TEMPLATE,
        "name": "order",
        "title": "One order",
        "description": "One order by its numeric id, as JSON: status, created_at (UTC), the customer's name "
        "and email, the line items and total_cents (the same answer as the get_order tool).",
        "mimeType": JSON_TYPE,
    },
    {
        "uriTemplate": PRODUCT_TEMPLATE,
        "name": "product",
        "title": "One product",
        "description": "One product by its numeric id, as JSON: sku, name, category, price_cents and stock.",
        "mimeType": JSON_TYPE,
    },
]

_VARIABLE = re.compile(r"\{([A-Za-z0-9_]+)\}")
_ID = re.compile(r"[1-9][0-9]{0,9}")  # a positive integer as the server writes one: no sign, no leading 0


def match(template: str, uri: str) -> dict[str, str] | None:
    """The variables of a level-1 URI template that ``uri`` fills, or ``None`` when it does not fit.

    A level-1 value is percent-encoded, so it never holds a ``/``: one variable, one path segment.
    """
    pattern = "".join(
        f"(?P<{part}>[A-Za-z0-9._~%-]+)" if i % 2 else re.escape(part)
        for i, part in enumerate(_VARIABLE.split(template))
    )
    found = re.fullmatch(pattern, uri)
    return None if found is None else {name: unquote(value) for name, value in found.groupdict().items()}


def expand(template: str, **values: Any) -> str:
    """A level-1 URI template with its variables filled in (each value percent-encoded)."""
    return _VARIABLE.sub(lambda m: quote(str(values[m.group(1)]), safe=""), template)


def one_page(key: str, items: list[dict[str, Any]], params: dict[str, Any], method: str) -> dict[str, Any]:
    """A list result that fits on one page: no ``nextCursor``, so any cursor is refused (-32602)."""
    cursor = params.get("cursor")
    if cursor is None:
        return {key: items}
    if not isinstance(cursor, str):
        raise RpcError(
            INVALID_PARAMS, f'"cursor" must be a string (an opaque token from nextCursor), got {json_type(cursor)}'
        )
    raise RpcError(INVALID_PARAMS, f"unknown cursor: {method} has a single page")


def not_found(uri: str) -> RpcError:
    return RpcError(RESOURCE_NOT_FOUND, data={"uri": uri})


def text_contents(uri: str, mime_type: str, text: str) -> dict[str, Any]:
    return {"contents": [{"uri": uri, "mimeType": mime_type, "text": text}]}


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)  # the same text as the tools' results


class Resources:
    """The shop's resources over a read-only connection."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        # An order reads as get_order answers it, query for query.
        self._get_order = next(tool for tool in shop_tools(conn) if tool.name == "get_order").run

    def list(self, params: dict[str, Any]) -> dict[str, Any]:
        return one_page("resources", RESOURCES, params, "resources/list")

    def templates(self, params: dict[str, Any]) -> dict[str, Any]:
        return one_page("resourceTemplates", TEMPLATES, params, "resources/templates/list")

    def read(self, params: dict[str, Any]) -> dict[str, Any]:
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise RpcError(INVALID_PARAMS, f'resources/read needs a "uri" string, got {json_type(uri)}')
        if uri == SCHEMA_URI:
            return text_contents(uri, SQL_TYPE, self.schema())
        for template, read in ((ORDER_TEMPLATE, self.order), (PRODUCT_TEMPLATE, self.product)):
            found = match(template, uri)
            if found is not None:
                (value,) = found.values()
                # Only the form the server writes itself: no %31 for 1, no 007, no +7.
                canonical = expand(template, **found) == uri and _ID.fullmatch(value) and int(value) <= MAX_ID
                answer = read(int(value)) if canonical else None
                if answer is None:
                    raise not_found(uri)
                return text_contents(uri, JSON_TYPE, _json(answer))
        raise not_found(uri)

    def schema(self) -> str:
        rows = self.conn.execute(
            "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY rowid"
        )
        return "".join(f"{sql};\n" for (sql,) in rows)

    def order(self, order_id: int) -> dict[str, Any] | None:
        try:
            return self._get_order({"order_id": order_id})
        except ToolError:
            return None

    def product(self, product_id: int) -> dict[str, Any] | None:
        cursor = self.conn.execute(
            "SELECT id, sku, name, category, price_cents, stock FROM products WHERE id = ?", (product_id,)
        )
        row = cursor.fetchone()
        return None if row is None else dict(zip([c[0] for c in cursor.description], row, strict=True))
