"""A test server that flushes its first reply (to initialize) and holds every later one until it exits.

Later replies pile up (as in a buffer too big to fill) and go out only when end of input ends
the process: the checker sees them only when it closes stdin, and must call that a missing flush,
with the unanswered requests as its consequences, not a hang.

    python tests/servers/flushes_once.py
"""

from __future__ import annotations

import sys

from grader.gallery.base import ShopServer


class Server(ShopServer):
    def __init__(self) -> None:
        super().__init__()
        self.held: list[bytes] | None = None  # None until the first reply is out

    def write_line(self, data: bytes) -> None:
        if self.held is not None:
            self.held.append(data)
            return
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        self.held = []

    def run(self) -> int:
        code = super().run()
        sys.stdout.buffer.write(b"".join(self.held or []))  # exiting flushes
        return code


if __name__ == "__main__":
    Server.main()
