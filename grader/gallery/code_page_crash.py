"""Gallery exhibit: code_page_crash."""

import json
from typing import Any

from grader.gallery.base import ShopServer


class Server(ShopServer):
    def send(self, message: dict[str, Any]) -> None:
        print(json.dumps(message, ensure_ascii=False, allow_nan=False, separators=(",", ":")), flush=True)


if __name__ == "__main__":
    Server.main()
