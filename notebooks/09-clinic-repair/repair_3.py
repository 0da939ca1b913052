"""Claude Desktop and the MCP Inspector list the tools, but every tool call spins until it times out.

A shop server built around a dispatcher class: each method is a handler registered with @route.
Tool calls run on a worker thread, so that a ping is answered while a tool works and a call can
be cancelled (notifications/cancelled) before it starts.

Find the defect and repair it in this file.
"""

import json
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

from reference.database import ensure_default, open_readonly
from reference.errors import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, RpcError
from reference.shop import shop_toolbox

SUPPORTED = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
ROUTES = {}  # method -> handler, filled by @route
LATER = object()  # what a handler returns when the reply is sent later, from the worker thread


def route(method):
    def register(handler):
        ROUTES[method] = handler
        return handler

    return register


class Dispatcher:
    def __init__(self, out):
        self.out = out
        self.writing = threading.Lock()  # replies come from the reader and from the worker
        self.version = SUPPORTED[0]
        self.toolbox = shop_toolbox(open_readonly(ensure_default(), shared=True))
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tool")
        self.running = {}  # the tool calls not answered yet, by request id

    # -- the wire --------------------------------------------------------------------------------
    def send(self, message):
        data = json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n"
        with self.writing:
            self.out.write(data)
            self.out.flush()

    def reply(self, request_id, result=None, error=None):
        message = {"jsonrpc": "2.0", "id": request_id}
        if error is None:
            message["result"] = result
        else:
            message["error"] = {"code": error.code, "message": error.message}
        self.send(message)

    def dispatch(self, message):
        """One decoded message (a request or a notification); its reply, when it has one, is sent."""
        if message["method"] == "notifications/cancelled":
            params = message.get("params")
            return self.cancel(params if isinstance(params, dict) else {})
        if "id" not in message:
            return  # any other notification: nothing to do
        handler = ROUTES.get(message["method"])
        if handler is None:
            return self.reply(message["id"], error=RpcError(METHOD_NOT_FOUND, message["method"]))
        params = message.get("params", {})
        if not isinstance(params, dict):
            return self.reply(message["id"], error=RpcError(INVALID_PARAMS, "params must be an object"))
        result = handler(self, message["id"], params)
        if result is not LATER:
            self.reply(message["id"], result)

    # -- the handlers ----------------------------------------------------------------------------
    @route("initialize")
    def initialize(self, request_id, params):
        asked = params.get("protocolVersion")
        self.version = asked if asked in SUPPORTED else SUPPORTED[0]
        return {
            "protocolVersion": self.version,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "clinic-dispatcher", "version": "2.1.0"},
        }

    @route("ping")
    def ping(self, request_id, params):
        return {}

    @route("tools/list")
    def list_tools(self, request_id, params):
        return self.toolbox.list(params, self.version >= "2025-06-18")

    @route("tools/call")
    def call_tool(self, request_id, params):
        # notifications/cancelled may name a call as 7 or as "7": a string key finds it either way.
        key = str(request_id)
        flags = self.version >= "2025-11-25", self.version >= "2025-06-18"
        self.running[key] = self.worker.submit(self.toolbox.call, params, *flags)
        self.running[key].add_done_callback(lambda done: self.finish(key, done))
        return LATER

    def finish(self, key, done):
        self.running.pop(key, None)
        if done.cancelled():
            return  # a cancelled call gets no reply
        try:
            self.reply(key, done.result())
        except RpcError as exc:
            self.reply(key, error=exc)

    def cancel(self, params):
        call = self.running.get(str(params.get("requestId")))
        if call is not None:
            call.cancel()  # only a call that has not started yet can still be stopped

    def close(self):
        self.worker.shutdown(wait=True)  # the calls in flight finish and are answered


def invalid(message):
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or not isinstance(message.get("method"), str):
        return "not a JSON-RPC 2.0 request"
    request_id = message.get("id", "")
    if isinstance(request_id, bool) or not isinstance(request_id, (str, int)):
        return "an id is a string or an integer"
    return ""


def main():
    dispatcher = Dispatcher(sys.stdout.buffer)
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        try:
            message = json.loads(line.decode("utf-8"))
        except ValueError as exc:
            dispatcher.reply(None, error=RpcError(PARSE_ERROR, str(exc)))
            continue
        problem = invalid(message)
        if problem:
            dispatcher.reply(None, error=RpcError(INVALID_REQUEST, problem))
        else:
            dispatcher.dispatch(message)
    dispatcher.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
