"""Gallery exhibit: content_length."""

import sys

from grader.gallery.base import ShopServer


class Server(ShopServer):
    def write_line(self, data: bytes) -> None:
        body = data.rstrip(b"\n")
        sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        sys.stdout.buffer.flush()


if __name__ == "__main__":
    Server.main()
