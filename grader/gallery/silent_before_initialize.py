"""Gallery exhibit: silent_before_initialize."""

from typing import Any

from grader.gallery.base import ShopServer


class Server(ShopServer):
    def handle_request(self, id: int | str, method: str, params: dict[str, Any]) -> None:
        if method in ("initialize", "ping") or getattr(self, "handshaken", False):
            super().handle_request(id, method, params)
        # anything else before the handshake: dropped ("clients initialize first")

    def initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        self.handshaken = True
        return super().initialize(params)


if __name__ == "__main__":
    Server.main()
