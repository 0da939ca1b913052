"""Gallery exhibit: method_header_unchecked."""

from typing import Any

from grader.gallery.over_http.modern_base import ModernShop, main


class Server(ModernShop):
    def post_modern(self, message: Any, json_ok: bool, sse_ok: bool = True) -> None:
        # Mcp-Method is for proxies: the body says what to do, so take the method from there.
        if isinstance(message, dict) and "Mcp-Method" in self.headers and isinstance(message.get("method"), str):
            del self.headers["Mcp-Method"]
            self.headers["Mcp-Method"] = message["method"]
        super().post_modern(message, json_ok, sse_ok)


if __name__ == "__main__":
    raise SystemExit(main(Server))
