"""A correct stdio MCP shop server, written the way a careful learner would: the gallery's base.

Every gallery exhibit subclasses :class:`ShopServer` and overrides one small method to introduce
one defect, so the healthy version of each piece of behaviour lives here, once.

    $ python grader/gallery/base.py      # a healthy server: it passes every check

Standard library only, plus the reference's shop tools (the database and its four tools).
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable, Iterable
from typing import Any

from reference.database import ensure_default, open_readonly
from reference.errors import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, RpcError
from reference.lifecycle import LATEST, SUPPORTED
from reference.shop import shop_toolbox

SERVER_INFO = {"name": "gallery-shop", "version": "1.0.0"}

log = logging.getLogger("gallery-shop")


def _no_nan(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


class ShopServer:
    def __init__(self) -> None:
        self.version = LATEST  # until initialize says otherwise
        self.initialized = False
        self.db = open_readonly(ensure_default())  # read-only: no tool can change the shop
        self.toolbox = shop_toolbox(self.db)

    @classmethod
    def main(cls) -> None:
        sys.exit(cls().run())

    # -- the loop ----------------------------------------------------------------------------
    def run(self) -> int:
        self.on_start()
        try:
            for raw in self.read_lines():
                self.handle_line(raw)
        except BrokenPipeError:
            return 0  # the client went away: nothing left to say
        return 0  # stdin closed: the client is done with us, exit cleanly

    def on_start(self) -> None:
        # Logs go to stderr: stdout is the protocol channel and carries JSON-RPC messages only.
        logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(asctime)s %(message)s")
        log.info("shop server ready, reading stdin")

    def read_lines(self) -> Iterable[bytes]:
        # Bytes, not text: the text layer would decode with the platform's code page.
        return sys.stdin.buffer

    def handle_line(self, raw: bytes) -> None:
        if not raw.strip():
            return  # a blank line carries no message
        try:
            message = self.parse(raw)
        except ValueError as exc:  # not UTF-8, not JSON: -32700, and keep serving
            self.send_error(None, PARSE_ERROR.code, f"Parse error: {exc}")
            return
        self.handle_message(message)

    def parse(self, raw: bytes) -> Any:
        # Strict: UTF-8 only, and NaN/Infinity are not JSON.
        return json.loads(raw.decode("utf-8"), parse_constant=_no_nan)

    def is_notification(self, message: dict[str, Any]) -> bool:
        # No "id" member at all. An explicit "id": null is an invalid request, not a notification.
        return "id" not in message

    def handle_message(self, message: Any) -> None:
        if isinstance(message, list):  # a batch: we do not negotiate 2025-03-26 batches
            self.send_error(None, INVALID_REQUEST.code, "Invalid Request: batches are not supported")
            return
        if not isinstance(message, dict):
            self.send_error(None, INVALID_REQUEST.code, "Invalid Request: expected a JSON object")
            return
        method, id = message.get("method"), message.get("id")
        if method is None and "id" in message and ("result" in message or "error" in message):
            return  # a client's reply to a request of ours (we send none): nothing to answer
        valid_id = isinstance(id, str) or (isinstance(id, int) and not isinstance(id, bool))
        params = message.get("params", {})
        if message.get("jsonrpc") != "2.0" or not isinstance(method, str) or not isinstance(params, dict):
            reply_id = id if valid_id else None
            self.send_error(reply_id, INVALID_REQUEST.code, "Invalid Request: need jsonrpc, method, params")
        elif self.is_notification(message):
            self.handle_notification(method, params)  # never answered, not even with an error
        elif not valid_id:  # null, 1.5, true: not an MCP id
            self.send_error(None, INVALID_REQUEST.code, "Invalid Request: id must be a string or integer")
        else:
            self.handle_request(id, method, params)

    def handle_notification(self, method: str, params: dict[str, Any]) -> None:
        if method == "notifications/initialized":
            self.initialized = True
        # notifications/cancelled and anything unknown: ignored (we answer each request before
        # reading the next line, so there is never anything left to cancel).

    def handle_request(self, id: int | str, method: str, params: dict[str, Any]) -> None:
        try:
            result = self.find_handler(method)(params)
        except RpcError as exc:
            self.send_error(id, exc.kind.code, str(exc))
        except Exception:
            log.exception("internal error in %s", method)  # details to stderr, not to the client
            self.send_error(id, -32603, "Internal error")
        else:
            self.send_result(id, result)

    def find_handler(self, method: str) -> Callable[[dict[str, Any]], Any]:
        handlers = {
            "initialize": self.initialize,
            "ping": self.ping,
            "tools/list": self.list_tools,
            "tools/call": self.call_tool,
        }
        if method not in handlers:
            raise RpcError(METHOD_NOT_FOUND, method)
        return handlers[method]

    # -- the methods -------------------------------------------------------------------------
    def initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        requested = params.get("protocolVersion")
        if not isinstance(requested, str):
            raise RpcError(INVALID_PARAMS, 'initialize needs a "protocolVersion" string')
        self.version = self.negotiate(requested)
        return {
            "protocolVersion": self.version,
            "capabilities": {"tools": {"listChanged": False}},  # we serve tools/list: declare it
            "serverInfo": dict(SERVER_INFO),
        }

    def negotiate(self, requested: str) -> str:
        # A supported version MUST be echoed; otherwise answer with our latest.
        return requested if requested in SUPPORTED else LATEST

    def ping(self, params: dict[str, Any]) -> dict[str, Any]:
        return {}

    def list_tools(self, params: dict[str, Any]) -> dict[str, Any]:
        # outputSchema exists from 2025-06-18: older sessions get the tools without it.
        return self.toolbox.list(params, structured_output=self.version >= "2025-06-18")

    def call_tool(self, params: dict[str, Any]) -> dict[str, Any]:
        log.debug("tools/call %s", params.get("name"))
        # Bad arguments: -32602 up to 2025-06-18, an isError result from 2025-11-25 on.
        # structuredContent (plus the same JSON as text) from 2025-06-18 on.
        return self.toolbox.call(
            params,
            tool_errors_for_bad_arguments=self.version >= "2025-11-25",
            structured_output=self.version >= "2025-06-18",
        )

    # -- writing -----------------------------------------------------------------------------
    def send_result(self, id: int | str, result: Any) -> None:
        self.send({"jsonrpc": "2.0", "id": id, "result": result})

    def send_error(self, id: int | str | None, code: int, message: str) -> None:
        self.send({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})

    def send(self, message: dict[str, Any]) -> None:
        # One line, compact, strict JSON (allow_nan=False), UTF-8 (a lone surrogate becomes "?").
        text = json.dumps(message, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        self.write_line(text.encode("utf-8", "replace") + b"\n")

    def write_line(self, data: bytes) -> None:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()  # stdout to a pipe is block-buffered: flush every message


if __name__ == "__main__":
    ShopServer.main()
