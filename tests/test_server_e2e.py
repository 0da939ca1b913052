"""The reference server end to end: a real child process over real pipes.

Both launchers are exercised (``python -m reference.server`` and the ``mcp-lab serve`` console
script): handshake and version negotiation, ping, id echo, notification silence, the error
codes, the two kinds of tool error per revision, batches (2025-03-26 only), CRLF input, UTF-8
under a hostile PYTHONIOENCODING, exit on EOF, a quiet exit when stdout closes, a read-only
database, and usage errors. Every tool answer is compared with SQL run on the database.
"""

from __future__ import annotations

import os
import select
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import (
    LATEST,
    READ_TIMEOUT,
    REVISIONS,
    ShopOracle,
    Wire,
    error_code,
    file_hash,
    module_argv,
    run_cli,
    same_id,
    script_argv,
    tool_error_text,
    tool_json,
)
from pinned_tools import pinned_listing

from reference.child import child_environment
from reference.framing import MAX_LINE_BYTES, decode, encode

# A net only: every wait on a child here is bounded in seconds by the test (the slowest test takes
# about 3 s); this stops a hang in code under test (a mutant) in a minute, not pytest's 300 s.
pytestmark = pytest.mark.timeout(60)

LAUNCHERS = {"module": module_argv, "console-script": script_argv}
SHOP_TOOLS = {"count_orders", "list_orders", "get_order", "search_products"}
Start = Callable[..., Wire]


@pytest.fixture(params=sorted(LAUNCHERS))
def launcher(request: pytest.FixtureRequest, shop_db: Path) -> list[str]:
    return LAUNCHERS[request.param](shop_db)


def ping(request_id: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "ping"}


# -- handshake and lifecycle -----------------------------------------------------------------
def test_handshake(start_server: Start, launcher: list[str]) -> None:
    wire = start_server(launcher)
    wire.no_line(0.3)  # nothing on stdout before the first request
    result = wire.initialize()
    assert result["protocolVersion"] == LATEST
    assert isinstance(result["capabilities"], dict) and isinstance(result["capabilities"]["tools"], dict)
    info = result["serverInfo"]
    assert isinstance(info["name"], str) and info["name"] and isinstance(info["version"], str)
    assert isinstance(result.get("instructions", ""), str)
    assert wire.sync() == []  # notifications/initialized got no reply
    tools = wire.result("tools/list")["tools"]
    assert {t["name"] for t in tools} >= SHOP_TOOLS
    assert wire.result("ping") == {}
    assert wire.close() == 0
    assert "Traceback" not in wire.stderr()


@pytest.mark.parametrize("version", REVISIONS)
def test_supported_versions_are_echoed(server: Wire, version: str) -> None:
    assert server.initialize(version)["protocolVersion"] == version


@pytest.mark.parametrize("version", ["1999-01-01", "2026-07-28", "", "2025-11-25x"])
def test_unknown_version_gets_the_latest(server: Wire, version: str) -> None:
    assert server.initialize(version)["protocolVersion"] == LATEST


@pytest.mark.parametrize(
    "params",
    [
        {"protocolVersion": 20251125, "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}},
        {"protocolVersion": None, "capabilities": {}},
        {"protocolVersion": ["2025-11-25"]},
        {"capabilities": {}},
        None,
    ],
)
def test_non_string_version_is_invalid_params(server: Wire, params: Any) -> None:
    assert server.error("initialize", params)["code"] == -32602
    assert server.result("ping") == {}


def test_ping_before_and_after_initialize(server: Wire) -> None:
    assert server.result("ping") == {}
    server.initialize()
    assert server.result("ping") == {}
    assert server.result("ping", {}) == {}


# -- ids and notifications -------------------------------------------------------------------
IDS = [0, 42, "abc", "7", -1, 2**53 + 1, 10**40, "", "\u2615 id", "0"]


def test_ids_are_echoed_with_the_same_json_type(start_server: Start, launcher: list[str]) -> None:
    wire = start_server(launcher)
    for request_id in IDS:
        reply = wire.request("ping", id=request_id)
        assert same_id(reply["id"], request_id)
        # The raw bytes too: "7" must come back as a string, 7 as a number.
        assert b'"id":' + encode(request_id).rstrip(b"\n") + b"," in wire.lines[-1]
        error = wire.request("no/such/method", id=request_id)
        assert same_id(error["id"], request_id) and error_code(error) == -32601


NOTIFICATIONS = [
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "method": "notifications/initialized", "params": {}},
    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99, "reason": "x"}},
    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "gone"}},
    {"jsonrpc": "2.0", "method": "notifications/unknown"},
    {"jsonrpc": "2.0", "method": "ping"},  # a request method sent without id is a notification
    {"jsonrpc": "2.0", "method": "initialize", "params": {"protocolVersion": "2025-03-26"}},
    {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "count_orders", "arguments": {}}},
    {"jsonrpc": "2.0", "method": "no/such/method", "params": [1, 2]},
    {"jsonrpc": "2.0", "id": 5, "result": {}},  # a response from the client
    {"jsonrpc": "2.0", "id": 6, "error": {"code": -32601, "message": "no"}},
    {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "no"}},
]


