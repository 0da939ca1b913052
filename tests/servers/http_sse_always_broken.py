"""A test server over Streamable HTTP: every reply is an SSE stream, every event pretty-printed JSON.

The gallery's broken_sse streams only when a client accepts nothing else; this one always does, so
no reply can be read, initialize's included. One defect: http-sse must be named as the root, and
initialize-result, which fails because of it, as its consequence.

    python tests/servers/http_sse_always_broken.py [--port N]
"""

from __future__ import annotations

import json
import sys
from typing import Any

from grader.gallery.over_http.base import HttpShop, main


class Server(HttpShop):
    def do_POST(self) -> None:
        del self.headers["Accept"]
        self.headers["Accept"] = "text/event-stream"  # as if every client asked for a stream
        super().do_POST()

    def stream(self, message: dict[str, Any], **headers: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.send_header("Connection", "close")
        self.close_connection = True
        self.end_headers()
        self.wfile.write(f"event: message\ndata: {json.dumps(message, indent=2)}\n\n".encode())


if __name__ == "__main__":
    sys.exit(main(Server))
