"""A small stdio MCP shop server, written out in one file: the healthy original of stage 09's repairs.

Stage 09 hands the learner copies of this file with one defect each (see :mod:`grader.course.repairs`);
this one passes every check of ``mcp-lab check``. It uses the course's shop tools and does the
wire work itself: framing, the three kinds of message, the lifecycle.

    $ python grader/course/repair_template.py
"""

import json
import sys

from reference.database import ensure_default, open_readonly
from reference.shop import shop_toolbox

SUPPORTED = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
TOOLBOX = shop_toolbox(open_readonly(ensure_default()))
session = {"version": None}


def send(message):
    sys.stdout.buffer.write(json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n")
    sys.stdout.buffer.flush()


def error(message_id, code, text):
    return {"jsonrpc": "2.0", "id": message_id, "error": {"code": code, "message": text}}


def initialize(params):
    if session["version"] is not None:
        raise ValueError("initialize was already answered")
    asked = params.get("protocolVersion")
    session["version"] = asked if asked in SUPPORTED else SUPPORTED[0]
    return {
        "protocolVersion": session["version"],
        "capabilities": {"tools": {"listChanged": False}},
        "serverInfo": {"name": "clinic-shop", "version": "1.0.0"},
    }


def list_tools(params):
    return TOOLBOX.list(params, session["version"] >= "2025-06-18")


def call_tool(params):
    version = session["version"]
    return TOOLBOX.call(params, version >= "2025-11-25", version >= "2025-06-18")


METHODS = {"initialize": initialize, "ping": lambda params: {}, "tools/list": list_tools, "tools/call": call_tool}


def answer(message):
    """The reply to one decoded message, or None when none is owed."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or not isinstance(message.get("method"), str):
        return error(message.get("id") if isinstance(message, dict) else None, -32600, "Invalid Request")
    if "id" not in message:
        return None  # a notification: never answered
    message_id = message["id"]
    if not isinstance(message_id, (str, int, float)) or isinstance(message_id, bool):
        return error(None, -32600, "Invalid Request: the id must be a string or an integer")
    if isinstance(message_id, float) and not message_id.is_integer():
        return error(None, -32600, "Invalid Request: the id must be a string or a number")
    method = METHODS.get(message["method"])
    if method is None:
        return error(message_id, -32601, f"Method not found: {message['method']}")
    params = message.get("params", {})
    if not isinstance(params, dict):
        return error(message_id, -32602, "Invalid params: params must be an object")
    try:
        return {"jsonrpc": "2.0", "id": message_id, "result": method(params)}
    except ValueError as exc:
        return error(message_id, -32600 if message["method"] == "initialize" else -32602, str(exc))
    except Exception as exc:
        code = getattr(exc, "code", -32603)
        return error(message_id, code, getattr(exc, "message", None) or f"Internal error: {exc}")


def main():
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        try:
            message = json.loads(line.decode("utf-8"))
        except ValueError as exc:
            send(error(None, -32700, f"Parse error: {exc}"))
            continue
        reply = answer(message)
        if reply is not None:
            send(reply)
    return 0


if __name__ == "__main__":
    sys.exit(main())