def test_notifications_get_no_reply(start_server: Start, launcher: list[str]) -> None:
    wire = start_server(launcher)
    wire.initialize()
    for message in NOTIFICATIONS:
        wire.send(message)
    # The next line must be the reply to the ping that sync() sends.
    assert wire.sync() == []
    # The "initialize" notification did not switch the revision to 2025-03-26: no batches.
    wire.send([ping(1)])
    (reply,) = [wire.recv()]
    assert isinstance(reply, dict) and reply["id"] is None and error_code(reply) == -32600


# -- the error codes -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "line",
    [
        b"not json",
        b'{"jsonrpc": "2.0", "id": 1, "method": "ping"',
        b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}}',
        b"{'jsonrpc': '2.0'}",
        b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": NaN}}',
        b'{"jsonrpc": "2.0", "id": 1, "method": "\xff"}',
        b"\xef\xbb\xbf{}",
        b"[" * 100_000,
        b'{"jsonrpc": "2.0", "id": ' + b"9" * 5000 + b', "method": "ping"}',
    ],
)
def test_parse_error_has_id_null_and_the_server_goes_on(server: Wire, line: bytes) -> None:
    server.send_raw(line + b"\n")
    reply = server.recv()
    assert isinstance(reply, dict) and error_code(reply) == -32700
    assert b'"id":null' in server.lines[-1]
    assert server.sync() == []


