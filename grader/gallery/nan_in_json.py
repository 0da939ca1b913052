"""Gallery exhibit: nan_in_json."""

import json
from typing import Any

from grader.gallery.base import ShopServer


class Server(ShopServer):
    def send_result(self, id: int | str, result: Any) -> None:
        if "content" in result:  # a tools/call result: attach a relevance score (not computed yet)
            result = {**result, "_meta": {"relevance": float("nan")}}
        text = json.dumps({"jsonrpc": "2.0", "id": id, "result": result}, ensure_ascii=False)
        self.write_line(text.encode("utf-8", "replace") + b"\n")


if __name__ == "__main__":
    Server.main()
