"""reference.errors, reference.envelope, reference.dispatch and the loop of reference.server.

In-process unit tests: the error table, classifying messages into requests, notifications and
responses, the three branches of dispatch (request, notification, parse error), batches, and
Server.serve driven with io.BytesIO streams.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import check_envelope

from reference import envelope, errors
from reference.dispatch import Dispatcher
from reference.errors import RpcError
from reference.framing import MAX_LINE_BYTES, decode, encode
from reference.server import make_server

# A net only: every wait on a child here is bounded in seconds by the test (the slowest test takes
# about 3 s); this stops a hang in code under test (a mutant) in a minute, not pytest's 300 s.
pytestmark = pytest.mark.timeout(60)

# -- errors ---------------------------------------------------------------------------------
JSON_RPC_CODES = {
    -32700: "Parse error",
    -32600: "Invalid Request",
    -32601: "Method not found",
    -32602: "Invalid params",
    -32603: "Internal error",
}
# MCP's own: 2026-07-28's three (basic/index, Error Codes) and the legacy -32002 (2025-11-25, Resources).
MCP_CODES = {
    -32020: "Header mismatch",
    -32021: "Missing required client capability",
    -32022: "Unsupported protocol version",
    -32002: "Resource not found",
}


def test_error_table_has_the_json_rpc_codes() -> None:
    assert {code: row.name for code, row in errors.TABLE.items()} == JSON_RPC_CODES | MCP_CODES
    for code in JSON_RPC_CODES:
        row = errors.lookup(code)
        assert row is not None and row.code == code and row.when


def test_lookup_outside_the_table() -> None:
    assert errors.lookup(-32000) is None
    assert errors.lookup(0) is None


def test_rpc_error_message_and_data() -> None:
    plain = RpcError(errors.INVALID_PARAMS)
    assert str(plain) == "Invalid params"
    assert plain.to_error() == {"code": -32602, "message": "Invalid params"}
    assert (plain.code, plain.message, plain.detail, plain.data) == (-32602, "Invalid params", "", None)
    detailed = RpcError(errors.METHOD_NOT_FOUND, "tools/lisst", data={"hint": "tools/list"})
    assert (detailed.kind, detailed.detail) == (errors.METHOD_NOT_FOUND, "tools/lisst")
    assert detailed.to_error() == {
        "code": -32601,
        "message": "Method not found: tools/lisst",
        "data": {"hint": "tools/list"},
    }


# -- envelope -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "valid"),
    [
        *[(value, True) for value in (0, 42, -1, 10**30, "", "7", 1.0, 1e3, -0.0, 1e300)],
        *[(value, False) for value in (None, 1.5, -0.5, 1e-300, True, False, [1], {})],
    ],
)
def test_is_valid_id(value: Any, valid: bool) -> None:
    assert envelope.is_valid_id(value) is valid


@pytest.mark.parametrize(
    ("value", "expected"),
    [(7, 7), ("7", "7"), (1.0, 1), (1e3, 1000), (-0.0, 0), (-2.0, -2), (1e300, int(1e300)), (2.0**53, 2**53)],
)
def test_request_id_turns_integral_numbers_into_integers(value: Any, expected: Any) -> None:
    # JSON has numbers, not integers and floats: 1e3 and 1.0 have no fractional part.
    found = envelope.request_id(value)
    assert type(found) is type(expected) and found == expected
    kind = envelope.classify({"jsonrpc": "2.0", "id": value, "method": "ping"})
    assert isinstance(kind, envelope.Request) and type(kind.id) is type(expected) and kind.id == expected


def test_classify_request_keeps_id_type() -> None:
    for request_id in (0, 42, "abc", "7"):
        kind = envelope.classify({"jsonrpc": "2.0", "id": request_id, "method": "ping"})
        assert isinstance(kind, envelope.Request)
        assert type(kind.id) is type(request_id) and kind.id == request_id
        assert kind.params == {}


def test_classify_notification_has_no_id_member() -> None:
    kind = envelope.classify({"jsonrpc": "2.0", "method": "notifications/initialized", "params": {"a": 1}})
    assert kind == envelope.Notification("notifications/initialized", {"a": 1})


def test_classify_responses() -> None:
    assert envelope.classify({"jsonrpc": "2.0", "id": 3, "result": {}}) == envelope.Response(3, {}, None)
    error = {"code": -1, "message": "x"}
    assert envelope.classify({"jsonrpc": "2.0", "id": None, "error": error}) == envelope.Response(None, None, error)


@pytest.mark.parametrize(
    ("message", "problem"),
    [
        ({"jsonrpc": "1.0", "id": 99, "result": {}}, 'the "jsonrpc" member must be the string "2.0"'),
        ({"id": 99, "error": "x"}, 'the "jsonrpc" member must be the string "2.0"'),
        ({"jsonrpc": "2.0", "id": 99, "error": "x"}, '"error" must be an object'),
        (
            {"jsonrpc": "2.0", "id": 99, "error": {"code": "1", "message": "m"}},
            '"error" needs an integer "code" and a string "message"',
        ),
        ({"jsonrpc": "2.0", "id": 99, "error": {"code": 1}}, '"error" needs an integer "code" and a string "message"'),
        (
            {"jsonrpc": "2.0", "id": 99, "error": {"code": True, "message": "m"}},
            '"error" needs an integer "code" and a string "message"',
        ),
        ({"jsonrpc": "2.0", "result": {}}, "it has no id"),
        ({"jsonrpc": "2.0", "id": None, "result": {}}, "the id must be a string or an integer"),
        (
            {"jsonrpc": "2.0", "id": [1], "error": {"code": 1, "message": "m"}},
            "the id must be a string, an integer or null",
        ),
        (
            {"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "m"}},
            "it has both a result and an error",
        ),
        ({"jsonrpc": "2.0", "id": 1, "method": None, "result": {}}, ""),  # a null method is no method
        ({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "m"}}, ""),  # null: an unread id
    ],
)
def test_malformed_responses_are_still_responses(message: Any, problem: str) -> None:
    kind = envelope.classify(message)
    assert isinstance(kind, envelope.Response)
    assert kind.problem == problem


JSONRPC_2 = 'the "jsonrpc" member must be the string "2.0"'
METHOD_STRING = 'the "method" member must be a string'
BAD_ID = "the id must be a string or an integer (not null, not 1.5, not true)"
PARAMS_OBJECT = '"params" must be an object'


@pytest.mark.parametrize(
    ("message", "answer_id", "detail"),
    [
        ([], None, "expected a JSON object, got list"),
        ("ping", None, "expected a JSON object, got str"),
        (7, None, "expected a JSON object, got int"),
        (None, None, "expected a JSON object, got NoneType"),
        ({"id": 1, "method": "ping"}, 1, JSONRPC_2),  # no jsonrpc member
        ({"jsonrpc": "1.0", "id": "a", "method": "ping"}, "a", JSONRPC_2),
        ({"jsonrpc": 2.0, "id": 1, "method": "ping"}, 1, JSONRPC_2),
        ({"jsonrpc": "2.0", "id": 5}, 5, METHOD_STRING),  # no method
        ({"jsonrpc": "2.0", "id": 5, "method": 17}, 5, METHOD_STRING),
        ({"jsonrpc": "2.0", "id": None, "method": "ping"}, None, BAD_ID),
        ({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, None, BAD_ID),
        ({"jsonrpc": "2.0", "id": True, "method": "ping"}, None, BAD_ID),
        ({"jsonrpc": "2.0", "id": 2, "method": "ping", "params": "a string"}, 2, PARAMS_OBJECT),
        ({"jsonrpc": "2.0", "id": 2, "method": "ping", "params": None}, 2, PARAMS_OBJECT),
        ({"jsonrpc": "2.0", "method": "note", "params": 3}, None, PARAMS_OBJECT),
    ],
)
def test_classify_invalid_requests(message: Any, answer_id: Any, detail: str) -> None:
    with pytest.raises(RpcError) as caught:
        envelope.classify(message)
    assert caught.value.kind is errors.INVALID_REQUEST
    assert str(caught.value) == f"Invalid Request: {detail}"
    assert envelope.id_of(message) == answer_id
    reply = envelope.error_message(envelope.id_of(message), caught.value)
    check_envelope(reply)
    assert reply["error"]["code"] == -32600


def test_reply_builders() -> None:
    assert envelope.result_message("7", {}) == {"jsonrpc": "2.0", "id": "7", "result": {}}
    reply = envelope.error_message(None, errors.PARSE_ERROR, "bad")
    assert reply == {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error: bad"}}
    plain = envelope.error_message(3, errors.METHOD_NOT_FOUND)  # no detail: the code's name alone
    assert plain == {"jsonrpc": "2.0", "id": 3, "error": {"code": -32601, "message": "Method not found"}}
    given = envelope.error_message("a", RpcError(errors.INVALID_PARAMS, "x", data=[1]))
    assert given == {
        "jsonrpc": "2.0",
        "id": "a",
        "error": {"code": -32602, "message": "Invalid params: x", "data": [1]},
    }


# -- dispatch -------------------------------------------------------------------------------
class Recorder:
    """Real handlers that record what they were given."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, Any]] = []

    def method(self, name: str) -> Any:
        def handler(params: Any) -> Any:
            self.seen.append((name, params))
            if name == "fail":
                raise RuntimeError("boom")
            if name == "reject":
                raise RpcError(errors.INVALID_PARAMS, "no")
            return {"echo": params}

        return handler

    def notification(self, name: str) -> Any:
        def handler(params: Any) -> None:
            self.seen.append((name, params))
            if name == "bad/note":
                raise ValueError("a notification handler failed")

        return handler


