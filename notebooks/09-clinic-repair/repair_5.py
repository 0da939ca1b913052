"""Every host says the server "did not exit" and kills it on disconnect; while connected, it works perfectly.

A shop server that does its own framing on the raw file descriptors: os.read() chunks split into
lines by hand, os.write() until every byte is out (no buffer, so nothing to flush). A heartbeat
thread tells stderr now and then how many requests were served, so that an operator sees it live.

Find the defect and repair it in this file.
"""

import json
import os
import sys
import threading
import time

from reference.database import ensure_default, open_readonly
from reference.errors import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, RpcError
from reference.shop import shop_toolbox

STDIN, STDOUT = 0, 1
REVISIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
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
    while not stopping.is_set():
        time.sleep(HEARTBEAT_SECONDS)
        print(f"[heartbeat] alive, {served} requests served", file=sys.stderr, flush=True)


class Shop:
    def __init__(self):
        self.toolbox = shop_toolbox(open_readonly(ensure_default()))
        self.revision = REVISIONS[0]

    def initialize(self, params):
        asked = params.get("protocolVersion")
        self.revision = asked if asked in REVISIONS else REVISIONS[0]
        return {
            "protocolVersion": self.revision,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "clinic-raw", "version": "0.3.0"},
        }

    def run(self, method, params):
        if not isinstance(params, dict):
            raise RpcError(INVALID_PARAMS, "params must be an object")
        if method == "initialize":
            return self.initialize(params)
        if method == "ping":
            return {}
        if method == "tools/list":
            return self.toolbox.list(params, self.revision >= "2025-06-18")
        if method == "tools/call":
            return self.toolbox.call(params, self.revision >= "2025-11-25", self.revision >= "2025-06-18")
        raise RpcError(METHOD_NOT_FOUND, method)


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
    beat = threading.Thread(target=heartbeat, args=(stopping,), name="heartbeat")
    beat.start()
    shop = Shop()
    for line in read_lines(STDIN):
        if line.strip():
            reply = reply_to(shop, line)
            if reply is not None:
                write_message(STDOUT, reply)
    # End of input: a clean shutdown stops the heartbeat and waits for it.
    stopping.set()
    beat.join()
    return 0


if __name__ == "__main__":
    sys.exit(main())
