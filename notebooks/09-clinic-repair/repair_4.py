"""The host's log shows "Unexpected token 't'" once at start and again after every tool call.

A shop server that keeps per-tool statistics with a small metrics library, tally (vendored at the
bottom of this file as it came: treat it as a dependency you do not own). The server itself reads
one message per line and answers it; tally times every tool call.

Find the defect and repair it in this file.
"""

import json
import sys

from reference.database import ensure_default, open_readonly
from reference.errors import RpcError
from reference.shop import shop_toolbox

VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]


def make_server():
    toolbox = shop_toolbox(open_readonly(ensure_default()))
    metrics = Tally("clinic-tally")
    session = {"version": VERSIONS[0]}

    def initialize(params):
        asked = params.get("protocolVersion")
        session["version"] = asked if asked in VERSIONS else VERSIONS[0]
        return {
            "protocolVersion": session["version"],
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "clinic-tally", "version": "3.0.1"},
        }

    def call_tool(params):
        version = session["version"]
        with metrics.timer(str(params.get("name"))):
            return toolbox.call(params, version >= "2025-11-25", version >= "2025-06-18")

    return {
        "initialize": initialize,
        "ping": lambda params: {},
        "tools/list": lambda params: toolbox.list(params, session["version"] >= "2025-06-18"),
        "tools/call": call_tool,
    }


def error(request_id, code, text):
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": text}}


def answer(methods, line):
    """The reply to one line of input, or None when it gets none."""
    try:
        message = json.loads(line.decode("utf-8"))
    except ValueError as exc:
        return error(None, -32700, f"Parse error: {exc}")
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or not isinstance(message.get("method"), str):
        return error(None, -32600, "Invalid Request")
    if "id" not in message:
        return None  # a notification
    request_id = message["id"]
    if isinstance(request_id, bool) or not isinstance(request_id, (str, int)):
        return error(None, -32600, "Invalid Request: an id is a string or an integer")
    method = methods.get(message["method"])
    if method is None:
        return error(request_id, -32601, f"Method not found: {message['method']}")
    params = message.get("params", {})
    if not isinstance(params, dict):
        return error(request_id, -32602, "Invalid params: params must be an object")
    try:
        return {"jsonrpc": "2.0", "id": request_id, "result": method(params)}
    except RpcError as exc:
        return error(request_id, exc.code, exc.message)


def main():
    methods = make_server()
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        reply = answer(methods, line)
        if reply is not None:
            out.write(json.dumps(reply, ensure_ascii=False).encode("utf-8") + b"\n")
            out.flush()
    return 0


# -- tally 0.7.2: per-name timings (vendored as it came from upstream) ----------------------------
import contextlib  # noqa: E402
import os  # noqa: E402
import time  # noqa: E402


class Tally:
    """Counts and times named events; prints a summary line now and then."""

    def __init__(self, app, every=1):
        self.app, self.every = app, every
        self.counts, self.seconds = {}, {}
        if not os.environ.get("TALLY_QUIET"):
            print(f"tally 0.7.2 ready for {app} (TALLY_QUIET=1 hides this line)", flush=True)

    @contextlib.contextmanager
    def timer(self, name):
        started = time.perf_counter()
        try:
            yield
        finally:
            self.counts[name] = self.counts.get(name, 0) + 1
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - started
            if self.counts[name] % self.every == 0:
                self._report(name)

    def _report(self, name):
        mean = self.seconds[name] / self.counts[name] * 1000
        # Straight to the file descriptor, as tally's C core does: unbuffered, and never lost.
        os.write(1, f"tally {self.app} {name} n={self.counts[name]} mean={mean:.2f}ms\n".encode())


if __name__ == "__main__":
    sys.exit(main())
