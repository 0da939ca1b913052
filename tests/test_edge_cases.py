"""Protocol edge cases, one table, each row run against a real server child over real pipes.

A row names the case, the revision negotiated first (or none: no initialize at all), and the
lines sent, each with the reply it must get: an exact JSON value (compared with the JSON types:
7 is not "7", 1 is not 1.0 or true), the exact bytes of the reply line where the bytes matter,
or SILENT. Silence is proven, not waited for: after every line a ping with a fresh id is sent,
and its reply must be the very next line (a server answers in order).

Every read is bounded by WAIT seconds; the module's pytest timeout is only a safety net.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from conftest import ShopOracle, Wire
from pinned_tools import pinned_listing

from reference.framing import MAX_LINE_BYTES, encode
from reference.server import INSTRUCTIONS, SERVER_INFO

pytestmark = pytest.mark.timeout(120)  # a safety net only: every wait below is bounded by WAIT

WAIT = 10.0  # seconds for any one reply; generous for a loaded CI machine, a hang still fails
SILENT = None  # the line must get no reply at all
ALL_ORDERS = 3000  # the seeded shop's order count (checked against SQL by a test below)


# -- the expected replies -----------------------------------------------------------------------
def ok(id: Any, result: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "result": {} if result is None else result}


def err(id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}


def text(value: str, is_error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}], "isError": is_error}


def all_orders(version: str | None) -> dict[str, Any]:
    """count_orders with no status: structuredContent too from 2025-06-18 (and before initialize)."""
    result = text(f'{{"count": {ALL_ORDERS}}}')
    if version is None or version >= "2025-06-18":
        return {"content": result["content"], "structuredContent": {"count": ALL_ORDERS}, "isError": False}
    return result


def tool_error(id: Any, problem: str) -> dict[str, Any]:
    """Bad arguments as a tool execution error (2025-11-25): a result the model can act on."""
    return ok(id, text(f"invalid arguments for {problem}. Check the tool's inputSchema and call again.", True))


def init_result(version: str) -> dict[str, Any]:
    return {
        "protocolVersion": version,
        "capabilities": {
            "tools": {"listChanged": False},
            "resources": {"subscribe": False, "listChanged": False},
            "prompts": {"listChanged": False},
        },
        "serverInfo": SERVER_INFO,
        "instructions": INSTRUCTIONS,
    }


LISTING = pinned_listing()  # written out by hand: never the listing the code under test builds
BAD_ID = "Invalid Request: the id must be a string or an integer (not null, not 1.5, not true)"
NO_BATCHES = "Invalid Request: batches (JSON arrays) exist only in revision 2025-03-26"
PARAMS_NOT_OBJECT = 'Invalid Request: "params" must be an object'
NOT_A_CURSOR = 'Invalid params: "cursor" must be a string (an opaque token from nextCursor), got '


def second_init(negotiated: str) -> str:
    return (
        f"Invalid Request: initialize was already answered (revision {negotiated} negotiated); "
        "start a new connection to negotiate again"
    )


def not_an_object(tool: str, kind: str) -> str:
    return f'Invalid params: "arguments" for {tool} must be an object, got {kind}'


# -- the lines sent -----------------------------------------------------------------------------
def ping(id: str) -> str:
    """A ping with the id written as raw JSON text (so 1e3 stays 1e3 on the wire)."""
    return f'{{"jsonrpc":"2.0","id":{id},"method":"ping"}}'


def request(id: Any, method: str, params: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def call(id: Any, tool: str, arguments: Any) -> dict[str, Any]:
    return request(id, "tools/call", {"name": tool, "arguments": arguments})


def initialize(id: Any, version: Any) -> dict[str, Any]:
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "edge", "version": "1"}}
    return request(id, "initialize", params)


def note(method: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method}


Line = str | bytes | dict[str, Any] | list[Any]  # raw JSON text (str/bytes) or a value to encode


def wire_bytes(line: Line) -> bytes:
    """One line as sent, without its "\\n": text as it is (escapes kept), values via encode()."""
    if isinstance(line, bytes):
        return line
    if isinstance(line, str):
        return line.encode("utf-8")
    return encode(line).rstrip(b"\n")


# -- the table ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Row:
    name: str
    version: str | None  # negotiated before the steps (initialize + initialized); None: no initialize
    steps: tuple[tuple[Line, Any], ...]  # (a line sent, its reply: a JSON value, exact bytes, or SILENT)


def row(name: str, version: str | None, *steps: tuple[Line, Any]) -> Row:
    return Row(name, version, steps)


REVISIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
NOT_BATCHING = ("2025-11-25", "2025-06-18", "2024-11-05", None)

ROWS: list[Row] = [
    # 1. A lone surrogate in an id comes back as the same escape, never as U+FFFD.
    row(
        "id-lone-surrogate",
        None,
        (r'{"jsonrpc":"2.0","id":"\ud800","method":"ping"}', rb'{"jsonrpc":"2.0","id":"\ud800","result":{}}'),
    ),
    row(
        "id-lone-low-surrogate-among-text",
        "2025-11-25",
        (
            r'{"jsonrpc":"2.0","id":"a\udc00\u00e9","method":"ping"}',
            rb'{"jsonrpc":"2.0","id":"a\udc00\u00e9","result":{}}',
        ),
    ),
    row(
        "id-lone-surrogate-in-an-error",
        None,
        (
            r'{"jsonrpc":"2.0","id":"\udfff","method":"no/such"}',
            rb'{"jsonrpc":"2.0","id":"\udfff","error":{"code":-32601,"message":"Method not found: no/such"}}',
        ),
    ),
    row(
        "id-surrogate-pair-is-raw-utf8",
        None,
        (
            r'{"jsonrpc":"2.0","id":"\ud83d\ude00","method":"ping"}',
            '{"jsonrpc":"2.0","id":"\U0001f600","result":{}}'.encode(),
        ),
    ),
    # 2. arguments that are not an object break CallToolRequest: -32602 in every revision.
    *[
        row(
            f"arguments-array-{version or 'none'}",
            version,
            (call(1, "count_orders", []), err(1, -32602, not_an_object("count_orders", "array"))),
            (call(2, "count_orders", "x"), err(2, -32602, not_an_object("count_orders", "string"))),
            (call(3, "get_order", 7), err(3, -32602, not_an_object("get_order", "number"))),
            (call(4, "get_order", True), err(4, -32602, not_an_object("get_order", "boolean"))),
        )
        for version in (*REVISIONS, None)
    ],
    row(
        "arguments-object-breaking-the-schema-2025-11-25",
        "2025-11-25",
        (
            call(1, "count_orders", {"status": 3}),
            tool_error(1, "count_orders: status must be a string"),
        ),
    ),
    *[
        row(
            f"arguments-object-breaking-the-schema-{version}",
            version,
            (
                call(1, "count_orders", {"status": 3}),
                err(1, -32602, "Invalid params: invalid arguments for count_orders: status must be a string"),
            ),
        )
        for version in ("2025-06-18", "2025-03-26", "2024-11-05")
    ],
    *[
        row(
            f"arguments-null-or-absent-are-empty-{version or 'none'}",
            version,
            (call(1, "count_orders", None), ok(1, all_orders(version))),
            (request(2, "tools/call", {"name": "count_orders"}), ok(2, all_orders(version))),
            (call(3, "count_orders", {}), ok(3, all_orders(version))),
        )
        for version in ("2025-11-25", "2024-11-05", None)
    ],
    # 3. A number without a fractional part is an integer id, echoed as one.
    row("id-1e3", None, (ping("1e3"), rb'{"jsonrpc":"2.0","id":1000,"result":{}}')),
    row("id-1E3", None, (ping("1E3"), ok(1000))),
    row("id-1.0", None, (ping("1.0"), rb'{"jsonrpc":"2.0","id":1,"result":{}}')),
    row("id-minus-0.0", None, (ping("-0.0"), ok(0))),
    row("id-2.5e1", None, (ping("2.5e1"), ok(25))),
    row("id-1e300", None, (ping("1e300"), ok(int(1e300)))),
    row(
        "id-1e3-method-not-found",
        None,
        ('{"jsonrpc":"2.0","id":1e3,"method":"no/such"}', err(1000, -32601, "Method not found: no/such")),
    ),
    row(
        "id-1.0-no-method",
        None,
        ('{"jsonrpc":"2.0","id":1.0}', err(1, -32600, 'Invalid Request: the "method" member must be a string')),
    ),
    row("id-1e-3", None, (ping("1e-3"), err(None, -32600, BAD_ID))),
    # 4. Anything shaped like a response gets no reply, well formed or not.
    row("response-jsonrpc-1.0", None, ('{"jsonrpc":"1.0","id":99,"result":{}}', SILENT)),
    row("response-error-not-an-object", None, ('{"id":99,"error":"x"}', SILENT)),
    row("response-error-without-message", "2025-11-25", ('{"jsonrpc":"2.0","id":99,"error":{"code":1}}', SILENT)),
    row("response-without-id", None, ('{"jsonrpc":"2.0","result":{}}', SILENT)),
    row(
        "response-result-and-error",
        None,
        ('{"jsonrpc":"2.0","id":5,"result":{},"error":{"code":1,"message":"m"}}', SILENT),
    ),
    row("response-null-method", None, ('{"jsonrpc":"2.0","id":5,"method":null,"result":{}}', SILENT)),
    row("response-valid", "2025-11-25", ('{"jsonrpc":"2.0","id":99,"result":{}}', SILENT)),
    row(
        "response-valid-error-null-id",
        None,
        ('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}', SILENT),
    ),
    row(
        "response-in-a-batch-2025-03-26",
        "2025-03-26",
        ([{"jsonrpc": "1.0", "id": 99, "result": {}}, request(1, "ping")], [ok(1)]),
        ([{"id": 99, "error": "x"}, {"jsonrpc": "2.0", "id": 98, "result": {}}], SILENT),
    ),
    # 6. Parse errors read naturally.
    row(
        "parse-error-unterminated-string",
        None,
        (
            '{"jsonrpc":"2.0","id":1,"method":"ping',
            err(None, -32700, "Parse error: Unterminated string starting at column 34"),
        ),
    ),
    row("parse-error-expecting-value", None, ("hello?", err(None, -32700, "Parse error: Expecting value at column 1"))),
    row(
        "parse-error-control-character",
        None,
        (
            '{"jsonrpc":"2.0","id":"a\tb","method":"ping"}',
            err(None, -32700, "Parse error: Invalid control character at column 25"),
        ),
    ),
    # 7. tools/list: a cursor that is not a string is not an unknown cursor.
    row(
        "cursor-not-a-string",
        "2025-11-25",
        (request(1, "tools/list", {"cursor": 2}), err(1, -32602, NOT_A_CURSOR + "number")),
        (request(2, "tools/list", {"cursor": ["p"]}), err(2, -32602, NOT_A_CURSOR + "array")),
        (request(3, "tools/list", {"cursor": {}}), err(3, -32602, NOT_A_CURSOR + "object")),
        (request(4, "tools/list", {"cursor": False}), err(4, -32602, NOT_A_CURSOR + "boolean")),
        (
            request(5, "tools/list", {"cursor": "page2"}),
            err(5, -32602, "Invalid params: unknown cursor: tools/list has a single page"),
        ),
        (request(6, "tools/list", {"cursor": None}), ok(6, LISTING)),
    ),
    # 8. One initialize per connection: a second one is refused and the session stays as it was.
    row(
        "second-initialize-2025-11-25",
        "2025-11-25",
        (initialize(1, "2025-03-26"), err(1, -32600, second_init("2025-11-25"))),
        ([request(2, "ping")], err(None, -32600, NO_BATCHES)),  # no batches appeared
        (
            call(3, "get_order", {}),
            tool_error(3, "get_order: missing required argument order_id"),
        ),
        (initialize(4, "2025-11-25"), err(4, -32600, second_init("2025-11-25"))),  # even the same revision
    ),
    row(
        "second-initialize-2025-03-26",
        "2025-03-26",
        (initialize("again", "2025-11-25"), err("again", -32600, second_init("2025-03-26"))),
        ([request(1, "ping")], [ok(1)]),  # batches still work
        (
            call(2, "get_order", {}),
            err(2, -32602, "Invalid params: invalid arguments for get_order: missing required argument order_id"),
        ),
    ),
    row(
        "second-initialize-bad-params-2025-06-18",
        "2025-06-18",
        (initialize(1, 20251125), err(1, -32600, second_init("2025-06-18"))),
        (request(2, "initialize", []), err(2, -32602, "Invalid params: initialize params must be an object")),
    ),
    row(
        "initialize-retried-after-a-refused-one",
        None,
        (
            initialize(1, None),
            err(1, -32602, 'Invalid params: "protocolVersion" must be a string such as "2025-11-25"'),
        ),
        (initialize(2, "2025-03-26"), ok(2, init_result("2025-03-26"))),
        (initialize(3, "2025-06-18"), err(3, -32600, second_init("2025-03-26"))),
        ([request(4, "ping")], [ok(4)]),
    ),
    row(
        "initialize-as-a-notification-changes-nothing",
        "2025-06-18",
        ({"jsonrpc": "2.0", "method": "initialize", "params": {"protocolVersion": "2025-03-26"}}, SILENT),
        ([request(1, "ping")], err(None, -32600, NO_BATCHES)),
    ),
    # Every JSON type as an id.
    *[
        row(f"id-{name}", None, (request(value, "ping"), ok(value)))
        for name, value in [
            ("0", 0),
            ("-1", -1),
            ("42", 42),
            ("empty-string", ""),
            ("string-7", "7"),
            ("abc", "abc"),
            ("2**53+1", 2**53 + 1),
            ("2**64", 2**64),
            ("non-ascii", "caf\u00e9 \u2615"),
        ]
    ],
    row(
        "id-7-and-string-7-differ",
        None,
        (request(7, "ping"), rb'{"jsonrpc":"2.0","id":7,"result":{}}'),
        (request("7", "ping"), rb'{"jsonrpc":"2.0","id":"7","result":{}}'),
    ),
    *[
        row(f"id-{name}-refused", None, (ping(raw), err(None, -32600, BAD_ID)))
        for name, raw in [
            ("1.5", "1.5"),
            ("true", "true"),
            ("false", "false"),
            ("null", "null"),
            ("object", "{}"),
            ("array", "[]"),
            ("array-of-1", "[1]"),
        ]
    ],
    # params of every shape, for ping and tools/list.
    *[
        row(
            f"params-{method.replace('/', '-')}",
            "2025-11-25",
            (request(1, method), ok(1, result)),
            (request(2, method, {}), ok(2, result)),
            (request(3, method, []), err(3, -32602, f"Invalid params: {method} params must be an object")),
            ({"jsonrpc": "2.0", "id": 4, "method": method, "params": "x"}, err(4, -32600, PARAMS_NOT_OBJECT)),
            ({"jsonrpc": "2.0", "id": 5, "method": method, "params": None}, err(5, -32600, PARAMS_NOT_OBJECT)),
            ({"jsonrpc": "2.0", "id": 6, "method": method, "params": 3}, err(6, -32600, PARAMS_NOT_OBJECT)),
        )
        for method, result in [("ping", {}), ("tools/list", LISTING)]
    ],
    # The method is checked before the params; a params that is not even structured is checked
    # first of all, with the envelope.
    row(
        "params-checked-after-the-method",
        "2025-11-25",
        (request(1, "no/such", []), err(1, -32601, "Method not found: no/such")),
        (request(2, "no/such", {"cursor": 5}), err(2, -32601, "Method not found: no/such")),
        ({"jsonrpc": "2.0", "id": 3, "method": "no/such", "params": "x"}, err(3, -32600, PARAMS_NOT_OBJECT)),
        (request(4, "ping", [1]), err(4, -32602, "Invalid params: ping params must be an object")),
    ),
    # Batches: 2025-03-26 only.
    row(
        "batch-2025-03-26",
        "2025-03-26",
        (
            [request(1, "ping"), note("notifications/unknown"), request("b", "no/such"), 7],
            [
                ok(1),
                err("b", -32601, "Method not found: no/such"),
                err(None, -32600, "Invalid Request: expected a JSON object, got int"),
            ],
        ),
        ([note("notifications/initialized"), note("notifications/x")], SILENT),
        ([], err(None, -32600, "Invalid Request: an empty batch")),
        ([request(5, "ping")], [ok(5)]),
    ),
    row(
        "batch-initialize-refused-2025-03-26",
        "2025-03-26",
        (
            [initialize(9, "2025-06-18"), request(10, "ping")],
            [err(9, -32600, "Invalid Request: initialize may not be batched"), ok(10)],
        ),
        ([{"jsonrpc": "2.0", "method": "initialize", "params": {"protocolVersion": "2025-06-18"}}], SILENT),
        ([request(11, "ping")], [ok(11)]),
    ),
    *[
        row(
            f"batch-refused-{version or 'none'}",
            version,
            ([request(1, "ping")], err(None, -32600, NO_BATCHES)),
            ([request(2, "ping"), note("notifications/x")], err(None, -32600, NO_BATCHES)),
            ([note("notifications/x")], err(None, -32600, NO_BATCHES)),
            ([], err(None, -32600, NO_BATCHES)),
            ([initialize(3, "2025-03-26")], err(None, -32600, NO_BATCHES)),
        )
        for version in NOT_BATCHING
    ],
    # CRLF in, LF out (every reply line is checked for "\r" by Wire.recv as well).
    row(
        "crlf-input",
        None,
        (wire_bytes(request("crlf", "ping")) + b"\r", rb'{"jsonrpc":"2.0","id":"crlf","result":{}}'),
        (b"\r", SILENT),
        (b"hello?\r", err(None, -32700, "Parse error: Expecting value at column 1")),
    ),
]


def strictly_equal(actual: Any, expected: Any) -> bool:
    """Equal values of the same JSON types all the way down (1 is not 1.0, nor true, nor "1")."""
    if type(actual) is not type(expected):
        return False
    if isinstance(expected, dict):
        return actual.keys() == expected.keys() and all(strictly_equal(actual[k], expected[k]) for k in expected)
    if isinstance(expected, list):
        return len(actual) == len(expected) and all(strictly_equal(a, e) for a, e in zip(actual, expected, strict=True))
    return actual == expected


def test_row_names_are_unique() -> None:
    names = [r.name for r in ROWS]
    assert len(names) == len(set(names))


def test_the_table_counts_match_the_database(oracle: ShopOracle) -> None:
    assert oracle.count_orders() == {"count": ALL_ORDERS}


@pytest.fixture
def edge(start_server: Callable[..., Wire]) -> Iterator[Wire]:
    """One server child whose every read waits at most WAIT seconds; it must exit 0 on EOF."""
    wire = start_server(timeout=WAIT)
    yield wire
    code = wire.close(grace=2.0)
    assert code == 0, f"exit status {code}; stderr tail:\n{wire.stderr()}"


@pytest.mark.parametrize("case", ROWS, ids=[r.name for r in ROWS])
def test_edge_case(edge: Wire, case: Row) -> None:
    if case.version is not None:
        assert edge.initialize(case.version, client="edge")["protocolVersion"] == case.version
        assert edge.sync(WAIT) == []
    for n, (line, expected) in enumerate(case.steps):
        edge.send_raw(wire_bytes(line) + b"\n")
        replies = edge.sync(WAIT)  # the ping's reply ends the replies to this line
        where = f"step {n}, sent {wire_bytes(line)[:200]!r}"
        if expected is SILENT:
            assert replies == [], f"{where}: expected no reply, got {replies!r}"
            continue
        assert len(replies) == 1, f"{where}: expected one reply line, got {replies!r}"
        if isinstance(expected, bytes):
            raw = edge.lines[-2]  # the line before the ping's reply
            assert raw == expected, f"{where}: got {raw!r}"
        else:
            assert strictly_equal(replies[0], expected), f"{where}:\n got      {replies[0]!r}\n expected {expected!r}"
    assert all(not raw.endswith(b"\r") for raw in edge.lines), "output lines end in \\n, never \\r\\n"


# -- outside the table: the log of ignored responses, and lines at the size limit ----------------
def wait_for_stderr(wire: Wire, text: str, count: int) -> str:
    """The stderr tail once ``text`` shows ``count`` times (stderr is read by a thread)."""
    deadline = time.monotonic() + WAIT
    while True:
        tail = wire.stderr()
        if tail.count(text) >= count or time.monotonic() > deadline:
            return tail
        time.sleep(0.02)


def test_ignored_responses_are_logged_on_stderr_one_line_each(edge: Wire) -> None:
    sent = [
        b'{"jsonrpc":"1.0","id":99,"result":{}}',
        b'{"id":99,"error":"x"}',
        b'{"jsonrpc":"2.0","result":{}}',
        b'{"jsonrpc":"2.0","id":98,"result":{}}',
    ]
    for line in sent:
        edge.send_raw(line + b"\n")
    assert edge.sync(WAIT) == []  # nothing on stdout: the ping's reply came first
    tail = wait_for_stderr(edge, "ignored a ", len(sent))
    logged = [line for line in tail.splitlines() if "ignored a " in line]
    assert len(logged) == len(sent), tail
    assert "malformed response (id 99)" in logged[0] and '"jsonrpc"' in logged[0]
    assert "malformed response (id 99)" in logged[1]
    assert "malformed response (id null)" in logged[2] and "no id" in logged[2]
    assert "ignored a response (id 98)" in logged[3]


def padded_ping(id: str, size: int) -> bytes:
    """A ping of exactly ``size`` bytes (without its line ending), padded in its params."""
    head, tail = b'{"jsonrpc":"2.0","id":"' + id.encode() + b'","method":"ping","params":{"pad":"', b'"}}'
    return head + b"a" * (size - len(head) - len(tail)) + tail


@pytest.mark.parametrize("ending", [b"\n", b"\r\n"], ids=["lf", "crlf"])
def test_a_message_of_exactly_the_limit_is_served_and_one_more_byte_is_not(edge: Wire, ending: bytes) -> None:
    at_limit = padded_ping("at-limit", MAX_LINE_BYTES)
    assert len(at_limit) == MAX_LINE_BYTES
    edge.send_raw(at_limit + ending)
    assert edge.recv(timeout=30) == ok("at-limit")
    edge.send_raw(padded_ping("over", MAX_LINE_BYTES + 1) + ending)
    assert edge.recv(timeout=30) == err(None, -32700, f"Parse error: line longer than {MAX_LINE_BYTES} bytes")
    assert edge.sync(WAIT) == []  # the oversized line was skipped whole, and the server goes on
