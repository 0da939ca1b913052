"""Gallery exhibit: notification_with_body."""

from grader.gallery.over_http.base import JSON, HttpShop, main


class Server(HttpShop):
    def accepted(self) -> None:
        self.reply(200, b"null", JSON)  # every POST gets the handler's return value as JSON


if __name__ == "__main__":
    raise SystemExit(main(Server))