@pytest.mark.parametrize(
    ("message", "answer_id"),
    [
        ({"jsonrpc": "2.0", "id": 1}, 1),  # no method
        ({"jsonrpc": "2.0", "id": None, "method": "ping"}, None),
        ({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, None),
        ({"jsonrpc": "2.0", "id": True, "method": "ping"}, None),
        ({"jsonrpc": "2.0", "id": [1], "method": "ping"}, None),
        ({"id": 2, "method": "ping"}, 2),  # jsonrpc missing
        ({"jsonrpc": "1.0", "id": "v", "method": "ping"}, "v"),
        ({"jsonrpc": "2.0", "id": 3, "method": "ping", "params": "a string"}, 3),
        ({"jsonrpc": "2.0", "id": 3, "method": "ping", "params": 7}, 3),
        ({"jsonrpc": "2.0", "id": 4, "method": 4}, 4),
        ({"jsonrpc": "2.0", "method": "notify/me", "params": "bad"}, None),
        ("a string", None),
        (17, None),
        (None, None),
        ([1, 2], None),  # a batch outside 2025-03-26
        ([], None),
    ],
)
def test_invalid_request(server: Wire, message: Any, answer_id: Any) -> None:
    server.send(message)
    reply = server.recv()
    assert isinstance(reply, dict), "one error object, never an array"
    assert error_code(reply) == -32600
    assert same_id(reply["id"], answer_id)
    assert server.sync() == []


@pytest.mark.parametrize("initialize", [False, True])
def test_unknown_method(server: Wire, initialize: bool) -> None:
    if initialize:
        server.initialize()
    for method in ("tools/lisst", "resources/subscribe", "completion/complete", "m\u00e9thode", ""):
        error = server.error(method)
        assert error["code"] == -32601
        assert method in error["message"]


def test_invalid_params(server: Wire) -> None:
    server.initialize()
    unknown = server.error("tools/call", {"name": "no_such_tool", "arguments": {}})
    assert unknown["code"] == -32602 and "no_such_tool" in unknown["message"]
    for params in ({}, {"name": 5}, {"name": None}, {"arguments": {}}):
        assert server.error("tools/call", params)["code"] == -32602
    assert server.error("tools/list", {"cursor": "next"})["code"] == -32602
    assert server.error("ping", [1])["code"] == -32602
    assert server.error("tools/list", [])["code"] == -32602


BAD_ARGUMENTS = [
    ("count_orders", {"status": 3}),
    ("count_orders", {"colour": "red"}),
    ("list_orders", {"limit": 0}),
    ("list_orders", {"limit": "5"}),
    ("get_order", {}),
    ("get_order", {"order_id": "1"}),
    ("search_products", {"query": ""}),
    ("search_products", {"query": "mug", "limit": 1000}),
]
# Not an object at all: the request breaks CallToolRequest, -32602 in every revision.
ARGUMENTS_NOT_AN_OBJECT = [("search_products", []), ("count_orders", "x"), ("get_order", 1)]


@pytest.mark.parametrize("version", [*REVISIONS, None])
def test_bad_arguments_follow_the_revision(server: Wire, version: str | None) -> None:
    if version is not None:
        server.initialize(version)
    as_tool_error = version in (None, "2025-11-25")  # before initialize the latest applies
    for name, arguments in BAD_ARGUMENTS:
        reply = server.request("tools/call", {"name": name, "arguments": arguments})
        if as_tool_error:
            text = tool_error_text(reply["result"])
            assert name in text
        else:
            assert error_code(reply) == -32602, reply
            assert name in reply["error"]["message"]
    for name, arguments in ARGUMENTS_NOT_AN_OBJECT:
        reply = server.request("tools/call", {"name": name, "arguments": arguments})
        assert error_code(reply) == -32602, reply
        assert name in reply["error"]["message"] and "must be an object" in reply["error"]["message"]


@pytest.mark.parametrize("version", REVISIONS)
def test_unknown_status_is_a_tool_error_in_every_revision(server: Wire, oracle: ShopOracle, version: str) -> None:
    server.initialize(version)
    for name in ("count_orders", "list_orders"):
        text = tool_error_text(server.call_tool(name, {"status": "lost"}))
        assert "lost" in text
        for status in oracle.statuses():
            assert status in text


# -- structured output: 2025-06-18 and later only ----------------------------------------------------
@pytest.mark.parametrize("version", [*REVISIONS, None])
def test_structured_output_follows_the_revision(server: Wire, oracle: ShopOracle, version: str | None) -> None:
    if version is not None:
        server.initialize(version)
    structured = version in (None, "2025-11-25", "2025-06-18")  # before initialize the latest applies
    assert server.result("tools/list") == pinned_listing(structured_output=structured)
    result = server.call_tool("count_orders", {"status": "paid"})
    assert tool_json(result) == oracle.count_orders("paid")
    if structured:
        assert result["structuredContent"] == oracle.count_orders("paid")
        assert list(result) == ["content", "structuredContent", "isError"]
    else:
        assert set(result) == {"content", "isError"}, "older revisions get exactly the text"
    # A tool execution error carries text only, in every revision.
    for name, arguments in (("count_orders", {"status": "lost"}), ("get_order", {"order_id": 10**9})):
        failed = server.call_tool(name, arguments)
        assert failed["isError"] is True and set(failed) == {"content", "isError"}, failed


# -- tool answers, compared with SQL ---------------------------------------------------------------
def test_every_tool_answers_like_sql(server: Wire, oracle: ShopOracle) -> None:
    server.initialize()
    assert tool_json(server.call_tool("count_orders")) == oracle.count_orders()
    assert tool_json(server.call_tool("count_orders", {})) == oracle.count_orders()
    for status in oracle.statuses():
        assert tool_json(server.call_tool("count_orders", {"status": status})) == oracle.count_orders(status)
        assert tool_json(server.call_tool("list_orders", {"status": status, "limit": 3, "offset": 2})) == (
            oracle.list_orders(status=status, limit=3, offset=2)
        )
    assert tool_json(server.call_tool("list_orders", {})) == oracle.list_orders()
    assert tool_json(server.call_tool("list_orders", {"customer_id": 5, "limit": 100})) == (
        oracle.list_orders(customer_id=5, limit=100)
    )
    low, high = oracle.order_id_range()
    for order_id in (low, 17, high):
        assert tool_json(server.call_tool("get_order", {"order_id": order_id})) == oracle.get_order(order_id)
    text = tool_error_text(server.call_tool("get_order", {"order_id": high + 1}))
    assert str(low) in text and str(high) in text
    for query, limit in (("mug", 10), ("Garden", 50), ("%", 50), ("\u685c", 50), ("caf\u00e9", 5)):
        answer = server.call_tool("search_products", {"query": query, "limit": limit})
        assert tool_json(answer) == oracle.search_products(query, limit)


def test_database_is_unchanged_after_every_tool(server: Wire, shop_db: Path) -> None:
    before, stamp = file_hash(shop_db), shop_db.stat().st_mtime_ns
    server.initialize()
    tools = {t["name"] for t in server.result("tools/list")["tools"]}
    hostile = "'; DELETE FROM orders; DROP TABLE products; --"
    calls = [
        ("count_orders", {}),
        ("count_orders", {"status": hostile}),
        ("list_orders", {"status": "paid", "limit": 100}),
        ("list_orders", {"customer_id": 10**30}),  # overflows SQLite's integers: a tool error
        ("get_order", {"order_id": 1}),
        ("get_order", {"order_id": 10**9}),
        ("search_products", {"query": hostile}),
        ("search_products", {"query": "%"}),
    ]
    assert {name for name, _ in calls} == tools, "every tool is exercised"
    for name, arguments in calls:
        result = server.call_tool(name, arguments)
        assert isinstance(result["content"], list) and isinstance(result["isError"], bool)
        assert file_hash(shop_db) == before, f"{name} changed the database"
    assert shop_db.stat().st_mtime_ns == stamp


# -- batches -----------------------------------------------------------------------------------
def test_batches_under_2025_03_26(server: Wire, oracle: ShopOracle) -> None:
    server.initialize("2025-03-26")
    call = {"name": "count_orders", "arguments": {"status": "paid"}}
    server.send(
        [
            ping(1),
            {"jsonrpc": "2.0", "method": "notifications/unknown"},
            {"jsonrpc": "2.0", "id": "c", "method": "tools/call", "params": call},
            {"jsonrpc": "2.0", "id": 3, "method": "nope"},
            7,
        ]
    )
    reply = server.recv()
    assert isinstance(reply, list)
    assert [(r["id"], error_code(r)) for r in reply] == [(1, None), ("c", None), (3, -32601), (None, -32600)]
    assert reply[0]["result"] == {}
    assert tool_json(reply[1]["result"]) == oracle.count_orders("paid")
    # [] is one -32600 object with id null, never an empty array.
    server.send([])
    empty = server.recv()
    assert isinstance(empty, dict) and empty["id"] is None and error_code(empty) == -32600
    # A batch of notifications gets no reply at all.
    server.send([{"jsonrpc": "2.0", "method": "notifications/initialized"}, {"jsonrpc": "2.0", "method": "x"}])
    assert server.sync() == []
    # initialize inside a batch is refused, element by element; the rest is answered.
    init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "b", "version": "1"}}
    server.send([{"jsonrpc": "2.0", "id": 9, "method": "initialize", "params": init}, ping(10)])
    refused = server.recv()
    assert isinstance(refused, list)
    assert [(r["id"], error_code(r)) for r in refused] == [(9, -32600), (10, None)]
    # ... and it did not change the revision: batches still work.
    server.send([ping(11)])
    assert server.recv() == [{"jsonrpc": "2.0", "id": 11, "result": {}}]


