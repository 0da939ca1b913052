"""Fuzzing the reference server over real pipes with hypothesis.

One long-lived server child per test function is fed many examples: random bytes, invalid
UTF-8, random JSON values, requests with random methods, ids and params (batches included
under 2025-03-26), and lines of several megabytes. After every example a ping with a fresh id
marks the end of the replies owed, so each example's replies are exactly the lines before it.

A model of the protocol rules (the oracle below, written from the JSON-RPC and MCP rules, with
tool answers from SQL on the database and argument checks by the ``jsonschema`` library) says
what each line must get: nothing, one reply with the right id and code, or one batch array.
The server must never die, never send anything but valid envelopes, never answer -32603, and
leave the database file unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import jsonschema
import pytest
from conftest import LATEST, REVISIONS, ShopOracle, Wire, error_code, same_id, tool_json
from hypothesis import HealthCheck, given, settings
from hypothesis import event as hypothesis_event
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context
from pinned_tools import INPUT_SCHEMAS

pytestmark = pytest.mark.timeout(180)  # a safety net only

FUZZ = settings(
    max_examples=200,
    deadline=None,
    derandomize=True,  # reproducible in CI
    database=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,  # on purpose: one child serves every example
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
    ],
)
INT64_MAX = (1 << 63) - 1
KNOWN_METHODS = ("initialize", "ping", "tools/list", "tools/call")


# -- the model -------------------------------------------------------------------------------
@dataclass
class Reply:
    """One expected reply: its id, and an error code or a check of the result."""

    id: Any
    code: int | None = None
    check: Callable[[Any], None] | None = None


Expected = Reply | list[Reply] | None  # None: nothing at all


def event(text: str) -> None:
    """Count what the examples exercised (shown by --hypothesis-show-statistics)."""
    if currently_in_test_context():
        hypothesis_event(text)


def as_id(value: Any) -> Any:
    """``value`` as an MCP id, or None: a string, an integer, or a number without a fraction.

    JSON has no integer type: 1e3 and 1.0 are integers to the schema, echoed as 1000 and 1.
    """
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def valid_id(value: Any) -> bool:
    return as_id(value) is not None


def id_of(message: Any) -> Any:
    return as_id(message.get("id")) if isinstance(message, dict) else None


def has_surrogate(text: str) -> bool:
    return any(0xD800 <= ord(c) <= 0xDFFF for c in text)


def no_constants(name: str) -> Any:
    raise ValueError(name)


@dataclass
class Model:
    """What the server must answer, line by line; it tracks the negotiated revision."""

    shop: ShopOracle
    schemas: dict[str, dict[str, Any]]
    version: str = LATEST
    statuses: list[str] = field(default_factory=list)
    negotiated: bool = False  # an initialize was answered: the revision is fixed for good

    def expect_line(self, line: bytes) -> Expected:
        if line.endswith(b"\r"):
            line = line[:-1]
        if not line.strip():
            return None  # a blank line carries no message
        try:
            value = json.loads(line.decode("utf-8"), parse_constant=no_constants)
        except (ValueError, RecursionError):
            return Reply(None, -32700)
        if isinstance(value, list):
            return self.expect_batch(value)
        return self.expect_message(value)

    def expect_batch(self, batch: list[Any]) -> Expected:
        if self.version != "2025-03-26" or not batch:
            return Reply(None, -32600)
        replies = []
        for item in batch:
            if isinstance(item, dict) and "id" in item and item.get("method") == "initialize":
                replies.append(Reply(id_of(item), -32600))  # never inside a batch
                continue
            reply = self.expect_message(item)
            if reply is not None:
                replies.append(reply)
        return replies or None

    def expect_message(self, message: Any) -> Reply | None:
        if not isinstance(message, dict):
            return Reply(None, -32600)
        method = message.get("method")
        if method is None and ("result" in message or "error" in message):
            return None  # shaped like a response from the client, valid or not: never answered
        if message.get("jsonrpc") != "2.0":
            return Reply(id_of(message), -32600)
        params = message.get("params", {})
        if not isinstance(method, str) or not isinstance(params, dict | list):
            return Reply(id_of(message), -32600)
        if "id" not in message:
            return None  # a notification is never answered
        request_id = as_id(message["id"])
        if request_id is None:
            return Reply(None, -32600)
        if method not in KNOWN_METHODS:
            return Reply(request_id, -32601)
        if not isinstance(params, dict):
            return Reply(request_id, -32602)
        if method == "ping":
            return Reply(request_id, check=lambda result: self.equal(result, {}))
        if method == "initialize":
            return self.expect_initialize(request_id, params)
        if method == "tools/list":
            if params.get("cursor") is not None:
                return Reply(request_id, -32602)
            return Reply(request_id, check=self.check_listing)
        return self.expect_call(request_id, params)

    def expect_initialize(self, request_id: Any, params: dict[str, Any]) -> Reply:
        if self.negotiated:
            return Reply(request_id, -32600)  # one negotiation per connection
        requested = params.get("protocolVersion")
        if not isinstance(requested, str):
            return Reply(request_id, -32602)  # refused: the session may still be negotiated
        self.version = requested if requested in REVISIONS else LATEST
        self.negotiated = True
        version = self.version

        def check(result: Any) -> None:
            assert result["protocolVersion"] == version
            assert isinstance(result["capabilities"]["tools"], dict)
            assert isinstance(result["serverInfo"]["name"], str)

        return Reply(request_id, check=check)

    def check_listing(self, result: Any) -> None:
        assert {t["name"]: t["inputSchema"] for t in result["tools"]} == self.schemas

    def expect_call(self, request_id: Any, params: dict[str, Any]) -> Reply:
        name = params.get("name")
        if not isinstance(name, str) or name not in self.schemas:
            return Reply(request_id, -32602)
        arguments = params.get("arguments", {})
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            return Reply(request_id, -32602)  # breaks CallToolRequest: malformed in every revision
        if not jsonschema.Draft202012Validator(self.schemas[name]).is_valid(arguments):
            if self.version == "2025-11-25":
                return Reply(request_id, check=self.is_tool_error)
            return Reply(request_id, -32602)
        return Reply(request_id, check=self.tool_answer(name, arguments))

    # -- tool answers, from SQL ----------------------------------------------------------------
    @staticmethod
    def equal(actual: Any, expected: Any) -> None:
        assert actual == expected

    @staticmethod
    def is_tool_error(result: Any) -> None:
        assert result["isError"] is True
        (item,) = result["content"]
        assert item["type"] == "text" and item["text"]

    @staticmethod
    def is_tool_result(result: Any) -> None:
        assert isinstance(result["isError"], bool)
        (item,) = result["content"]
        assert item["type"] == "text"

    def exactly(self, expected: Any) -> Callable[[Any], None]:
        return lambda result: self.equal(tool_json(result), expected)

    def tool_answer(self, name: str, args: dict[str, Any]) -> Callable[[Any], None]:
        check = self._tool_answer(name, args)
        event(f"tools/call {name}: {getattr(check, '__name__', 'exact answer')}")
        return check

    def _tool_answer(self, name: str, args: dict[str, Any]) -> Callable[[Any], None]:
        status = args.get("status")
        if status is not None and status not in self.statuses:
            return self.is_tool_error  # an unknown status: the tool ran and said so
        if name == "count_orders":
            return self.exactly(self.shop.count_orders(status))
        if name == "list_orders":
            customer = args.get("customer_id")
            customer = None if customer is None else int(customer)
            offset, limit = int(args.get("offset", 0)), int(args.get("limit", 20))
            if offset > INT64_MAX or (customer is not None and customer > INT64_MAX):
                return self.is_tool_error  # beyond SQLite's integers
            return self.exactly(self.shop.list_orders(status, customer, limit, offset))
        if name == "get_order":
            order_id = int(args["order_id"])
            if order_id > INT64_MAX:
                return self.is_tool_error
            order = self.shop.get_order(order_id)
            return self.is_tool_error if order is None else self.exactly(order)
        query, limit = args["query"], int(args.get("limit", 10))
        if has_surrogate(query):
            return self.is_tool_error  # a lone surrogate cannot be given to SQLite
        if "\x00" in query:
            return self.is_tool_result  # SQL LIKE and Python disagree about NUL: any answer
        return self.exactly(self.shop.search_products(query, limit))


def check_replies(actual: list[Any], expected: Expected) -> None:
    if expected is None:
        assert actual == [], f"expected no reply, got {actual!r}"
        return
    assert len(actual) == 1, f"expected exactly one reply line, got {actual!r}"
    (got,) = actual
    if isinstance(expected, list):
        assert isinstance(got, list) and len(got) == len(expected), f"expected {expected!r}, got {got!r}"
        for reply, wanted in zip(got, expected, strict=True):
            check_reply(reply, wanted)
    else:
        assert isinstance(got, dict), f"expected one object, got {got!r}"
        check_reply(got, expected)


def check_reply(reply: dict[str, Any], expected: Reply) -> None:
    assert same_id(reply["id"], expected.id), (reply, expected)
    assert error_code(reply) == expected.code, (reply, expected)
    if expected.check is not None:
        expected.check(reply["result"])


def dumps(value: Any, ascii_only: bool) -> bytes:
    """One line (no "\\n") in either spelling a client may use: raw UTF-8 or \\u escapes.

    Not reference.framing.encode on purpose: the fuzzer must be able to send lone surrogates
    (as \\u escapes), which encode() would replace.
    """
    try:
        return json.dumps(value, ensure_ascii=ascii_only).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, ensure_ascii=True).encode("utf-8")


# -- the child ------------------------------------------------------------------------------
@pytest.fixture
def fuzz(start_server: Callable[..., Wire], oracle: ShopOracle) -> Iterator[tuple[Wire, Model]]:
    """One server child and its model for every example of a test function."""
    wire = start_server(max_line=16 << 20)
    model = Model(oracle, INPUT_SCHEMAS, statuses=oracle.statuses())  # the pinned schemas, not the server's
    model.check_listing(wire.result("tools/list"))
    yield wire, model
    assert wire.alive(), f"the server died; stderr tail:\n{wire.stderr()}"
    assert wire.sync() == []
    assert wire.close() == 0


def exchange(wire: Wire, model: Model, line: bytes, timeout: float = 20.0) -> list[Any]:
    """Send one line, check its replies against the model, return them."""
    assert b"\n" not in line
    expected = model.expect_line(line)
    wire.send_raw(line + b"\n")
    actual = wire.sync(timeout)
    check_replies(actual, expected)
    event("no reply" if expected is None else "batch reply" if isinstance(expected, list) else "one reply")
    for message in actual:
        for reply in message if isinstance(message, list) else [message]:
            assert error_code(reply) != -32603, f"internal error: {reply!r}\n{wire.stderr()}"
            event(f"error {error_code(reply)}" if "error" in reply else "result")
    return actual


def negotiate(wire: Wire, model: Model, version: str) -> None:
    """The one initialize of the connection (a second one would be refused)."""
    assert not model.negotiated, f"already negotiated {model.version}"
    request = {"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {"protocolVersion": version}}
    exchange(wire, model, dumps(request, True))
    assert model.version == version


# -- strategies ----------------------------------------------------------------------------------
def mostly(usual: st.SearchStrategy[Any], odd: st.SearchStrategy[Any], odds: int = 5) -> st.SearchStrategy[Any]:
    """``usual``, except about one draw in ``odds`` from ``odd``."""
    return st.integers(0, odds - 1).flatmap(lambda n: usual if n else odd)


TEXT = st.text(st.characters(exclude_categories=()), max_size=12)  # lone surrogates included
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=12,
)
GOOD_IDS = st.integers(min_value=-(2**63), max_value=2**63) | st.text(max_size=8)
# Odd ids: some refused (null, 1.5, true, [], {}), some accepted (1.0 and -0.0 are integers, as are
# 1e300 and integers beyond 64 bits).
BAD_IDS = st.sampled_from([None, 1.5, 1.0, -0.0, 1e3, 1e300, True, False, [], {}, [1]]) | st.integers(min_value=2**64)
STATUSES = st.sampled_from(["pending", "paid", "shipped", "delivered", "cancelled", "refunded", "lost", "PAID"])
QUERIES = st.sampled_from(["mug", "MUG", "Garden", "kit-00", "%", "_", "\\", "caf\u00e9", "\u685c", "o", "x" * 101])
BIG = st.sampled_from([2.0, 1e19, 1e300, 2**63 - 1, 2**63, 10**30])
# For each argument, the values that fit its schema most of the time, and anything at all.
ARGUMENT = {
    "status": STATUSES,
    "limit": mostly(st.integers(min_value=1, max_value=100), st.sampled_from([0, 101, 5.0, 5.5, "5"])),
    "offset": mostly(st.integers(min_value=0, max_value=3100), BIG | st.just(-1)),
    "customer_id": mostly(st.integers(min_value=1, max_value=60), BIG | st.just(0)),
    "order_id": mostly(st.integers(min_value=1, max_value=3100), BIG | st.sampled_from([0, "1", 1.5])),
    "query": QUERIES | st.text(st.characters(exclude_categories=()), min_size=1, max_size=20),
}
TOOL_ARGUMENTS = {
    "count_orders": (["status"], []),
    "list_orders": (["status", "customer_id", "limit", "offset"], []),
    "get_order": (["order_id"], ["order_id"]),
    "search_products": (["query", "limit"], ["query"]),
}


@st.composite
def tool_arguments(draw: st.DrawFn, name: str) -> Any:
    names, required = TOOL_ARGUMENTS[name]
    arguments = {}
    for key in names:
        if key in required or draw(st.booleans()):
            arguments[key] = draw(mostly(ARGUMENT[key], JSON, odds=20))
    if required and draw(st.integers(0, 9)) == 0:
        del arguments[required[0]]
    if draw(st.integers(0, 14)) == 0:
        arguments[draw(st.sampled_from(["colour", *ARGUMENT]))] = draw(JSON)
    return arguments


@st.composite
def call_params(draw: st.DrawFn) -> dict[str, Any]:
    params: dict[str, Any] = {}
    name = draw(mostly(st.sampled_from(sorted(TOOL_ARGUMENTS)), TEXT | JSON))
    if draw(st.integers(0, 19)):
        params["name"] = name
    if draw(st.integers(0, 9)):
        usual = tool_arguments(name) if isinstance(name, str) and name in TOOL_ARGUMENTS else st.just({})
        params["arguments"] = draw(mostly(usual, JSON, odds=12))
    return params


PARAMS: dict[str, st.SearchStrategy[Any]] = {
    "initialize": st.fixed_dictionaries(
        {"protocolVersion": mostly(st.sampled_from([*REVISIONS, "1999-01-01", ""]), JSON)},
        optional={
            "capabilities": st.just({}) | JSON,
            "clientInfo": st.fixed_dictionaries({"name": TEXT, "version": TEXT}) | JSON,
        },
    ),
    "ping": st.just({}) | st.dictionaries(TEXT, JSON, max_size=2),
    "tools/list": st.fixed_dictionaries({}, optional={"cursor": st.none() | TEXT | JSON}),
    "tools/call": call_params(),
}
# Methods the reference does not serve (resources/list and prompts/get it does: not modelled here).
OTHER_METHODS = st.sampled_from(["tools/lisst", "resources/subscribe", "completion/complete", "logging/setLevel", ""])
OTHER_METHODS |= TEXT.filter(lambda method: not method.startswith(("resources/", "prompts/")))
NOTIFICATIONS = st.sampled_from(["notifications/initialized", "notifications/cancelled", "initialize", "ping"])


@st.composite
def messages(draw: st.DrawFn) -> Any:
    """A request (mostly), a notification, a response, or something malformed."""
    kind = draw(st.integers(0, 19))
    message: dict[str, Any] = {"jsonrpc": "2.0"}
    if kind < 15:  # a request
        method = draw(mostly(st.sampled_from(KNOWN_METHODS), OTHER_METHODS, odds=6))
        message["id"] = draw(mostly(GOOD_IDS, BAD_IDS, odds=15))
        message["method"] = method
        if method in PARAMS:
            if draw(st.integers(0, 9)):
                message["params"] = draw(mostly(PARAMS[method], JSON, odds=10))
        elif draw(st.booleans()):
            message["params"] = draw(JSON)
    elif kind < 17:  # a notification
        message["method"] = draw(NOTIFICATIONS | OTHER_METHODS)
        if draw(st.booleans()):
            message["params"] = draw(st.dictionaries(TEXT, JSON, max_size=3) | JSON)
    elif kind < 18:  # a response from the client
        message["id"] = draw(GOOD_IDS | BAD_IDS)
        message[draw(st.sampled_from(["result", "error"]))] = draw(JSON)
    else:  # anything goes
        message = draw(st.dictionaries(st.sampled_from(["jsonrpc", "id", "method", "params", "result"]), JSON))
        if draw(st.booleans()):
            message.setdefault("jsonrpc", draw(st.sampled_from(["2.0", "1.0", 2.0, None])))
    return message


# -- the tests -----------------------------------------------------------------------------------
@FUZZ
@given(data=st.binary(max_size=300))
def test_random_bytes(fuzz: tuple[Wire, Model], data: bytes) -> None:
    wire, model = fuzz
    for line in data.split(b"\n"):
        exchange(wire, model, line)


BAD_UTF8 = [b"\xff", b"\xfe", b"\x80", b"\xc3\x28", b"\xa0\xa1", b"\xe2\x28\xa1", b"\xed\xa0\x80", b"\xc0\xaf"]
BAD_UTF8 += [b"\xf8\x88\x80\x80\x80", b"\xf4\x90\x80\x80", b"\xe2\x82", b"\xf0\x9f\x98"]


@FUZZ
@given(
    request=messages(),
    bad=st.sampled_from(BAD_UTF8) | st.binary(min_size=1, max_size=8).filter(lambda b: not b.isascii()),
    where=st.floats(min_value=0, max_value=1),
)
def test_invalid_utf8(fuzz: tuple[Wire, Model], request: Any, bad: bytes, where: float) -> None:
    wire, model = fuzz
    line = dumps(request, ascii_only=False)
    cut = int(len(line) * where)
    line = (line[:cut] + bad + line[cut:]).replace(b"\n", b"")
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        replies = exchange(wire, model, line)
        assert len(replies) == 1 and replies[0]["id"] is None and error_code(replies[0]) == -32700
    else:  # the random bytes happened to complete a valid sequence: still checked by the model
        exchange(wire, model, line)


@pytest.mark.parametrize("version", ["2025-11-25", "2025-03-26"])
@FUZZ
@given(value=JSON, ascii_only=st.booleans())
def test_random_json_values(fuzz: tuple[Wire, Model], version: str, value: Any, ascii_only: bool) -> None:
    wire, model = fuzz
    if not model.negotiated:
        negotiate(wire, model, version)
    exchange(wire, model, dumps(value, ascii_only))


@pytest.mark.parametrize("version", ["2025-06-18", "2025-03-26"])
@settings(FUZZ, max_examples=300)
@given(
    batch=st.lists(messages(), min_size=1, max_size=6),
    single=mostly(st.just(True), st.just(False), odds=6),
    ascii_only=st.booleans(),
    crlf=st.booleans(),
)
def test_random_requests(
    fuzz: tuple[Wire, Model], version: str, batch: list[Any], single: bool, ascii_only: bool, crlf: bool
) -> None:
    wire, model = fuzz
    if not model.negotiated and single:
        negotiate(wire, model, version)  # once: random initialize requests are refused after it
    payload: Any = batch[0] if single else batch
    exchange(wire, model, dumps(payload, ascii_only) + (b"\r" if crlf else b""))


@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18"])
@settings(FUZZ, max_examples=300)
@given(request_id=GOOD_IDS, params=call_params(), ascii_only=st.booleans())
def test_random_tool_calls(
    fuzz: tuple[Wire, Model], version: str, request_id: Any, params: dict[str, Any], ascii_only: bool
) -> None:
    wire, model = fuzz
    if not model.negotiated:
        negotiate(wire, model, version)
    request = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    exchange(wire, model, dumps(request, ascii_only))


@st.composite
def huge_lines(draw: st.DrawFn) -> bytes:
    size = draw(st.integers(min_value=1 << 20, max_value=3 << 20))
    kind = draw(st.sampled_from(["garbage", "blank", "nested", "string", "method", "query", "unterminated"]))
    if kind == "garbage":
        return draw(st.binary(min_size=1, max_size=64)).replace(b"\n", b"") * (size // 32)
    if kind == "blank":
        return b" \t" * (size // 2)
    if kind == "nested":
        return b"[" * size + b"]" * draw(st.sampled_from([0, size]))
    if kind == "unterminated":
        return b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"' + b"a" * size
    text = draw(st.sampled_from(["a", "\u2615", "\u00e9", "\\"])) * (size // 3)
    request: dict[str, Any] = {"jsonrpc": "2.0", "id": draw(GOOD_IDS), "method": "ping", "params": {"x": text}}
    if kind == "method":
        request["method"] = text
    elif kind == "query":
        request["method"] = "tools/call"
        request["params"] = {"name": "search_products", "arguments": {"query": text}}
    return dumps(request, ascii_only=draw(st.booleans()))


@settings(FUZZ, max_examples=15)
@given(line=huge_lines())
def test_huge_lines(fuzz: tuple[Wire, Model], line: bytes) -> None:
    wire, model = fuzz
    exchange(wire, model, line, timeout=60)


def test_batch_of_many_pings(fuzz: tuple[Wire, Model]) -> None:
    wire, model = fuzz
    negotiate(wire, model, "2025-03-26")
    batch = [{"jsonrpc": "2.0", "id": i, "method": "ping"} for i in range(20_000)]
    (reply,) = exchange(wire, model, dumps(batch, True), timeout=60)
    assert [r["id"] for r in reply] == list(range(20_000))
