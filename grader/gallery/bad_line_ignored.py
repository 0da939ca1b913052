"""Gallery exhibit: bad_line_ignored."""

from grader.gallery.base import ShopServer


class Server(ShopServer):
    def handle_line(self, raw: bytes) -> None:
        try:
            message = self.parse(raw)
        except ValueError:
            return  # not a message: skip it
        self.handle_message(message)


if __name__ == "__main__":
    Server.main()
