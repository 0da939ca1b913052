"""Gallery exhibit: log_to_stdout."""

import logging
import sys

from grader.gallery.base import ShopServer


class Server(ShopServer):
    def on_start(self) -> None:
        logging.basicConfig(
            stream=sys.stdout,
            level=logging.DEBUG,
            format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        )


if __name__ == "__main__":
    Server.main()
