"""A legacy (2025-11-25) server with one odd answer to a request that comes before initialize.

    python legacy_odd.py silent|exits|answers-then-exits|empty-result [PIDFILE]

It serves initialize, ping, tools/list and one tool, ``echo``. A request before initialize:

- ``silent``: never answered (it is read and dropped), as some legacy servers do;
- ``exits``: the server exits at once, status 1, as Rust's rmcp does;
- ``answers-then-exits``: -32002 "not initialized" is written, then the server exits;
- ``empty-result``: answered with an empty result, as a server that answers whatever it does not know.

With PIDFILE, every start appends its pid there, so a test can count the starts.
"""

import json
import os
import sys

MODE = sys.argv[1]
if len(sys.argv) > 2:
    with open(sys.argv[2], "a") as record:
        record.write(f"{os.getpid()}\n")
TOOL = {"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}


def send(message: dict) -> None:
    sys.stdout.buffer.write(json.dumps(message).encode() + b"\n")
    sys.stdout.buffer.flush()


initialized = False
for line in sys.stdin.buffer:
    message = json.loads(line)
    if "id" not in message:
        continue
    method, rid = message.get("method"), message["id"]
    if method == "initialize":
        initialized = True
        version = message["params"]["protocolVersion"]
        info = {"name": f"legacy-{MODE}", "version": "1"}
        send({"jsonrpc": "2.0", "id": rid, "result": {"protocolVersion": version, "capabilities": {"tools": {}},
                                                      "serverInfo": info}})  # fmt: skip
    elif not initialized:
        sys.stderr.write(f"legacy_odd ({MODE}): {method} before initialize\n")
        sys.stderr.flush()
        if MODE == "exits":
            sys.exit(1)
        if MODE == "empty-result":
            send({"jsonrpc": "2.0", "id": rid, "result": {}})
        if MODE == "answers-then-exits":
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32002, "message": "not initialized"}})
            sys.exit(1)
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": rid, "result": {}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [TOOL]}})
    elif method == "tools/call":
        text = message["params"].get("arguments", {}).get("text", "")
        send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}]}})
    else:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"Method not found: {method}"}})
