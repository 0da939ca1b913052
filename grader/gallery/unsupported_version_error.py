"""Gallery exhibit: unsupported_version_error."""

from grader.gallery.base import SUPPORTED, ShopServer
from reference.errors import INVALID_PARAMS, RpcError


class Server(ShopServer):
    def negotiate(self, requested: str) -> str:
        if requested not in SUPPORTED:
            raise RpcError(INVALID_PARAMS, f"Unsupported protocol version {requested}")
        return requested


if __name__ == "__main__":
    Server.main()
