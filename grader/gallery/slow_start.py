"""Gallery exhibit: slow_start."""

import time

from grader.gallery.base import ShopServer


class Server(ShopServer):
    def on_start(self) -> None:
        time.sleep(3.0)  # warm the caches before serving
        super().on_start()


if __name__ == "__main__":
    Server.main()
