"""The checks of stage 05 (tools/call).

The learner's tools are compared with the reference's on the same database (the reference's
answers are themselves tested against plain SQL); the hidden cells choose the arguments at random.
The whole server is then run as a process: a session of calls that must leave the database
byte-identical, the official SDK client, and every check of ``mcp-lab check``.
"""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any

from reference.catalog import STATUSES, TOOLS
from reference.database import ensure_default, open_readonly
from reference.lifecycle import LATEST
from reference.shop import shop_tools
from reference.tools import ToolError as ReferenceToolError

from ..drive import Server, expect_checks, initialize, notification, request, sdk_session
from ..expect import Failure, equal, outcome, same_json, show
from ..remote import is_a
from ..work import Work
from . import public

VISIBLE: dict[str, list[dict[str, Any]]] = {
    "count_orders": [{}, {"status": "paid"}, {"status": "lost"}, {"status": "x' OR '1'='1"}],
    "list_orders": [
        {},
        {"status": "shipped", "limit": 2},
        {"customer_id": 7, "limit": 3, "offset": 1},
        {"customer_id": 999},
        {"status": "nope"},
    ],
    "get_order": [{"order_id": 1}, {"order_id": 3000}, {"order_id": 999999}],
    "search_products": [{"query": "mug"}, {"query": "100%"}, {"query": "桜", "limit": 50}, {"query": "zzz"}],
}


def _tool_cell(name: str, points_text: str) -> None:
    @public("05", f"test_{name}", f"{name}(conn, args) against the shop: {points_text}")
    def run(work: Work) -> None:
        check_tool(work, name, VISIBLE[name])


_tool_cell("count_orders", "all, paid, an unknown status, a status that is SQL")
_tool_cell("list_orders", "filters, a page, a customer with no orders, an unknown status")
_tool_cell("get_order", "the first and the last order, one that does not exist")
_tool_cell("search_products", 'mug, "100%", a non-ASCII query, no match')


@public(
    "05",
    "test_call_tool",
    "call_tool: protocol errors, tool execution errors, structuredContent by revision; a tool that crashes",
)
def call_tool_cell(work: Work) -> None:
    check_call_tool(work)
    check_crash_path(work)


@public("05", "test_read_only", "your server: calls with SQL in their arguments leave the database byte-identical")
def read_only_cell(work: Work) -> None:
    check_read_only(work, work.program("shop_server"))


@public("05", "test_sdk_client", "the official MCP SDK's client lists your tools and calls count_orders")
def sdk_client_cell(work: Work) -> None:
    check_sdk_client(work.program("shop_server"))


@public("05", "test_mcp_lab_check", "mcp-lab check on your server: no check fails")
def everything_cell(work: Work) -> None:
    check_everything(work.program("shop_server"))


def hidden_arguments(rng: random.Random, tool: str) -> list[dict[str, Any]]:
    if tool == "count_orders":
        return [{"status": s} for s in rng.sample(STATUSES, 3)] + [{"status": "o'brien"}]
    if tool == "list_orders":
        return [
            {"status": rng.choice(STATUSES), "limit": rng.randint(1, 30), "offset": rng.randint(0, 400)},
            {"customer_id": rng.randint(1, 48), "limit": 100},
            {"offset": rng.randint(2990, 3100)},
        ]
    if tool == "get_order":
        return [{"order_id": rng.randint(1, 3000)} for _ in range(4)] + [{"order_id": rng.randint(3001, 10**6)}]
    return [{"query": rng.choice(["kit", "OFF-00", "garden", "_", "mug", "lamp"]), "limit": rng.randint(1, 20)}]


def _connection(work: Work) -> Any:
    """A read-only connection in the learner's process, for their functions to use."""
    return work.stdlib("sqlite3.connect")(f"file:{work.inside(work.db)}?mode=ro", uri=True)


