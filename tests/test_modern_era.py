"""The reference server in both eras (MCP 2026-07-28 and the legacy handshake), over real pipes.

Modern (2026-07-28): no initialize; every request carries ``params._meta`` with its version and
capabilities; ``server/discover``; ``resultType`` on every result; caching hints on the six
cacheable results; removed methods are -32601; an unknown resource is -32602. Legacy: as before,
byte for byte (no ``resultType``). The era of a stdio connection is fixed by its first request
that chooses one; the other era's traffic gets an error that says so. The official SDK 2.3 client
speaks to the server in its default (auto) mode, which must go modern, and in legacy mode.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from typing import Any

import pytest
from conftest import ROOT, Wire, error_code

from reference import stateless

META = {
    stateless.PROTOCOL_VERSION: "2026-07-28",
    stateless.CLIENT_CAPABILITIES: {},
    stateless.CLIENT_INFO: {"name": "pytest", "version": "1"},
}
SERVER_INFO = {"name": "mcp-wire-lab-shop", "title": "MCP Wire Lab shop", "version": "0.1.0"}


def modern(params: dict[str, Any] | None = None, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """Request params with the 2026-07-28 envelope (``meta`` overrides or adds keys)."""
    return {**(params or {}), "_meta": {**META, **(meta or {})}}


def test_discover_says_versions_capabilities_identity_and_cache_hints(server: Wire) -> None:
    result = server.result("server/discover", modern())
    assert result["resultType"] == "complete"
    assert result["supportedVersions"] == ["2026-07-28"]
    assert set(result["capabilities"]) == {"tools", "resources", "prompts"}
    assert isinstance(result["instructions"], str) and "count_orders" in result["instructions"]
    assert isinstance(result["ttlMs"], int) and result["ttlMs"] >= 0
    assert result["cacheScope"] in ("public", "private")
    assert result["_meta"][stateless.SERVER_INFO] == SERVER_INFO


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("tools/list", {}),
        ("resources/list", {}),
        ("resources/templates/list", {}),
        ("prompts/list", {}),
        ("resources/read", {"uri": "shop://orders/1"}),
    ],
)
def test_cacheable_results_carry_result_type_ttl_and_scope(server: Wire, method: str, params: dict) -> None:
    result = server.result(method, modern(params))
    assert next(iter(result)) == "resultType" and result["resultType"] == "complete"
    assert isinstance(result["ttlMs"], int) and not isinstance(result["ttlMs"], bool) and result["ttlMs"] >= 0
    assert result["cacheScope"] in ("public", "private")
    assert result["_meta"][stateless.SERVER_INFO]["name"] == "mcp-wire-lab-shop"


def test_tool_results_are_complete_and_not_cacheable(server: Wire) -> None:
    result = server.result("tools/call", modern({"name": "count_orders", "arguments": {"status": "paid"}}))
    assert result["resultType"] == "complete"
    assert result["structuredContent"] == {"status": "paid", "count": 341}
    assert "ttlMs" not in result and "cacheScope" not in result
    failed = server.result("tools/call", modern({"name": "count_orders", "arguments": {"status": "lost"}}))
    assert failed["resultType"] == "complete" and failed["isError"] is True
    prompt = server.result("prompts/get", modern({"name": "summarise_order", "arguments": {"order_id": "1"}}))
    assert prompt["resultType"] == "complete" and prompt["messages"]


def test_tools_list_is_in_a_deterministic_order(start_server: Callable[..., Wire]) -> None:
    names = []
    for _ in range(2):
        wire = start_server()
        names.append([tool["name"] for tool in wire.result("tools/list", modern())["tools"]])
        wire.close()
    assert names[0] == names[1] == ["count_orders", "list_orders", "get_order", "search_products"]


@pytest.mark.parametrize(
    ("meta", "code", "says"),
    [
        ({}, -32602, "_meta"),
        ({stateless.PROTOCOL_VERSION: "2026-07-28"}, -32602, "clientCapabilities"),
        ({stateless.CLIENT_CAPABILITIES: {}}, -32602, "protocolVersion"),
        ({stateless.PROTOCOL_VERSION: 20260728, stateless.CLIENT_CAPABILITIES: {}}, -32602, "string"),
        ({stateless.PROTOCOL_VERSION: "2026-07-28", stateless.CLIENT_CAPABILITIES: []}, -32602, "object"),
        ({**META, stateless.CLIENT_INFO: "me"}, -32602, "clientInfo"),
    ],
)
def test_a_malformed_envelope_is_invalid_params(server: Wire, meta: dict, code: int, says: str) -> None:
    server.result("server/discover", modern())  # a modern connection: a request without _meta is malformed too
    error = server.error("tools/list", {"_meta": meta} if meta else {"_meta": None})
    assert error["code"] == code and says in error["message"], error
    assert server.result("tools/list", modern())["resultType"] == "complete"  # and it keeps serving


@pytest.mark.parametrize("version", ["2099-01-01", "2025-11-25", "2026-07-28 "])
def test_an_unsupported_version_is_32022_with_supported_and_requested(server: Wire, version: str) -> None:
    error = server.error("tools/list", modern(meta={stateless.PROTOCOL_VERSION: version}))
    assert error["code"] == -32022
    assert error["data"] == {"supported": ["2026-07-28"], "requested": version}


@pytest.mark.parametrize("method", sorted(stateless.REMOVED))
def test_methods_the_revision_removed_are_method_not_found(server: Wire, method: str) -> None:
    error = server.error(method, modern())
    assert error["code"] == -32601 and "2026-07-28" in error["message"]


def test_an_unknown_resource_is_invalid_params_in_modern_and_32002_in_legacy(
    start_server: Callable[..., Wire],
) -> None:
    wire = start_server()
    error = wire.error("resources/read", modern({"uri": "shop://orders/0"}))
    assert error["code"] == -32602 and error["data"] == {"uri": "shop://orders/0"}
    legacy = start_server()
    legacy.initialize()
    error = legacy.error("resources/read", {"uri": "shop://orders/0"})
    assert error["code"] == -32002 and error["data"] == {"uri": "shop://orders/0"}


def test_legacy_results_carry_no_modern_fields(server: Wire) -> None:
    assert "resultType" not in server.initialize()
    assert server.result("ping") == {}
    for method in ("tools/list", "resources/list", "prompts/list"):
        result = server.result(method)
        assert not {"resultType", "ttlMs", "cacheScope", "_meta"} & set(result), (method, result)
    call = server.call_tool("count_orders", {"status": "paid"})
    assert "resultType" not in call


def test_the_first_request_fixes_a_modern_connection(server: Wire) -> None:
    server.result("server/discover", modern())
    error = server.error("tools/list")  # no _meta on a modern connection
    assert error["code"] == -32602 and "_meta" in error["message"]
    error = server.error(
        "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}
    )
    # What mcp 2.x's client takes as "stay modern" when its probe timed out but still arrived.
    assert error["code"] == -32022 and error["data"]["supported"] == ["2026-07-28"]
    assert server.result("tools/list", modern())["resultType"] == "complete"


def test_initialize_fixes_a_legacy_connection(server: Wire) -> None:
    server.initialize()
    error = server.error("tools/list", modern())
    assert error["code"] == -32600 and "initialized" in error["message"]
    error = server.error("server/discover", modern())
    assert error["code"] == -32600
    error = server.error("server/discover")
    assert error["code"] == -32601 and "2026-07-28" in error["message"]
    assert "tools" in server.result("tools/list")


def test_before_any_era_a_plain_request_is_served_the_old_way(server: Wire) -> None:
    assert server.result("ping") == {}
    assert "resultType" not in server.result("tools/list")
    error = server.error("server/discover")  # a 2026-07-28 method without its envelope
    assert error["code"] == -32602 and "_meta" in error["message"]
    assert server.result("server/discover", modern())["resultType"] == "complete"


def test_a_modern_client_is_named_in_the_write_audit(start_server: Callable[..., Wire], tmp_path: Any) -> None:
    from conftest import run_cli

    copy = tmp_path / "shop.db"
    assert run_cli(["db", "build", str(copy)]).returncode == 0
    wire = start_server([sys.executable, "-m", "reference.server", "--db", str(copy), "--allow-writes"])
    note = {"name": "add_order_note", "arguments": {"order_id": 1, "note": "modern"}}
    result = wire.result("tools/call", modern(note, {stateless.CLIENT_INFO: {"name": "m2", "version": "9"}}))
    assert result["resultType"] == "complete", result
    wire.close()
    audit = run_cli(["audit", "--db", str(copy)]).stdout.decode()
    assert '"m2"' in audit, audit


def test_notifications_stay_silent_in_the_modern_era(server: Wire) -> None:
    server.result("server/discover", modern())
    server.notify("notifications/cancelled", {"requestId": 99, "_meta": META})
    server.notify("notifications/initialized")
    assert server.result("tools/list", modern())["resultType"] == "complete"
    assert len(server.lines) == 2


# -- the official SDK 2.3 client: code no one here wrote ------------------------------------------


async def _sdk_session(mode: str, frames: list[str]) -> dict[str, Any]:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "reference.server"], cwd=str(ROOT))
    async with Client(params, mode=mode, read_timeout_seconds=30) as client:
        tools = await client.list_tools()
        call = await client.call_tool("count_orders", {"status": "paid"})
        resources = await client.list_resources()
        templates = await client.list_resource_templates()
        read = await client.read_resource("shop://orders/1")
        prompts = await client.list_prompts()
        prompt = await client.get_prompt("summarise_order", {"order_id": "1"})
        try:
            await client.read_resource("shop://orders/0")
            missing = None
        except Exception as exc:  # the SDK's MCPError
            missing = getattr(getattr(exc, "error", None), "code", None)
        return {
            "tools": [tool.name for tool in tools.tools],
            "count": call.structured_content,
            "resources": len(resources.resources),
            "templates": len(templates.resource_templates),
            "read": str(read.contents[0].uri),
            "prompts": len(prompts.prompts),
            "prompt": len(prompt.messages),
            "missing": missing,
        }


@pytest.mark.parametrize(("mode", "missing"), [("auto", -32602), ("legacy", -32002)])
def test_the_official_sdk_client_in_both_modes(mode: str, missing: int) -> None:
    got = asyncio.run(asyncio.wait_for(_sdk_session(mode, []), 120))
    assert got == {
        "tools": ["count_orders", "list_orders", "get_order", "search_products"],
        "count": {"status": "paid", "count": 341},
        "resources": 1,
        "templates": 2,
        "read": "shop://orders/1",
        "prompts": 2,
        "prompt": 2,
        "missing": missing,
    }


def test_the_sdk_client_in_auto_mode_speaks_modern_on_the_wire(tmp_path: Any) -> None:
    """The wire, recorded by a tee around the server: server/discover first, then enveloped requests."""
    log = tmp_path / "wire.log"
    tee = tmp_path / "tee.py"
    tee.write_text(
        "import subprocess, sys, threading\n"
        f"log = open({str(log)!r}, 'ab', buffering=0)\n"
        "child = subprocess.Popen([sys.executable, '-m', 'reference.server'], stdin=subprocess.PIPE,"
        " stdout=subprocess.PIPE)\n"
        "def back():\n"
        "    for line in child.stdout:\n"
        "        log.write(b'<- ' + line); sys.stdout.buffer.write(line); sys.stdout.buffer.flush()\n"
        "threading.Thread(target=back, daemon=True).start()\n"
        "for line in sys.stdin.buffer:\n"
        "    log.write(b'-> ' + line); child.stdin.write(line); child.stdin.flush()\n"
        "child.stdin.close(); child.wait(10)\n"
    )

    async def session() -> None:
        from mcp import Client, StdioServerParameters

        params = StdioServerParameters(command=sys.executable, args=[str(tee)], cwd=str(ROOT))
        async with Client(params, read_timeout_seconds=30) as client:
            await client.list_tools()
            await client.call_tool("count_orders", {"status": "paid"})

    asyncio.run(asyncio.wait_for(session(), 120))
    import json

    sent = [json.loads(line[3:]) for line in log.read_bytes().splitlines() if line.startswith(b"-> ")]
    requests = [message for message in sent if "id" in message]
    assert [message["method"] for message in requests][:3] == ["server/discover", "tools/list", "tools/call"]
    assert all(message["params"]["_meta"][stateless.PROTOCOL_VERSION] == "2026-07-28" for message in requests)
    assert not any(message.get("method") == "initialize" for message in sent)
    received = [json.loads(line[3:]) for line in log.read_bytes().splitlines() if line.startswith(b"<- ")]
    assert all(reply["result"]["resultType"] == "complete" for reply in received), received
    assert error_code(received[0]) is None
