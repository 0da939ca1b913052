"""Gallery exhibit: tool_error_as_protocol_error."""

from typing import Any

from grader.gallery.base import ShopServer
from reference.errors import INTERNAL_ERROR, RpcError


class Server(ShopServer):
    def call_tool(self, params: dict[str, Any]) -> dict[str, Any]:
        result = super().call_tool(params)
        if result.get("isError"):
            raise RpcError(INTERNAL_ERROR, result["content"][0]["text"])
        return result


if __name__ == "__main__":
    Server.main()
