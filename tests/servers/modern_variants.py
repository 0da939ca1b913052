"""Test server: the gallery's healthy modern-only shop with one defect, chosen by argv[1].

- ``listen-unacknowledged``: declares tools.listChanged and answers subscriptions/listen with a
  notification of the subscription before its acknowledgement;
- ``asks-undeclared``: cancel_order asks for an elicitation even when the request declared no
  elicitation capability.
"""

import sys
from typing import Any

from grader.gallery.modern_base import ShopServer
from reference.stateless import SUBSCRIPTION_ID

MODE = sys.argv[1] if len(sys.argv) > 1 else ""


class Server(ShopServer):
    def discover(self, params: dict[str, Any]) -> dict[str, Any]:
        result = super().discover(params)
        if MODE == "listen-unacknowledged":
            result["capabilities"]["tools"]["listChanged"] = True
        return result

    def handle_request(self, id: int | str, method: str, params: dict[str, Any]) -> None:
        if method == "subscriptions/listen" and MODE == "listen-unacknowledged":
            tag = {"_meta": {SUBSCRIPTION_ID: id}}
            self.send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": tag})
            self.send({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": tag})
            return
        if method == "tools/call" and MODE == "asks-undeclared" and "requestState" not in params:
            params = {**params, "_meta": {**params.get("_meta", {})}}
            caps = params["_meta"].get("io.modelcontextprotocol/clientCapabilities")
            if caps == {}:
                params["_meta"]["io.modelcontextprotocol/clientCapabilities"] = {"elicitation": {}}
        super().handle_request(id, method, params)


if __name__ == "__main__":
    sys.exit(Server().run())
