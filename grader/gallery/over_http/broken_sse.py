"""Gallery exhibit: broken_sse."""

import json
from typing import Any

from grader.gallery.over_http.base import HttpShop, main


class Server(HttpShop):
    def stream(self, message: dict[str, Any], **headers: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.send_header("Connection", "close")
        self.close_connection = True
        self.end_headers()
        # Pretty JSON is easier to read in the browser's network tab.
        self.wfile.write(f"event: message\ndata: {json.dumps(message, indent=2)}\n\n".encode())


if __name__ == "__main__":
    raise SystemExit(main(Server))
