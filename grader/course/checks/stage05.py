"""The checks of stage 05 (tools/call).

The learner's tools are compared with the reference's on the same database (the reference's
answers are themselves tested against plain SQL); the hidden cells choose the arguments at random.
``call_tool`` answers by the revision a request is served under: ``resultType`` on every result of
MCP 2026-07-28, never on a legacy one. The whole server is then run as a process: a session of
calls that must leave the database byte-identical, the official SDK client in its default mode
(2026-07-28 on the wire), and every check of ``mcp-lab check`` in both eras.

The capstone, ``my_server.py``, is the learner's own server from end to end, in both eras:
standard library only (its text is read first), run from a copy that cannot import the reference,
and graded by the whole checker (both eras judged, whatever the server speaks), raw sessions in
2026-07-28 and the legacy revisions, the SDK client in its default and its legacy mode, and the MCP
Inspector's CLI (Node.js; the corpus's pinned copy or npx).
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from grader.checker.probe import Probe
from reference.catalog import STATUSES, TOOLS
from reference.database import ensure_default, open_readonly
from reference.lifecycle import LATEST
from reference.shop import shop_tools
from reference.tools import ToolError as ReferenceToolError

from ..calls import outcome
from ..drive import (
    CHECK_CALL_TIMEOUT,
    REPLY_TIMEOUT,
    Server,
    answers_a_tool_call,
    expect_checks,
    initialize,
    modern,
    notification,
    request,
    sdk_client,
)
from ..expect import Failure, equal, followed_rule, not_written, same_json, show
from ..pysource import parse as parse_source
from ..remote import is_a
from ..work import LOCAL, Work
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
    "call_tool: protocol errors, tool execution errors, structuredContent and resultType by revision; a tool "
    "that crashes",
)
def call_tool_cell(work: Work) -> None:
    check_call_tool(work)
    check_crash_path(work)


@public("05", "test_read_only", "your server: calls with SQL in their arguments leave the database byte-identical")
def read_only_cell(work: Work) -> None:
    check_read_only(work, work.program("shop_server"))


@public("05", "test_sdk_client", "the official MCP SDK's client (default mode: 2026-07-28) calls count_orders")
def sdk_client_cell(work: Work) -> None:
    check_sdk_client(work.program("shop_server"))


@public("05", "test_mcp_lab_check", "mcp-lab check on your server, both eras: no check fails")
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
                        "shop-contract",
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


# -- The capstone: your own server, my_server.py ------------------------------------------------------
# One file of the learner's, the standard library only, graded three ways for points of its own: the
# whole checker, the official SDK client, the MCP Inspector's CLI. Each runs a copy of the file in a
# scratch folder that holds a ``reference`` package of its own which refuses to load: an import the
# text check cannot see (one built at run time) fails there too. The guard refuses the grader anywhere.
CAPSTONE = "my_server"
SHOP_TOOLS = ["count_orders", "list_orders", "get_order", "search_products"]
_COURSE_PACKAGES = ("reference", "grader", "nbgrader", "lab_runtime")
# A string that names a course module, to import it or to run it (python -m reference.server).
_COURSE_NAME = re.compile(r"(-m\s*)?(reference|grader|nbgrader|lab_runtime)(\.\w+)*")
_NO_REFERENCE = "raise ImportError('my_server.py imports nothing from the course: the standard library only')\n"


def own_imports(text: str) -> None:
    """my_server.py imports the standard library only, and names no course module to import or run."""
    try:
        tree = parse_source(text)
    except SyntaxError as exc:
        raise Failure("module", f"my_server.py is not valid Python: line {exc.lineno}: {exc.msg}") from None
    for node in ast.walk(tree):
        names: list[tuple[str, int]] = []
        if isinstance(node, ast.Import):
            names = [(alias.name, 0) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [(node.module or "", node.level)]
        for name, level in names:
            top, shown = name.partition(".")[0], "." * level + name
            if top in _COURSE_PACKAGES:
                what = "the course's answer key" if top == "reference" else "the course's own code"
                raise Failure("own-server", f"my_server.py imports {shown} ({what})", where=f"line {node.lineno}")
            if level or top not in sys.stdlib_module_names:
                raise Failure(
                    "own-server",
                    f"my_server.py imports {shown}, which is not in Python's standard library",
                    where=f"line {node.lineno}",
                    hint="a piece of yours from another file (framing.py, shop_server.py)? paste it in",
                )
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and _COURSE_NAME.fullmatch(node.value):
            raise Failure("own-server", f"my_server.py names the course's {node.value!r}", where=f"line {node.lineno}")


@contextlib.contextmanager
def own_server(work: Work) -> Iterator[list[str]]:
    """The command that runs the learner's my_server.py, once its text shows the standard library only:
    a copy, in a scratch folder where ``import reference`` fails."""
    source = work.file(CAPSTONE)
    own_imports(source.read_text(encoding="utf-8", errors="replace"))
    with work.scratch() as (here, _):
        shutil.copyfile(source, here / source.name)
        (here / "reference").mkdir()
        (here / "reference" / "__init__.py").write_text(_NO_REFERENCE, encoding="utf-8")
        work.runner.own(here)
        argv = work.run_file(here / source.name)
        written(argv)
        yield argv


def check_own_open_shop(work: Work) -> None:
    """my_server.py's open_shop: a connection on which a write fails, and no file made for a missing path (the
    mode=ro URI of stage 00). A server opened read-write passes every call's check: only the connection shows it."""
    open_shop = work.module(CAPSTONE).open_shop
    with work.scratch() as (here, there):
        shutil.copyfile(work.db, here / "shop.db")
        work.runner.own(here)
        conn, error = outcome(open_shop, "read-only-uri", f"{there}/shop.db")
        if error is not None:
            raise Failure("read-only-uri", f"open_shop(path) raised {type(error).__name__}: {error}")
        try:
            _, refused = outcome(conn.execute, "read-only-uri", "CREATE TABLE written_by_the_check (x)")
        finally:
            conn.close()
        if refused is None:
            raise Failure(
                "read-only-uri",
                "my_server.py's open_shop(path) returned a connection that accepted a write (CREATE TABLE): it is "
                "not read-only",
                hint='mode=rw or mode=rwc opens the file for writing: use "?mode=ro"',
            )
        _, error = outcome(open_shop, "read-only-uri", f"{there}/no-such-shop.db")
        if (here / "no-such-shop.db").exists():
            raise Failure(
                "read-only-uri",
                "my_server.py's open_shop made no-such-shop.db: a read-only open never creates a file",
                hint='mode=rwc creates a missing file: use "?mode=ro"',
            )


