"""Interoperability with the official MCP Python SDK (PyPI ``mcp`` 2.x) as an independent judge.

1. The SDK's own stdio client (``stdio_client`` + ``ClientSession``) drives the reference
   server: initialise, ping, list tools, call every tool (answers compared with SQL on the
   database), and gets -32602 for an unknown tool. The SDK client validates every successful
   result's ``structuredContent`` against the tool's ``outputSchema`` itself (and raises if it is
   missing or does not conform); a gallery server with a wrong one shows that it does.
2. Every reply the reference sends in a scripted session is validated against the SDK's pydantic
   message types (``mcp_types``), the generic ones and the 2025-11-25 wire models generated
   from the specification's schema, and must dump back to the same JSON (no unknown fields).
   ``mcp_types`` 2.3 has no 2025-06-18 wire models; for the structured results the 2025-11-25
   ones are the same shape. Every ``structuredContent`` is also checked against its tool's
   ``outputSchema`` with ``jsonschema`` (what the SDK 1.x client does too), and sessions on
   2025-03-26 and 2024-11-05 must carry neither ``outputSchema`` nor ``structuredContent``.

The SDK client is lenient (it skips non-JSON lines); hygiene is tested in test_server_e2e.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import mcp_types
import pytest
from conftest import LATEST, REVISIONS, ROOT, ShopOracle, Wire, module_argv, script_argv
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError
from mcp_types import _v2025_11_25 as wire_2025_11_25  # generated from schema/2025-11-25.json
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION
from pydantic import BaseModel

pytestmark = pytest.mark.timeout(120)


def parameters(argv: list[str]) -> StdioServerParameters:
    # The SDK passes on only an allow-list of variables: anything else must be given here.
    return StdioServerParameters(command=argv[0], args=argv[1:], env={}, cwd=str(ROOT))


def run_sdk_session(argv: list[str], errlog_path: Path, oracle: ShopOracle) -> dict[str, Any]:
    """Drive the server with the SDK client; return what it saw for the assertions."""
    seen: dict[str, Any] = {}

    async def session() -> None:
        with anyio.fail_after(60), open(errlog_path, "w", encoding="utf-8") as errlog:
            async with (
                stdio_client(parameters(argv), errlog=errlog) as (read, write),
                ClientSession(read, write, read_timeout_seconds=15) as client,
            ):
                seen["init"] = await client.initialize()
                seen["ping"] = await client.send_ping()
                seen["tools"] = await client.list_tools()
                calls: list[tuple[str, dict[str, Any], Any]] = []
                for status in [None, *oracle.statuses()]:
                    args = {} if status is None else {"status": status}
                    calls.append(("count_orders", args, oracle.count_orders(status)))
                calls.append(("list_orders", {}, oracle.list_orders()))
                calls.append(("list_orders", {"status": "pending", "limit": 5}, oracle.list_orders("pending", limit=5)))
                low, high = oracle.order_id_range()
                calls.extend(("get_order", {"order_id": i}, oracle.get_order(i)) for i in (low, high))
                calls.append(("search_products", {"query": "mug"}, oracle.search_products("mug")))
                calls.append(
                    ("search_products", {"query": "\u685c", "limit": 50}, oracle.search_products("\u685c", 50))
                )
                seen["answers"] = []
                for name, args, expected in calls:
                    result = await client.call_tool(name, args)
                    seen["answers"].append((name, args, result, expected))
                seen["unknown_status"] = await client.call_tool("count_orders", {"status": "lost"})
                seen["bad_arguments"] = await client.call_tool("get_order", {"order_id": "one"})
                try:
                    await client.call_tool("no_such_tool", {})
                except MCPError as exc:
                    seen["unknown_tool"] = exc
                seen["still_alive"] = await client.send_ping()

    anyio.run(session)
    return seen


@pytest.mark.parametrize("launcher", ["module", "console-script"])
def test_sdk_client_drives_the_reference(shop_db: Path, oracle: ShopOracle, tmp_path: Path, launcher: str) -> None:
    argv = module_argv(shop_db) if launcher == "module" else script_argv(shop_db)
    seen = run_sdk_session(argv, tmp_path / "stderr.txt", oracle)

    init = seen["init"]
    assert init.protocol_version == LATEST_HANDSHAKE_VERSION  # the SDK's latest, supported: echoed
    assert init.server_info.name and init.server_info.version
    assert init.capabilities.tools is not None
    assert isinstance(seen["ping"], mcp_types.EmptyResult)

    tools = {tool.name: tool for tool in seen["tools"].tools}
    assert {"count_orders", "list_orders", "get_order", "search_products"} <= set(tools)
    for tool in tools.values():
        assert tool.input_schema["type"] == "object"
        assert tool.description
        assert tool.output_schema is not None and tool.output_schema["type"] == "object", tool.name

    assert {name for name, *_ in seen["answers"]} == set(tools), "every tool is called"
    for name, args, result, expected in seen["answers"]:
        assert result.is_error is False, (name, args)
        (item,) = result.content
        assert isinstance(item, mcp_types.TextContent)
        assert json.loads(item.text) == expected, (name, args)
        # The SDK client accepted it after validating it against the outputSchema.
        assert result.structured_content == json.loads(item.text), (name, args)

    unknown_status = seen["unknown_status"]
    assert unknown_status.is_error is True
    assert unknown_status.structured_content is None  # an error result carries text only
    for status in oracle.statuses():
        assert status in unknown_status.content[0].text
    assert seen["bad_arguments"].is_error is True  # 2025-11-25: a tool execution error
    assert seen["bad_arguments"].structured_content is None

    error = seen.get("unknown_tool")
    assert isinstance(error, MCPError), "an unknown tool must be a protocol error"
    assert error.code == -32602
    assert isinstance(seen["still_alive"], mcp_types.EmptyResult)
    assert "Traceback" not in (tmp_path / "stderr.txt").read_text()


@pytest.mark.parametrize(
    ("exhibit", "message"),
    [
        ("structured_content_missing", "has an output schema but did not return structured content"),
        ("structured_content_wrong_type", "Invalid structured content returned by tool count_orders"),
    ],
)
def test_the_sdk_client_refuses_structured_content_that_breaks_the_schema(
    exhibit: str, message: str, tmp_path: Path
) -> None:
    """The SDK client's own output validation is live: the reference passes it, these do not."""
    from grader import gallery

    caught: list[BaseException] = []

    async def session() -> None:
        with anyio.fail_after(60), open(tmp_path / "stderr.txt", "w", encoding="utf-8") as errlog:
            async with (
                stdio_client(parameters(gallery.command(exhibit)), errlog=errlog) as (read, write),
                ClientSession(read, write, read_timeout_seconds=15) as client,
            ):
                await client.initialize()
                await client.list_tools()
                if exhibit == "structured_content_wrong_type":  # only the count is wrong
                    ok = await client.call_tool("search_products", {"query": "mug"})
                    assert ok.structured_content is not None and ok.structured_content["query"] == "mug"
                try:
                    await client.call_tool("count_orders", {})
                except RuntimeError as exc:
                    caught.append(exc)

    anyio.run(session)
    assert len(caught) == 1 and message in str(caught[0]), caught