@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18", "2024-11-05", None])
def test_batches_refused_in_other_revisions(server: Wire, version: str | None) -> None:
    if version is not None:
        server.initialize(version)
    batch = [ping(1), {"jsonrpc": "2.0", "method": "notifications/x"}, ping(2)]
    server.send(batch)
    reply = server.recv()
    assert isinstance(reply, dict) and reply["id"] is None and error_code(reply) == -32600
    assert server.sync() == []  # and nothing inside the batch was answered


# -- bytes on the wire -----------------------------------------------------------------------------
def test_crlf_input_lf_output(server: Wire) -> None:
    server.send_raw(encode(ping("crlf")).replace(b"\n", b"\r\n"))
    assert server.recv() == {"jsonrpc": "2.0", "id": "crlf", "result": {}}
    server.send_raw(b"\r\n\r\n")  # blank lines carry nothing
    assert server.sync() == []
    assert all(not line.endswith(b"\r") for line in server.lines)


def test_pipelined_requests_are_answered_in_order(server: Wire) -> None:
    server.send_raw(b"".join(encode(ping(i)) for i in range(200)))
    for i in range(200):
        assert server.recv() == {"jsonrpc": "2.0", "id": i, "result": {}}


def test_partial_line_at_eof_is_still_answered(start_server: Start) -> None:
    wire = start_server()
    wire.send_raw(encode(ping("last")).rstrip(b"\n"))
    wire.child.close_stdin()
    assert wire.recv() == {"jsonrpc": "2.0", "id": "last", "result": {}}
    assert wire.child.wait(2.0) == 0


