"""Gallery exhibit: stderr_flood."""

import sys
from typing import Any

from grader.gallery.base import ShopServer


class Server(ShopServer):
    def handle_request(self, id: int | str, method: str, params: dict[str, Any]) -> None:
        # A detailed trace of every request, for debugging.
        sys.stderr.write(f"[trace] {method} {params!r} " + "." * 200_000 + "\n")
        super().handle_request(id, method, params)


if __name__ == "__main__":
    Server.main()
