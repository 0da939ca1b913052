"""The clinic's answer key: for any learner's draw, a right answer with evidence (the instructor's only).

Used to prove the stage (the solutions score full marks) and by nothing a learner runs. For each
family of defect, :func:`reproducer` gives lines that make that defect show; :func:`solution` writes
a whole ``diagnosis`` cell for one learner.

    >>> "case-01" in solution_value("salt", "alice")
    True
"""

from __future__ import annotations

import json
import pprint
from typing import Any

from grader.course.clinic import draw_for
from grader.course.clinic.defects import Defect
from grader.course.clinic.hostlog import render


def _call(name: str, arguments: dict[str, Any], id: int = 5) -> str:
    params = {"name": name, "arguments": arguments}
    return json.dumps({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})


def _ping(id: Any) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": id, "method": "ping"})


MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "repro", "version": "1"},
}


def _modern(method: str, id: Any = 1, meta: dict[str, Any] | None = None, **params: Any) -> str:
    """A 2026-07-28 request: its _meta (``MODERN_META`` unless ``meta`` is given) in params."""
    body = {**params, "_meta": MODERN_META if meta is None else meta}
    return json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": body})


def _tool_arguments(tool: str) -> dict[str, Any]:
    return {"get_order": {"order_id": 7}, "search_products": {"query": "mug"}}.get(tool, {})


def reproducer(defect: Defect) -> list[str | bytes]:
    """Lines that make ``defect`` break its rule, and not the reference."""
    p = defect.params
    family = defect.family
    if family == "ids_typed":
        return [_ping({"num_to_str": 7, "digits_to_num": "7", "zero_to_null": 0}[p["variant"]])]
    if family == "unflushed":
        return [
            {"all": _ping(1), "tools/list": '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'}.get(
                p["which"], '{"jsonrpc":"2.0","id":3,"method":"no/such/method"}'
            )
        ]
    if family == "answers_notifications":
        method = {"unknown": "notifications/mcp-lab/unknown", "all": "notifications/initialized"}.get(
            p["which"], p["which"]
        )
        return [json.dumps({"jsonrpc": "2.0", "method": method})]  # its "reply" alone is the evidence
    if family == "stdout_noise":
        return [_call("count_orders", {})]
    if family in ("error_codes", "error_envelope"):
        return ['{"jsonrpc":"2.0","id":1,"method":"no/such/method"}']
    if family == "parse_reply":
        return ["hello?"]
    if family == "ping_body":
        return [_ping(1)]
    if family == "version_echo":
        params = {"protocolVersion": "1999-01-01", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}
        return [json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})]
    if family == "null_id":
        return ['{"jsonrpc":"2.0","id":null,"method":"ping"}']
    if family == "dies_on":
        return [b"\xff\xfe" if p["variant"] == "utf8" else '{"jsonrpc":"2.0","id":4}', _ping(2)]
    if family in ("structured_missing", "result_shape"):
        return [_call(p["tool"], _tool_arguments(p["tool"]))]
    if family == "wrong_count":
        return [_call("count_orders", {"status": p["status"]})]
    if family == "error_path_print":
        if p["tool"] == "get_order":
            return [_call("get_order", {"order_id": 999999})]
        return [_call("count_orders", {"status": "lost"})]
    if family == "ids_huge":
        return [_ping(2**60 + 1)]
    if family == "in_flight":
        return [_ping(1), '{"jsonrpc":"2.0","id":2,"method":"tools/list"}']
    if family == "flush_path":
        arguments = {"query": "a", "limit": 50} if p["tool"] == "search_products" else {"offset": 2000}
        return [_call(p["tool"], arguments)]
    if family == "big_result":
        return [_call("list_orders", {"limit": 100})]
    if family == "structured_filter":
        return [_call("list_orders", {p["argument"]: 3 if p["argument"] == "customer_id" else "paid"})]
    if family == "empty_result_print":
        return [_call("list_orders", {"offset": 5000})]
    if family == "page_skip":
        return [_call("list_orders", {"offset": 600, "limit": 3})]
    if family == "result_type":
        if p["variant"] == "calls":
            return [_modern("tools/call", name="count_orders", arguments={})]
        return [_modern("server/discover")]
    if family == "cache_hints":
        return [_modern(p["method"])]
    if family in ("version_refusal", "version_newer"):
        version = "2099-01-01" if family == "version_newer" else "1999-01-01"
        return [_modern("tools/list", meta={**MODERN_META, "io.modelcontextprotocol/protocolVersion": version})]
    if family in ("meta_unchecked", "call_meta_unchecked"):
        meta = {k: v for k, v in MODERN_META.items() if k != p["missing"]}
        if family == "call_meta_unchecked":
            return [_modern("tools/call", meta=meta, name="count_orders", arguments={})]
        return [_modern("tools/list", meta=meta)]
    if family == "era_mixed":
        params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}
        initialize = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": params})
        if p["variant"] == "modern_after_initialize":
            return [json.dumps({**json.loads(initialize), "id": 1}), _modern("tools/list", id=2)]
        return [_modern("tools/list", id=1), initialize]
    raise ValueError(f"no reproducer for the family {family}")


def solution_value(salt: str, student: str) -> dict[str, Any]:
    """A right ``diagnosis`` for ``student``'s draw."""
    found: dict[str, Any] = {}
    for case in draw_for(salt, student):
        if case.kind == "log":
            found[case.name] = {"rule": case.defect.rule, "line": render(case.defect, seed=int(case.name[-2:])).line}
        else:
            found[case.name] = {"rule": case.defect.rule, "reproduce": reproducer(case.defect)}
    return found


def solution(salt: str, student: str) -> str:
    """The ``diagnosis`` cell's text (a literal the grader reads as data) for ``student``'s draw."""
    return "diagnosis = " + pprint.pformat(solution_value(salt, student), width=100, sort_dicts=False)
