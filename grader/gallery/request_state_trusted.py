"""Gallery exhibit: request_state_trusted."""

import base64
import json
from typing import Any

from grader.gallery.modern_base import ShopServer


class Server(ShopServer):
    def read_state(self, state: Any) -> dict[str, Any]:
        body = str(state).partition(".")[0]  # "we made it, so it is ours"
        return json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))


if __name__ == "__main__":
    Server.main()
