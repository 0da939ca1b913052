"""Stage 05's capstone, ``my_server.py``: the learner's own server from end to end, in both eras
(cells ``test_own_server_check`` and ``test_own_server_sdk``; the Inspector's cell is :mod:`.inspector`).

Standard library only (its text is read first), run from a copy that cannot import the reference,
and graded by the whole checker (both eras judged, whatever the server speaks), raw sessions in
2026-07-28 and the legacy revisions, and the SDK client in its default and its legacy mode.

    >>> own_imports("import json, sqlite3")
    >>> try:
    ...     own_imports("from reference.shop import shop_tools")
    ... except Failure as failure:
    ...     print(failure.check, failure.summary)
    own-server my_server.py imports reference.shop (the course's answer key)
"""

from __future__ import annotations

import ast
import contextlib
import json
import re
import shutil
import sys
from collections.abc import Iterator
from typing import Any

from reference.lifecycle import LATEST

from ...calls import outcome
from ...drive import (
    CHECK_CALL_TIMEOUT,
    REPLY_TIMEOUT,
    Server,
    answers_a_tool_call,
    initialize,
    modern,
    notification,
    request,
)
from ...expect import Failure, followed_rule, not_written, same_json, show
from ...pysource import parse as parse_source
from ...work import Work
from .. import public
from .call_tool import MODERN, _json, _result_shape, check_result_type
from .served import sdk_modern_rules, stays_modern
from .tools import _error_text_helps, _reference

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
