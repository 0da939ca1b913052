"""Gallery exhibit: answers_notifications."""

from typing import Any

from grader.gallery.base import ShopServer


class Server(ShopServer):
    def handle_notification(self, method: str, params: dict[str, Any]) -> None:
        super().handle_notification(method, params)
        self.handle_request(None, method, params)  # no id to answer with, so null


if __name__ == "__main__":
    Server.main()
