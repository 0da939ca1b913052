"""Gallery exhibit: bad_tool_names."""

from typing import Any

from grader.gallery.base import ShopServer

# Namespaced names: listed under the new name, served under the old one.
NAMES = {
    "count_orders": "orders.count",
    "list_orders": "orders.list",
    "get_order": "orders.get",
    "search_products": "products.search",
}


class Server(ShopServer):
    def list_tools(self, params: dict[str, Any]) -> dict[str, Any]:
        tools = super().list_tools(params)["tools"]
        return {"tools": [{**tool, "name": NAMES[tool["name"]]} for tool in tools]}

    def call_tool(self, params: dict[str, Any]) -> dict[str, Any]:
        served = {new: old for old, new in NAMES.items()}
        return super().call_tool({**params, "name": served.get(params.get("name"), params.get("name"))})


if __name__ == "__main__":
    Server.main()
