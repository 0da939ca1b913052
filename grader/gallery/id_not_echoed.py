"""Gallery exhibit: id_not_echoed."""

from typing import Any

from grader.gallery.base import ShopServer


class Server(ShopServer):
    def handle_request(self, id: int | str, method: str, params: dict[str, Any]) -> None:
        if not id:
            return  # no id, no reply
        super().handle_request(id, method, params)


if __name__ == "__main__":
    Server.main()
