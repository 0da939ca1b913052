"""Gallery exhibit: notification_named_like_request."""

from typing import Any

from grader.gallery.base import ShopServer, log


class Server(ShopServer):
    def handle_message(self, message: Any) -> None:
        method = message.get("method") if isinstance(message, dict) else None
        if isinstance(method, str) and not method.startswith("notifications/"):
            log.info("request %s: %s", message["id"], method)
        super().handle_message(message)


if __name__ == "__main__":
    Server.main()
