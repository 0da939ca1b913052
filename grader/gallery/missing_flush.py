"""Gallery exhibit: missing_flush."""

import sys

from grader.gallery.base import ShopServer


class Server(ShopServer):
    def write_line(self, data: bytes) -> None:
        sys.stdout.buffer.write(data)


if __name__ == "__main__":
    Server.main()
