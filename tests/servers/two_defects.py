"""A test server with two independent defects: tool results are not flushed, and ping answers "pong".

The flush makes tool calls late; the ping answer is wrong whatever the flush does. The checker
must name both, and must not mark the ping failure as a consequence of the flush.

    python tests/servers/two_defects.py
"""

from __future__ import annotations

import sys
from typing import Any

from grader.gallery.base import ShopServer


class Server(ShopServer):
    held = False

    def call_tool(self, params: dict[str, Any]) -> dict[str, Any]:
        self.held = True
        return super().call_tool(params)

    def ping(self, params: dict[str, Any]) -> Any:
        return "pong"

    def write_line(self, data: bytes) -> None:
        sys.stdout.buffer.write(data)
        if not self.held:
            sys.stdout.buffer.flush()
        self.held = False


if __name__ == "__main__":
    Server.main()