def test_line_over_the_limit_is_a_parse_error(server: Wire) -> None:
    server.send_raw(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"' + b"a" * MAX_LINE_BYTES + b'"}}\n')
    reply = server.recv(timeout=30)
    assert isinstance(reply, dict) and reply["id"] is None and error_code(reply) == -32700
    assert server.sync() == []


ENCODINGS = [
    {},
    {"PYTHONIOENCODING": "cp1252"},
    {"PYTHONIOENCODING": "ascii"},
    {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"},
]


@pytest.mark.parametrize("env", ENCODINGS, ids=["default", "cp1252", "ascii", "C-locale"])
def test_non_ascii_round_trip(start_server: Start, oracle: ShopOracle, launcher: list[str], env: dict) -> None:
    wire = start_server(launcher, env=env)
    wire.initialize(client="cli\u00ebnt \u2615 \U0001f600")
    query = "caf\u00e9"
    answer = wire.call_tool("search_products", {"query": query, "limit": 50})
    assert tool_json(answer) == oracle.search_products(query, 50)
    assert "Caf\u00e9 cr\u00e8me".encode() in wire.lines[-1]  # raw UTF-8, not \\u escapes
    for text in ("\u2615 \U0001f600 \u685c \u00fc \u20ac", "\u0000nul", "line\nbreak"):
        reply = wire.call_tool("search_products", {"query": text})
        assert tool_json(reply)["query"] == text  # byte-exact round trip of the argument
    # An order whose customer's name is not ASCII comes back as raw UTF-8 too.
    (row,) = oracle.rows(
        """SELECT o.id, c.name FROM orders o JOIN customers c ON c.id = o.customer_id
            WHERE c.name GLOB '*[^ -~]*' ORDER BY o.id LIMIT 1"""
    )
    order = tool_json(wire.call_tool("get_order", {"order_id": row["id"]}))
    assert order == oracle.get_order(row["id"])
    assert row["name"].encode() in wire.lines[-1]
    error = wire.error("m\u00e9thode/\u2615")
    assert "m\u00e9thode/\u2615".encode() in wire.lines[-1]
    assert error["code"] == -32601
    assert wire.close() == 0
    assert "Traceback" not in wire.stderr()


# -- ending ------------------------------------------------------------------------------------
def test_exit_on_eof(start_server: Start, launcher: list[str]) -> None:
    wire = start_server(launcher)
    wire.initialize()
    assert wire.result("ping") == {}
    wire.child.close_stdin()
    assert wire.child.wait(2.0) == 0, "the server must exit with status 0 within 2 s of stdin closing"
    assert wire.child.read_line(2.0) is None and wire.child.stdout_closed.is_set()


def test_exit_on_eof_before_any_request(start_server: Start) -> None:
    wire = start_server()
    # Wait until it is up (its start-up log line), so that the 2 s measure only the exit.
    deadline = wire.child.elapsed() + READ_TIMEOUT
    while "serving" not in wire.stderr() and wire.child.elapsed() < deadline:
        time.sleep(0.02)
    wire.child.close_stdin()
    assert wire.child.wait(2.0) == 0
    assert wire.child.read_line(2.0) is None, "nothing on stdout: no request was made"


def first_line_within(fd: int, timeout: float) -> bytes:
    """The first line on ``fd`` (without its "\\n"), read with select: fails the test after ``timeout`` s.

    (A plain readline() would block for ever on a line that never ends.)
    """
    deadline = time.monotonic() + timeout
    data = b""
    while b"\n" not in data:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        chunk = os.read(fd, 1 << 16) if ready else b""
        if not chunk:
            pytest.fail(f"no complete line within {timeout:g} s (or stdout closed); got {data[:200]!r}")
        data += chunk
    return data.split(b"\n", 1)[0]


@pytest.mark.parametrize("read_first", [False, True], ids=["before-any-reply", "after-a-reply"])
def test_quiet_exit_when_stdout_is_closed(shop_db: Path, launcher: list[str], read_first: bool) -> None:
    process = subprocess.Popen(
        launcher,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=child_environment(),
    )
    try:
        assert process.stdin is not None and process.stdout is not None
        if read_first:
            process.stdin.write(encode(ping(0)))
            process.stdin.flush()
            assert decode(first_line_within(process.stdout.fileno(), READ_TIMEOUT))["id"] == 0
        process.stdout.close()
        # Many replies are owed: the first write after the close fails with EPIPE.
        requests = b"".join(encode(ping(i)) for i in range(1, 2000))
        _, stderr = process.communicate(requests, timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)
    assert process.returncode == 0
    assert b"Traceback" not in stderr and b"BrokenPipe" not in stderr and b"Exception" not in stderr


# -- starting ----------------------------------------------------------------------------------
@pytest.mark.parametrize("argv0", [module_argv(), script_argv()], ids=["module", "console-script"])
def test_missing_database_is_one_line_and_exit_2(tmp_path: Path, argv0: list[str]) -> None:
    missing = tmp_path / "missing.db"
    done = run_cli(["--db", str(missing)], argv0=argv0, timeout=20)
    assert done.returncode == 2
    assert done.stdout == b""
    lines = done.stderr.decode().splitlines()
    assert len(lines) == 1 and str(missing) in lines[0], lines
    assert not missing.exists()


@pytest.mark.parametrize("argv0", [module_argv(), script_argv()], ids=["module", "console-script"])
def test_non_database_file_is_one_line_and_exit_2(tmp_path: Path, argv0: list[str]) -> None:
    bogus = tmp_path / "bogus.db"
    bogus.write_text("not a database\n" * 50)
    done = run_cli(["--db", str(bogus)], argv0=argv0, timeout=20)
    assert done.returncode == 2 and done.stdout == b""
    lines = done.stderr.decode().splitlines()
    assert len(lines) == 1 and "Traceback" not in lines[0], lines


@pytest.mark.parametrize("args", [["--bogus"], ["--db"], ["--db", "a", "b"], ["extra"]])
def test_module_usage_error(args: list[str]) -> None:
    done = run_cli(args, argv0=module_argv(), timeout=20)
    assert done.returncode == 2 and done.stdout == b""
    lines = done.stderr.decode().splitlines()
    assert len(lines) == 1 and "usage" in lines[0], lines


def test_default_database_is_built_on_first_use(
    start_server: Start, tmp_path: Path, shop_db: Path, oracle: ShopOracle
) -> None:
    target = tmp_path / "fresh" / "shop.db"
    wire = start_server(module_argv(), env={"MCP_LAB_DB": str(target)})
    wire.initialize()
    assert tool_json(wire.call_tool("count_orders", {"status": "shipped"})) == oracle.count_orders("shipped")
    assert file_hash(target) == file_hash(shop_db)
    assert wire.close() == 0


def test_stderr_carries_the_logs_and_stdout_only_messages(server: Wire) -> None:
    server.initialize(client="stderr-check")
    server.result("tools/list")
    server.call_tool("count_orders", {"status": "lost"})
    assert server.close() == 0
    stderr = server.stderr()
    assert "stderr-check" in stderr and "Traceback" not in stderr
    for raw in server.lines:
        assert isinstance(decode(raw), dict | list)
