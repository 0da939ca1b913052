"""Hosts hang on connect when they ask for prompts/list; a tool call with a wrong name never returns, right ones do.

A shop server on asyncio: one coroutine reads stdin, each request is a task of its own, and tool
calls run on a worker thread so that the event loop stays free for pings meanwhile.

Find the defect and repair it in this file.
"""

import asyncio
import json
import sys

from reference.database import ensure_default, open_readonly
from reference.errors import RpcError
from reference.shop import shop_toolbox

SUPPORTED = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
SERVER_INFO = {"name": "clinic-asyncio", "version": "0.9.2"}
TOOLBOX = shop_toolbox(open_readonly(ensure_default(), shared=True))
MAX_LINE = 1 << 24  # asyncio stops at 64 KiB per line unless told otherwise


class Session:
    def __init__(self):
        self.version = SUPPORTED[0]
        self.out = sys.stdout.buffer

    def write(self, message):
        self.out.write(json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n")

    def respond(self, request_id, result):
        self.write({"jsonrpc": "2.0", "id": request_id, "result": result})
        self.out.flush()

    def fail(self, request_id, code, text):
        self.write({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": text}})

    # -- the methods ---------------------------------------------------------------------------
    async def initialize(self, params):
        asked = params.get("protocolVersion")
        self.version = asked if asked in SUPPORTED else SUPPORTED[0]
        return {
            "protocolVersion": self.version,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": SERVER_INFO,
        }

    async def ping(self, params):
        return {}

    async def list_tools(self, params):
        return TOOLBOX.list(params, self.version >= "2025-06-18")

    async def call_tool(self, params):
        flags = self.version >= "2025-11-25", self.version >= "2025-06-18"
        return await asyncio.to_thread(TOOLBOX.call, params, *flags)

    # -- one request, as a task of its own -----------------------------------------------------
    async def handle(self, message):
        methods = {
            "initialize": self.initialize,
            "ping": self.ping,
            "tools/list": self.list_tools,
            "tools/call": self.call_tool,
        }
        method = methods.get(message["method"])
        if method is None:
            return self.fail(message["id"], -32601, f"Method not found: {message['method']}")
        params = message.get("params", {})
        if not isinstance(params, dict):
            return self.fail(message["id"], -32602, "Invalid params: params must be an object")
        try:
            result = await method(params)
        except RpcError as exc:
            return self.fail(message["id"], exc.code, exc.message)
        self.respond(message["id"], result)


def problem(message):
    """Why ``message`` is neither a request nor a notification ("" when it is one)."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return "not a JSON-RPC 2.0 message"
    if not isinstance(message.get("method"), str):
        return "no method"
    if "id" in message and (isinstance(message["id"], bool) or not isinstance(message["id"], (str, int))):
        return "an id is a string or an integer"
    return ""


async def serve():
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_LINE)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    session = Session()
    tasks = set()
    while line := await reader.readline():
        if not line.strip():
            continue
        try:
            message = json.loads(line.decode("utf-8"))
        except ValueError as exc:
            session.fail(None, -32700, f"Parse error: {exc}")
            continue
        why = problem(message)
        if why:
            session.fail(None, -32600, f"Invalid Request: {why}")
        elif "id" in message:  # a request; a notification needs nothing
            task = asyncio.create_task(session.handle(message))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
    await asyncio.gather(*tasks)  # end of input: answer what is in flight, then stop


if __name__ == "__main__":
    asyncio.run(serve())
