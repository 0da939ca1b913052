"""Gallery exhibit: bad_args_accepted."""

from typing import Any

from grader.gallery.base import ShopServer
from reference.tools import ToolError, structured_result, text_result


class Server(ShopServer):
    def call_tool(self, params: dict[str, Any]) -> dict[str, Any]:
        tool = self.toolbox.tools.get(params.get("name"))
        if tool is None:
            return super().call_tool(params)  # unknown tool: -32602 as usual
        try:
            value = tool.run(params.get("arguments") or {})
        except ToolError as exc:
            return text_result(str(exc), is_error=True)
        except Exception:
            return text_result(f"{tool.name}: no results")
        return structured_result(value) if self.version >= "2025-06-18" else text_result(value)


if __name__ == "__main__":
    Server.main()
