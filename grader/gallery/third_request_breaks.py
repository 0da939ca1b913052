"""Gallery exhibit: third_request_breaks."""

import sys
from typing import Any

from grader.gallery.base import ShopServer


class Server(ShopServer):
    requests = 0

    def handle_request(self, id: int | str, method: str, params: dict[str, Any]) -> None:
        self.requests += 1
        super().handle_request(id, method, params)

    def write_line(self, data: bytes) -> None:
        if self.requests >= 3:  # past the handshake: the fast path
            data = data.rstrip(b"\n") + b"\r\n"
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()


if __name__ == "__main__":
    Server.main()
