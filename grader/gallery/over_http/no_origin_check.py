"""Gallery exhibit: no_origin_check."""

from grader.gallery.over_http.base import HttpShop, main


class Server(HttpShop):
    def origin_ok(self) -> bool:
        return True  # "we only listen on 127.0.0.1, so only this machine can call us"


if __name__ == "__main__":
    raise SystemExit(main(Server))
