"""A client that dropped _meta after its first request worked with this server, and failed with every other one.

A shop server of MCP 2026-07-28 only (no initialize handshake: each request carries its revision in
params._meta) that does its own framing on the raw file descriptors: os.read() chunks split into
lines by hand, os.write() until every byte is out (no buffer, so nothing to flush). A heartbeat
thread tells stderr now and then how many requests were served, so that an operator sees it live.

Find the defect and repair it in this file.
"""

import json
import os
import sys
import threading

from reference.database import ensure_default, open_readonly
from reference.errors import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, RpcError
from reference.errors import UNSUPPORTED_VERSION
from reference.shop import shop_toolbox

STDIN, STDOUT = 0, 1
REVISION = "2026-07-28"
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO = {"name": "clinic-raw", "version": "0.4.0"}
GONE = {"ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"}  # 2026-07-28 removed them
CACHEABLE = {"server/discover", "tools/list"}
HEARTBEAT_SECONDS = 30.0
served = 0


def read_lines(fd):
    """Each line read from ``fd``, without its line ending, until end of input."""
    pending = b""
    while chunk := os.read(fd, 65536):
        pending += chunk
        *complete, pending = pending.split(b"\n")
        for line in complete:
            yield line.removesuffix(b"\r")
    if pending.strip():
        yield pending  # the last line had no "\n"


def write_message(fd, message):
    data = json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n"
    while data:  # os.write may take only part of it when the pipe is full
        data = data[os.write(fd, data) :]


def heartbeat(stopping):
    while not stopping.wait(HEARTBEAT_SECONDS):
        print(f"[heartbeat] alive, {served} requests served", file=sys.stderr, flush=True)


class Shop:
    def __init__(self):
        self.toolbox = shop_toolbox(open_readonly(ensure_default()))
        self.client = None  # the client's _meta: one client per connection, so read once

    def client_meta(self, params):
        """The request's _meta, checked: the revision and the capabilities are required."""
        if self.client is not None:
            return self.client  # checked on this connection's first request
        meta = params.get("_meta")
        if not isinstance(meta, dict):
            raise RpcError(INVALID_PARAMS, f"a {REVISION} request needs params._meta")
        if not isinstance(meta.get(VERSION_KEY), str):
            raise RpcError(INVALID_PARAMS, f'params._meta needs "{VERSION_KEY}" (a string)')
        if not isinstance(meta.get(CAPABILITIES_KEY), dict):
            raise RpcError(INVALID_PARAMS, f'params._meta needs "{CAPABILITIES_KEY}" (an object)')
        if meta[VERSION_KEY] != REVISION:
            asked = meta[VERSION_KEY]
            raise RpcError(UNSUPPORTED_VERSION, asked[:40], {"supported": [REVISION], "requested": asked})
        self.client = meta
        return meta

    def run(self, method, params):
        if not isinstance(params, dict):
            raise RpcError(INVALID_PARAMS, "params must be an object")
        if method == "initialize":  # a client of 2025-11-25 or before: tell it the revision spoken here
            asked = params.get("protocolVersion")
            data = {"supported": [REVISION], "requested": asked if isinstance(asked, str) else ""}
            raise RpcError(UNSUPPORTED_VERSION, f"this server speaks {REVISION} only: no initialize", data)
        self.client_meta(params)
        if method == "server/discover":
            result = {"supportedVersions": [REVISION], "capabilities": {"tools": {"listChanged": False}}}
        elif method == "tools/list":
            result = self.toolbox.list(params, True)
        elif method == "tools/call":
            result = self.toolbox.call(params, True, True)
        elif method in GONE:
            raise RpcError(METHOD_NOT_FOUND, f"{method} does not exist in {REVISION}")
        else:
            raise RpcError(METHOD_NOT_FOUND, method)
        result = {"resultType": "complete", **result, "_meta": {"io.modelcontextprotocol/serverInfo": SERVER_INFO}}
        if method in CACHEABLE:
            result.update(ttlMs=300000, cacheScope="public")
        return result


def reply_to(shop, line):
    """The reply to one line, or None when it gets none (a notification)."""
    global served
    request_id = None
    try:
        try:
            message = json.loads(line.decode("utf-8"))
        except ValueError as exc:
            raise RpcError(PARSE_ERROR, str(exc)) from None
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or not isinstance(message.get("method"), str):
            raise RpcError(INVALID_REQUEST, "not a JSON-RPC 2.0 request")
        if "id" not in message:
            return None
        if isinstance(message["id"], bool) or not isinstance(message["id"], (str, int)):
            raise RpcError(INVALID_REQUEST, "an id is a string or an integer")
        request_id = message["id"]
        served += 1
        return {"jsonrpc": "2.0", "id": request_id, "result": shop.run(message["method"], message.get("params", {}))}
    except RpcError as exc:
        return {"jsonrpc": "2.0", "id": request_id, "error": exc.to_error()}


def main():
    stopping = threading.Event()
    beat = threading.Thread(target=heartbeat, args=(stopping,), name="heartbeat", daemon=True)
    beat.start()
    shop = Shop()
    for line in read_lines(STDIN):
        if line.strip():
            reply = reply_to(shop, line)
            if reply is not None:
                write_message(STDOUT, reply)
    stopping.set()  # end of input: the heartbeat stops, and the process exits
    return 0


if __name__ == "__main__":
    sys.exit(main())
