"""Stage 12's whole server (cells ``test_mcp_lab_check`` and ``test_sdk_client``): calls answered as
the reference answers them, ``mcp-lab check --url`` with the token, and the official SDK's
Streamable HTTP client in its 2026-07-28 and its legacy mode.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from reference.lifecycle import LATEST

from ...drive import REPLY_TIMEOUT, run_async_bounded
from ...expect import Failure, show
from ...http_bridge import HttpBridge
from ...work import Work
from .. import public
from ..stage05.capstone import SHOP_TOOLS, Call, check_call_result
from .client import TOKEN, VERSION, Client, message, running
from .modern import MODERN, ModernClient, modern_message


def check_session_calls(
    bridge: HttpBridge, token: str, version: str, calls: Sequence[Call], ids: Sequence[Any]
) -> None:
    """A session on ``version``: each call answered as the reference answers it (before the checker:
    a server that never answers a tools/call fails here in seconds)."""
    client = Client(bridge, token)
    client.initialize("http-content-type", version=version, id=ids[0])
    for (tool, arguments), id in zip(calls, ids[1:], strict=False):
        sent = message("tools/call", id, {"name": tool, "arguments": arguments})
        result = client.ask(sent, "tools-call-result").get("result")
        if not isinstance(result, dict):
            raise Failure("tools-call-result", f"{tool} answers with a result", sent=show(sent), received=show(result))
        check_call_result(result, (tool, arguments), version, sent)


def check_whole_server(bridge: HttpBridge, token: str) -> None:
    """``mcp-lab check --url URL --header 'Authorization: Bearer TOKEN'``: no check fails. A failure
    names the first check that fails on its own, with its evidence."""
    from grader.checker.check import run_http_check

    from ..stage05.capstone import _evidence

    report = run_http_check(bridge.url, {"Authorization": f"Bearer {token}"}, timeout=REPLY_TIMEOUT, call_timeout=5.0)
    failing = [r for r in report.results if r.status == "fail"]
    if not failing:
        return
    # The transport's own rules first (this stage's), then the first failure that is not another's consequence.
    roots = [r for r in failing if not r.caused_by] or failing
    first = next((r for r in roots if r.id.startswith("http-")), roots[0])
    shown = {k: _evidence(k, v) for k, v in first.evidence.items() if k not in ("rule", "keyword", "source", "fix")}
    others = [r.id for r in failing if r is not first]
    if others:
        shown["hint"] = f"failing too: {', '.join(others)} (mcp-lab check --url URL shows each)"
    raise Failure(first.id, f"mcp-lab check --url: {first.summary}", **shown, stderr=bridge.stderr_tail())


SDK_TIMEOUT = 15.0  # seconds for a whole SDK session over HTTP (about one on the shop)


def check_sdk(bridge: HttpBridge, token: str, calls: Sequence[Call], mode: str = "auto") -> None:
    """The official SDK's Streamable HTTP client (``Client``), with the token, in ``mode``: "auto" speaks
    2026-07-28 (server/discover, then a POST per request), "legacy" the initialize handshake and a
    session. It lists the tools and makes ``calls``; in auto mode it must not have fallen back."""

    async def session() -> dict[str, Any]:
        import anyio
        import httpx2
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        versions: list[str] = []

        async def sent(request: Any) -> None:
            versions.append(request.headers.get(VERSION, ""))

        headers = {"Authorization": f"Bearer {token}"}
        with anyio.fail_after(SDK_TIMEOUT):
            async with httpx2.AsyncClient(headers=headers, timeout=5, event_hooks={"request": [sent]}) as http:
                transport = streamable_http_client(bridge.url, http_client=http)
                async with Client(transport, mode=mode, read_timeout_seconds=5) as client:  # type: ignore[arg-type]
                    tools = await client.list_tools()
                    results = [await client.call_tool(tool, args) for tool, args in calls]
        return {"tools": tools, "results": results, "versions": versions}

    done, box = run_async_bounded(session, SDK_TIMEOUT + 5)
    if not done:
        stub = bridge.not_written()
        if stub is not None:
            raise Failure("http-client", f"{stub} is not written yet (it raises NotImplementedError)")
        detail = _sdk_error(box) if box else "no answer in time"
        raise Failure(
            "http-client",
            f"the official MCP SDK's Streamable HTTP client could not use your server: {detail}",
            stderr=bridge.stderr_tail(),
        )
    if mode == "auto" and MODERN not in box["versions"][-1:]:
        # Why it fell back, in the words of the rule broken: the discover it sent, sent again by us.
        ModernClient(bridge, token).served(modern_message("server/discover", "sdk-discover"), "http-modern-status")
        raise Failure(
            "http-modern-status",
            f"the SDK client (mode='auto') fell back to the initialize handshake: your server did not serve "
            f"its {MODERN} server/discover",
            received=f"MCP-Protocol-Version of its requests: {', '.join(v or '-' for v in box['versions'][:8])}",
            stderr=bridge.stderr_tail(),
        )
    names = sorted(t.name for t in box["tools"].tools)
    if names != sorted(SHOP_TOOLS):
        raise Failure("tools-list", "the SDK client sees other tools than the shop's four", received=show(names))
    for (tool, arguments), result in zip(calls, box["results"], strict=True):
        received = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        version = MODERN if mode == "auto" else LATEST
        check_call_result(
            received, (tool, arguments), version, f"(the SDK client, mode={mode!r}) call_tool{(tool, arguments)}"
        )


def _sdk_error(error: BaseException) -> str:
    """The innermost of an exception group (anyio's task groups wrap the SDK's errors)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return f"{type(error).__name__}: {error}"[:400]


@public("12", "test_mcp_lab_check", "mcp-lab check --url on your server, with its token: no check fails")
def whole_cell(work: Work) -> None:
    with running(work, TOKEN) as bridge:
        check_session_calls(bridge, TOKEN, LATEST, [("count_orders", {})], [1, 2])
        check_whole_server(bridge, TOKEN)


@public("12", "test_sdk_client", "the official MCP SDK's HTTP client, with the token, in 2026-07-28 and legacy mode")
def sdk_cell(work: Work) -> None:
    with running(work, TOKEN) as bridge:
        check_sdk(bridge, TOKEN, [("count_orders", {"status": "shipped"}), ("get_order", {"order_id": 7})], "auto")
        check_sdk(bridge, TOKEN, [("count_orders", {"status": "paid"})], "legacy")
