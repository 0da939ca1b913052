"""Gallery exhibit: error_replies_broken."""

from grader.gallery.base import ShopServer


class Server(ShopServer):
    def send_error(self, id: int | str | None, code: int, message: str) -> None:
        self.send({"id": id, "error": {"code": code, "message": message}})


if __name__ == "__main__":
    Server.main()
