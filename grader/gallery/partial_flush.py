"""Gallery exhibit: partial_flush."""

import sys
from typing import Any

from grader.gallery.base import ShopServer


class Server(ShopServer):
    def call_tool(self, params: dict[str, Any]) -> dict[str, Any]:
        self.batched = True  # tool results can be long: let them go out with the next flush
        return super().call_tool(params)

    def write_line(self, data: bytes) -> None:
        sys.stdout.buffer.write(data)
        if not getattr(self, "batched", False):
            sys.stdout.buffer.flush()
        self.batched = False


if __name__ == "__main__":
    Server.main()
