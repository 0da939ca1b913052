"""Gallery exhibit: banner."""

from grader.gallery.base import ShopServer


class Server(ShopServer):
    def on_start(self) -> None:
        super().on_start()
        print("Shop server started, waiting for requests on stdin", flush=True)


if __name__ == "__main__":
    Server.main()
