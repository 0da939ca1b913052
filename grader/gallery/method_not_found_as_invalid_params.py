"""Gallery exhibit: method_not_found_as_invalid_params."""

from collections.abc import Callable
from typing import Any

from grader.gallery.base import ShopServer
from reference.errors import INVALID_PARAMS, RpcError


class Server(ShopServer):
    def find_handler(self, method: str) -> Callable[[dict[str, Any]], Any]:
        try:
            return super().find_handler(method)
        except RpcError:
            raise RpcError(INVALID_PARAMS, f"unknown method {method!r}") from None


if __name__ == "__main__":
    Server.main()
