"""Gallery exhibit: bad_input_schema."""

from typing import Any

from grader.gallery.base import ShopServer


class Server(ShopServer):
    def list_tools(self, params: dict[str, Any]) -> dict[str, Any]:
        tools = [dict(tool) for tool in super().list_tools(params)["tools"]]
        for tool in tools:
            if tool["name"] == "count_orders":
                tool["inputSchema"] = {}  # every argument is optional anyway
        return {"tools": tools}


if __name__ == "__main__":
    Server.main()
