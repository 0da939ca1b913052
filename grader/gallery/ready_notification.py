"""Gallery exhibit: ready_notification."""

from grader.gallery.base import ShopServer


class Server(ShopServer):
    def on_start(self) -> None:
        super().on_start()
        # Tell the client we are up.
        ready = {"level": "info", "logger": "gallery-shop", "data": "shop server ready"}
        self.send({"jsonrpc": "2.0", "method": "notifications/message", "params": ready})


if __name__ == "__main__":
    Server.main()
