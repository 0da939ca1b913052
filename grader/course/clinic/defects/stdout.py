"""Defects in what the server writes on stdout: replies held in a buffer (never flushed, or only on
one path), and lines that are not one JSON message (a banner, a log line, a blank line, a reply
pretty-printed over many lines).

    >>> import random
    >>> stdout_noise(random.Random(0)).params
    {'variant': 'call_log', 'text': 'calling'}
"""

from __future__ import annotations

import json
import random
from typing import Any, BinaryIO

from reference.framing import encode

from .base import CaseServer, Defect, Holding, _arguments, _is_error, _tool_of


class Unflushed(Holding):
    def held(self, message: Any, reply: Any) -> bool:
        which = self.params["which"]
        method = message.get("method") if isinstance(message, dict) else None
        return which == "all" or (which == "errors" and _is_error(reply)) or method == which


def unflushed(rng: random.Random) -> Defect:
    which = rng.choice(["all", "tools/list", "errors"])
    symptom = {
        "all": rng.choice(
            [
                "Hangs on connect with every host; typed into a terminal by hand, it answers.",
                "`echo '{...}' | python server.py` prints the right reply, but no host ever gets an answer to its "
                "first request.",
            ]
        ),
        "tools/list": "The host connects, then shows no tools; after the user's first request they suddenly appear.",
        "errors": "A call that should fail shows no error in the host; the error turns up one call later, attached to "
        "nothing.",
    }[which]
    return Unflushed("unflushed", "stdout-flush", symptom, {"which": which})


class StdoutNoise(Defect):
    def start(self, server: CaseServer, stdout: BinaryIO) -> None:
        if self.params["variant"] == "banner":
            stdout.write(self.params["text"].encode() + b"\n")
            stdout.flush()

    def write(self, server: CaseServer, stdout: BinaryIO, reply: Any, message: Any) -> None:
        variant = self.params["variant"]
        tool = _tool_of(message)
        if variant == "call_log" and tool:
            stdout.write(f"{self.params['text']} {tool}\n".encode())
        stdout.write(encode(reply))
        if variant == "blank" and tool:
            stdout.write(b"\n")
        stdout.flush()


def stdout_noise(rng: random.Random) -> Defect:
    variant = rng.choice(["banner", "call_log", "blank"])
    text = {
        "banner": rng.choice(["Server ready", "Shop MCP server started on stdio", "Loading shop database..."]),
        "call_log": rng.choice(["calling", "INFO:shop:tool call", "[shop] running"]),
        "blank": "",
    }[variant]
    first = text[:1]
    symptom = {
        "banner": f'Claude Desktop logs "Unexpected token \'{first}\', \\"{text[:10]}\\"... is not valid JSON" '
        "when the server starts.",
        "call_log": f"Every tool call shows an error in the host log (\"Unexpected token '{first}'\"); the calls "
        "still return.",
        "blank": 'After each tool call the host logs "Unexpected end of JSON input"; everything else is quiet.',
    }[variant]
    also = frozenset({"stdout-silent-at-start"}) if variant == "banner" else frozenset()
    return StdoutNoise(
        "stdout_noise", "stdout-json-lines", symptom, {"variant": variant, "text": text}, also=also, loggable=True
    )


class FlushPath(Holding):
    def held(self, message: Any, reply: Any) -> bool:
        tool, arguments = _tool_of(message), _arguments(message)
        if tool != self.params["tool"]:
            return False
        value = arguments.get(self.params["argument"])
        return isinstance(value, int) and not isinstance(value, bool) and value >= self.params["above"]


def flush_path(rng: random.Random) -> Defect:
    tool, argument, above = rng.choice(
        [("search_products", "limit", rng.choice([20, 25, 30])), ("list_orders", "offset", rng.choice([50, 100, 200]))]
    )
    symptom = {
        "search_products": "Product searches that ask for many results hang in the host; short searches work.",
        "list_orders": "Paging through orders works for the first pages, then the host hangs on the next page.",
    }[tool]
    params = {"tool": tool, "argument": argument, "above": above}
    return FlushPath("flush_path", "stdout-flush", symptom, params, visible=False)


class ErrorPathPrint(Defect):
    def write(self, server: CaseServer, stdout: BinaryIO, reply: Any, message: Any) -> None:
        result = reply.get("result") if isinstance(reply, dict) else None
        if _tool_of(message) == self.params["tool"] and isinstance(result, dict) and result.get("isError"):
            stdout.write(f"{self.params['text']}: {result['content'][0].get('text', '')[:40]}\n".encode())
        stdout.write(encode(reply))
        stdout.flush()


def error_path_print(rng: random.Random) -> Defect:
    tool = rng.choice(["get_order", "count_orders"])
    text = rng.choice(["WARNING", "tool error", "Traceback (most recent call last)"])
    symptom = {
        "get_order": "Asking for an order that does not exist shows a JSON error in the host's log instead of the "
        "tool's message.",
        "count_orders": "When the model misspells an order status, the host logs 'is not valid JSON' and the "
        "model never sees the list of valid statuses.",
    }[tool]
    return ErrorPathPrint("error_path_print", "stdout-json-lines", symptom, {"tool": tool, "text": text})


class BigResult(Defect):
    def write(self, server: CaseServer, stdout: BinaryIO, reply: Any, message: Any) -> None:
        data = encode(reply)
        if len(data) > self.params["bytes"]:
            data = json.dumps(reply, indent=1, ensure_ascii=False).encode() + b"\n"
        stdout.write(data)
        stdout.flush()


def big_result(rng: random.Random) -> Defect:
    size = rng.choice([8000, 10000, 12000])
    symptom = (
        "Listing many orders at once makes the host log 'Expected property name or '}' in JSON'; short lists work."
    )
    return BigResult("big_result", "stdout-json-lines", symptom, {"bytes": size}, visible=False)


class EmptyResultPrint(Defect):
    def write(self, server: CaseServer, stdout: BinaryIO, reply: Any, message: Any) -> None:
        result = reply.get("result") if isinstance(reply, dict) else None
        value = result.get("structuredContent") if isinstance(result, dict) else None
        paging = _tool_of(message) == "list_orders" and "offset" in _arguments(message)
        if paging and isinstance(value, dict) and value.get("orders") == []:
            stdout.write(f"{self.params['text']} {json.dumps(_arguments(message))}\n".encode())
        stdout.write(encode(reply))
        stdout.flush()


def empty_result_print(rng: random.Random) -> Defect:
    text = rng.choice(["no results for", "WARNING empty result", "nothing found:"])
    symptom = rng.choice(
        [
            "Paging past the last order puts 'is not valid JSON' in the host's log instead of an empty page.",
            "When the model asks for one page too many, the host logs a JSON error; every other page is fine.",
        ]
    )
    return EmptyResultPrint("empty_result_print", "stdout-json-lines", symptom, {"text": text}, visible=False)
