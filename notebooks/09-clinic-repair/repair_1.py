"""Several tool calls at once, and now and then the host drops the connection ("Unexpected token"); one by one, never.

A shop server that answers every request on a thread of its own, so that a slow tool call never
holds up a ping. The main thread reads stdin and turns away the lines that are not requests; each
request's thread writes its own reply.

Find the defect and repair it in this file.
"""

import io
import json
import sys
import threading

from reference.database import ensure_default, open_readonly
from reference.errors import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, RpcError
from reference.shop import shop_toolbox

SUPPORTED = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
INFO = {"name": "clinic-threads", "version": "1.4.0"}
TOOLBOX = shop_toolbox(open_readonly(ensure_default(), shared=True))
DATABASE = threading.Lock()  # one connection, shared by every thread: one query at a time
# The protocol stream: UTF-8 text over the binary stdout, "\n" line ends on every platform.
OUT = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", newline="\n")
state = {"version": SUPPORTED[0]}


def send(message):
    """Write one message. json.dump streams it: a big result is never built as one string."""
    json.dump(message, OUT, ensure_ascii=False)
    OUT.write("\n")
    OUT.flush()


def reject(error):
    """Answer a line that never became a request (the reader thread does it at once)."""
    OUT.write(json.dumps({"jsonrpc": "2.0", "id": None, "error": error.to_error()}) + "\n")
    OUT.flush()


def initialize(params):
    asked = params.get("protocolVersion")
    state["version"] = asked if asked in SUPPORTED else SUPPORTED[0]
    return {
        "protocolVersion": state["version"],
        "capabilities": {"tools": {"listChanged": False}},
        "serverInfo": INFO,
    }


def list_tools(params):
    return TOOLBOX.list(params, state["version"] >= "2025-06-18")


def call_tool(params):
    version = state["version"]
    with DATABASE:
        return TOOLBOX.call(params, version >= "2025-11-25", version >= "2025-06-18")


HANDLERS = {"initialize": initialize, "ping": lambda params: {}, "tools/list": list_tools, "tools/call": call_tool}


def answer(message):
    """Run on a thread of its own: one request in, one reply out."""
    reply = {"jsonrpc": "2.0", "id": message["id"]}
    try:
        handler = HANDLERS.get(message["method"])
        if handler is None:
            raise RpcError(METHOD_NOT_FOUND, message["method"])
        params = message.get("params", {})
        if not isinstance(params, dict):
            raise RpcError(INVALID_PARAMS, "params must be an object")
        reply["result"] = handler(params)
    except RpcError as exc:
        reply["error"] = exc.to_error()
    send(reply)


def valid_id(value):
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def main():
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        try:
            message = json.loads(line.decode("utf-8"))
        except ValueError as exc:
            reject(RpcError(PARSE_ERROR, str(exc)))
            continue
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            reject(RpcError(INVALID_REQUEST, "not a JSON-RPC 2.0 message"))
        elif not isinstance(message.get("method"), str):
            reject(RpcError(INVALID_REQUEST, "no method"))
        elif "id" not in message:
            pass  # a notification: nothing to answer
        elif not valid_id(message["id"]):
            reject(RpcError(INVALID_REQUEST, "an id is a string or an integer"))
        else:
            threading.Thread(target=answer, args=(message,)).start()
    return 0  # the interpreter waits for the threads still answering, then exits


if __name__ == "__main__":
    sys.exit(main())
