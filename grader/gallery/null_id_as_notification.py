"""Gallery exhibit: null_id_as_notification."""

from typing import Any

from grader.gallery.base import ShopServer


class Server(ShopServer):
    def is_notification(self, message: dict[str, Any]) -> bool:
        return message.get("id") is None


if __name__ == "__main__":
    Server.main()
