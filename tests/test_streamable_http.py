"""The reference server over Streamable HTTP (MCP 2025-11-25): a real process, real sockets, http.client.

Every status code the transport uses, each for its reason: 200 (a request's reply, as JSON or as
an SSE stream), 202 (a notification or a response), 204 (a session ended), 400 (no session id, a
body that is not a message, a wrong MCP-Protocol-Version), 401 (no or a wrong bearer token), 403
(a foreign Origin), 404 (an unknown or ended session, another path), 405 (GET, PUT), 406, 411,
413, 415 and 421 (a Host that is not loopback). Sessions are separate lifecycles; Ctrl-C ends the
server with status 0.
"""

from __future__ import annotations

import json
import signal
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import READ_TIMEOUT, run_cli
from http_support import HttpServer, init_params, request

from reference import sse
from reference.lifecycle import SUPPORTED

pytestmark = pytest.mark.timeout(120)
TOKEN = "s3cret-token"
VISIBLE_ASCII = {chr(c) for c in range(0x21, 0x7F)}


@pytest.fixture(scope="module")
def served(shop_db: Path) -> Iterator[HttpServer]:
    server = HttpServer(["--db", str(shop_db)])
    yield server
    code = server.stop()
    assert code == 0, server.stderr()
    assert "Traceback" not in server.stderr()


@pytest.fixture(scope="module")
def guarded(shop_db: Path) -> Iterator[HttpServer]:
    server = HttpServer(["--db", str(shop_db), "--auth-token", TOKEN])
    yield server
    assert server.stop() == 0, server.stderr()


def error_of(reply: Any) -> dict[str, Any]:
    """An HTTP error's body: a JSON-RPC error without a usable id (null)."""
    body = reply.json()
    assert body["jsonrpc"] == "2.0" and body["id"] is None, body
    assert isinstance(body["error"]["code"], int) and body["error"]["message"], body
    return body["error"]


# -- start and stop -------------------------------------------------------------------------------
def test_the_server_says_where_it_listens(served: HttpServer) -> None:
    assert served.host == "127.0.0.1" and served.port > 0, "port 0 becomes a real port"
    lines = [line for line in served.stderr().splitlines() if "http://" in line]
    assert lines[0] == f"[mcp-lab serve] Streamable HTTP on {served.url}; Ctrl-C ends it", lines


def test_ctrl_c_ends_it_cleanly(shop_db: Path) -> None:
    server = HttpServer(["--db", str(shop_db)], address=":0")  # no host: loopback
    assert server.host == "127.0.0.1"
    session, _ = server.initialize()
    conn = server.connection()  # an idle keep-alive connection must not hold the exit up
    assert server.post(request("ping"), session, conn=conn).status == 200
    assert server.stop(signal.SIGINT) == 0
    conn.close()
    assert server.stderr().rstrip().endswith("[mcp-lab serve] stopped"), server.stderr()
    assert "Traceback" not in server.stderr()


def test_sigterm_ends_it_cleanly_too(shop_db: Path) -> None:
    server = HttpServer(["--db", str(shop_db)])
    assert server.stop(signal.SIGTERM) == 0
    assert "Traceback" not in server.stderr()


def test_a_port_in_use_is_one_line_and_exit_2(served: HttpServer) -> None:
    shop = served.argv[served.argv.index("--db") + 1]
    done = run_cli(["serve", "--db", shop, "--http", f"127.0.0.1:{served.port}"])
    stderr = done.stderr.decode()
    assert done.returncode == 2, stderr
    assert len(stderr.splitlines()) == 1 and f"cannot listen on 127.0.0.1:{served.port}" in stderr


# -- POST: requests, notifications, responses ----------------------------------------------------
def test_initialize_issues_a_session_id(served: HttpServer) -> None:
    reply = served.post(request("initialize", init_params()))
    assert reply.status == 200 and reply.header("Content-Type") == "application/json"
    session = reply.header("Mcp-Session-Id")
    assert session and set(session) <= VISIBLE_ASCII and len(session) >= 32
    result = reply.json()["result"]
    assert result["protocolVersion"] == "2025-11-25"
    assert set(result["capabilities"]) == {"tools", "resources", "prompts"}
    again = served.post(request("initialize", init_params()))
    assert again.header("Mcp-Session-Id") not in (None, session), "each initialize, its own session"


