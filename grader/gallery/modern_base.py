"""A correct modern-only (MCP 2026-07-28) stdio shop server: the base of the gallery's modern exhibits.

No ``initialize``: every request carries its version and the client's capabilities in
``params._meta`` and stands alone. It reuses the legacy base's loop, parsing and writing, and
the reference's envelope pieces (``reference.stateless``); each modern exhibit subclasses it and
overrides one small method.

    $ python grader/gallery/modern_base.py   # a healthy modern-only server: it passes every check

Besides the shop's four tools it has ``cancel_order``, which asks the user to confirm through an
``input_required`` result and keeps the order it is about to cancel in a signed ``requestState``
(the gallery's database is read-only: nothing is ever written), and one resource.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import sys
from collections.abc import Callable
from typing import Any

from grader.gallery.base import ShopServer as LegacyShopServer
from reference import stateless
from reference.errors import INVALID_PARAMS, METHOD_NOT_FOUND, MISSING_CAPABILITY, RpcError

SERVER_INFO = {"name": "gallery-modern-shop", "version": "1.0.0"}
SCHEMA_URI = "shop://schema"
KEY = os.urandom(32)  # signs requestState: a client (or an attacker) cannot forge one
ORDER_ID = {"order_id": {"type": "integer", "minimum": 1}}
CANCEL = {
    "name": "cancel_order",
    "description": "Cancel an order, after the user confirms (a demonstration: nothing is written).",
    "inputSchema": {"type": "object", "properties": ORDER_ID, "required": ["order_id"]},
    "annotations": {"readOnlyHint": False, "destructiveHint": True},
}


class ShopServer(LegacyShopServer):
    meta: stateless.RequestMeta | None = None

    def handle_request(self, id: int | str, method: str, params: dict[str, Any]) -> None:
        try:
            handler = self.find_handler(method)
            self.meta = self.read_meta(params)  # the envelope first: nothing is served without it
            if method in stateless.REMOVED:
                raise stateless.removed(method)
            result = self.wrap(method, handler(params))
        except RpcError as exc:
            self.send({"jsonrpc": "2.0", "id": id, "error": exc.to_error()})
        else:
            self.send_result(id, result)

    def read_meta(self, params: dict[str, Any]) -> stateless.RequestMeta:
        return stateless.read_meta(params)

    def wrap(self, method: str, result: dict[str, Any]) -> dict[str, Any]:
        """resultType, the caching hints where due, and who we are."""
        return stateless.complete(method, result, SERVER_INFO)

    def find_handler(self, method: str) -> Callable[[dict[str, Any]], Any]:
        handlers = {
            "server/discover": self.discover,
            "tools/list": self.list_tools,
            "tools/call": self.call_tool,
            "resources/list": lambda params: {"resources": [{"uri": SCHEMA_URI, "name": "schema"}]},
            "resources/templates/list": lambda params: {"resourceTemplates": []},
            "resources/read": self.read_resource,
        }
        if method in stateless.REMOVED:
            return self.discover  # refused once the envelope is read (-32601, naming what replaced it)
        if method not in handlers:
            raise RpcError(METHOD_NOT_FOUND, method)
        return handlers[method]

    def discover(self, params: dict[str, Any]) -> dict[str, Any]:
        capabilities = {"tools": {"listChanged": False}, "resources": {}}
        return stateless.discover(capabilities, SERVER_INFO, "The shop: orders, products, customers.")

    def list_tools(self, params: dict[str, Any]) -> dict[str, Any]:
        listing = self.toolbox.list(params, structured_output=True)
        return {**listing, "tools": [*listing["tools"], CANCEL]}

    def call_tool(self, params: dict[str, Any]) -> dict[str, Any]:
        if params.get("name") == "cancel_order":
            return self.cancel_order(params)
        return self.toolbox.call(params, tool_errors_for_bad_arguments=True, structured_output=True)

    def read_resource(self, params: dict[str, Any]) -> dict[str, Any]:
        if params.get("uri") != SCHEMA_URI:
            raise RpcError(INVALID_PARAMS, "resource not found", {"uri": params.get("uri")})
        return {"contents": [{"uri": SCHEMA_URI, "mimeType": "text/plain", "text": "orders(id, status, ...)"}]}

    # -- a multi round-trip request (basic/patterns/mrtr) ----------------------------------------
    def cancel_order(self, params: dict[str, Any]) -> dict[str, Any]:
        if "requestState" in params:  # the retry: the order comes from our signed state, not the arguments
            order = self.read_state(params["requestState"])["order_id"]
            answer = (params.get("inputResponses") or {}).get("confirm") or {}
            done = "cancelled (demonstration: nothing written)" if answer.get("action") == "accept" else "kept"
            return {"content": [{"type": "text", "text": f"order {order}: {done}"}], "isError": False}
        if self.meta is None or not self.meta.declares("elicitation"):
            raise RpcError(
                MISSING_CAPABILITY, "cancel_order asks for confirmation", {"requiredCapabilities": {"elicitation": {}}}
            )
        order = (params.get("arguments") or {}).get("order_id")
        ask = {
            "mode": "form",
            "message": f"Cancel order {order}?",
            "requestedSchema": {"type": "object", "properties": {}},
        }
        return {
            "resultType": "input_required",
            "inputRequests": {"confirm": {"method": "elicitation/create", "params": ask}},
            "requestState": self.make_state({"order_id": order}),
        }  # fmt: skip

    def make_state(self, payload: dict[str, Any]) -> str:
        body = base64.urlsafe_b64encode(json.dumps(payload).encode()).decode().rstrip("=")
        return body + "." + hmac.new(KEY, body.encode(), hashlib.sha256).hexdigest()

    def read_state(self, state: Any) -> dict[str, Any]:
        body, _, mac = str(state).partition(".")
        if not hmac.compare_digest(mac, hmac.new(KEY, body.encode(), hashlib.sha256).hexdigest()):
            raise RpcError(INVALID_PARAMS, "requestState fails verification: start the call again")
        return json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))


if __name__ == "__main__":
    sys.exit(ShopServer().run())
