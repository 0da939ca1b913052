"""Stage 05's ``call_tool`` (cell ``test_call_tool``): protocol errors, tool execution errors,
``structuredContent`` and ``resultType`` by the revision a request is served under, and a tool that
crashes inside.

``resultType`` is on every result of MCP 2026-07-28, never on a legacy one:

    >>> check_result_type({"content": [], "resultType": "complete"}, MODERN, "sent")
    >>> check_result_type({"content": []}, "2025-11-25", "sent")
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from reference.catalog import TOOLS
from reference.lifecycle import LATEST

from ...calls import outcome
from ...drive import (
    Server,
    initialize,
    notification,
    request,
)
from ...expect import Failure, same_json, show
from ...remote import is_a
from ...work import Work
from .. import public
from .tools import _connection, _reference


@public(
    "05",
    "test_call_tool",
    "call_tool: protocol errors, tool execution errors, structuredContent and resultType by revision; a tool "
    "that crashes",
)
def call_tool_cell(work: Work) -> None:
    check_call_tool(work)
    check_crash_path(work)


def _schemas() -> dict[str, dict[str, Any]]:
    return {tool["name"]: tool["inputSchema"] for tool in TOOLS}


BAD_ARGUMENTS_2025_06_18 = "arguments that break the inputSchema, in a 2025-06-18 session"


MODERN = "2026-07-28"


LEGACY = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")


def check_result_type(result: Any, version: str, sent: Any) -> None:
    """A tools/call result under ``version``: ``"resultType": "complete"`` in 2026-07-28 (a finished
    call, whether it succeeded or failed), none in a legacy revision."""
    if not isinstance(result, dict):
        return  # the shape's own check says what is wrong
    if version == MODERN and result.get("resultType") != "complete":
        raise Failure(
            "modern-result-type",
            'under 2026-07-28 every result carries "resultType": "complete" (a tool execution error too)',
            sent=show(sent),
            received=show(result),
        )
    if version != MODERN and "resultType" in result:
        raise Failure(
            "modern-result-type",
            f"under {version} (a legacy revision) a result carries no resultType: it exists from 2026-07-28 on",
            sent=show(sent),
            received=show(result),
        )


def check_call_tool(work: Work) -> None:
    call_tool = work.module("shop_server").call_tool
    conn = _connection(work)
    schemas = _schemas()

    def run(params: dict[str, Any], version: str) -> tuple[Any, BaseException | None]:
        return outcome(call_tool, "tools-call-result", conn, schemas, params, version)

    try:
        check_unknown_tool(run)
        for params, what, check in (
            ({"name": "count_orders", "arguments": []}, '"arguments": [] (not an object)', "tool-error-kind"),
            ({"name": "count_orders", "arguments": "paid"}, '"arguments": "paid" (not an object)', "tool-error-kind"),
            ({"name": "get_order", "arguments": {"order_id": "seven"}}, BAD_ARGUMENTS_2025_06_18, "tool-error-kind"),
        ):
            version = "2025-06-18" if "2025-06-18" in what else LATEST
            got, error = run(params, version)
            if is_a(error, "RpcError") and getattr(error, "code", None) == -32602:
                continue
            # 2025-06-18 lists "Invalid arguments" under protocol errors and "Invalid input data" under tool
            # execution errors, with no MUST either way: the course's -32602 is a choice, an isError result
            # is right too. Arguments that are not an object break the CallToolRequest schema: -32602 only.
            refused = error is None and isinstance(got, dict) and got.get("isError") is True
            if version == "2025-06-18" and refused:
                continue
            raise Failure(
                check,
                f"{what} is a protocol error: raise RpcError(INVALID_PARAMS, ...)"
                if version != "2025-06-18"
                else f"{what} must be refused: raise RpcError(INVALID_PARAMS, ...) (or return an isError result)",
                sent=show(params),
                received=show(got) if error is None else f"{type(error).__name__}: {error}",
            )
        for (params, what), version in zip(
            (
                ({"name": "get_order", "arguments": {"order_id": "seven"}}, "arguments that break the inputSchema"),
                ({"name": "list_orders", "arguments": {"limit": 500}}, "a limit out of range"),
                ({"name": "count_orders", "arguments": {"status": "lost"}}, "an unknown status"),
                ({"name": "get_order", "arguments": {"order_id": 999999}}, "an order that does not exist"),
            ),
            (MODERN, LATEST, MODERN, LATEST),
            strict=True,
        ):
            got, error = run(params, version)
            if "inputSchema" in what or "range" in what:
                refused_as_protocol_error(version, what, params, error)
            if error is not None or not isinstance(got, dict) or got.get("isError") is not True:
                # Bad arguments are the inputSchema's business; an unknown status or order, the shop's.
                raise Failure(
                    "tool-error-kind" if "inputSchema" in what or "range" in what else "shop-contract",
                    f"under {version}, {what} is a tool execution error: a result with isError: true",
                    sent=show(params),
                    received=show(got) if error is None else f"{type(error).__name__}: {error}",
                )
            _result_shape(got, params)
            if "structuredContent" in got:
                raise Failure(
                    "structured-output",
                    "an error result carries no structuredContent: the outputSchema describes the tool's data, "
                    "and an error has none (any structuredContent MUST conform to the outputSchema)",
                    received=show(got),
                )
            check_result_type(got, version, f"call_tool(conn, schemas, {show(params)}, {version!r})")
        params = {"name": "count_orders", "arguments": {"status": "paid"}}
        want, _ = _reference("count_orders", {"status": "paid"})
        for version in (MODERN, *LEGACY):
            got, error = run(params, version)
            if error is not None:
                raise Failure("tools-call-result", f"count_orders raised {type(error).__name__}: {error}")
            _result_shape(got, params)
            check_result_type(got, version, f"call_tool(conn, schemas, {show(params)}, {version!r})")
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


def refused_as_protocol_error(version: str, what: str, params: dict[str, Any], error: BaseException | None) -> None:
    """Arguments that break the inputSchema refused with -32602 under 2025-11-25 or 2026-07-28: the spec lists input
    validation errors under tool execution errors, with no MUST (the checker only warns); the course's table asks
    for isError, and the failure says that it is the course's demand, under the rule the evidence shows."""
    if not (is_a(error, "RpcError") and getattr(error, "code", None) == -32602):
        return
    from grader.checker.catalogue import CATALOGUE

    kind = CATALOGUE["tool-error-kind"].also["kind"]
    raise Failure(
        "tool-error-kind",
        f"under {version}, {what} was refused with -32602, a protocol error: the spec lists input validation "
        "errors under tool execution errors (Tools > Error Handling), so that the model reads the text and "
        "calls again",
        sent=show(params),
        received=f"{type(error).__name__}: {error}",
        course="no MUST either way (mcp-lab check only warns); the course's table (stage 05, section 2) asks "
        "for a result with isError: true from 2025-11-25 on (for 2025-06-18 and older, -32602 or isError)",
        rule=f"{kind.source} ({kind.keyword}): {kind.text}",
        fix="from 2025-11-25 on, return a result with isError: true whose text names the problem",
    )


