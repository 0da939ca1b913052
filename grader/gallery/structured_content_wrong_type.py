"""Gallery exhibit: structured_content_wrong_type."""

from typing import Any

from grader.gallery.base import ShopServer


class Server(ShopServer):
    def call_tool(self, params: dict[str, Any]) -> dict[str, Any]:
        result = super().call_tool(params)
        structured = result.get("structuredContent")
        if isinstance(structured, dict) and "count" in structured:
            # Formatted for display, the way the shop's web page shows it.
            result["structuredContent"] = {**structured, "count": f"{structured['count']:,}"}
        return result


if __name__ == "__main__":
    Server.main()
