"""Odd but well-framed server: its tools/list holds every strange shape a checker must survive.

Names that are lists or numbers, types that are lists or objects, a string minimum, a schema that
is a string, a tool that is not an object. It answers tools/call for anything with a text result.
"""

import json
import sys

TOOLS = [
    {"name": ["listed"], "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}},
    {"name": 7, "inputSchema": {"type": "object"}},
    {"name": "nullable", "inputSchema": {"type": "object", "properties": {"x": {"type": ["string", "null"]}}},
     "annotations": {"readOnlyHint": True}},
    {"name": "typed_object", "inputSchema": {"type": "object", "properties": {"x": {"type": {"enum": ["a"]}}}},
     "annotations": {"readOnlyHint": True}},
    {"name": "string_minimum", "annotations": {"readOnlyHint": True},
     "inputSchema": {"type": "object", "properties": {"n": {"type": "integer", "minimum": "3"}}, "required": ["n"]}},
    {"name": "schema_is_text", "inputSchema": "object", "annotations": "read-only"},
    "not a tool",
]  # fmt: skip


def reply(message: dict, result: object) -> None:
    line = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result})
    sys.stdout.buffer.write(line.encode() + b"\n")
    sys.stdout.buffer.flush()


for raw in sys.stdin.buffer:
    try:
        message = json.loads(raw)
    except ValueError:
        sys.stdout.buffer.write(b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}\n')
        sys.stdout.buffer.flush()
        continue
    if not isinstance(message, dict) or "id" not in message:
        continue
    method = message.get("method")
    if method == "initialize":
        reply(message, {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                        "serverInfo": {"name": "wild", "version": "1"}})  # fmt: skip
    elif method == "tools/list":
        reply(message, {"tools": TOOLS})
    elif method == "tools/call":
        reply(message, {"content": [{"type": "text", "text": "ok"}]})
    elif method == "ping":
        reply(message, {})
    else:
        error = {"code": -32601, "message": f"Method not found: {method}"}
        sys.stdout.buffer.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": error}).encode() + b"\n")
        sys.stdout.buffer.flush()
