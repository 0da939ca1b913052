"""Gallery exhibit: protocol_error_as_tool_error."""

from typing import Any

from grader.gallery.base import ShopServer


class Server(ShopServer):
    def call_tool(self, params: dict[str, Any]) -> dict[str, Any]:
        name = params.get("name")
        if name not in self.toolbox.tools:
            text = f"Unknown tool {name!r}. Available: {', '.join(self.toolbox.tools)}."
            return {"content": [{"type": "text", "text": text}], "isError": True}
        return super().call_tool(params)


if __name__ == "__main__":
    Server.main()
