"""A test server whose every reply carries its request's id as a string: 1 comes back as "1".

One defect (the id's JSON type) that ends the checker's session at initialize, before the step
that judges id-echo: the checker must still name id-echo, from the mistyped reply itself.

    python tests/servers/str_ids.py
"""

from __future__ import annotations

from typing import Any

from grader.gallery.base import ShopServer


class Server(ShopServer):
    def send(self, message: dict[str, Any]) -> None:
        if message.get("id") is not None:
            message = {**message, "id": str(message["id"])}
        super().send(message)


if __name__ == "__main__":
    Server.main()
