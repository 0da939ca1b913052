"""Gallery exhibit: pretty_printed."""

import json
from typing import Any

from grader.gallery.base import ShopServer


class Server(ShopServer):
    def send(self, message: dict[str, Any]) -> None:
        text = json.dumps(message, ensure_ascii=False, allow_nan=False, indent=2)  # readable in logs
        self.write_line(text.encode("utf-8", "replace") + b"\n")


if __name__ == "__main__":
    Server.main()
