"""Gallery exhibit: crlf."""

import sys

from grader.gallery.base import ShopServer


class Server(ShopServer):
    def write_line(self, data: bytes) -> None:
        sys.stdout.buffer.write(data.rstrip(b"\n") + b"\r\n")
        sys.stdout.buffer.flush()


if __name__ == "__main__":
    Server.main()
