"""Gallery exhibit: string_ids_mangled."""

from typing import Any

from grader.gallery.base import ShopServer


class Server(ShopServer):
    def handle_request(self, id: int | str, method: str, params: dict[str, Any]) -> None:
        if isinstance(id, str) and id.isdecimal():
            id = int(id)  # normalise numeric ids
        super().handle_request(id, method, params)


if __name__ == "__main__":
    Server.main()
