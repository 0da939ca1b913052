"""Gallery exhibit: discover_without_ttl."""

from typing import Any

from grader.gallery.modern_base import ShopServer


class Server(ShopServer):
    def wrap(self, method: str, result: dict[str, Any]) -> dict[str, Any]:
        wrapped = super().wrap(method, result)
        if method == "server/discover":
            wrapped.pop("ttlMs", None)  # "discover is called once; nobody caches it"
        return wrapped


if __name__ == "__main__":
    Server.main()
