"""Resources and prompts (MCP 2025-11-25): in process against the modules, then over real pipes.

- resources/list, resources/templates/list, resources/read: the answers are what SQL on the
  database says; every unknown or malformed URI is -32002 "Resource not found" with the URI in
  ``data``; a request without a uri string is -32602; any cursor is -32602 (one page).
- prompts/list, prompts/get: the order is embedded as the same resource resources/read returns;
  an unknown prompt and a missing, extra, non-string or invalid argument are -32602.
- the initialize result declares exactly tools, resources and prompts; what is not served
  (resources/subscribe, completion/complete) is -32601.
- every reply validates against the SDK's 2025-11-25 wire models and dumps back to the same JSON.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import mcp_types
import pytest
from conftest import LATEST, ShopOracle, Wire
from mcp_types import _v2025_11_25 as wire_2025_11_25

from reference import database
from reference.errors import RpcError
from reference.prompts import PROMPTS, Prompts
from reference.resources import RESOURCE_NOT_FOUND, Resources, expand, match

ORDER_URI = "shop://orders/{order_id}"


@pytest.fixture(scope="module")
def conn(shop_db: Path) -> Iterator[sqlite3.Connection]:
    connection = database.open_readonly(shop_db)
    yield connection
    connection.close()


@pytest.fixture(scope="module")
def resources(conn: sqlite3.Connection) -> Resources:
    return Resources(conn)


@pytest.fixture(scope="module")
def prompts(conn: sqlite3.Connection, resources: Resources) -> Prompts:
    return Prompts(conn, resources)


def refused(call: Callable[[], Any]) -> RpcError:
    with pytest.raises(RpcError) as caught:
        call()
    return caught.value


# -- URI templates ---------------------------------------------------------------------------------
def test_level_1_templates_match_and_expand() -> None:
    assert match(ORDER_URI, "shop://orders/42") == {"order_id": "42"}
    assert match(ORDER_URI, "shop://orders/a%2Fb") == {"order_id": "a/b"}, "a value is percent-decoded"
    for uri in ("shop://orders/", "shop://orders/1/2", "shop://orders/1?x", "shop://orders/1#f", "xshop://orders/1"):
        assert match(ORDER_URI, uri) is None, uri
    assert expand(ORDER_URI, order_id=7) == "shop://orders/7"
    assert expand(ORDER_URI, order_id="a/b c") == "shop://orders/a%2Fb%20c"
    assert match(ORDER_URI, expand(ORDER_URI, order_id="a/b c")) == {"order_id": "a/b c"}
    assert match("a.{x}", "aZ1") is None, "the template's text is literal, not a pattern"


# -- resources -------------------------------------------------------------------------------------
def test_the_lists(resources: Resources) -> None:
    listed = resources.list({})["resources"]
    assert [(r["uri"], r["mimeType"]) for r in listed] == [("shop://schema", "application/sql")]
    templates = resources.templates({})["resourceTemplates"]
    assert [(t["uriTemplate"], t["mimeType"]) for t in templates] == [
        ("shop://orders/{order_id}", "application/json"),
        ("shop://products/{product_id}", "application/json"),
    ]
    for entry in [*listed, *templates]:
        assert entry["name"] and entry["title"] and entry["description"]


@pytest.mark.parametrize("method", ["list", "templates"])
def test_a_cursor_is_refused_there_is_one_page(resources: Resources, method: str) -> None:
    assert refused(lambda: getattr(resources, method)({"cursor": "next"})).code == -32602
    assert "must be a string" in refused(lambda: getattr(resources, method)({"cursor": 3})).message
    assert getattr(resources, method)({"cursor": None})  # null: no cursor


def test_the_schema_is_the_databases_own(resources: Resources, oracle: ShopOracle) -> None:
    (content,) = resources.read({"uri": "shop://schema"})["contents"]
    assert content["uri"] == "shop://schema" and content["mimeType"] == "application/sql"
    expected = [row["sql"] for row in oracle.rows("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid")]
    assert content["text"] == "".join(f"{sql};\n" for sql in expected)
    assert "CREATE TABLE orders" in content["text"] and "CREATE INDEX orders_by_status" in content["text"]


def test_an_order_reads_as_get_order_answers(resources: Resources, oracle: ShopOracle) -> None:
    low, high = oracle.order_id_range()
    for order_id in (low, 7, high):
        (content,) = resources.read({"uri": f"shop://orders/{order_id}"})["contents"]
        assert content == {"uri": f"shop://orders/{order_id}", "mimeType": "application/json", "text": content["text"]}
        assert json.loads(content["text"]) == oracle.get_order(order_id)


def test_a_product_reads_as_its_row(resources: Resources, oracle: ShopOracle) -> None:
    for row in oracle.rows("SELECT id, sku, name, category, price_cents, stock FROM products WHERE id IN (1, 3, 66)"):
        (content,) = resources.read({"uri": f"shop://products/{row['id']}"})["contents"]
        assert json.loads(content["text"]) == row
        assert content["mimeType"] == "application/json"


NOT_FOUND = [
    "shop://orders/0",
    "shop://orders/99999",
    "shop://orders/007",
    "shop://orders/-1",
    "shop://orders/1.0",
    "shop://orders/abc",
    "shop://orders/%31",
    "shop://orders/1/items",
    "shop://orders/",
    "shop://orders/99999999999999999999",
    "shop://products/0",
    "shop://products/2147483648",
    "shop://customers/1",
    "shop://schema/",
    "SHOP://schema",
    "file:///etc/passwd",
    "https://example.com/",
    "shop://orders/1' OR '1'='1",
    "",
    "\u685c",
]


@pytest.mark.parametrize("uri", NOT_FOUND)
def test_an_unknown_or_malformed_uri_is_resource_not_found(resources: Resources, uri: str) -> None:
    error = refused(lambda: resources.read({"uri": uri}))
    assert error.kind is RESOURCE_NOT_FOUND
    assert error.to_error() == {"code": -32002, "message": "Resource not found", "data": {"uri": uri}}


@pytest.mark.parametrize("params", [{}, {"uri": None}, {"uri": 7}, {"uri": ["shop://schema"]}])
def test_a_read_without_a_uri_string_is_invalid_params(resources: Resources, params: dict[str, Any]) -> None:
    error = refused(lambda: resources.read(params))
    assert error.code == -32602 and '"uri" string' in error.message


# -- prompts ---------------------------------------------------------------------------------------
def test_prompts_list(prompts: Prompts) -> None:
    listed = prompts.list({})["prompts"]
    assert listed == PROMPTS
    assert [(p["name"], [(a["name"], a["required"]) for a in p["arguments"]]) for p in listed] == [
        ("summarise_order", [("order_id", True)]),
        ("status_report", [("status", False)]),
    ]
    assert refused(lambda: prompts.list({"cursor": "x"})).code == -32602


def test_summarise_order_embeds_the_order(prompts: Prompts, resources: Resources, oracle: ShopOracle) -> None:
    got = prompts.get({"name": "summarise_order", "arguments": {"order_id": "9"}})
    assert got["description"] == "Summarise order 9"
    instruction, embedded = got["messages"]
    assert instruction["role"] == "user" and instruction["content"]["type"] == "text"
    assert "order 9" in instruction["content"]["text"]
    assert embedded["role"] == "user" and embedded["content"]["type"] == "resource"
    assert embedded["content"]["resource"] == resources.read({"uri": "shop://orders/9"})["contents"][0]
    assert json.loads(embedded["content"]["resource"]["text"]) == oracle.get_order(9)


def test_status_report_with_and_without_its_optional_argument(prompts: Prompts, oracle: ShopOracle) -> None:
    for arguments in (None, {}, {"status": "paid"}):
        params: dict[str, Any] = {"name": "status_report"}
        if arguments is not None:
            params["arguments"] = arguments
        got = prompts.get(params)
        counts = json.loads(got["messages"][1]["content"]["text"])
        assert counts == {status: oracle.count_orders(status)["count"] for status in oracle.statuses()} | counts
        assert sum(counts.values()) == oracle.count_orders()["count"]
        assert ("paid" in got["messages"][0]["content"]["text"]) is bool(arguments)


BAD_GETS = [
    ({}, 'needs a "name" string'),
    ({"name": 5}, 'needs a "name" string'),
    ({"name": "summarize_order", "arguments": {"order_id": "1"}}, "unknown prompt 'summarize_order'"),
    ({"name": "summarise_order"}, "missing required argument order_id"),
    ({"name": "summarise_order", "arguments": {}}, "missing required argument order_id"),
    ({"name": "summarise_order", "arguments": {"order_id": 7}}, "must be a string"),
    ({"name": "summarise_order", "arguments": {"order_id": None}}, "must be a string"),
    ({"name": "summarise_order", "arguments": {"order_id": "seven"}}, "a whole number"),
    ({"name": "summarise_order", "arguments": {"order_id": "007"}}, "a whole number"),
    ({"name": "summarise_order", "arguments": {"order_id": "0"}}, "a whole number"),
    ({"name": "summarise_order", "arguments": {"order_id": " 7"}}, "a whole number"),
    ({"name": "summarise_order", "arguments": {"order_id": "99999999999"}}, "a whole number"),
    ({"name": "summarise_order", "arguments": {"order_id": "99999"}}, "no order with id 99999. Order ids run from"),
    ({"name": "summarise_order", "arguments": {"order_id": "1", "tone": "warm"}}, "unexpected argument tone"),
    ({"name": "summarise_order", "arguments": ["1"]}, "must be an object of strings"),
    ({"name": "status_report", "arguments": {"status": "lost"}}, "unknown status 'lost'. Valid statuses: pending"),
]


@pytest.mark.parametrize(("params", "words"), BAD_GETS)
def test_bad_prompt_requests_are_invalid_params(prompts: Prompts, params: dict[str, Any], words: str) -> None:
    error = refused(lambda: prompts.get(params))
    assert error.code == -32602
    assert words in error.message, error.message


# -- over the wire ---------------------------------------------------------------------------------
def test_the_server_declares_what_it_serves_and_serves_it(server: Wire) -> None:
    result = server.initialize()
    assert result["capabilities"] == {
        "tools": {"listChanged": False},
        "resources": {"subscribe": False, "listChanged": False},
        "prompts": {"listChanged": False},
    }
    assert server.result("resources/list")["resources"][0]["uri"] == "shop://schema"
    assert len(server.result("resources/templates/list")["resourceTemplates"]) == 2
    assert server.result("prompts/list")["prompts"][0]["name"] == "summarise_order"
    # Not offered, so not served: subscriptions (subscribe: false), completions, logging.
    for method in ("resources/subscribe", "resources/unsubscribe", "completion/complete", "logging/setLevel"):
        assert server.error(method, {"uri": "shop://schema"})["code"] == -32601, method


def test_resource_not_found_on_the_wire(server: Wire) -> None:
    server.initialize()
    reply = server.request("resources/read", {"uri": "shop://orders/0"})
    assert reply["error"] == {"code": -32002, "message": "Resource not found", "data": {"uri": "shop://orders/0"}}
    assert server.error("prompts/get", {"name": "nope"})["code"] == -32602
    assert server.result("ping") == {}


INIT = {"protocolVersion": LATEST, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}


def exchanges(wire: Wire) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    asked = []
    for i, (method, params) in enumerate(
        [
            ("initialize", INIT),
            ("resources/list", {}),
            ("resources/templates/list", None),
            ("resources/read", {"uri": "shop://schema"}),
            ("resources/read", {"uri": "shop://orders/66"}),
            ("resources/read", {"uri": "shop://products/66"}),
            ("resources/read", {"uri": "shop://orders/nope"}),
            ("prompts/list", None),
            ("prompts/get", {"name": "summarise_order", "arguments": {"order_id": "66"}}),
            ("prompts/get", {"name": "status_report", "arguments": {"status": "refunded"}}),
            ("prompts/get", {"name": "status_report"}),
            ("prompts/get", {"name": "summarise_order"}),
        ]
    ):
        request: dict[str, Any] = {"jsonrpc": "2.0", "id": i, "method": method}
        if params is not None:
            request["params"] = params
        wire.send(request)
        reply = wire.recv()
        assert isinstance(reply, dict)
        asked.append((request, reply))
    return asked


RESULTS = {
    "initialize": (mcp_types.InitializeResult, wire_2025_11_25.InitializeResult),
    "resources/list": (mcp_types.ListResourcesResult, wire_2025_11_25.ListResourcesResult),
    "resources/templates/list": (mcp_types.ListResourceTemplatesResult, wire_2025_11_25.ListResourceTemplatesResult),
    "resources/read": (mcp_types.ReadResourceResult, wire_2025_11_25.ReadResourceResult),
    "prompts/list": (mcp_types.ListPromptsResult, wire_2025_11_25.ListPromptsResult),
    "prompts/get": (mcp_types.GetPromptResult, wire_2025_11_25.GetPromptResult),
}


def test_every_reply_validates_against_the_sdk_types(server: Wire) -> None:
    errors = 0
    for request, reply in exchanges(server):
        if "error" in reply:
            wire_2025_11_25.JSONRPCErrorResponse.model_validate(reply)
            errors += 1
            continue
        generic, wire = RESULTS[request["method"]]
        for model in (generic, wire):
            parsed = model.model_validate(reply["result"])
            dumped = parsed.model_dump(mode="json", by_alias=True, exclude_unset=True)
            assert dumped == reply["result"], f"{model.__name__} drops or changes a field"
    assert errors == 2