def dispatcher(recorder: Recorder, batches: bool = False) -> Dispatcher:
    return Dispatcher(
        methods={name: recorder.method(name) for name in ("initialize", "echo", "fail", "reject")},
        notifications={name: recorder.notification(name) for name in ("good/note", "bad/note")},
        batches_allowed=lambda: batches,
    )


def line(message: Any) -> bytes:
    return encode(message).rstrip(b"\n")


def test_request_is_answered_once_with_its_id() -> None:
    rec = Recorder()
    reply = dispatcher(rec).handle_line(line({"jsonrpc": "2.0", "id": "7", "method": "echo", "params": {"a": 1}}))
    assert reply == {"jsonrpc": "2.0", "id": "7", "result": {"echo": {"a": 1}}}
    assert rec.seen == [("echo", {"a": 1})]


def test_notification_runs_and_is_not_answered() -> None:
    rec = Recorder()
    d = dispatcher(rec)
    assert d.handle_line(line({"jsonrpc": "2.0", "method": "good/note", "params": {"x": 1}})) is None
    assert d.handle_line(line({"jsonrpc": "2.0", "method": "unknown/note"})) is None
    assert d.handle_line(line({"jsonrpc": "2.0", "method": "echo"})) is None  # a request method, no id
    assert rec.seen == [("good/note", {"x": 1})]


