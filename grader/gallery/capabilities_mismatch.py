"""Gallery exhibit: capabilities_mismatch."""

from typing import Any

from grader.gallery.base import ShopServer


class Server(ShopServer):
    def initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        result = super().initialize(params)
        result["capabilities"] = {}
        return result


if __name__ == "__main__":
    Server.main()