def test_the_sdk_speaks_a_revision_the_reference_supports() -> None:
    assert LATEST_HANDSHAKE_VERSION in REVISIONS
    assert set(REVISIONS) <= set(HANDSHAKE_PROTOCOL_VERSIONS)


# -- every reply against the SDK's message types ------------------------------------------------------
GENERIC_RESULTS: dict[str, type[BaseModel]] = {
    "initialize": mcp_types.InitializeResult,
    "ping": mcp_types.EmptyResult,
    "tools/list": mcp_types.ListToolsResult,
    "tools/call": mcp_types.CallToolResult,
    "resources/list": mcp_types.ListResourcesResult,
    "resources/templates/list": mcp_types.ListResourceTemplatesResult,
    "resources/read": mcp_types.ReadResourceResult,
    "prompts/list": mcp_types.ListPromptsResult,
    "prompts/get": mcp_types.GetPromptResult,
}
WIRE_RESULTS: dict[str, type[BaseModel]] = {
    "initialize": wire_2025_11_25.InitializeResult,
    "ping": wire_2025_11_25.Result,
    "tools/list": wire_2025_11_25.ListToolsResult,
    "tools/call": wire_2025_11_25.CallToolResult,
    "resources/list": wire_2025_11_25.ListResourcesResult,
    "resources/templates/list": wire_2025_11_25.ListResourceTemplatesResult,
    "resources/read": wire_2025_11_25.ReadResourceResult,
    "prompts/list": wire_2025_11_25.ListPromptsResult,
    "prompts/get": wire_2025_11_25.GetPromptResult,
}


