"""Gallery exhibit: envelope_unchecked."""

from typing import Any

from grader.gallery.modern_base import ShopServer
from reference import stateless


class Server(ShopServer):
    def read_meta(self, params: dict[str, Any]) -> stateless.RequestMeta:
        meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
        version = meta.get(stateless.PROTOCOL_VERSION, stateless.MODERN)  # "be liberal in what you accept"
        return super().read_meta(
            {"_meta": {stateless.CLIENT_CAPABILITIES: {}, **meta, stateless.PROTOCOL_VERSION: version}}
        )


if __name__ == "__main__":
    Server.main()
