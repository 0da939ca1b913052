"""A correct server with one slow read-only tool, for the checker's handling of time.

    python slow_tool.py RECORD [--seconds S] [--never-exit]

`wait` works for S seconds (default 5) on a thread of its own, then answers, unless the call was
cancelled: a cancelled call still works to the end (as real work often must) but sends nothing.
Every notifications/cancelled is written to RECORD. `echo` answers at once. At end of input the
server exits once the work in flight has ended, or with --never-exit it never does.
"""

import json
import sys
import threading
import time

RECORD = sys.argv[1]
SECONDS = float(sys.argv[sys.argv.index("--seconds") + 1]) if "--seconds" in sys.argv else 5.0
READ_ONLY = {"readOnlyHint": True}
TOOLS = [
    {"name": "wait", "annotations": READ_ONLY,
     "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number"}}}},
    {"name": "echo", "annotations": READ_ONLY,
     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}},
]  # fmt: skip
lock = threading.Lock()
cancelled: set[str] = set()
workers: list[threading.Thread] = []


def send(message: dict) -> None:
    with lock:
        sys.stdout.buffer.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
        sys.stdout.buffer.flush()


def text(request_id: object, words: str, is_error: bool = False) -> None:
    send({"id": request_id, "result": {"content": [{"type": "text", "text": words}], "isError": is_error}})


def work(request_id: object, seconds: float) -> None:
    time.sleep(seconds)
    if json.dumps(request_id) not in cancelled:
        text(request_id, f"waited {seconds} s")


def call(request_id: object, params: dict) -> None:
    name, arguments = params.get("name"), params.get("arguments") or {}
    if name not in ("wait", "echo"):
        send({"id": request_id, "error": {"code": -32602, "message": f"Unknown tool: {name}"}})
    elif name == "echo" and not isinstance(arguments.get("text"), str):
        text(request_id, '"text" must be a string', is_error=True)
    elif name == "echo":
        text(request_id, arguments["text"])
    elif not isinstance(arguments.get("seconds", SECONDS), int | float):
        text(request_id, '"seconds" must be a number', is_error=True)
    else:
        workers.append(threading.Thread(target=work, args=(request_id, arguments.get("seconds", SECONDS))))
        workers[-1].start()


def handle(message: dict) -> None:
    method, request_id = message.get("method"), message.get("id")
    if method == "notifications/cancelled":
        cancelled.add(json.dumps(message["params"]["requestId"]))
        with open(RECORD, "a", encoding="utf-8") as record:
            record.write(f"cancelled {message['params']['requestId']}\n")
    if "id" not in message:
        return
    if method == "initialize":
        info = {"name": "slow", "version": "1"}
        send({"id": request_id, "result": {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                                           "serverInfo": info}})  # fmt: skip
    elif method == "ping":
        send({"id": request_id, "result": {}})
    elif method == "tools/list":
        send({"id": request_id, "result": {"tools": TOOLS}})
    elif method == "tools/call":
        call(request_id, message.get("params") or {})
    else:
        send({"id": request_id, "error": {"code": -32601, "message": f"Method not found: {method}"}})


for raw in sys.stdin.buffer:
    try:
        handle(json.loads(raw))
    except (ValueError, AttributeError, TypeError, KeyError):
        send({"id": None, "error": {"code": -32700, "message": "Parse error"}})
for worker in workers:
    worker.join()
while "--never-exit" in sys.argv:
    time.sleep(1)
