"""Gallery exhibit: elicits_over_stdout."""

from typing import Any

from grader.gallery.modern_base import ShopServer


class Server(ShopServer):
    def call_tool(self, params: dict[str, Any]) -> dict[str, Any]:
        if self.meta is not None and self.meta.declares("elicitation"):
            ask = {"mode": "form", "message": "Anything else?", "requestedSchema": {"type": "object"}}
            self.send({"jsonrpc": "2.0", "id": "ask-1", "method": "elicitation/create", "params": ask})
        return super().call_tool(params)


if __name__ == "__main__":
    Server.main()