def written(argv: list[str]) -> None:
    """A short session before the cell's own checks: a piece that still raises NotImplementedError is
    named "not written yet", as in stages 00 to 04, not left to show as a dead server (the stubs of
    my_server.py are pieces the learner wrote before: whatever else goes wrong, the cell's checks say)."""
    stderr = ""
    try:
        with Server(argv) as server:
            try:
                init = initialize(LATEST)
                server.expect(init, {"jsonrpc": "2.0", "id": init["id"]}, "initialize-result")
                server.send(notification("notifications/initialized"))
                for sent in (
                    request("tools/list"),
                    request("tools/call", params={"name": "count_orders", "arguments": {}}),
                ):
                    server.expect(sent, {"jsonrpc": "2.0", "id": sent["id"]}, "tools-call-result")
            finally:
                stderr = server.probe.stderr_tail(4000)
    except Failure as failure:
        stderr = stderr or str(failure.details.get("stderr", ""))
    name = not_written(stderr)
    if name:
        raise Failure(
            "module",
            f"{name} in my_server.py is not written yet (it raises NotImplementedError)",
            hint="paste your own piece from its stage (or write it now), then run the cell again",
        )


def check_whole_server(argv: list[str]) -> None:
    """``mcp-lab check`` on the whole server, both eras judged (a server that speaks only one fails the
    other's checks): no check fails. A failure names the first check that fails on its own (not
    because another one did), with its evidence."""
    from grader.checker.check import run_check

    answers_a_tool_call(argv, REPLY_TIMEOUT)
    report = run_check(list(argv), timeout=REPLY_TIMEOUT, call_timeout=CHECK_CALL_TIMEOUT, era="both")
    failing = [r for r in report.results if r.status == "fail"]
    if not failing:
        return
    first = next((r for r in failing if not r.caused_by), failing[0])
    evidence = first.evidence
    shown = {k: _evidence(k, v) for k, v in evidence.items() if k not in _SAID_ELSEWHERE}
    others = [r.id for r in failing if r is not first]
    if others:
        shown["hint"] = f"failing too: {', '.join(others)} (mcp-lab check -- python3 my_server.py shows each)"
    summary = f"mcp-lab check: {first.summary}"
    raise Failure(first.id, summary, **shown, **followed_rule(first), stderr=evidence.get("stderr_tail", ""))


