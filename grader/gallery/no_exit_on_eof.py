"""Gallery exhibit: no_exit_on_eof."""

import sys
import time
from collections.abc import Iterator

from grader.gallery.base import ShopServer


class Server(ShopServer):
    def read_lines(self) -> Iterator[bytes]:
        while True:
            line = sys.stdin.buffer.readline()
            if line:
                yield line
            else:
                time.sleep(0.05)  # (gallery only: spare the CPU; in the field this loop spins at 100%)


if __name__ == "__main__":
    Server.main()
