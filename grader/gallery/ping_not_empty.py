"""Gallery exhibit: ping_not_empty."""

from typing import Any

from grader.gallery.base import ShopServer


class Server(ShopServer):
    def ping(self, params: dict[str, Any]) -> Any:
        return "pong"


if __name__ == "__main__":
    Server.main()
