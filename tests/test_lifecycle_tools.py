"""reference.lifecycle, reference.schema, reference.tools and reference.shop, in process.

Version negotiation and what each revision changes; the JSON Schema subset (checked against the
``jsonschema`` library as an independent judge); tools/list and tools/call with the two kinds of
error; and every shop tool's answer compared with SQL run directly on the database. The shop's
schemas are judged against the literal in ``pinned_tools.py``, never against themselves.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from conftest import LATEST, REVISIONS, ShopOracle, tool_error_text, tool_json
from hypothesis import given, settings
from hypothesis import strategies as st
from pinned_tools import INPUT_SCHEMAS, OUTPUT_SCHEMAS, PINNED_TOOLS, pinned_listing

from reference import PROTOCOL_REVISION, database, lifecycle
from reference.errors import RpcError
from reference.schema import problems
from reference.shop import shop_toolbox
from reference.tools import Tool, Toolbox, ToolError, structured_result, text_result

# A net only: every wait on a child here is bounded in seconds by the test (the slowest test takes
# about 3 s); this stops a hang in code under test (a mutant) in a minute, not pytest's 300 s.
pytestmark = pytest.mark.timeout(60)

# -- lifecycle ------------------------------------------------------------------------------


def test_latest_is_the_course_revision() -> None:
    assert lifecycle.LATEST == PROTOCOL_REVISION == LATEST
    assert set(lifecycle.SUPPORTED) == set(REVISIONS)


@pytest.mark.parametrize("version", REVISIONS)
def test_supported_version_is_echoed(version: str) -> None:
    assert lifecycle.negotiate(version) == version


@pytest.mark.parametrize("version", ["1999-01-01", "2026-07-28", "", "2025-11-25 ", "latest"])
def test_unknown_version_gets_the_latest(version: str) -> None:
    assert lifecycle.negotiate(version) == LATEST


@pytest.mark.parametrize("version", [None, 20251125, ["2025-11-25"], {"v": 1}, True])
def test_non_string_version_is_invalid_params(version: Any) -> None:
    with pytest.raises(RpcError) as caught:
        lifecycle.negotiate(version)
    assert caught.value.kind.code == -32602


@pytest.mark.parametrize("version", REVISIONS)
def test_what_each_revision_changes(version: str) -> None:
    session = lifecycle.Session(version=version)
    assert session.batches_allowed is (version == "2025-03-26")
    assert session.bad_arguments_are_tool_errors is (version == "2025-11-25")
    assert session.structured_output is (version in ("2025-11-25", "2025-06-18"))


def test_session_before_initialize_uses_the_latest() -> None:
    session = lifecycle.Session()
    assert session.version == LATEST and not session.initialize_seen and not session.initialized
    assert session.bad_arguments_are_tool_errors and not session.batches_allowed


def test_session_initialize_result() -> None:
    session = lifecycle.Session()
    info = {"name": "srv", "version": "1"}
    params = {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "me", "version": "2"}}
    result = session.initialize(params, info, {"tools": {}}, "read me")
    assert result == {
        "protocolVersion": "2025-03-26",
        "capabilities": {"tools": {}},
        "serverInfo": info,
        "instructions": "read me",
    }
    assert session.version == "2025-03-26" and session.initialize_seen and session.client_name == "me"
    assert session.batches_allowed


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"protocolVersion": 1}, 'Invalid params: "protocolVersion" must be a string such as "2025-11-25"'),
        ([], "Invalid params: initialize params must be an object"),
        (None, "Invalid params: initialize params must be an object"),
    ],
)
def test_session_initialize_bad_params_changes_nothing(params: Any, message: str) -> None:
    session = lifecycle.Session(version="2025-03-26")
    with pytest.raises(RpcError) as caught:
        session.initialize(params, {}, {}, "")
    assert caught.value.to_error() == {"code": -32602, "message": message}
    assert session.version == "2025-03-26" and not session.initialize_seen


@pytest.mark.parametrize("first", REVISIONS)
@pytest.mark.parametrize("second", [*REVISIONS, "1999-01-01", 7])
def test_second_initialize_is_refused_and_keeps_the_session(first: str, second: Any) -> None:
    session = lifecycle.Session()
    session.initialize({"protocolVersion": first, "clientInfo": {"name": "one"}}, {}, {}, "")
    with pytest.raises(RpcError) as caught:
        session.initialize({"protocolVersion": second, "clientInfo": {"name": "two"}}, {}, {}, "")
    assert caught.value.kind.code == -32600
    assert f"revision {first} negotiated" in str(caught.value) and "new connection" in str(caught.value)
    assert session.version == first and session.client_name == "one"
    assert session.batches_allowed is (first == "2025-03-26")


def test_initialize_may_be_retried_after_a_refused_one() -> None:
    session = lifecycle.Session()
    with pytest.raises(RpcError):
        session.initialize({"protocolVersion": None}, {}, {}, "")
    assert session.initialize({"protocolVersion": "2024-11-05"}, {}, {}, "")["protocolVersion"] == "2024-11-05"


# -- schema ---------------------------------------------------------------------------------
SCHEMA = {
    "type": "object",
    "properties": {
        "n": {"type": "integer", "minimum": 1, "maximum": 10},
        "s": {"type": "string", "minLength": 2, "maxLength": 4},
        "e": {"type": "string", "enum": ["a", "b"]},
        "x": {"type": "number"},
        "b": {"type": "boolean"},
    },
    "required": ["n"],
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    ("value", "found"),
    [
        ({"n": 1}, []),
        ({"n": 3.0}, []),  # JSON Schema: 3.0 is an integer
        ({"n": 3.5}, ["n must be an integer"]),
        ({"n": True}, ["n must be an integer"]),  # a bool is not a number in JSON
        ({"n": 0}, ["n must be at least 1"]),
        ({"n": 11}, ["n must be at most 10"]),
        ({"n": 1, "s": "a"}, ["s must have at least 2 characters"]),
        ({"n": 1, "s": "abcde"}, ["s must have at most 4 characters"]),
        ({"n": 1, "e": "c"}, ["e must be one of a, b"]),
        ({"n": 1, "x": 2.5, "b": False}, []),
        ({"n": 1, "x": "2"}, ["x must be a number"]),
        ({"n": 1, "b": 0}, ["b must be a boolean"]),
        ({}, ["missing required argument n"]),
        ({"n": 1, "zz": 1}, ["unexpected argument zz"]),
        ([], ["arguments must be an object"]),
        (None, ["arguments must be an object"]),
    ],
)
def test_problems(value: Any, found: list[str]) -> None:
    assert problems(SCHEMA, value) == found
    assert jsonschema.Draft202012Validator(SCHEMA).is_valid(value) is (found == [])


def test_problems_lists_every_problem() -> None:
    assert problems(SCHEMA, {"s": "a", "zz": 0}) == [
        "missing required argument n",
        "s must have at least 2 characters",
        "unexpected argument zz",
    ]


# -- tools ----------------------------------------------------------------------------------
def echo_tool(name: str = "echo") -> Tool:
    schema = {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
        "additionalProperties": False,
    }

    def run(args: dict[str, Any]) -> Any:
        if args["text"] == "fail":
            raise ToolError("it failed, try another text")
        if args["text"] == "crash":
            raise KeyError("crash")
        if args["text"] == "json":
            return {"a": ["\u2615", 1]}
        return args["text"]

    return Tool(name, "Echo", "Repeat the text.", schema, run)


@pytest.mark.parametrize("name", ["a", "A-b_9", "x" * 64])
def test_tool_names_accepted(name: str) -> None:
    assert echo_tool(name).describe()["name"] == name


@pytest.mark.parametrize("name", ["", "x" * 65, "has space", "dot.name", "slash/name", "caf\u00e9"])
def test_tool_names_refused(name: str) -> None:
    with pytest.raises(ValueError):
        echo_tool(name)


def test_toolbox_refuses_duplicate_names() -> None:
    with pytest.raises(ValueError):
        Toolbox([echo_tool(), echo_tool()])


def test_toolbox_list_and_cursor() -> None:
    box = Toolbox([echo_tool()])
    listing = box.list({})
    assert [t["name"] for t in listing["tools"]] == ["echo"]
    assert "nextCursor" not in listing
    assert box.list({"cursor": None}) == listing
    with pytest.raises(RpcError) as caught:
        box.list({"cursor": "page2"})
    assert caught.value.kind.code == -32602 and "unknown cursor" in str(caught.value)


@pytest.mark.parametrize("cursor", [2, 0, 1.5, True, False, [], {}, ["page2"]])
def test_toolbox_list_non_string_cursor_says_what_a_cursor_is(cursor: Any) -> None:
    with pytest.raises(RpcError) as caught:
        Toolbox([echo_tool()]).list({"cursor": cursor})
    assert caught.value.kind.code == -32602
    assert "must be a string" in str(caught.value) and "nextCursor" in str(caught.value)
    assert "unknown cursor" not in str(caught.value)


def test_text_result() -> None:
    assert text_result("hi") == {"content": [{"type": "text", "text": "hi"}], "isError": False}
    assert json.loads(text_result({"k": "\u2615"})["content"][0]["text"]) == {"k": "\u2615"}
    assert text_result("bad", is_error=True)["isError"] is True


@pytest.mark.parametrize("tool_errors", [True, False])
def test_toolbox_call(tool_errors: bool, capsys: pytest.CaptureFixture[str]) -> None:
    box = Toolbox([echo_tool()])
    assert box.call({"name": "echo", "arguments": {"text": "hi"}}, tool_errors)["content"][0]["text"] == "hi"
    assert tool_json(box.call({"name": "echo", "arguments": {"text": "json"}}, tool_errors)) == {"a": ["\u2615", 1]}
    # A tool execution error is a result in every revision.
    failed = box.call({"name": "echo", "arguments": {"text": "fail"}}, tool_errors)
    assert tool_error_text(failed) == "it failed, try another text"
    crashed = box.call({"name": "echo", "arguments": {"text": "crash"}}, tool_errors)
    assert "KeyError" in tool_error_text(crashed)
    assert "KeyError" in capsys.readouterr().err
    # Unknown tools and missing names are protocol errors in every revision.
    for params in ({"name": "nope"}, {}, {"name": 3}):
        with pytest.raises(RpcError) as caught:
            box.call(params, tool_errors)
        assert caught.value.kind.code == -32602
    # Bad arguments (an object that breaks the inputSchema): the revision decides.
    for arguments in ({}, None, {"text": 1}, {"text": "a", "more": 1}):
        params = {"name": "echo", "arguments": arguments}
        if tool_errors:
            text = tool_error_text(box.call(params, tool_errors))
            assert "echo" in text and "inputSchema" in text
        else:
            with pytest.raises(RpcError) as caught:
                box.call(params, tool_errors)
            assert caught.value.kind.code == -32602
    # Arguments that are not an object break CallToolRequest itself: -32602 in every revision.
    for arguments in (["text"], [], "x", 3, True):
        with pytest.raises(RpcError) as caught:
            box.call({"name": "echo", "arguments": arguments}, tool_errors)
        assert caught.value.kind.code == -32602 and "must be an object" in str(caught.value)


@pytest.mark.parametrize("tool_errors", [True, False])
def test_absent_or_null_arguments_are_no_arguments(tool_errors: bool) -> None:
    # Lenient on purpose: absent and null both mean {} (then checked against the inputSchema).
    box = Toolbox([Tool("free", "Free", "No arguments.", {"type": "object"}, lambda args: args)])
    for params in ({"name": "free"}, {"name": "free", "arguments": None}, {"name": "free", "arguments": {}}):
        assert tool_json(box.call(params, tool_errors)) == {}


def test_unknown_tool_message_lists_the_tools() -> None:
    box = Toolbox([echo_tool("one"), echo_tool("two")])
    with pytest.raises(RpcError, match="one, two"):
        box.call({"name": "three"}, True)


# -- structured output (2025-06-18 on) -----------------------------------------------------------
COUNT_SCHEMA = {
    "type": "object",
    "properties": {"count": {"type": "integer"}},
    "required": ["count"],
    "additionalProperties": False,
}


def counting_tool(value: Any = None) -> Tool:
    """A tool with an outputSchema; it fails on request, and returns ``value`` when one is given."""

    def run(args: dict[str, Any]) -> Any:
        if args.get("fail"):
            raise ToolError("no count today")
        return {"count": 3} if value is None else value

    schema = {"type": "object", "properties": {"fail": {"type": "boolean"}}, "additionalProperties": False}
    return Tool("count", "Count", "Count.", schema, run, output_schema=COUNT_SCHEMA)


def test_output_schema_is_listed_only_with_structured_output() -> None:
    box = Toolbox([counting_tool(), echo_tool()])
    listed = {t["name"]: t for t in box.list({})["tools"]}
    assert listed["count"]["outputSchema"] == COUNT_SCHEMA
    assert list(listed["count"]) == ["name", "title", "description", "inputSchema", "outputSchema", "annotations"]
    assert "outputSchema" not in listed["echo"]  # a tool without one declares none
    assert box.list({}, structured_output=True) == box.list({})
    plain = box.list({}, structured_output=False)["tools"]
    assert [list(t) for t in plain] == [["name", "title", "description", "inputSchema", "annotations"]] * 2


@pytest.mark.parametrize("tool_errors", [True, False])
def test_structured_results_follow_the_revision(tool_errors: bool) -> None:
    box = Toolbox([counting_tool(), echo_tool()])
    structured = box.call({"name": "count", "arguments": {}}, tool_errors)
    assert structured == {
        "content": [{"type": "text", "text": '{"count": 3}'}],
        "structuredContent": {"count": 3},
        "isError": False,
    }
    assert box.call({"name": "count", "arguments": {}}, tool_errors, structured_output=False) == text_result(
        {"count": 3}
    )
    # A tool without an outputSchema answers with text only, whatever the revision.
    plain = box.call({"name": "echo", "arguments": {"text": "json"}}, tool_errors)
    assert "structuredContent" not in plain


@pytest.mark.parametrize("structured", [True, False])
def test_error_results_carry_no_structured_content(structured: bool) -> None:
    box = Toolbox([counting_tool()])
    failed = box.call({"name": "count", "arguments": {"fail": True}}, True, structured)
    assert failed == text_result("no count today", is_error=True)
    bad = box.call({"name": "count", "arguments": {"fail": "yes"}}, True, structured)
    assert bad["isError"] is True and "structuredContent" not in bad


def test_a_tool_with_an_output_schema_must_return_an_object(capsys: pytest.CaptureFixture[str]) -> None:
    box = Toolbox([counting_tool(value=[1, 2])])
    crashed = box.call({"name": "count", "arguments": {}}, True)
    assert crashed["isError"] is True and "TypeError" in tool_error_text(crashed)
    assert "must be a JSON object" in capsys.readouterr().err
    with pytest.raises(TypeError):
        structured_result("text")  # type: ignore[arg-type]


# -- the shop's tools, in process, against SQL ------------------------------------------------------
@pytest.fixture(scope="module")
def shop(shop_db: Path) -> Iterator[Toolbox]:
    conn = database.open_readonly(shop_db)
    yield shop_toolbox(conn)
    conn.close()


def call(box: Toolbox, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return box.call({"name": name, "arguments": arguments}, True)


def test_shop_tools_are_the_pinned_ones(shop: Toolbox) -> None:
    # Exactly the literal: names, titles, descriptions, both schemas and the annotations, in order.
    assert shop.list({}) == pinned_listing()
    assert [list(t) for t in shop.list({})["tools"]] == [list(t) for t in PINNED_TOOLS]
    assert shop.list({}, structured_output=False) == pinned_listing(structured_output=False)
    assert shop.list({"cursor": None}) == pinned_listing()


def test_shop_tool_descriptions(shop: Toolbox) -> None:
    tools = shop.list({})["tools"]
    names = [t["name"] for t in tools]
    assert {"count_orders", "list_orders", "get_order", "search_products"} <= set(names)
    assert len(names) == len(set(names))
    for tool in tools:
        assert re.fullmatch(r"[A-Za-z0-9_-]{1,64}", tool["name"])
        assert tool["description"] and tool["title"]
        schema = tool["inputSchema"]
        assert schema["type"] == "object"
        jsonschema.Draft202012Validator.check_schema(schema)
        assert tool["annotations"]["readOnlyHint"] is True
        assert tool["annotations"]["destructiveHint"] is False


def test_shop_output_schemas_are_exact_json_schemas() -> None:
    for name, schema in OUTPUT_SCHEMAS.items():
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object" and schema["additionalProperties"] is False, name
        assert set(schema["required"]) <= set(schema["properties"]), name


SHOP_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("count_orders", {}),
    *[("count_orders", {"status": s}) for s in ("pending", "paid", "shipped", "delivered", "cancelled", "refunded")],
    ("list_orders", {}),
    ("list_orders", {"status": "pending", "limit": 100, "offset": 5}),
    ("list_orders", {"customer_id": 3}),
    ("list_orders", {"offset": 10**6}),
    ("get_order", {"order_id": 1}),
    ("get_order", {"order_id": 3000}),
    ("search_products", {"query": "mug"}),
    ("search_products", {"query": "\u685c", "limit": 50}),
    ("search_products", {"query": "zzzz-nothing"}),
]


def test_shop_results_conform_to_their_output_schemas(shop: Toolbox) -> None:
    assert {name for name, _ in SHOP_CALLS} == set(OUTPUT_SCHEMAS), "every tool is exercised"
    for name, arguments in SHOP_CALLS:
        result = call(shop, name, arguments)
        structured = result["structuredContent"]
        jsonschema.Draft202012Validator(OUTPUT_SCHEMAS[name]).validate(structured)
        assert tool_json(result) == structured, "the text block holds the same JSON"
        assert list(result) == ["content", "structuredContent", "isError"]
        # The older revisions get exactly the text, with no structuredContent.
        assert shop.call({"name": name, "arguments": arguments}, False, structured_output=False) == {
            "content": result["content"],
            "isError": False,
        }


@pytest.mark.parametrize(
    ("name", "arguments"),
    [("count_orders", {}), ("count_orders", {"status": "paid"})],
)
def test_count_orders_status_is_present_only_when_asked(shop: Toolbox, name: str, arguments: dict[str, Any]) -> None:
    structured = call(shop, name, arguments)["structuredContent"]
    assert ("status" in structured) is ("status" in arguments)


def test_output_schemas_refuse_what_the_tools_never_return(shop: Toolbox) -> None:
    wrong = [
        ("count_orders", {"count": "187"}),
        ("count_orders", {"status": "paid"}),
        ("count_orders", {"status": "lost", "count": 1}),
        ("count_orders", {"count": 1, "extra": 2}),
        ("list_orders", {"total": 1, "offset": 0}),
        ("list_orders", {"total": 1, "offset": 0, "orders": [{"id": 1}]}),
        ("get_order", {**call(shop, "get_order", {"order_id": 1})["structuredContent"], "total_cents": None}),
        ("search_products", {"query": "mug", "products": [{"id": 1, "sku": "x"}]}),
    ]
    for name, value in wrong:
        assert not jsonschema.Draft202012Validator(OUTPUT_SCHEMAS[name]).is_valid(value), (name, value)


def test_count_orders(shop: Toolbox, oracle: ShopOracle) -> None:
    assert tool_json(call(shop, "count_orders", {})) == oracle.count_orders()
    statuses = oracle.statuses()
    for status in statuses:
        assert tool_json(call(shop, "count_orders", {"status": status})) == oracle.count_orders(status)
    assert sum(oracle.count_orders(s)["count"] for s in statuses) == oracle.count_orders()["count"]


@pytest.mark.parametrize("status", ["lost", "PAID", "", "paid ", "'; DROP TABLE orders; --"])
def test_unknown_status_is_a_tool_error_naming_the_valid_ones(shop: Toolbox, oracle: ShopOracle, status: str) -> None:
    for name in ("count_orders", "list_orders"):
        text = tool_error_text(call(shop, name, {"status": status}))
        assert repr(status) in text
        for valid in oracle.statuses():
            assert valid in text


@pytest.mark.parametrize(
    "arguments",
    [
        {},
        {"limit": 1},
        {"limit": 100, "offset": 2950},
        {"status": "pending", "limit": 7, "offset": 3},
        {"customer_id": 5},
        {"customer_id": 3, "status": "delivered", "limit": 100},
        {"offset": 10**6},
        {"customer_id": 10**6},
        {"limit": 5.0},
    ],
)
def test_list_orders(shop: Toolbox, oracle: ShopOracle, arguments: dict[str, Any]) -> None:
    expected = oracle.list_orders(
        status=arguments.get("status"),
        customer_id=arguments.get("customer_id"),
        limit=int(arguments.get("limit", 20)),
        offset=int(arguments.get("offset", 0)),
    )
    assert tool_json(call(shop, "list_orders", arguments)) == expected


def test_get_order(shop: Toolbox, oracle: ShopOracle) -> None:
    low, high = oracle.order_id_range()
    for order_id in (low, 2, 1234, high):
        answer = tool_json(call(shop, "get_order", {"order_id": order_id}))
        assert answer == oracle.get_order(order_id)
        assert answer["total_cents"] == sum(i["quantity"] * i["unit_price_cents"] for i in answer["items"])


@pytest.mark.parametrize("order_id", ["high+1", 10**9])
def test_get_order_not_found_says_which_ids_exist(shop: Toolbox, oracle: ShopOracle, order_id: Any) -> None:
    low, high = oracle.order_id_range()
    wanted = high + 1 if order_id == "high+1" else order_id
    assert oracle.get_order(wanted) is None
    text = tool_error_text(call(shop, "get_order", {"order_id": wanted}))
    assert str(wanted) in text and str(low) in text and str(high) in text


@pytest.mark.parametrize(
    ("query", "limit"),
    [
        ("mug", 10),
        ("MUG", 50),
        ("garden", 50),
        ("kit-00", 3),
        ("\u685c", 50),  # a CJK character in some product names
        ("caf\u00e9", 50),
        ("CAF\u00c9", 50),  # LIKE folds ASCII letters only
        ("%", 50),  # wildcards are searched for literally
        ("_", 50),
        ("\\", 50),
        ("'; DROP TABLE products; --", 50),
        ("zzzz-nothing", 10),
    ],
)
def test_search_products(shop: Toolbox, oracle: ShopOracle, query: str, limit: int) -> None:
    assert tool_json(call(shop, "search_products", {"query": query, "limit": limit})) == (
        oracle.search_products(query, limit)
    )


def test_search_products_default_limit(shop: Toolbox, oracle: ShopOracle) -> None:
    answer = tool_json(call(shop, "search_products", {"query": "o"}))
    assert answer == oracle.search_products("o")
    assert len(answer["products"]) == 10  # "o" matches far more than the default limit


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("count_orders", {"status": 3}),
        ("count_orders", {"state": "paid"}),
        ("list_orders", {"limit": 0}),
        ("list_orders", {"limit": 101}),
        ("list_orders", {"offset": -1}),
        ("list_orders", {"customer_id": "5"}),
        ("get_order", {}),
        ("get_order", {"order_id": 0}),
        ("get_order", {"order_id": 1.5}),
        ("search_products", {"query": ""}),
        ("search_products", {"query": "x" * 101}),
        ("search_products", {"query": "mug", "limit": 51}),
    ],
)
def test_shop_bad_arguments(shop: Toolbox, name: str, arguments: dict[str, Any]) -> None:
    assert not jsonschema.Draft202012Validator(INPUT_SCHEMAS[name]).is_valid(arguments)
    assert "invalid arguments" in tool_error_text(call(shop, name, arguments))
    with pytest.raises(RpcError) as caught:
        shop.call({"name": name, "arguments": arguments}, False)
    assert caught.value.kind.code == -32602


def test_shop_connection_is_read_only(shop_db: Path) -> None:
    conn = database.open_readonly(shop_db)
    try:
        with pytest.raises(sqlite3.OperationalError):
            conn.execute("DELETE FROM orders")
    finally:
        conn.close()


# The schema subset must agree with a full JSON Schema validator on the shop's schemas.
ARGUMENT_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-5, max_value=200),
    st.floats(min_value=-5, max_value=200, allow_nan=False),
    st.sampled_from([1.0, 2.0, 50.0, 100.0, 101.0]),
    st.text(max_size=3),
    st.text(min_size=99, max_size=102),
    st.sampled_from(["paid", "lost", "mug", ""]),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
)
ARGUMENT_NAMES = st.sampled_from(["status", "limit", "offset", "customer_id", "order_id", "query", "other"])


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(
    name=st.sampled_from(["count_orders", "list_orders", "get_order", "search_products"]),
    arguments=st.dictionaries(ARGUMENT_NAMES, ARGUMENT_VALUES, max_size=4),
)
def test_schema_subset_agrees_with_jsonschema(name: str, arguments: dict[str, Any]) -> None:
    schema = INPUT_SCHEMAS[name]
    found = problems(schema, arguments)
    assert (found == []) is jsonschema.Draft202012Validator(schema).is_valid(arguments), found