def scripted_exchanges(wire: Wire, version: str) -> list[tuple[dict[str, Any] | None, bytes]]:
    """(request or None for a bad line, raw reply line) for one session at ``version``."""
    exchanges: list[tuple[dict[str, Any] | None, bytes]] = []
    next_id = iter(range(10_000))

    def ask(method: str, params: dict[str, Any] | None = None, request_id: Any = None) -> None:
        request: dict[str, Any] = {"jsonrpc": "2.0", "id": next(next_id) if request_id is None else request_id}
        request["method"] = method
        if params is not None:
            request["params"] = params
        wire.send(request)
        wire.recv()
        exchanges.append((request, wire.lines[-1]))

    def bad(raw: bytes) -> None:
        wire.send_raw(raw + b"\n")
        wire.recv()
        exchanges.append((None, wire.lines[-1]))

    ask("ping", request_id="before-initialize")
    ask("initialize", {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}})
    wire.notify("notifications/initialized")
    ask("ping", request_id=0)
    ask("tools/list")
    ask("tools/call", {"name": "count_orders", "arguments": {}})
    ask("tools/call", {"name": "count_orders", "arguments": {"status": "paid"}})
    ask("tools/call", {"name": "count_orders", "arguments": {"status": "lost"}})
    ask("tools/call", {"name": "list_orders", "arguments": {"limit": 2}})
    ask("tools/call", {"name": "list_orders", "arguments": {"status": "refunded", "offset": 150, "limit": 100}})
    ask("tools/call", {"name": "get_order", "arguments": {"order_id": 1}})
    ask("tools/call", {"name": "get_order", "arguments": {"order_id": 10**9}})
    ask("tools/call", {"name": "search_products", "arguments": {"query": "caf\u00e9 \u2615"}})
    ask("tools/call", {"name": "search_products", "arguments": {"query": 5}})  # isError or -32602
    ask("tools/call", {"name": "no_such_tool"})
    ask("tools/list", {"cursor": "x"})
    ask("resources/list")
    ask("resources/templates/list")
    ask("resources/read", {"uri": "shop://schema"})
    ask("resources/read", {"uri": "shop://orders/42"})
    ask("resources/read", {"uri": "shop://orders/042"})  # -32002
    ask("prompts/list")
    ask("prompts/get", {"name": "summarise_order", "arguments": {"order_id": "42"}})
    ask("prompts/get", {"name": "summarise_order"})  # -32602
    ask("resources/subscribe", {"uri": "shop://schema"})  # not offered: -32601
    ask("ping", request_id="string-id")
    bad(b"{not json")
    bad(b'{"jsonrpc": "2.0", "id": null, "method": "ping"}')
    bad(b'{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}')
    bad(b"[]")
    return exchanges


def dumped(model: BaseModel) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_unset=True)


@pytest.mark.parametrize("version", REVISIONS)
def test_every_reply_validates_against_the_sdk_types(start_server: Any, version: str) -> None:
    wire: Wire = start_server()
    exchanges = scripted_exchanges(wire, version)
    kinds = set()
    structured = version >= "2025-06-18"
    output_schemas: dict[str, Any] = {}
    judged = 0
    for request, raw in exchanges:
        message = json.loads(raw)
        parsed = mcp_types.jsonrpc_message_adapter.validate_json(raw)
        assert isinstance(parsed, mcp_types.JSONRPCResponse | mcp_types.JSONRPCError), raw
        assert dumped(parsed) == message, "the SDK's reading must keep every field"
        if isinstance(parsed, mcp_types.JSONRPCError):
            kinds.add(parsed.error.code)
            wire_2025_11_25.JSONRPCErrorResponse.model_validate_json(raw)
            if request is None:
                assert parsed.id is None
            continue
        assert request is not None
        kinds.add(request["method"])
        wire_2025_11_25.JSONRPCResultResponse.model_validate_json(raw)
        result = GENERIC_RESULTS[request["method"]].model_validate(message["result"])
        WIRE_RESULTS[request["method"]].model_validate(message["result"])
        if request["method"] == "ping":
            assert message["result"] == {}
        elif request["method"] == "tools/list":
            # Every field of every tool is one the SDK knows (a typo would be dropped here).
            assert dumped(result)["tools"] == message["result"]["tools"]
            for tool in message["result"]["tools"]:
                assert ("outputSchema" in tool) is structured, (version, tool)
                if structured:
                    jsonschema.Draft202012Validator.check_schema(tool["outputSchema"])
                    output_schemas[tool["name"]] = tool["outputSchema"]
        else:
            assert dumped(result) == message["result"]
        if request["method"] == "tools/call":
            call_result = message["result"]
            if not structured or call_result["isError"]:
                assert "structuredContent" not in call_result, (version, call_result)
            else:
                schema = output_schemas[request["params"]["name"]]
                jsonschema.Draft202012Validator(schema).validate(call_result["structuredContent"])
                assert json.loads(call_result["content"][0]["text"]) == call_result["structuredContent"]
                judged += 1
        if request["method"] == "initialize":
            assert isinstance(result, mcp_types.InitializeResult)
            assert result.protocol_version == version
    assert {"initialize", "ping", "tools/list", "tools/call", -32700, -32600, -32601, -32602, -32002} <= kinds
    assert {"resources/list", "resources/templates/list", "resources/read", "prompts/list", "prompts/get"} <= kinds
    assert judged == (6 if structured else 0), "every successful call was judged"


def test_initialize_result_under_an_unknown_version_is_one_the_sdk_accepts(start_server: Any) -> None:
    wire: Wire = start_server()
    result = wire.result("initialize", {"protocolVersion": "1999-01-01", "capabilities": {}})
    parsed = mcp_types.InitializeResult.model_validate(result)
    assert parsed.protocol_version == LATEST and parsed.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS
