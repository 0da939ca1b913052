"""Gallery exhibit: tool_errors_ignore_version."""

from typing import Any

from grader.gallery.base import ShopServer


class Server(ShopServer):
    def call_tool(self, params: dict[str, Any]) -> dict[str, Any]:
        return self.toolbox.call(params, False, structured_output=self.version >= "2025-06-18")


if __name__ == "__main__":
    Server.main()