# Evidence the failure shows in its own way: the rule and the fix (from the catalogue), stderr.
_SAID_ELSEWHERE = ("rule", "keyword", "source", "fix", "stderr_tail")


def _evidence(key: str, value: Any) -> Any:
    """One item of a check's evidence as a failure shows it: frames one a line, anything else as one text."""
    items = [item if isinstance(item, str) else show(item) for item in (value if isinstance(value, list) else [value])]
    if key in ("sent", "expected", "received"):
        return items[:8]
    return show("; ".join(items))


Call = tuple[str, dict[str, Any]]  # a tool's name and its arguments


def check_call_result(result: Any, call: Call, version: str, sent: Any) -> None:
    """A tools/call result (as it came over the wire) against the reference's answer, under ``version``."""
    tool, arguments = call
    want, error_text = _reference(tool, arguments)
    shown = f"{tool}({json.dumps(arguments, ensure_ascii=False)})"
    _result_shape(result, {"name": tool, "arguments": arguments})
    if error_text is not None:
        if result.get("isError") is not True:
            what = f"{shown} cannot be answered: a result with isError: true"
            raise Failure("shop-contract", what, sent=show(sent), expected=error_text, received=show(result))
        _error_text_helps(tool, arguments, result["content"][0]["text"])
        return
    if result.get("isError", False) is not False:
        raise Failure("shop-contract", f"{shown} failed", sent=show(sent), received=show(result))
    if not same_json(_json(result["content"][0]["text"]), want):
        what = f"{shown}: the text block holds what the shop holds, as JSON"
        raise Failure("shop-contract", what, sent=show(sent), expected=show(want), received=show(result))
    if version >= "2025-06-18" and not same_json(result.get("structuredContent"), want):
        what = f"under {version}, {shown} carries the same object as structuredContent"
        raise Failure("structured-output", what, sent=show(sent), expected=show(want), received=show(result))


def check_own_calls(argv: list[str], version: str, calls: list[Call], ids: list[Any]) -> None:
    """A session on ``version`` (ids: the initialize's, then each call's): the revision echoed, every
    call answered as the reference answers it (what mcp-lab check asks of a few calls, on others),
    and no resultType (a legacy revision's results never carry one). Under 2026-07-28, no handshake:
    each call carries the envelope, and its result ``"resultType": "complete"``."""
    if version == MODERN:
        check_own_modern_calls(argv, calls, ids[1:])
        return
    with Server(argv) as server:
        init = initialize(version, id=ids[0])
        reply = server.expect(init, {"jsonrpc": "2.0", "id": ids[0]}, "initialize-result")
        if not isinstance(reply.get("result"), dict) or reply["result"].get("protocolVersion") != version:
            raise Failure("version-negotiation", f"{version} is supported: echo it", received=show(reply))
        server.send(notification("notifications/initialized"))
        for call, id in zip(calls, ids[1:], strict=True):
            sent = request("tools/call", id=id, params={"name": call[0], "arguments": call[1]})
            reply = server.expect(sent, {"jsonrpc": "2.0", "id": id}, "tools-call-result")
            if "result" not in reply:
                what = f"{call[0]} answers with a result"
                raise Failure("tools-call-result", what, sent=show(sent), received=show(reply))
            check_call_result(reply["result"], call, version, sent)
            check_result_type(reply["result"], version, sent)


def check_own_modern_calls(argv: list[str], calls: list[Call], ids: list[Any]) -> None:
    """A 2026-07-28 connection: every call with the envelope, no initialize; each answered as the
    reference answers it, with ``"resultType": "complete"``."""
    with Server(argv) as server:
        for call, id in zip(calls, ids, strict=True):
            sent = modern("tools/call", id=id, params={"name": call[0], "arguments": call[1]})
            reply = server.expect(sent, {"jsonrpc": "2.0", "id": id}, "tools-call-result")
            if "result" not in reply:
                what = f"{call[0]} with the 2026-07-28 envelope answers with a result"
                raise Failure("tools-call-result", what, sent=show(sent), received=show(reply))
            check_result_type(reply["result"], MODERN, sent)
            check_call_result(reply["result"], call, MODERN, sent)


def check_own_eras(argv: list[str]) -> None:
    """One call in 2026-07-28 and one in 2025-11-25, each on a connection of its own."""
    call: Call = ("count_orders", {"status": "paid"})
    check_own_calls(argv, MODERN, [call], [None, 1])
    check_own_calls(argv, LATEST, [call], [1, 2])