def check_unknown_tool(run: Callable[[dict[str, Any], str], tuple[Any, BaseException | None]]) -> None:
    """An unknown tool is an error: -32602 as the lesson teaches, or (no MUST says otherwise, and the
    checker only warns) an isError result; never a result that claims the call ran."""
    params = {"name": "refund_order", "arguments": {}}
    got, error = run(params, LATEST)
    if is_a(error, "RpcError") or (error is None and isinstance(got, dict) and got.get("isError") is True):
        return
    raise Failure(
        "unknown-tool",
        "an unknown tool must be refused: raise RpcError(INVALID_PARAMS, ...) (an isError result costs nothing "
        "either; the checker only warns on it)",
        sent=show(params),
        received=show(got) if error is None else f"{type(error).__name__}: {error}",
    )


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


CRASH_RULE = (
    "MCP 2026-07-28 schema.ts CallToolResult.isError (SHOULD): any errors that originate from the tool SHOULD be "
    "reported inside the result object, with isError set to true, not as an MCP protocol-level error response"
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
                    course="a SHOULD, which the course holds you to (stage 05, section 2, the table's last row)",
                    rule=CRASH_RULE,
                )
            ping = request("ping")
            server.expect(ping, {"jsonrpc": "2.0", "id": ping["id"], "result": {}}, "stdout-json-lines")
            # A traceback printed to stdout sits in its buffer until the process exits: it breaks the
            # stream then, at the host's last read.
            server.expect_exit()