def _reference(tool: str, arguments: dict[str, Any]) -> tuple[Any, str | None]:
    """The reference's answer (in this process): (value, None), or (None, the tool error's text)."""
    tools = {t.name: t for t in shop_tools(open_readonly(ensure_default()))}
    try:
        return tools[tool].run(arguments), None
    except ReferenceToolError as exc:
        return None, str(exc)


def check_tool(work: Work, tool: str, argument_sets: list[dict[str, Any]]) -> None:
    function = getattr(work.module("shop_server"), tool)
    conn = _connection(work)
    try:
        for arguments in argument_sets:
            want, error_text = _reference(tool, arguments)
            got, error = outcome(function, "shop-contract", conn, arguments)
            shown = f"{tool}(conn, {json.dumps(arguments, ensure_ascii=False)})"
            if error_text is not None:
                if not is_a(error, "ToolError"):
                    raise Failure(
                        "tool-error-kind",
                        f"{shown} must raise ToolError: the tool ran and cannot answer",
                        expected=f"ToolError, with a text such as: {error_text}",
                        received=show(got) if error is None else f"{type(error).__name__}: {error}",
                    )
                _error_text_helps(tool, arguments, str(error))
                continue
            if error is not None:
                raise Failure("shop-contract", f"{shown} raised {type(error).__name__}: {error}")
            equal(got, want, "shop-contract", f"{shown} did not return what the shop holds")
    finally:
        conn.close()


def _error_text_helps(tool: str, arguments: dict[str, Any], text: str) -> None:
    if "status" in arguments:
        missing = [s for s in STATUSES if s not in text]
        if missing:
            raise Failure(
                "shop-contract",
                "the error text must list the valid statuses so that the model can call again",
                received=text,
                hint=f"it does not mention {', '.join(missing)}",
            )
    if "order_id" in arguments and not any(ch.isdigit() for ch in text.replace(str(arguments["order_id"]), "")):
        raise Failure("shop-contract", "the error text must say which order ids exist", received=text)


def _schemas() -> dict[str, dict[str, Any]]:
    return {tool["name"]: tool["inputSchema"] for tool in TOOLS}


BAD_ARGUMENTS_2025_06_18 = "arguments that break the inputSchema, in a 2025-06-18 session"


