"""Gallery exhibit: version_error_without_supported."""

from typing import Any

from grader.gallery.modern_base import ShopServer
from reference import stateless
from reference.errors import UNSUPPORTED_VERSION, RpcError


class Server(ShopServer):
    def read_meta(self, params: dict[str, Any]) -> stateless.RequestMeta:
        try:
            return super().read_meta(params)
        except RpcError as exc:
            if exc.code == UNSUPPORTED_VERSION.code:
                raise RpcError(UNSUPPORTED_VERSION, "unsupported protocol version") from None
            raise


if __name__ == "__main__":
    Server.main()
