"""Gallery exhibit: resource_not_found_legacy_code."""

from typing import Any

from grader.gallery.modern_base import SCHEMA_URI, ShopServer
from reference.errors import RESOURCE_NOT_FOUND, RpcError


class Server(ShopServer):
    def read_resource(self, params: dict[str, Any]) -> dict[str, Any]:
        if params.get("uri") != SCHEMA_URI:
            raise RpcError(RESOURCE_NOT_FOUND, "no such resource", {"uri": params.get("uri")})
        return super().read_resource(params)


if __name__ == "__main__":
    Server.main()
