"""Gallery exhibit: wrong_result_shape."""

from typing import Any

from grader.gallery.base import ShopServer


class Server(ShopServer):
    def call_tool(self, params: dict[str, Any]) -> dict[str, Any]:
        result = super().call_tool(params)
        return {**result, "content": result["content"][0]["text"]}


if __name__ == "__main__":
    Server.main()
