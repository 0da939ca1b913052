"""Gallery exhibit: structured_content_missing."""

from typing import Any

from grader.gallery.base import ShopServer


class Server(ShopServer):
    def call_tool(self, params: dict[str, Any]) -> dict[str, Any]:
        result = super().call_tool(params)
        # The JSON is in the text block already; why send it twice?
        return {"content": result["content"], "isError": result["isError"]}


if __name__ == "__main__":
    Server.main()
