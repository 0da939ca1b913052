"""Gallery exhibit: dies_on_bad_line."""

import json

from grader.gallery.base import ShopServer


class Server(ShopServer):
    def handle_line(self, raw: bytes) -> None:
        if raw.strip():
            self.handle_message(json.loads(raw.decode("utf-8")))


if __name__ == "__main__":
    Server.main()
