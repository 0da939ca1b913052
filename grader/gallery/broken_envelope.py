"""Gallery exhibit: broken_envelope."""

from typing import Any

from grader.gallery.base import ShopServer


class Server(ShopServer):
    def send_result(self, id: int | str, result: Any) -> None:
        self.send({"jsonrpc": "2.0", "id": id, "result": result, "error": None})


if __name__ == "__main__":
    Server.main()
