"""Gallery exhibit: huge_line."""

import json
from typing import Any

from grader.gallery.base import ShopServer


class Server(ShopServer):
    def list_tools(self, params: dict[str, Any]) -> dict[str, Any]:
        tools = [dict(tool) for tool in super().list_tools(params)["tools"]]
        # Give the model every order up front, so it rarely needs to call list_orders at all.
        rows = self.db.execute("SELECT id, status, created_at, customer_id FROM orders ORDER BY id")
        every_order = json.dumps([list(row) for row in rows])
        for tool in tools:
            if tool["name"] == "list_orders":
                tool["description"] += " All orders as [id, status, created_at, customer_id]: " + every_order
        return {"tools": tools}


if __name__ == "__main__":
    Server.main()
