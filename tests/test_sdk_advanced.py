"""The official SDK client (PyPI ``mcp`` 2.x) on the advanced track: over Streamable HTTP, and on stdio.

1. ``mcp-lab serve --http 127.0.0.1:0 --auth-token T --allow-writes --db COPY`` as a real child
   process; the SDK's ``streamable_http_client`` with an ``httpx2.AsyncClient`` that sends
   ``Authorization: Bearer T`` drives it: initialize, tools (list and call), resources (list,
   templates, read), prompts (list, get), one write tool, and the SDK's own DELETE at the end.
   Then ``mcp-lab audit --db COPY`` shows the write, with the client name the SDK sent.
2. The SDK's stdio client reads the same resources and prompts from ``python -m reference.server``.

Each session is bounded by ``anyio.fail_after`` and the SDK's read timeout.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types
import pytest
from conftest import ROOT, ShopOracle, module_argv, run_cli
from http_support import HttpServer
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from reference import database

pytestmark = pytest.mark.timeout(120)
TOKEN = "sdk-token-42"
CLIENT = mcp_types.Implementation(name="sdk-http-test", version="2.3-test")


async def resources_and_prompts(client: ClientSession, seen: dict[str, Any]) -> None:
    """What both sessions ask: every resource and prompt method, and the errors."""
    seen["resources"] = await client.list_resources()
    seen["templates"] = await client.list_resource_templates()
    seen["schema"] = await client.read_resource("shop://schema")
    seen["order"] = await client.read_resource("shop://orders/11")
    seen["product"] = await client.read_resource("shop://products/3")
    try:
        await client.read_resource("shop://orders/0")
    except MCPError as exc:
        seen["not_found"] = exc
    seen["prompts"] = await client.list_prompts()
    seen["prompt"] = await client.get_prompt("summarise_order", {"order_id": "11"})
    seen["report"] = await client.get_prompt("status_report")
    try:
        await client.get_prompt("summarise_order", {})
    except MCPError as exc:
        seen["bad_prompt"] = exc


def check_resources_and_prompts(seen: dict[str, Any], oracle: ShopOracle) -> None:
    assert [str(r.uri) for r in seen["resources"].resources] == ["shop://schema"]
    assert [t.uri_template for t in seen["templates"].resource_templates] == [
        "shop://orders/{order_id}",
        "shop://products/{product_id}",
    ]
    (schema,) = seen["schema"].contents
    assert isinstance(schema, mcp_types.TextResourceContents) and schema.mime_type == "application/sql"
    assert "CREATE TABLE orders" in schema.text
    (order,) = seen["order"].contents
    assert json.loads(order.text) == oracle.get_order(11)
    (product,) = seen["product"].contents
    assert json.loads(product.text)["id"] == 3
    assert seen["not_found"].code == -32002 and seen["not_found"].error.data == {"uri": "shop://orders/0"}
    assert [p.name for p in seen["prompts"].prompts] == ["summarise_order", "status_report"]
    text, embedded = seen["prompt"].messages
    assert isinstance(text.content, mcp_types.TextContent) and "order 11" in text.content.text
    assert isinstance(embedded.content, mcp_types.EmbeddedResource)
    assert str(embedded.content.resource.uri) == "shop://orders/11"
    assert json.loads(seen["report"].messages[1].content.text)["paid"] == oracle.count_orders("paid")["count"]
    assert seen["bad_prompt"].code == -32602


def test_the_sdk_drives_the_http_server_with_a_token_and_a_write(tmp_path: Path, oracle: ShopOracle) -> None:
    copy = database.build(tmp_path / "copy.db")
    server = HttpServer(["--auth-token", TOKEN, "--allow-writes", "--db", str(copy)])
    seen: dict[str, Any] = {}

    async def session() -> None:
        with anyio.fail_after(60):
            headers = {"Authorization": f"Bearer {TOKEN}"}
            async with (
                httpx2.AsyncClient(headers=headers, timeout=30) as http,
                streamable_http_client(server.url, http_client=http) as (read, write),
                ClientSession(read, write, read_timeout_seconds=15, client_info=CLIENT) as client,
            ):
                seen["init"] = await client.initialize()
                seen["tools"] = await client.list_tools()
                seen["count"] = await client.call_tool("count_orders", {"status": "paid"})
                await resources_and_prompts(client, seen)
                seen["cancel"] = await client.call_tool("cancel_order", {"order_id": 11, "reason": "sdk test"})
                seen["refused"] = await client.call_tool("cancel_order", {"order_id": 1, "reason": "too late"})

    try:
        anyio.run(session)
    finally:
        code = server.stop()
    stderr = server.stderr()
    assert code == 0 and "Traceback" not in stderr, stderr

    init = seen["init"]
    assert init.protocol_version == "2025-11-25"
    assert init.capabilities.tools and init.capabilities.resources and init.capabilities.prompts
    assert "cancel_order" in init.instructions
    tools = {tool.name: tool for tool in seen["tools"].tools}
    assert list(tools)[-2:] == ["cancel_order", "add_order_note"]
    assert tools["cancel_order"].annotations.destructive_hint is True
    assert seen["count"].structured_content == oracle.count_orders("paid")
    check_resources_and_prompts(seen, oracle)
    assert seen["cancel"].structured_content == {
        "order_id": 11,
        "status": "cancelled",
        "previous_status": "paid",
        "rows_changed": 2,
    }
    assert seen["refused"].is_error is True  # order 1 is shipped
    assert "initialize: client sdk-http-test" in stderr
    assert "ended by the client (DELETE)" in stderr, "the SDK ends its session with a DELETE"

    printed = run_cli(["audit", "--db", str(copy)])
    assert printed.returncode == 0, printed.stderr
    entries = [json.loads(line) for line in printed.stdout.decode().splitlines()]
    assert [(e["tool"], e["outcome"], e["rows_changed"]) for e in entries] == [
        ("cancel_order", "ok", 2),
        ("cancel_order", "rejected", 0),
    ]
    for entry in entries:
        assert entry["client"] == {"name": "sdk-http-test", "version": "2.3-test"}
        assert entry["transport"] == "http"
    assert entries[0]["arguments"] == {"order_id": 11, "reason": "sdk test"}


def test_the_sdk_stdio_session_reads_resources_and_prompts(shop_db: Path, oracle: ShopOracle, tmp_path: Path) -> None:
    argv = module_argv(shop_db)
    seen: dict[str, Any] = {}

    async def session() -> None:
        parameters = StdioServerParameters(command=argv[0], args=argv[1:], env={}, cwd=str(ROOT))
        with anyio.fail_after(60), open(tmp_path / "stderr.txt", "w", encoding="utf-8") as errlog:
            async with (
                stdio_client(parameters, errlog=errlog) as (read, write),
                ClientSession(read, write, read_timeout_seconds=15) as client,
            ):
                seen["init"] = await client.initialize()
                await resources_and_prompts(client, seen)

    anyio.run(session)
    caps = seen["init"].capabilities
    assert caps.resources is not None and caps.resources.subscribe is False and caps.prompts is not None
    check_resources_and_prompts(seen, oracle)
    assert "Traceback" not in (tmp_path / "stderr.txt").read_text()
