"""The floor of the benchmark: the least a Python process can do per JSON-RPC line.

It reads one line from stdin, parses it with ``json.loads``, and writes back a minimal result
with the same id (``json.dumps`` and a flush). Nothing is validated, no tool runs, and a line
without an id (a notification) or one that is not JSON gets no answer. ``initialize`` gets a
small but well-formed result, so that cold start is measured the same way as for the real
servers; everything else gets ``{}``. End of input ends it with status 0.

    $ printf '{"jsonrpc":"2.0","id":1,"method":"ping"}\\n' | python bench/echo_server.py
    {"jsonrpc": "2.0", "id": 1, "result": {}}

Whatever the reference server spends per call above this floor is its own cost: dispatch,
validation, the SQLite query and the result's JSON.
"""

from __future__ import annotations

import io  # already loaded by the interpreter at start-up; ``typing`` would cost a few ms
import json
import sys

INITIALIZE_RESULT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "echo-floor", "version": "0.1.0"},
}


def serve(stdin: io.BufferedIOBase | None = None, stdout: io.BufferedIOBase | None = None) -> int:
    """Answer every request line until end of input; return the exit status."""
    read = (stdin or sys.stdin.buffer).readline
    out = stdout or sys.stdout.buffer
    while True:
        line = read()
        if not line:
            return 0
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if not isinstance(message, dict) or "id" not in message:
            continue
        result = INITIALIZE_RESULT if message.get("method") == "initialize" else {}
        out.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode() + b"\n")
        out.flush()


if __name__ == "__main__":
    try:
        sys.exit(serve())
    except (BrokenPipeError, KeyboardInterrupt):
        sys.exit(0)
