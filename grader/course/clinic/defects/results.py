"""Defects in the tools' results: structured content missing (for one tool, or one filter), content
of the wrong shape, a count off by some, an order lost at a page's edge.

    >>> import random
    >>> structured_missing(random.Random(0)).params
    {'tool': 'search_products'}
"""

from __future__ import annotations

import json
import random
from typing import Any

from .base import CaseServer, Defect, _arguments, _tool_of


class StructuredMissing(Defect):
    def reply(self, server: CaseServer, message: Any, reply: Any) -> Any:
        if _tool_of(message) == self.params["tool"] and isinstance(reply, dict):
            result = reply.get("result")
            if isinstance(result, dict) and "structuredContent" in result:
                return {**reply, "result": {k: v for k, v in result.items() if k != "structuredContent"}}
        return reply


def structured_missing(rng: random.Random) -> Defect:
    tool = rng.choice(["count_orders", "list_orders", "get_order", "search_products"])
    symptom = (
        f"A host that validates tool results against their schema rejects every {tool} call; the other tools work."
    )
    return StructuredMissing("structured_missing", "structured-output", symptom, {"tool": tool}, loggable=True)


class ResultShape(Defect):
    def reply(self, server: CaseServer, message: Any, reply: Any) -> Any:
        if _tool_of(message) == self.params["tool"] and isinstance(reply, dict):
            result = reply.get("result")
            if isinstance(result, dict) and isinstance(result.get("content"), list):
                text = "".join(c.get("text", "") for c in result["content"] if isinstance(c, dict))
                content: Any = text if self.params["variant"] == "string" else [{"text": text}]
                return {**reply, "result": {**result, "content": content}}
        return reply


def result_shape(rng: random.Random) -> Defect:
    tool = rng.choice(["count_orders", "list_orders", "get_order", "search_products"])
    variant = rng.choice(["string", "untyped"])
    symptom = f"The official SDK's client raises a validation error for CallToolResult whenever it calls {tool}."
    return ResultShape("result_shape", "tools-call-result", symptom, {"tool": tool, "variant": variant}, loggable=True)


class WrongCount(Defect):
    def reply(self, server: CaseServer, message: Any, reply: Any) -> Any:
        if _tool_of(message) == "count_orders" and _arguments(message).get("status") == self.params["status"]:
            result = reply.get("result") if isinstance(reply, dict) else None
            if isinstance(result, dict) and not result.get("isError"):
                count = result.get("structuredContent", {}).get("count")
                if count is None:
                    count = json.loads(result["content"][0]["text"])["count"]
                value = {"status": self.params["status"], "count": count + self.params["off_by"]}
                fixed = {**result, "content": [{"type": "text", "text": json.dumps(value)}]}
                if "structuredContent" in result:
                    fixed["structuredContent"] = value
                return {**reply, "result": fixed}
        return reply


def wrong_count(rng: random.Random) -> Defect:
    status = rng.choice(["shipped", "delivered", "cancelled", "refunded"])
    off = rng.choice([1, -1, 10])
    symptom = (
        f"The shop's manager says the count of {status} orders the assistant reports never matches the shop's own."
    )
    return WrongCount("wrong_count", "shop-contract", symptom, {"status": status, "off_by": off})


class StructuredFilter(Defect):
    def reply(self, server: CaseServer, message: Any, reply: Any) -> Any:
        if _tool_of(message) == "list_orders" and self.params["argument"] in _arguments(message):
            result = reply.get("result") if isinstance(reply, dict) else None
            if isinstance(result, dict) and "structuredContent" in result:
                return {**reply, "result": {k: v for k, v in result.items() if k != "structuredContent"}}
        return reply


def structured_filter(rng: random.Random) -> Defect:
    argument = rng.choice(["customer_id", "status"])
    symptom = {
        "customer_id": "A host that validates results rejects 'the orders of customer N', but lists all orders fine.",
        "status": "A host that validates results rejects 'the paid orders', but lists all orders fine.",
    }[argument]
    return StructuredFilter("structured_filter", "structured-output", symptom, {"argument": argument}, visible=False)


class PageSkip(Defect):
    def reply(self, server: CaseServer, message: Any, reply: Any) -> Any:
        offset = _arguments(message).get("offset")
        if _tool_of(message) != "list_orders" or not isinstance(offset, int) or offset < self.params["from"]:
            return reply
        result = reply.get("result") if isinstance(reply, dict) else None
        value = result.get("structuredContent") if isinstance(result, dict) else None
        if not isinstance(value, dict) or not value.get("orders"):
            return reply
        value = {**value, "orders": value["orders"][1:]}  # one order lost at the page's edge
        fixed = {**result, "content": [{"type": "text", "text": json.dumps(value, ensure_ascii=False)}]}
        fixed["structuredContent"] = value
        return {**reply, "result": fixed}


def page_skip(rng: random.Random) -> Defect:
    start = rng.choice([50, 100, 500])
    symptom = "Paging far through the order list, the assistant misses an order at the top of every page."
    return PageSkip("page_skip", "shop-contract", symptom, {"from": start}, visible=False)
