"""The reference's dual-era Streamable HTTP shop: the base of the gallery's modern (2026-07-28) HTTP exhibits.

A modern client POSTs each message on its own, with no session: the envelope in ``params._meta``,
and ``MCP-Protocol-Version``, ``Mcp-Method`` and ``Mcp-Name`` headers that the server checks
against the body (400, -32020). The reference's transport (``reference/streamable_http.py``)
does all of that right, and serves the legacy sessions beside it; each modern exhibit subclasses
:class:`ModernShop` and overrides one method, so the healthy version lives in the reference, once.
With ``--modern-only`` it refuses every legacy request (``initialize`` included: 400, -32020,
naming the revision it serves): a healthy modern-only server, which passes every check it is
judged by (the legacy ones are skipped, with the reason).

    $ python grader/gallery/over_http/modern_base.py                  # a free port: stderr says which
    $ python grader/gallery/over_http/modern_base.py --modern-only --port 8000
    $ mcp-lab check --url http://127.0.0.1:8000/mcp
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from grader.gallery.over_http.base import serve_until_stopped
from reference import stateless
from reference.envelope import error_message
from reference.errors import HEADER_MISMATCH
from reference.framing import encode
from reference.server import open_shop
from reference.streamable_http import Handler, HttpServer

MODERN_ONLY = f"this server speaks only MCP {stateless.MODERN}: send the request with its _meta and headers"


class ModernShop(Handler):
    """The reference's handler; ``self.modern`` is true while a 2026-07-28 POST is answered."""

    modern = False
    modern_only = False  # --modern-only: legacy traffic refused

    def post_modern(self, message: Any, json_ok: bool, sse_ok: bool = True) -> None:
        self.modern = True
        try:
            super().post_modern(message, json_ok, sse_ok)
        finally:
            self.modern = False  # the next request on this connection may be of the other era

    def post(self) -> None:
        # A modern client sends MCP-Protocol-Version: 2026-07-28 on every POST; a legacy one sends a 2025
        # revision, or (initialize) none: refused as the spec's compatibility matrix says, naming ours.
        version = self.headers.get("MCP-Protocol-Version")
        if not self.modern_only or version in stateless.SUPPORTED:
            super().post()
        elif version is None:
            self.fail(400, f"Header mismatch: no MCP-Protocol-Version; {MODERN_ONLY}", code=HEADER_MISMATCH.code)
        else:
            refused = error_message(None, stateless.unsupported(version, f"this server serves {stateless.MODERN}"))
            self.reply(400, encode(refused), "application/json")


def main(handler: type[ModernShop] = ModernShop) -> int:
    parser = argparse.ArgumentParser(description="A gallery shop server over Streamable HTTP, in both eras.")
    parser.add_argument("--port", type=int, default=0, help="the port on 127.0.0.1 (default: any free one)")
    parser.add_argument("--modern-only", action="store_true", help=f"refuse legacy requests: {stateless.MODERN} only")
    args = parser.parse_args()
    try:
        httpd = HttpServer(("127.0.0.1", args.port), open_shop(shared=True).server_factory("http"), log=lambda _: None)
    except OSError as exc:
        print(f"cannot listen on 127.0.0.1:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    httpd.RequestHandlerClass = type(handler.__name__, (handler,), {"modern_only": args.modern_only})
    return serve_until_stopped(httpd, httpd.url)


if __name__ == "__main__":
    sys.exit(main())
