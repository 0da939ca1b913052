"""A test server that writes a stray blank line after every reply (a print() after the message).

One defect: stdout-json-lines. A tool call's reply is followed by a blank line too, which the
tool-call checks see as noise; the checker must report it once, with tools-call-result marked
as its consequence, not as a second defect.

    python tests/servers/blank_after_reply.py
"""

from __future__ import annotations

from grader.gallery.base import ShopServer


class Server(ShopServer):
    def write_line(self, data: bytes) -> None:
        super().write_line(data + b"\n")


if __name__ == "__main__":
    Server.main()