def test_a_refused_initialize_makes_no_session(served: HttpServer) -> None:
    reply = served.post(request("initialize", {"protocolVersion": 2025}))
    assert reply.status == 200 and reply.json()["error"]["code"] == -32602
    assert reply.header("Mcp-Session-Id") is None


def test_notifications_and_responses_get_202_and_no_body(served: HttpServer) -> None:
    session, _ = served.initialize()
    for message in (
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}},
        {"jsonrpc": "2.0", "id": 99, "result": {}},  # a response to a request we never sent
    ):
        reply = served.post(message, session)
        assert (reply.status, reply.body) == (202, b""), message
        assert reply.header("Content-Length") == "0"
    assert served.call(session, "ping") == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_requests_are_answered_as_on_stdio(served: HttpServer) -> None:
    session, _ = served.initialize()
    assert served.call(session, "ping", id="7") == {"jsonrpc": "2.0", "id": "7", "result": {}}
    count = served.call(session, "tools/call", {"name": "count_orders", "arguments": {"status": "paid"}})
    assert count["result"]["structuredContent"] == {"status": "paid", "count": 341}
    read = served.call(session, "resources/read", {"uri": "shop://products/3"})
    assert json.loads(read["result"]["contents"][0]["text"])["id"] == 3
    # JSON-RPC errors of a request that has an id are normal replies: 200.
    assert served.call(session, "no/such/method")["error"]["code"] == -32601
    missing = served.call(session, "resources/read", {"uri": "shop://orders/0"})
    assert missing["error"] == {"code": -32002, "message": "Resource not found", "data": {"uri": "shop://orders/0"}}


def test_many_messages_on_one_keep_alive_connection(served: HttpServer) -> None:
    conn = served.connection()
    try:
        first = served.post(request("initialize", init_params(), id=0), conn=conn)
        session = first.header("Mcp-Session-Id")
        assert session
        assert served.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, session, conn=conn).status == 202
        for i in range(5):
            assert served.post(request("ping", id=i), session, conn=conn).json()["id"] == i
        assert served.post(b"not json", session, conn=conn).status == 400
        assert served.post(request("ping", id="after"), session, conn=conn).json()["id"] == "after"
    finally:
        conn.close()


def test_a_body_that_is_not_json_is_400_with_a_parse_error(served: HttpServer) -> None:
    reply = served.post(b"hello?")
    assert reply.status == 400
    assert error_of(reply)["code"] == -32700


