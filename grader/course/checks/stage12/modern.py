"""Stage 12's 2026-07-28 transport (cell ``test_post``): one POST per message, no session; 202, 404,
400 by the table; GET and DELETE answered 405. A 2026-07-28 client sends its routing headers:

    >>> sent = modern_message("tools/call", 1, {"name": "count_orders"})
    >>> routing(sent)
    {'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/call', 'Mcp-Name': 'count_orders'}
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

from grader.checker.http_probe import ACCEPT, SSE_TYPE, Exchange

from ...expect import Failure, show
from ...work import Work
from .. import public
from ..stage05.capstone import Call, check_call_result
from .client import SESSION, VERSION, Client, expect_202, failure, message, reply_to, running

MODERN = "2026-07-28"


METHOD_HEADER, NAME_HEADER = "Mcp-Method", "Mcp-Name"


NAMED_BY = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


HEADER_MISMATCH, METHOD_NOT_FOUND, UNSUPPORTED = -32020, -32601, -32022


def modern_message(method: str, id: Any, params: dict[str, Any] | None = None, version: str = MODERN) -> dict[str, Any]:
    """A 2026-07-28 request: its version and capabilities in ``params._meta``."""
    meta = {f"{PREFIX}protocolVersion": version, f"{PREFIX}clientCapabilities": {}}
    meta[f"{PREFIX}clientInfo"] = {"name": "course", "version": "1.0"}
    return message(method, id, {**(params or {}), "_meta": meta})


PREFIX = "io.modelcontextprotocol/"


def routing(sent: dict[str, Any]) -> dict[str, str]:
    """The request metadata headers a 2026-07-28 client sends with ``sent``."""
    params = sent.get("params") or {}
    found = {VERSION: params.get("_meta", {}).get(f"{PREFIX}protocolVersion", MODERN), METHOD_HEADER: sent["method"]}
    target = params.get(NAMED_BY.get(sent["method"], ""))
    if isinstance(target, str):
        found[NAME_HEADER] = target if target.isascii() and target.isprintable() else _base64(target)
    return found


def _base64(value: str) -> str:
    return "=?base64?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="


class ModernClient(Client):
    """A 2026-07-28 client: every request a POST of its own, enveloped, with its routing headers."""

    def modern(self, sent: dict[str, Any], check: str, **changes: str | None) -> Exchange:
        return self.post(sent, check, **{**routing(sent), **changes})

    def served(self, sent: dict[str, Any], check: str, **changes: str | None) -> dict[str, Any]:
        """A request that must be served: 200, no session minted, and its response."""
        got = self.modern(sent, check, **changes)
        if got.status != 200:
            raise self.refused(got, sent, check)
        if SESSION.lower() in got.headers:
            raise failure(
                "http-modern-no-session",
                f"a {MODERN} response carries {SESSION}: this revision has no session (mint none, echo none)",
                got,
                f"no {SESSION} header",
            )
        return reply_to(got, sent, "http-modern-status")

    def refused(self, got: Exchange, sent: dict[str, Any], check: str) -> Failure:
        """Why a request that must be served was not: a session asked for, or the wrong status."""
        replies = [m for m in got.messages if isinstance(m, dict) and "error" in m]
        if got.status in (400, 404) and replies and replies[0].get("id") is None:
            return failure(
                "http-modern-no-session",
                f"a {MODERN} request was refused as an older client's (no session): this revision has no session",
                got,
                "HTTP/1.1 200 OK, the response in the body",
                hint="route a POST whose MCP-Protocol-Version (or _meta) says 2026-07-28 to post_modern, before any "
                "session is looked for",
            )
        return failure(
            check, f"{sent['method']} ({MODERN}) must be answered 200 with its response", got, "HTTP/1.1 200 OK"
        )


def check_modern_post(work: Work, ids: Sequence[Any], calls: Sequence[Call], stale: str) -> None:
    """2026-07-28 requests served each in a POST of its own, with no session (a stale id ignored, none
    minted); a notification 202; an unknown method 404, an unsupported version and a broken body 400;
    GET and DELETE 405."""
    with running(work) as bridge:
        client = ModernClient(bridge)
        discover = modern_message("server/discover", ids[0])
        result = client.served(discover, "http-modern-status").get("result")
        if not isinstance(result, dict) or result.get("resultType") != "complete":
            raise Failure(
                "http-modern-result", "server/discover answers with the dispatcher's result", received=show(result)
            )
        for n, (tool, arguments) in enumerate(calls):
            sent = modern_message("tools/call", f"{ids[1]}-{n}", {"name": tool, "arguments": arguments})
            result = client.served(sent, "http-modern-status", Session=stale if n == 0 else None).get("result")
            if not isinstance(result, dict):
                raise Failure(
                    "tools-call-result", f"{tool} answers with a result", sent=show(sent), received=show(result)
                )
            check_call_result(result, (tool, arguments), MODERN, sent)
        listing = modern_message("tools/list", ids[1])
        client.served(listing, "http-modern-status", Session=stale)
        got = client.modern(modern_message("mcp-lab/no-such-method", ids[0]), "http-modern-status")
        if got.status != 404 or error_of(got) != METHOD_NOT_FOUND:
            raise failure("http-modern-status", f"an unknown method ({MODERN}) gets 404 with -32601", got,
                          "HTTP/1.1 404 Not Found, error -32601")  # fmt: skip
        got = client.modern(modern_message("server/discover", ids[1], version="2099-01-01"), "http-modern-status")
        if got.status != 400 or error_of(got) != UNSUPPORTED:
            raise failure("http-modern-status", "a version this server does not serve gets 400 with -32022", got,
                          "HTTP/1.1 400 Bad Request, error -32022 with the supported versions")  # fmt: skip
        note = {"jsonrpc": "2.0", "method": "notifications/mcp-lab", "params": {"_meta": discover["params"]["_meta"]}}
        expect_202(client.post(note, "http-notification-202", **{VERSION: MODERN, METHOD_HEADER: note["method"]}))
        got = client.http(
            "POST", b'{"jsonrpc": "2.0", "id": 9, "method": ', client.headers(Version=MODERN), "http-post"
        )
        if got.status != 400:
            raise failure("http-post", "a body that is not JSON gets 400 Bad Request", got, "HTTP/1.1 400 Bad Request")
        for verb in ("GET", "DELETE"):
            heads = client.headers(**{"Content-Type": None, "Accept": SSE_TYPE if verb == "GET" else ACCEPT})
            got = client.http(verb, None, {**heads, VERSION: MODERN}, "http-modern-status")
            if got.status != 405 or "allow" not in got.headers:
                stream = " (a stream: 2026-07-28 has none)" if got.is_sse else ""
                raise failure("http-modern-status", f"{verb} with {VERSION}: {MODERN} gets 405 and Allow{stream}",
                              got, "HTTP/1.1 405 Method Not Allowed, Allow: POST")  # fmt: skip


def error_of(got: Exchange) -> Any:
    errors = [m.get("error") for m in got.messages if isinstance(m, dict) and isinstance(m.get("error"), dict)]
    return errors[0].get("code") if errors else None


@public("12", "test_post", "2026-07-28: a POST per message, no session; 202, 404, 400 by the table; GET, DELETE 405")
def post_cell(work: Work) -> None:
    check_modern_post(work, [1, "7"], [("count_orders", {"status": "paid"})], "0123456789abcdef0123456789abcdef")