def check_call_tool(work: Work) -> None:
    call_tool = work.module("shop_server").call_tool
    conn = _connection(work)
    schemas = _schemas()

    def run(params: dict[str, Any], version: str) -> tuple[Any, BaseException | None]:
        return outcome(call_tool, "tools-call-result", conn, schemas, params, version)

    try:
        for params, what, check in (
            ({"name": "refund_order", "arguments": {}}, "an unknown tool", "unknown-tool"),
            ({"name": "count_orders", "arguments": []}, '"arguments": [] (not an object)', "tool-error-kind"),
            ({"name": "count_orders", "arguments": "paid"}, '"arguments": "paid" (not an object)', "tool-error-kind"),
            ({"name": "get_order", "arguments": {"order_id": "seven"}}, BAD_ARGUMENTS_2025_06_18, "tool-error-kind"),
        ):
            version = "2025-06-18" if "2025-06-18" in what else LATEST
            got, error = run(params, version)
            if not is_a(error, "RpcError") or getattr(error, "code", None) != -32602:
                raise Failure(
                    check,
                    f"{what} is a protocol error: raise RpcError(INVALID_PARAMS, ...)",
                    sent=show(params),
                    received=show(got) if error is None else f"{type(error).__name__}: {error}",
                )
        for params, what in (
            ({"name": "get_order", "arguments": {"order_id": "seven"}}, "arguments that break the inputSchema"),
            ({"name": "list_orders", "arguments": {"limit": 500}}, "a limit out of range"),
            ({"name": "count_orders", "arguments": {"status": "lost"}}, "an unknown status"),
        ):
            got, error = run(params, LATEST)
            if error is not None or not isinstance(got, dict) or got.get("isError") is not True:
                raise Failure(
                    "tool-error-kind",
                    f"under 2025-11-25, {what} is a tool execution error: a result with isError: true",
                    sent=show(params),
                    received=show(got) if error is None else f"{type(error).__name__}: {error}",
                )
            _result_shape(got, params)
            if "structuredContent" in got:
                raise Failure("structured-output", "an error result carries no structuredContent", received=show(got))
        params = {"name": "count_orders", "arguments": {"status": "paid"}}
        want, _ = _reference("count_orders", {"status": "paid"})
        for version in ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"):
            got, error = run(params, version)
            if error is not None:
                raise Failure("tools-call-result", f"count_orders raised {type(error).__name__}: {error}")
            _result_shape(got, params)
            text = got["content"][0].get("text", "")
            if got.get("isError") is not False or not same_json(_json(text), want):
                raise Failure("tools-call-result", "the text block must hold the tool's JSON", received=show(got))
            structured = version >= "2025-06-18"
            if structured and not same_json(got.get("structuredContent"), want):
                raise Failure(
                    "structured-output",
                    f"under {version} a result carries structuredContent: the tool's JSON object",
                    expected=show(want),
                    received=show(got),
                )
            if not structured and "structuredContent" in got:
                what = f"{version} has no structuredContent: leave it out"
                raise Failure("structured-output", what, received=show(got))
    finally:
        conn.close()


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _result_shape(result: Any, params: dict[str, Any]) -> None:
    content = result.get("content") if isinstance(result, dict) else None
    blocks_ok = isinstance(content, list) and bool(content)
    blocks_ok = blocks_ok and all(isinstance(c, dict) and isinstance(c.get("text"), str) for c in content)
    if not blocks_ok or not all(c.get("type") == "text" for c in content):
        raise Failure(
            "tools-call-result",
            'a result is {"content": [{"type": "text", "text": ...}], "isError": ...}',
            sent=show(params),
            received=show(result),
        )


def check_crash_path(work: Work) -> None:
    """A tool that fails inside (a database without the shop's tables): the model gets an isError result,
    the details go to stderr, and stdout carries protocol messages only, also after the reply."""
    import sqlite3

    with work.scratch() as (here, there):
        broken = sqlite3.connect(here / "not-the-shop.db")
        broken.execute("CREATE TABLE notes (text TEXT)")
        broken.commit()
        broken.close()
        work.runner.own(here)
        argv = work.program("shop_server", env={"MCP_LAB_DB": f"{there}/not-the-shop.db"})
        with Server(argv) as server:
            init = initialize(LATEST)
            server.expect(init, {"jsonrpc": "2.0", "id": init["id"]}, "initialize-result")
            server.send(notification("notifications/initialized"))
            sent = request("tools/call", params={"name": "count_orders", "arguments": {"status": "paid"}})
            reply = server.expect(sent, {"jsonrpc": "2.0", "id": sent["id"]}, "tool-error-kind")
            result = reply.get("result")
            if not isinstance(result, dict) or result.get("isError") is not True:
                raise Failure(
                    "tool-error-kind",
                    "a tool that fails inside (here: the database has no orders table) is a tool execution "
                    "error: a result with isError: true and a short text for the model",
                    sent=show(sent),
                    received=show(reply),
                )
            ping = request("ping")
            server.expect(ping, {"jsonrpc": "2.0", "id": ping["id"], "result": {}}, "stdout-json-lines")


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


def check_sdk_client(argv: list[str]) -> None:
    async def steps(client: Any) -> dict[str, Any]:
        tools = await client.list_tools()
        result = await client.call_tool("count_orders", {"status": "shipped"})
        return {"tools": tools, "result": result}

    seen = sdk_session(argv, steps, "tools-call-result", "list the tools and call count_orders")
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
    """Every check of mcp-lab check, on the learner's whole server: none may fail."""
    from grader.checker.catalogue import CHECKS

    expect_checks(argv, list(CHECKS))
