"""Stage 05's whole ``shop_server.py`` run as a process (cells ``test_read_only``, ``test_sdk_client``,
``test_mcp_lab_check``): calls with SQL in their arguments that must leave the database
byte-identical, the official SDK client in its default mode (2026-07-28 on the wire), and every
check of ``mcp-lab check`` in both eras.

    >>> stays_modern({"version": "2025-11-25"}, "legacy")  # the SDK's legacy mode may use the handshake
"""

from __future__ import annotations

import hashlib
from typing import Any

from reference.lifecycle import LATEST

from ...drive import (
    Server,
    expect_checks,
    initialize,
    notification,
    request,
    sdk_client,
)
from ...expect import Failure, same_json, show
from ...work import Work
from .. import public
from .call_tool import MODERN
from .tools import _reference


@public("05", "test_read_only", "your server: calls with SQL in their arguments leave the database byte-identical")
def read_only_cell(work: Work) -> None:
    check_read_only(work, work.program("shop_server"))


@public("05", "test_sdk_client", "the official MCP SDK's client (default mode: 2026-07-28) calls count_orders")
def sdk_client_cell(work: Work) -> None:
    check_sdk_client(work.program("shop_server"))


@public("05", "test_mcp_lab_check", "mcp-lab check on your server, both eras: no check fails")
def everything_cell(work: Work) -> None:
    check_everything(work.program("shop_server"))


def _digest(path: Any) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def check_read_only(work: Work, argv: list[str]) -> None:
    before = _digest(work.db)
    with Server(argv) as server:
        init = initialize(LATEST)
        server.expect(init, {"jsonrpc": "2.0", "id": init["id"]}, "initialize-result")
        server.send(notification("notifications/initialized"))
        for name, arguments in (
            ("count_orders", {"status": "paid'; DELETE FROM orders; --"}),
            ("list_orders", {"status": "x') OR 1=1; DROP TABLE orders; --"}),
            ("search_products", {"query": "'; UPDATE products SET stock = 0; --"}),
            ("get_order", {"order_id": 1}),
        ):
            sent = request("tools/call", params={"name": name, "arguments": arguments})
            reply = server.expect(sent, {"jsonrpc": "2.0", "id": sent["id"]}, "shop-read-only")
            # A proof of read-only needs tools that ran: get_order(1) must succeed.
            if name == "get_order" and "result" not in reply:
                raise Failure(
                    "shop-read-only",
                    "get_order(1) must run and answer with a result before read-only means anything",
                    sent=show(sent),
                    received=show(reply),
                )
    if _digest(work.db) != before:
        raise Failure("shop-read-only", "the shop's database file changed during the session")


def stays_modern(seen: dict[str, Any], mode: str) -> None:
    """The SDK's client in its default mode probed with server/discover: it must have stayed on 2026-07-28."""
    if mode == "auto" and seen.get("version") != MODERN:
        raise Failure(
            "discover-result",
            f"the SDK's client, in its default mode, fell back to the handshake ({seen.get('version')}): its "
            "server/discover probe did not get a DiscoverResult",
        )


def sdk_modern_rules(argv: list[str], steps: Any, what: str, mode: str) -> Any:
    """An SDK session (:func:`sdk_client`); the SDK's refusal of a 2026-07-28 result without resultType (its
    validation error names the field) is a failure of that rule, not of the call."""
    try:
        return sdk_client(argv, steps, "tools-call-result", what, mode=mode)
    except Failure as failure:
        if "resultType" not in failure.summary or failure.check == "modern-result-type":
            raise
        raise Failure(
            "modern-result-type",
            'the SDK client refused a 2026-07-28 result without "resultType": "complete"',
            received=failure.summary,
            stderr=failure.details.get("stderr", ""),
        ) from None


def check_sdk_client(argv: list[str]) -> None:
    async def steps(client: Any) -> dict[str, Any]:
        tools = await client.list_tools()
        result = await client.call_tool("count_orders", {"status": "shipped"})
        return {"version": client.protocol_version, "tools": tools, "result": result}

    what = "list the tools and call count_orders"
    seen = sdk_modern_rules(argv, steps, what, "auto")
    stays_modern(seen, "auto")
    names = sorted(t.name for t in seen["tools"].tools)
    if names != sorted(["count_orders", "list_orders", "get_order", "search_products"]):
        raise Failure("tools-list", "the SDK client sees other tools than the shop's four", received=show(names))
    want, _ = _reference("count_orders", {"status": "shipped"})
    result = seen["result"]
    if result.is_error or not same_json(result.structured_content, want):
        raise Failure(
            "structured-output",
            "the SDK client got another result for count_orders(shipped)",
            expected=show(want),
            received=show(result.model_dump(mode="json", exclude_none=True)),
        )


def check_everything(argv: list[str]) -> None:
    """Every check of mcp-lab check, both eras, on the learner's whole server: none may fail."""
    from grader.checker.catalogue import CHECKS, MODERN_CHECKS

    expect_checks(argv, [*CHECKS, *MODERN_CHECKS])
