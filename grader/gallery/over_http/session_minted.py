"""Gallery exhibit: session_minted."""

import secrets
from typing import Any

from grader.gallery.over_http.modern_base import ModernShop, main


class Server(ModernShop):
    def reply(self, status: int, body: bytes = b"", content_type: str | None = None, **headers: Any) -> None:
        # Hand every client a session id, whichever era it speaks: it cannot hurt to have one.
        if self.modern:
            headers["Mcp_Session_Id"] = secrets.token_hex(16)
        super().reply(status, body, content_type, **headers)


if __name__ == "__main__":
    raise SystemExit(main(Server))