def check_own_sdk(argv: list[str], calls: list[Call]) -> None:
    """The official SDK client, in its default mode (server/discover, then 2026-07-28) and in its
    legacy mode (initialize), lists the four tools and makes ``calls``: the answers are the reference's."""

    async def steps(client: Any) -> dict[str, Any]:
        tools = await client.list_tools()
        results = [await client.call_tool(tool, arguments) for tool, arguments in calls]
        return {"version": client.protocol_version, "tools": tools, "results": results}

    what = f"list the tools and call {', '.join(c[0] for c in calls)}"
    for mode in ("auto", "legacy"):
        seen = sdk_modern_rules(argv, steps, what, mode)
        stays_modern(seen, mode)
        names = sorted(t.name for t in seen["tools"].tools)
        if names != sorted(SHOP_TOOLS):
            what = f"the SDK client ({mode} mode) sees other tools than the shop's four"
            raise Failure("tools-list", what, received=show(names))
        for call, result in zip(calls, seen["results"], strict=True):
            received = result.model_dump(mode="json", by_alias=True, exclude_none=True)
            shown = f"(the SDK client, {mode} mode) call_tool{(call[0], call[1])}"
            check_call_result(received, call, LATEST, shown)


# -- The MCP Inspector's CLI ------------------------------------------------------------------------
INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"  # pinned, as bench/install_corpus.sh installs it
INSPECTOR_BIN = Path(__file__).resolve().parents[3] / "build/corpus/npm/node_modules/.bin/mcp-inspector"
# Seconds for one run of the installed Inspector (about one when quiet). It is run only on a server
# that has just answered initialize, so a generous bound costs a mute server nothing, and a busy
# machine (a class graded four cells at a time) never turns Node.js's start-up into a verdict.
INSPECTOR_TIMEOUT = 45.0
INSPECTOR_CONNECT_MS = "30000"
ANSWER_WITHIN = 10.0  # seconds for the server's reply to initialize before the Inspector is run
NPX_TIMEOUT = 75.0  # seconds with npx, whose first run downloads the Inspector (about 20 s)


class InspectorUnavailable(RuntimeError):
    """The MCP Inspector cannot run on this machine. Never a verdict on the learner's server: when
    grading it is an error of the grading ('grading failed'), not a Failure."""


def _unavailable(work: Work, summary: str, **details: Any) -> Exception:
    """A missing Inspector: on the learner's own machine a failure that says what to install (the
    ``inspector`` lesson); when grading, :class:`InspectorUnavailable`."""
    if work.runner is LOCAL:
        return Failure("inspector", summary, **details)
    return InspectorUnavailable(f"{summary} {details.get('stderr', '')}".strip())


def inspector_command(work: Work) -> tuple[list[str], float]:
    """The Inspector's command (the corpus's pinned copy, else npx) and how long one run may take."""
    if INSPECTOR_BIN.exists():
        return [str(INSPECTOR_BIN)], INSPECTOR_TIMEOUT
    npx = shutil.which("npx")
    if npx is not None:
        return [npx, "-y", INSPECTOR], NPX_TIMEOUT
    raise _unavailable(work, "the MCP Inspector needs Node.js: npx is not on this machine's PATH")


def _kill_group(child: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signal.SIGKILL)


def _envelope_error(stderr: str) -> str | None:
    """The message of the Inspector's error envelope (its last stderr line, ``{"error": {...}}``), if any."""
    for line in reversed(stderr.strip().splitlines()):
        found = _json(line)
        if isinstance(found, dict) and isinstance(found.get("error"), dict):
            return str(found["error"].get("message", found["error"]))
    return None


TOOL_IS_ERROR = '"code":"tool_is_error"'  # the Inspector CLI's error envelope for a result with isError


