"""Gallery exhibit: early_server_request."""

from typing import Any

from grader.gallery.base import ShopServer


class Server(ShopServer):
    def initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        # Ask the client for its workspace roots (we do not wait for the answer).
        self.send({"jsonrpc": "2.0", "id": "roots-1", "method": "roots/list"})
        return super().initialize(params)


if __name__ == "__main__":
    Server.main()