def test_an_invalid_request_is_400_with_its_error(served: HttpServer) -> None:
    session, _ = served.initialize()
    for body, code in (
        ({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, -32600),
        ({"jsonrpc": "2.0", "id": None, "method": "ping"}, -32600),
        ([], -32600),  # batches exist only in 2025-03-26
    ):
        reply = served.post(body, session)
        assert reply.status == 400, body
        assert error_of(reply)["code"] == code


# -- sessions --------------------------------------------------------------------------------------
def test_a_request_without_a_session_id_is_400(served: HttpServer) -> None:
    served.initialize()
    reply = served.post(request("ping"))
    assert reply.status == 400
    assert "Mcp-Session-Id" in error_of(reply)["message"]
    assert served.post({"jsonrpc": "2.0", "method": "notifications/initialized"}).status == 400


def test_an_unknown_session_id_is_404(served: HttpServer) -> None:
    for session in ("0" * 32, "no-such-session"):
        assert served.post(request("ping"), session).status == 404
        assert served.post(request("initialize", init_params()), session).status == 404


def test_delete_ends_a_session_then_404(served: HttpServer) -> None:
    session, _ = served.initialize()
    other, _ = served.initialize()
    assert served.send("DELETE", headers={"Mcp-Session-Id": session}).status == 204
    assert served.post(request("ping"), session).status == 404
    assert served.send("DELETE", headers={"Mcp-Session-Id": session}).status == 404
    assert served.call(other, "ping")["result"] == {}, "the other session lives on"
    assert served.send("DELETE").status == 400, "which session?"


def test_a_second_initialize_in_a_session_is_refused_by_the_lifecycle(served: HttpServer) -> None:
    session, _ = served.initialize("2025-06-18")
    reply = served.post(request("initialize", init_params()), session)
    assert reply.status == 200 and reply.json()["error"]["code"] == -32600
    assert reply.header("Mcp-Session-Id") is None


def test_each_session_keeps_its_own_revision(served: HttpServer) -> None:
    old, _ = served.initialize("2025-03-26")
    new, _ = served.initialize("2025-11-25")
    bad = {"name": "get_order", "arguments": {"order_id": "one"}}
    assert served.call(old, "tools/call", bad, id=1)["error"]["code"] == -32602  # up to 2025-06-18
    assert served.call(new, "tools/call", bad, id=1)["result"]["isError"] is True  # 2025-11-25
    # 2025-03-26 has batches, over HTTP too; its tool results carry no structuredContent.
    batch = [request("ping", id="a"), request("tools/call", {"name": "count_orders", "arguments": {}}, id="b")]
    replies = served.post(batch, old, headers={"MCP-Protocol-Version": "2025-03-26"}).json()
    assert [r["id"] for r in replies] == ["a", "b"] and "structuredContent" not in replies[1]["result"]


# -- headers ---------------------------------------------------------------------------------------
def test_the_protocol_version_header(served: HttpServer) -> None:
    session, _ = served.initialize("2025-06-18")
    assert served.post(request("ping"), session).status == 200, "absent: the negotiated revision"
    ok = served.post(request("ping"), session, headers={"MCP-Protocol-Version": "2025-06-18"})
    assert ok.status == 200
    for wrong in ("1999-01-01", "latest", "2025-11-25"):  # unsupported, nonsense, not this session's
        reply = served.post(request("ping"), session, headers={"MCP-Protocol-Version": wrong})
        assert reply.status == 400, wrong
        assert wrong in error_of(reply)["message"]
    unsupported = served.post(request("initialize", init_params()), headers={"MCP-Protocol-Version": "2024-01-01"})
    assert unsupported.status == 400 and unsupported.header("Mcp-Session-Id") is None
    assert "2025-11-25" in SUPPORTED


@pytest.mark.parametrize(
    "origin", ["https://evil.example", "http://localhost.evil.example", "null", "http://192.168.1.5:8000", "file://"]
)
def test_a_foreign_origin_is_403(served: HttpServer, origin: str) -> None:
    session, _ = served.initialize()
    reply = served.post(request("ping"), session, headers={"Origin": origin})
    assert reply.status == 403
    error_of(reply)
    assert served.post(request("initialize", init_params()), headers={"Origin": origin}).status == 403


@pytest.mark.parametrize("origin", ["http://localhost:6274", "http://127.0.0.1", "https://[::1]:3000"])
def test_a_loopback_origin_is_allowed(served: HttpServer, origin: str) -> None:
    session, _ = served.initialize()
    assert served.post(request("ping"), session, headers={"Origin": origin}).status == 200


def test_a_host_that_is_not_loopback_is_421(served: HttpServer) -> None:
    session, _ = served.initialize()
    reply = served.post(request("ping"), session, headers={"Host": f"rebound.example:{served.port}"})
    assert reply.status == 421
    assert served.post(request("ping"), session, headers={"Host": f"localhost:{served.port}"}).status == 200


def test_get_and_other_methods_are_405(served: HttpServer) -> None:
    session, _ = served.initialize()
    for method in ("GET", "PUT", "PATCH", "OPTIONS"):
        reply = served.send(method, headers={"Mcp-Session-Id": session, "Accept": "text/event-stream"})
        assert reply.status == 405, method
        assert reply.header("Allow") == "POST, DELETE"
    assert served.send("HEAD").status == 405


def test_another_path_is_404(served: HttpServer) -> None:
    for path in ("/", "/mcp/", "/sse", "/messages"):
        reply = served.send("POST", json.dumps(request("ping")), {"Content-Type": "application/json"}, path=path)
        assert reply.status == 404, path
    assert served.send("GET", path="/mcp?x=1").status == 405, "the query string is not the path"


def test_content_type_and_accept(served: HttpServer) -> None:
    session, _ = served.initialize()
    wrong_type = served.post(request("ping"), session, headers={"Content-Type": "text/plain"})
    assert wrong_type.status == 415
    assert served.post(request("ping"), session, headers={"Accept": "text/html"}).status == 406
    assert served.post(request("ping"), session, headers={"Accept": "application/json"}).status == 200
    assert served.post(request("ping"), session, headers={"Accept": "*/*"}).json()["result"] == {}


def test_sse_when_the_client_accepts_only_an_event_stream(served: HttpServer) -> None:
    session, _ = served.initialize()
    message = request("resources/read", {"uri": "shop://orders/7"}, id="sse")
    reply = served.post(message, session, headers={"Accept": "text/event-stream"})
    assert reply.status == 200 and reply.header("Content-Type") == "text/event-stream"
    assert reply.body.endswith(b"\n\n") and reply.body.startswith(b"event: message\ndata: {")
    (event,) = sse.parse(reply.body)
    assert event["event"] == "message"
    answer = json.loads(event["data"])
    assert answer["id"] == "sse" and answer["result"]["contents"][0]["uri"] == "shop://orders/7"
    # A notification is still 202, whatever the client accepts.
    note = served.post(
        {"jsonrpc": "2.0", "method": "notifications/x"}, session, headers={"Accept": "text/event-stream"}
    )
    assert note.status == 202


def raw_exchange(server: HttpServer, data: bytes) -> bytes:
    """Bytes on a bare socket, for what http.client will not send; the reply until the server closes."""
    with socket.create_connection((server.host, server.port), timeout=READ_TIMEOUT) as sock:
        sock.sendall(data)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_a_body_without_a_length_is_411_and_a_huge_one_413(served: HttpServer) -> None:
    head = f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\nContent-Type: application/json\r\n"
    chunked = raw_exchange(served, (head + "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n").encode())
    assert chunked.startswith(b"HTTP/1.1 411 "), chunked[:100]
    huge = raw_exchange(served, (head + "Content-Length: 999999999\r\n\r\n{").encode())
    assert huge.startswith(b"HTTP/1.1 413 "), huge[:100]
    assert b"Connection: close" in huge, "the unread body ends the connection"


# -- the bearer token ------------------------------------------------------------------------------
def test_without_the_token_401_with_a_bearer_challenge(guarded: HttpServer) -> None:
    reply = guarded.post(request("initialize", init_params()))
    assert reply.status == 401
    assert reply.header("WWW-Authenticate") == 'Bearer realm="mcp-lab"'
    assert reply.header("Mcp-Session-Id") is None
    assert guarded.send("GET").status == 401, "before anything else is said about the endpoint"


@pytest.mark.parametrize("authorization", [f"Bearer {TOKEN}x", "Bearer ", f"Basic {TOKEN}", TOKEN, "Bearer s3cret"])
def test_a_wrong_token_is_401_invalid_token(guarded: HttpServer, authorization: str) -> None:
    reply = guarded.post(request("initialize", init_params()), headers={"Authorization": authorization})
    assert reply.status == 401
    challenge = reply.header("WWW-Authenticate") or ""
    assert challenge.startswith("Bearer ") and 'error="invalid_token"' in challenge


def test_the_right_token_opens_the_session(guarded: HttpServer) -> None:
    guarded.token = TOKEN
    try:
        session, result = guarded.initialize()
        assert result["serverInfo"]["name"] == "mcp-wire-lab-shop"
        assert guarded.call(session, "ping")["result"] == {}
        for scheme in ("bearer", "BEARER"):  # the scheme's case does not matter
            headers = {"Authorization": f"{scheme} {TOKEN}"}
            assert guarded.post(request("ping"), session, headers=headers).status == 200
    finally:
        guarded.token = None
    # The session id alone is not a credential.
    assert guarded.post(request("ping"), session).status == 401


def test_origin_is_checked_before_the_token(guarded: HttpServer) -> None:
    reply = guarded.post(
        request("ping"), headers={"Origin": "https://evil.example", "Authorization": f"Bearer {TOKEN}"}
    )
    assert reply.status == 403
