"""Gallery exhibit: duplicate_tool_names."""

from typing import Any

from grader.gallery.base import ShopServer


class Server(ShopServer):
    def list_tools(self, params: dict[str, Any]) -> dict[str, Any]:
        tools = super().list_tools(params)["tools"]
        # A shorter alias for the most used tool.
        alias = {**tools[0], "description": "Same as count_orders, for quick questions."}
        return {"tools": [*tools, alias]}


if __name__ == "__main__":
    Server.main()
