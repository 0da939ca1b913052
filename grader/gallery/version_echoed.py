"""Gallery exhibit: version_echoed."""

from grader.gallery.base import ShopServer


class Server(ShopServer):
    def negotiate(self, requested: str) -> str:
        return requested  # give the client what it asks for


if __name__ == "__main__":
    Server.main()
