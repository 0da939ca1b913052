"""Gallery exhibit: fixed_protocol_version."""

from grader.gallery.base import ShopServer


class Server(ShopServer):
    def negotiate(self, requested: str) -> str:
        return "2024-11-05"


if __name__ == "__main__":
    Server.main()