def launch_inspector(
    work: Work, options: list[str], *, check: str, shown: str, stderr: Callable[[bytes], str]
) -> tuple[bytes, bytes, int]:
    """Run ``mcp-inspector OPTIONS`` to its end: its stdout, its stderr and its exit status. Bounded:
    past its time, its whole process group is killed (the server it started too) and ``check`` fails
    with ``shown`` as what was sent and ``stderr(...)`` of what it wrote as the server's words."""
    inspector, limit = inspector_command(work)
    try:
        child = subprocess.Popen(
            [*inspector, *options],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        raise _unavailable(work, f"the MCP Inspector could not start: {exc}") from None
    try:
        out, err = child.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        _kill_group(child)
        out, err = child.communicate()
        if inspector[0] != str(INSPECTOR_BIN):  # npx may be downloading still: no verdict on the server
            raise _unavailable(work, f"npx did not run the MCP Inspector within {limit:.0f} s") from None
        what = f"the MCP Inspector had no answer from your server within {limit:.0f} s"
        raise Failure(check, what, sent=shown, stderr=stderr(err)) from None
    finally:
        _kill_group(child)
    return out, err, child.returncode


def run_inspector(work: Work, argv: list[str], method: list[str]) -> Any:
    """``mcp-inspector --cli ARGV --method ...``: the result it printed, or a Failure that says why not."""
    shown = " ".join(["mcp-inspector --cli python3 my_server.py", *method])
    check = "tools-call-result" if "tools/call" in method else "tools-list"
    # Its options first, then "--": the server's command may hold words that look like options (bwrap's).
    options = ["--cli", "--format", "json", "-q", "--connect-timeout", INSPECTOR_CONNECT_MS, *method, "--", *argv]
    out, err, returncode = launch_inspector(
        work, options, check=check, shown=shown, stderr=lambda err: err.decode("utf-8", "replace")
    )
    stderr = err.decode("utf-8", "replace")
    found = _json(out.decode("utf-8", "replace").strip())
    # A tool result with isError: true is printed too, and the CLI then exits 5 ("tool_is_error"): the
    # hidden calls draw such calls (an unknown status, an order that does not exist).
    if isinstance(found, dict) and "result" in found and (returncode == 0 or TOOL_IS_ERROR in stderr):
        return found["result"]
    message = _envelope_error(stderr)
    if message is None:  # the Inspector itself did not run (a Node.js too old, a broken install)
        raise _unavailable(work, f"the MCP Inspector failed (exit status {returncode})", stderr=stderr)
    summary = f"the MCP Inspector could not use your server: {' '.join(message.split())[:300]}"
    raise Failure(check, summary, sent=shown, received=show(out) if out.strip() else "(nothing on stdout)")


def check_inspector(work: Work, argv: list[str], calls: list[Call], list_tools: bool = True) -> None:
    """The Inspector's CLI lists the four tools (unless ``list_tools`` is false: the hidden checks
    leave that to the public ones) and makes ``calls``: the answers are the reference's."""
    # A server that cannot answer initialize fails here, in seconds, not after the Inspector's wait.
    # Lines that are not its reply are passed over, as the Inspector passes them: they cost the
    # other cells, not this one.
    init = initialize(LATEST)
    with Probe(argv, timeout=ANSWER_WITHIN) as probe:
        if probe.exchange(init).message is None:
            raise Failure(
                "initialize-result",
                f"your server did not answer initialize within {ANSWER_WITHIN:.0f} s, so the Inspector cannot either",
                sent=show(init),
                stderr=probe.stderr_tail(),
            )
    if list_tools:
        listed = run_inspector(work, argv, ["--method", "tools/list"])
        tools = listed.get("tools") if isinstance(listed, dict) else None
        names = sorted(str(t.get("name")) for t in tools if isinstance(t, dict)) if isinstance(tools, list) else None
        if names != sorted(SHOP_TOOLS):
            what = "the MCP Inspector lists other tools than the shop's four"
            raise Failure("tools-list", what, expected=show(sorted(SHOP_TOOLS)), received=show(names or listed))
    for call in calls:
        method = ["--method", "tools/call", "--tool-name", call[0], "--tool-args-json", json.dumps(call[1])]
        result = run_inspector(work, argv, method)
        check_call_result(result, call, LATEST, " ".join(["mcp-inspector --cli python3 my_server.py", *method]))


@public(
    "05",
    "test_own_server_check",
    "my_server.py: the standard library only; mcp-lab check, both eras, finds no failure; resultType by era; "
    "open_shop read-only",
)
def own_server_check_cell(work: Work) -> None:
    with own_server(work) as argv:
        check_whole_server(argv)
        check_own_eras(argv)
    check_own_open_shop(work)


@public("05", "test_own_server_sdk", "the official MCP SDK's client, default and legacy mode: four tools, two calls")
def own_server_sdk_cell(work: Work) -> None:
    with own_server(work) as argv:
        check_own_sdk(argv, [("count_orders", {"status": "shipped"}), ("get_order", {"order_id": 7})])


@public("05", "test_own_server_inspector", "the MCP Inspector's CLI lists your tools and calls count_orders")
def own_server_inspector_cell(work: Work) -> None:
    with own_server(work) as argv:
        check_inspector(work, argv, [("count_orders", {"status": "paid"})])