def test_failing_notification_is_still_not_answered(capsys: pytest.CaptureFixture[str]) -> None:
    rec = Recorder()
    assert dispatcher(rec).handle_line(line({"jsonrpc": "2.0", "method": "bad/note"})) is None
    assert "a notification handler failed" in capsys.readouterr().err


def test_parse_error_has_null_id() -> None:
    reply = dispatcher(Recorder()).handle_line(b'{"jsonrpc": "2.0", "id": 1, "method": "echo"')
    assert reply["id"] is None and reply["error"]["code"] == -32700


def test_unknown_method() -> None:
    reply = dispatcher(Recorder()).handle_line(line({"jsonrpc": "2.0", "id": 0, "method": "tools/lisst"}))
    assert reply["id"] == 0 and reply["error"]["code"] == -32601
    assert "tools/lisst" in reply["error"]["message"]


def test_params_array_for_a_known_method_is_invalid_params() -> None:
    rec = Recorder()
    reply = dispatcher(rec).handle_line(line({"jsonrpc": "2.0", "id": 1, "method": "echo", "params": [1]}))
    assert reply["error"]["code"] == -32602 and rec.seen == []


def test_handler_rpc_error_and_crash(capsys: pytest.CaptureFixture[str]) -> None:
    d = dispatcher(Recorder())
    rejected = d.handle_line(line({"jsonrpc": "2.0", "id": 1, "method": "reject"}))
    assert rejected == {"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "Invalid params: no"}}
    crashed = d.handle_line(line({"jsonrpc": "2.0", "id": 2, "method": "fail"}))
    # The exception's type only: its details go to stderr, not to the client.
    assert crashed == {"jsonrpc": "2.0", "id": 2, "error": {"code": -32603, "message": "Internal error: RuntimeError"}}
    assert "RuntimeError: boom" in capsys.readouterr().err


def test_a_message_with_a_method_is_a_request_even_with_a_result_member() -> None:
    rec = Recorder()
    message = {"jsonrpc": "2.0", "id": 4, "method": "echo", "params": {"a": 1}, "result": {}}
    assert dispatcher(rec).handle_line(line(message)) == {"jsonrpc": "2.0", "id": 4, "result": {"echo": {"a": 1}}}
    note = {"jsonrpc": "2.0", "method": "good/note", "error": {"code": 1, "message": "m"}}
    assert dispatcher(rec).handle_line(line(note)) is None
    assert rec.seen == [("echo", {"a": 1}), ("good/note", {})]


def test_responses_from_the_client_are_ignored() -> None:
    rec = Recorder()
    d = dispatcher(rec)
    assert d.handle_line(line({"jsonrpc": "2.0", "id": 9, "result": {}})) is None
    assert d.handle_line(line({"jsonrpc": "2.0", "id": 9, "error": {"code": 1, "message": "m"}})) is None
    assert rec.seen == []


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "1.0", "id": 99, "result": {}},
        {"id": 99, "error": "x"},
        {"jsonrpc": "2.0", "result": {}},
        {"jsonrpc": "2.0", "id": 1.5, "error": {"code": 1, "message": "m"}},
        {"jsonrpc": "2.0", "id": "x" * 500, "error": 7},
    ],
)
def test_malformed_responses_get_no_reply_and_one_log_line(message: Any, capsys: pytest.CaptureFixture[str]) -> None:
    # Their ids belong to the server's own requests: an error with such an id would answer nothing.
    logged: list[str] = []
    d = Dispatcher({}, {}, log=logged.append)
    assert d.handle_line(line(message)) is None
    assert len(logged) == 1 and "malformed response" in logged[0] and len(logged[0]) < 200
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize(
    ("id", "shown"),
    [
        ("x" * 58, '"' + "x" * 58 + '"'),  # 60 characters of JSON: shown whole
        ("x" * 59, '"' + "x" * 56 + "..."),  # 61: cut to 60 with the dots
        ("\u00e9\u2603", '"\\u00e9\\u2603"'),  # ASCII only, whatever the id holds
        (12345, "12345"),
    ],
)
def test_a_logged_id_is_short_ascii_json(id: Any, shown: str) -> None:
    logged: list[str] = []
    assert Dispatcher({}, {}, log=logged.append).handle_line(line({"jsonrpc": "2.0", "id": id, "result": {}})) is None
    assert logged == [f"ignored a response (id {shown}): this server sends no requests"]


