"""Prompts (MCP 2025-11-25): ready-made messages a user picks, filled in with arguments.

A prompt is the user's choice (a slash command in a host): ``prompts/list`` shows each prompt with
its arguments, ``prompts/get`` returns the messages to send to the model. Prompt arguments are
strings, always; the server checks them as carefully as tool arguments. A prompt that does not
exist and a missing or invalid argument are both -32602 (Prompts > Error Handling), with a text
that says what to send instead.

``summarise_order`` embeds the order itself in its messages, as a resource (the same URI and JSON
as ``resources/read`` of ``shop://orders/{order_id}``), so the model has the data, not a promise of
it. ``status_report`` has an optional argument.

    >>> from reference.database import ensure_default, open_readonly
    >>> from reference.resources import Resources
    >>> conn = open_readonly(ensure_default())
    >>> prompts = Prompts(conn, Resources(conn))
    >>> [p["name"] for p in prompts.list({})["prompts"]]
    ['summarise_order', 'status_report']
    >>> got = prompts.get({"name": "summarise_order", "arguments": {"order_id": "7"}})
    >>> [m["content"]["type"] for m in got["messages"]], got["messages"][1]["content"]["resource"]["uri"]
    (['text', 'resource'], 'shop://orders/7')
    >>> prompts.get({"name": "summarise_order", "arguments": {}})
    Traceback (most recent call last):
    ...
    reference.errors.RpcError: Invalid params: missing required argument order_id for summarise_order
"""

from __future__ import annotations

import json
import re
import sqlite3
from typing import Any

from .catalog import MAX_ID, STATUS_TEXT, STATUSES
from .errors import INVALID_PARAMS, RpcError
from .resources import JSON_TYPE, ORDER_TEMPLATE, Resources, expand, one_page
from .tools import json_type

PROMPTS = [
    {
        "name": "summarise_order",
        "title": "Summarise an order",
        "description": "A short summary of one order for a reply to its customer: status, when it was "
        "placed, what was ordered and the total. The order's data is embedded in the prompt.",
        "arguments": [{"name": "order_id", "description": "The order's numeric id, e.g. 7.", "required": True}],
    },
    {
        "name": "status_report",
        "title": "Report on the orders",
        "description": "A short report on how the shop's orders stand, from the number of orders in each "
        "status (embedded in the prompt).",
        "arguments": [
            {
                "name": "status",
                "description": f"A status to look at more closely; one of: {STATUS_TEXT}.",
                "required": False,
            }
        ],
    },
]
_ID = re.compile(r"[1-9][0-9]{0,9}")


def _invalid(detail: str) -> RpcError:
    return RpcError(INVALID_PARAMS, detail)


def user_text(text: str) -> dict[str, Any]:
    return {"role": "user", "content": {"type": "text", "text": text}}


class Prompts:
    """The shop's prompts over a read-only connection."""

    def __init__(self, conn: sqlite3.Connection, resources: Resources) -> None:
        self.conn = conn
        self.resources = resources
        self.prompts = {prompt["name"]: prompt for prompt in PROMPTS}
        self.build = {"summarise_order": self.summarise_order, "status_report": self.status_report}

    def list(self, params: dict[str, Any]) -> dict[str, Any]:
        return one_page("prompts", PROMPTS, params, "prompts/list")

    def get(self, params: dict[str, Any]) -> dict[str, Any]:
        name = params.get("name")
        if not isinstance(name, str):
            raise _invalid(f'prompts/get needs a "name" string, got {json_type(name)}')
        prompt = self.prompts.get(name)
        if prompt is None:
            raise _invalid(f"unknown prompt {name!r}; prompts/list shows {', '.join(self.prompts)}")
        arguments = params.get("arguments")
        if arguments is None:  # absent or null: no arguments
            arguments = {}
        if not isinstance(arguments, dict):
            raise _invalid(f'"arguments" for {name} must be an object of strings, got {json_type(arguments)}')
        declared = {argument["name"]: argument for argument in prompt["arguments"]}
        for key, value in arguments.items():
            if key not in declared:
                raise _invalid(f"unexpected argument {key} for {name}; it takes {', '.join(declared)}")
            if not isinstance(value, str):
                raise _invalid(
                    f"argument {key} for {name} must be a string (prompt arguments are), got {json_type(value)}"
                )
        for key, argument in declared.items():
            if argument["required"] and key not in arguments:
                raise _invalid(f"missing required argument {key} for {name}")
        return self.build[name](arguments)

    def summarise_order(self, arguments: dict[str, str]) -> dict[str, Any]:
        text = arguments["order_id"]
        if not _ID.fullmatch(text) or int(text) > MAX_ID:
            raise _invalid(f"order_id must be an order's id, a whole number such as 7, got {text!r}")
        order = self.resources.order(int(text))
        if order is None:
            (low, high) = self.conn.execute("SELECT min(id), max(id) FROM orders").fetchone()
            raise _invalid(f"no order with id {text}. Order ids run from {low} to {high}.")
        uri = expand(ORDER_TEMPLATE, order_id=order["id"])
        embedded = {"uri": uri, "mimeType": JSON_TYPE, "text": json.dumps(order, ensure_ascii=False)}
        return {
            "description": f"Summarise order {order['id']}",
            "messages": [
                user_text(
                    f"Summarise order {order['id']} for a reply to its customer: its status, when it was "
                    "placed, what was ordered and the total. Money is in integer cents (1999 is 19.99). "
                    "Three sentences at most, and nothing the order's data below does not say."
                ),
                {"role": "user", "content": {"type": "resource", "resource": embedded}},
            ],
        }

    def status_report(self, arguments: dict[str, str]) -> dict[str, Any]:
        status = arguments.get("status")
        if status is not None and status not in STATUSES:
            raise _invalid(f"unknown status {status!r}. Valid statuses: {STATUS_TEXT}.")
        rows = self.conn.execute("SELECT status, count(*) FROM orders GROUP BY status").fetchall()
        counts = {name: 0 for name in STATUSES} | dict(rows)
        focus = f", looking closely at the {status} orders" if status else ""
        return {
            "description": "Report on the orders" + (f" ({status})" if status else ""),
            "messages": [
                user_text(f"Write a short report on the shop's orders from these counts per status{focus}."),
                user_text(json.dumps(counts, ensure_ascii=False)),
            ],
        }