def test_default_log_goes_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    assert Dispatcher({}, {}).handle_line(b'{"jsonrpc":"1.0","id":99,"result":{}}') is None
    out, err = capsys.readouterr()
    assert out == ""
    assert err == 'ignored a malformed response (id 99): the "jsonrpc" member must be the string "2.0"\n'


def test_batch_refused_when_not_negotiated() -> None:
    rec = Recorder()
    batch = [{"jsonrpc": "2.0", "id": 1, "method": "echo"}]
    reply = dispatcher(rec, batches=False).handle_line(line(batch))
    assert isinstance(reply, dict) and reply["id"] is None and reply["error"]["code"] == -32600
    assert rec.seen == []  # nothing in the refused batch ran


def test_empty_batch() -> None:
    reply = dispatcher(Recorder(), batches=True).handle_line(b"[]")
    assert isinstance(reply, dict) and reply["id"] is None and reply["error"]["code"] == -32600


def test_batch_of_notifications_gets_nothing() -> None:
    rec = Recorder()
    notes = [{"jsonrpc": "2.0", "method": "good/note"}, {"jsonrpc": "2.0", "method": "other"}]
    assert dispatcher(rec, batches=True).handle_line(line(notes)) is None
    assert rec.seen == [("good/note", {})]


def test_mixed_batch() -> None:
    rec = Recorder()
    batch = [
        {"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {"n": 1}},
        {"jsonrpc": "2.0", "method": "good/note"},
        {"jsonrpc": "2.0", "id": "two", "method": "initialize", "params": {}},
        {"jsonrpc": "2.0", "method": "initialize"},  # a notification: never answered
        42,
        {"jsonrpc": "2.0", "id": 3, "method": "nope"},
        {"jsonrpc": "2.0", "id": 4, "result": {}},
    ]
    reply = dispatcher(rec, batches=True).handle_line(line(batch))
    assert isinstance(reply, list)
    for item in reply:
        check_envelope(item)
    assert [(r["id"], r.get("error", {}).get("code")) for r in reply] == [
        (1, None),
        ("two", -32600),
        (None, -32600),
        (3, -32601),
    ]
    assert reply[0]["result"] == {"echo": {"n": 1}}
    assert ("initialize", {}) not in rec.seen  # initialize in a batch is refused, not run


# -- Server.serve on in-memory streams ----------------------------------------------------------
def serve(shop_db: Path, data: bytes) -> tuple[int, bytes]:
    out = io.BytesIO()
    code = make_server(shop_db).serve(io.BytesIO(data), out)
    return code, out.getvalue()


def replies(output: bytes) -> list[Any]:
    assert output == b"" or output.endswith(b"\n")
    assert b"\r" not in output
    return [decode(raw) for raw in output.splitlines()]


def test_serve_answers_each_line_in_order_and_returns_zero(shop_db: Path) -> None:
    data = b"".join(
        encode(m)
        for m in [
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": "b", "method": "ping"},
        ]
    )
    code, output = serve(shop_db, data)
    assert code == 0
    assert replies(output) == [
        {"jsonrpc": "2.0", "id": 1, "result": {}},
        {"jsonrpc": "2.0", "id": "b", "result": {}},
    ]


def test_serve_crlf_blank_lines_and_last_line_without_newline(shop_db: Path) -> None:
    data = b'\r\n\n   \n{"jsonrpc":"2.0","id":1,"method":"ping"}\r\n{"jsonrpc":"2.0","id":2,"method":"ping"}'
    code, output = serve(shop_db, data)
    assert code == 0
    assert [r["id"] for r in replies(output)] == [1, 2]


def test_serve_keeps_going_after_bad_lines(shop_db: Path) -> None:
    data = b"garbage\n\xff\xfe\n[" + b"[" * 50_000 + b"\n" + b'{"jsonrpc":"2.0","id":3,"method":"ping"}\n'
    code, output = serve(shop_db, data)
    assert code == 0
    got = replies(output)
    assert [(r["id"], r.get("error", {}).get("code")) for r in got] == [
        (None, -32700),
        (None, -32700),
        (None, -32700),
        (3, None),
    ]


def test_serve_skips_a_line_over_the_limit(shop_db: Path) -> None:
    big = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"' + b"a" * MAX_LINE_BYTES + b'"}}\n'
    code, output = serve(shop_db, big + b'{"jsonrpc":"2.0","id":2,"method":"ping"}\n')
    assert code == 0
    got = replies(output)
    assert got[0]["id"] is None and got[0]["error"]["code"] == -32700
    assert got[1] == {"jsonrpc": "2.0", "id": 2, "result": {}}


def test_serve_empty_input(shop_db: Path) -> None:
    assert serve(shop_db, b"") == (0, b"")


def test_serve_non_ascii_is_raw_utf8(shop_db: Path) -> None:
    request = {"jsonrpc": "2.0", "id": 1, "method": "m\u00e9thode\u2615"}
    code, output = serve(shop_db, encode(request))
    assert code == 0
    assert "m\u00e9thode\u2615".encode() in output
    assert json.loads(output)["error"]["code"] == -32601
