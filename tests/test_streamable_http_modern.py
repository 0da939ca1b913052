"""The reference server over Streamable HTTP 2026-07-28: one POST per message, no session, real sockets.

A POST whose ``MCP-Protocol-Version`` is 2026-07-28, or whose body carries the per-request ``_meta``,
is served statelessly: no ``Mcp-Session-Id`` issued or needed, the headers checked against the body
(400 with -32020), an envelope refused with 400 (-32602, -32022), an unknown or removed method 404
(-32601), GET and DELETE 405, a notification 202. The legacy sessions go on beside it on the same
endpoint. Then the official SDK 2.3 client, code no one here wrote, in its default (auto) mode and in
legacy mode, with the wire it sent recorded.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import signal
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from http_support import HttpServer, init_params, request

from reference import sse, stateless
from reference.streamable_http import serve_until_signalled

pytestmark = pytest.mark.timeout(180)
TOKEN = "modern-token"
MODERN = "2026-07-28"
META = {
    stateless.PROTOCOL_VERSION: MODERN,
    stateless.CLIENT_CAPABILITIES: {},
    stateless.CLIENT_INFO: {"name": "http-modern-test", "version": "1"},
}
TOOLS = ["count_orders", "list_orders", "get_order", "search_products"]


@pytest.fixture(scope="module")
def served(shop_db: Path) -> Iterator[HttpServer]:
    server = HttpServer(["--db", str(shop_db)])
    server.start_lines = server.stderr().splitlines()  # type: ignore[attr-defined]  # before any request's log
    yield server
    code = server.stop()
    assert code == 0, server.stderr()
    assert "Traceback" not in server.stderr()


@pytest.fixture(scope="module")
def guarded(shop_db: Path) -> Iterator[HttpServer]:
    server = HttpServer(["--db", str(shop_db), "--auth-token", TOKEN])
    yield server
    assert server.stop() == 0, server.stderr()


def modern(method: str, params: dict[str, Any] | None = None, id: Any = 1, **meta: Any) -> dict[str, Any]:
    """A 2026-07-28 request: its params carry the envelope (``meta`` overrides keys of it)."""
    return request(method, {**(params or {}), "_meta": {**META, **meta}}, id)


def headers_for(message: dict[str, Any], **extra: str) -> dict[str, str]:
    """The metadata headers a conforming client sends with ``message`` (Mcp-Name plain ASCII here)."""
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": message["method"]}
    params = message.get("params") or {}
    name = params.get("uri") if message["method"] == "resources/read" else params.get("name")
    if message["method"] in ("tools/call", "prompts/get", "resources/read") and isinstance(name, str):
        headers["Mcp-Name"] = name
    headers.update(extra)
    return {k: v for k, v in headers.items() if v != "-"}  # "-": leave the header out


def post(server: HttpServer, message: Any, **headers: str) -> Any:
    """POST ``message`` with the headers a conforming client sends; ``Name="-"`` leaves one out."""
    return server.post(message, headers=headers_for(message, **headers) if isinstance(message, dict) else headers)


def refused(reply: Any, status: int, code: int, id: Any = 1) -> dict[str, Any]:
    """An error reply: its HTTP status, its JSON-RPC code, the request's id (and never a session)."""
    assert reply.status == status, reply
    body = reply.json()
    assert body["id"] == id and body["error"]["code"] == code, body
    assert reply.header("Mcp-Session-Id") is None
    return body["error"]


# -- served statelessly ---------------------------------------------------------------------------
def test_the_server_names_both_eras_on_stderr(served: HttpServer) -> None:
    (line,) = [line for line in served.start_lines if "eras:" in line]  # type: ignore[attr-defined]
    assert f"{MODERN} statelessly" in line and "2025-11-25" in line and "after initialize" in line, line


def test_a_modern_request_is_served_without_initialize_or_session(served: HttpServer) -> None:
    call = modern("tools/call", {"name": "count_orders", "arguments": {"status": "paid"}})
    reply = post(served, call)
    assert reply.status == 200 and reply.header("Mcp-Session-Id") is None, reply
    result = reply.json()["result"]
    assert result["resultType"] == "complete" and result["structuredContent"] == {"status": "paid", "count": 341}
    assert result["_meta"][stateless.SERVER_INFO]["name"] == "mcp-wire-lab-shop"
    listed = post(served, modern("tools/list")).json()["result"]
    assert [tool["name"] for tool in listed["tools"]] == TOOLS
    assert isinstance(listed["ttlMs"], int) and listed["cacheScope"] == "public"
    discover = post(served, modern("server/discover")).json()["result"]
    assert discover["supportedVersions"] == [MODERN]


def test_a_session_id_sent_with_a_modern_request_is_ignored(served: HttpServer) -> None:
    reply = post(served, modern("tools/list"), **{"Mcp-Session-Id": "no-such-session"})
    assert reply.status == 200 and reply.header("Mcp-Session-Id") is None
    session, _ = served.initialize()  # a real one: the modern request is still served by no session
    reply = post(served, modern("tools/list"), **{"Mcp-Session-Id": session})
    assert reply.status == 200 and reply.json()["result"]["resultType"] == "complete"


def test_a_notification_is_202_without_a_body(served: HttpServer) -> None:
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1, "_meta": META}}
    reply = served.post(note, headers={"MCP-Protocol-Version": MODERN})
    assert reply.status == 202 and reply.body == b"" and reply.header("Mcp-Session-Id") is None


def test_get_and_delete_with_a_modern_version_are_405(served: HttpServer) -> None:
    for method in ("GET", "DELETE"):
        reply = served.send(method, headers={"MCP-Protocol-Version": MODERN, "Accept": "text/event-stream"})
        assert reply.status == 405 and reply.header("Allow") == "POST", (method, reply)
    assert served.send("GET").header("Allow") == "POST, DELETE", "the legacy answer stays as it was"


def test_sse_when_the_client_accepts_only_an_event_stream(served: HttpServer) -> None:
    message = modern("resources/read", {"uri": "shop://orders/7"}, id="sse")
    reply = post(served, message, Accept="text/event-stream")
    assert reply.status == 200 and reply.header("Content-Type") == "text/event-stream"
    assert reply.header("X-Accel-Buffering") == "no"
    (event,) = sse.parse(reply.body)
    answer = json.loads(event["data"])
    assert answer["id"] == "sse" and answer["result"]["contents"][0]["uri"] == "shop://orders/7"


def test_concurrent_requests_each_get_their_own_answer(served: HttpServer) -> None:
    statuses = ("paid", "shipped", "pending", "cancelled") * 3
    got: dict[int, Any] = {}

    def ask(n: int, status: str) -> None:
        call = modern("tools/call", {"name": "count_orders", "arguments": {"status": status}}, id=n)
        got[n] = post(served, call).json()

    threads = [threading.Thread(target=ask, args=(n, s)) for n, s in enumerate(statuses)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(got) == list(range(len(statuses)))
    for n, status in enumerate(statuses):
        assert got[n]["id"] == n and got[n]["result"]["structuredContent"]["status"] == status


# -- the headers against the body -----------------------------------------------------------------
@pytest.mark.parametrize(
    ("message", "headers", "says"),
    [
        (modern("tools/list"), {"MCP-Protocol-Version": "-"}, "no MCP-Protocol-Version"),
        (modern("tools/list"), {"MCP-Protocol-Version": "2025-11-25"}, "must be equal"),
        (modern("tools/list"), {"Mcp-Method": "-"}, "no Mcp-Method"),
        (modern("tools/list"), {"Mcp-Method": "prompts/list"}, "Mcp-Method is 'prompts/list'"),
        (modern("tools/list"), {"Mcp-Method": "TOOLS/LIST"}, "Mcp-Method"),  # values are case-sensitive
        (modern("tools/call", {"name": "count_orders", "arguments": {}}), {"Mcp-Name": "-"}, "no Mcp-Name"),
        (modern("tools/call", {"name": "count_orders", "arguments": {}}), {"Mcp-Name": "get_order"}, "Mcp-Name"),
        (modern("prompts/get", {"name": "status_report"}), {"Mcp-Name": "-"}, "params.name"),
        (modern("resources/read", {"uri": "shop://orders/1"}), {"Mcp-Name": "shop://orders/2"}, "params.uri"),
        (modern("resources/read", {"uri": "shop://orders/1"}), {"Mcp-Name": "=?base64?!!?="}, "base64"),
    ],
)
def test_a_missing_or_different_header_is_400_header_mismatch(
    served: HttpServer, message: dict, headers: dict, says: str
) -> None:
    error = refused(post(served, message, **headers), 400, -32020)
    assert says in error["message"] and "Server Validation" in error["message"], error


def test_a_base64_name_is_decoded_before_it_is_compared(served: HttpServer) -> None:
    message = modern("resources/read", {"uri": "shop://orders/3"})
    encoded = "=?base64?" + base64.b64encode(b"shop://orders/3").decode() + "?="
    reply = post(served, message, **{"Mcp-Name": encoded})
    assert reply.status == 200 and reply.json()["result"]["contents"][0]["uri"] == "shop://orders/3"
    other = "=?base64?" + base64.b64encode(b"shop://orders/4").decode() + "?="
    refused(post(served, message, **{"Mcp-Name": other}), 400, -32020)


def test_a_name_outside_ascii_travels_as_base64_and_never_raw(served: HttpServer) -> None:
    message = modern("prompts/get", {"name": "résumé", "arguments": {}})
    encoded = "=?base64?" + base64.b64encode("résumé".encode()).decode() + "?="
    error = refused(post(served, message, **{"Mcp-Name": encoded}), 400, -32602)
    assert "unknown prompt" in error["message"], "the headers agreed: the prompt itself is unknown"
    raw = refused(post(served, message, **{"Mcp-Name": "résumé"}), 400, -32020)  # sent as Latin-1 bytes
    assert "=?base64?" in raw["message"], raw


def test_header_names_are_case_insensitive_and_values_trimmed(served: HttpServer) -> None:
    message = modern("tools/call", {"name": "count_orders", "arguments": {"status": "paid"}})
    headers = {"mcp-protocol-version": MODERN, "MCP-METHOD": "tools/call", "mcp-name": " count_orders  "}
    reply = served.post(message, headers=headers)
    assert reply.status == 200, reply


def test_a_header_sent_twice_is_refused(served: HttpServer) -> None:
    # Two spellings of one name are two header lines on the wire (names are case-insensitive):
    # a gateway reading the first and a server reading the last could disagree.
    headers = {"Content-Type": "application/json", "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list"}
    reply = served.send("POST", json.dumps(modern("tools/list")), {**headers, "mcp-method": "tools/list"})
    error = refused(reply, 400, -32020)
    assert "Mcp-Method header appears 2 times" in error["message"], error


# -- the envelope and the methods -----------------------------------------------------------------
def test_a_missing_envelope_is_400_invalid_params(served: HttpServer) -> None:
    bare = request("tools/list", {})
    error = refused(
        served.post(bare, headers={"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list"}), 400, -32602
    )
    assert "_meta" in error["message"]
    no_version = request("tools/list", {"_meta": {stateless.CLIENT_CAPABILITIES: {}}})
    error = refused(post(served, no_version), 400, -32602)
    assert "protocolVersion" in error["message"], "the envelope is judged before the headers"


def test_an_unsupported_version_is_400_with_supported_and_requested(served: HttpServer) -> None:
    message = modern("tools/list", **{stateless.PROTOCOL_VERSION: "2099-01-01"})
    error = refused(post(served, message, **{"MCP-Protocol-Version": "2099-01-01"}), 400, -32022)
    assert error["data"] == {"supported": [MODERN], "requested": "2099-01-01"}


@pytest.mark.parametrize("method", ["initialize", "ping", "logging/setLevel", "resources/subscribe", "no/such"])
def test_an_unknown_or_removed_method_is_404(served: HttpServer, method: str) -> None:
    refused(post(served, modern(method)), 404, -32601)


def test_an_unknown_resource_is_400_invalid_params_with_its_uri(served: HttpServer) -> None:
    error = refused(post(served, modern("resources/read", {"uri": "shop://orders/0"})), 400, -32602)
    assert error["data"] == {"uri": "shop://orders/0"}


def test_a_batch_or_a_response_is_400(served: HttpServer) -> None:
    batch = served.post([modern("tools/list")], headers={"MCP-Protocol-Version": MODERN})
    assert batch.status == 400 and batch.json()["error"]["code"] == -32600
    response = served.post({"jsonrpc": "2.0", "id": 5, "result": {}}, headers={"MCP-Protocol-Version": MODERN})
    assert response.status == 400 and response.json()["error"]["code"] == -32600


# -- the guards apply to both eras -----------------------------------------------------------------
def test_origin_and_token_guard_modern_requests_too(guarded: HttpServer) -> None:
    message = modern("tools/list")
    assert post(guarded, message).status == 401
    guarded.token = TOKEN
    try:
        assert post(guarded, message).status == 200
        assert post(guarded, message, Origin="https://evil.example").status == 403
    finally:
        guarded.token = None


def test_the_legacy_sessions_go_on_beside_it(served: HttpServer) -> None:
    session, result = served.initialize("2025-11-25")
    assert result["protocolVersion"] == "2025-11-25" and "resultType" not in result
    listed = served.call(session, "tools/list")["result"]
    assert "resultType" not in listed and [tool["name"] for tool in listed["tools"]] == TOOLS
    no_session = served.post(request("tools/list", {}), headers={"MCP-Protocol-Version": "2025-11-25"})
    assert no_session.status == 400 and "Mcp-Session-Id" in no_session.json()["error"]["message"]
    missing = served.call(session, "resources/read", {"uri": "shop://orders/0"})
    assert missing["error"]["code"] == -32002
    again = served.post(request("initialize", init_params(), id=2))
    assert again.status == 200 and again.header("Mcp-Session-Id")


# -- the official SDK 2.3 client ------------------------------------------------------------------
async def _sdk_session(url: str, mode: str, wire: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.exceptions import MCPError

    async def sent(req: Any) -> None:
        if wire is not None:
            body = json.loads(req.content) if req.content else None
            wire.append({"http": req.method, "headers": dict(req.headers), "body": body})

    async def answered(resp: Any) -> None:
        if wire is not None:
            wire.append({"status": resp.status_code, "headers": dict(resp.headers)})

    async with httpx2.AsyncClient(timeout=30, event_hooks={"request": [sent], "response": [answered]}) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode=mode, read_timeout_seconds=30) as client:
            tools = await client.list_tools()
            call = await client.call_tool("count_orders", {"status": "paid"})
            resources = await client.list_resources()
            templates = await client.list_resource_templates()
            read = await client.read_resource("shop://orders/1")
            prompts = await client.list_prompts()
            prompt = await client.get_prompt("summarise_order", {"order_id": "1"})
            try:
                await client.read_resource("shop://orders/0")
                missing: Any = None
            except MCPError as exc:
                missing = (exc.code, exc.data)
    return {
        "tools": [tool.name for tool in tools.tools],
        "count": call.structured_content,
        "resources": [str(r.uri) for r in resources.resources],
        "templates": len(templates.resource_templates),
        "read": str(read.contents[0].uri),
        "prompts": [p.name for p in prompts.prompts],
        "prompt": len(prompt.messages),
        "missing": missing,
    }


@pytest.mark.parametrize(("mode", "missing"), [("auto", -32602), ("legacy", -32002)])
def test_the_official_sdk_http_client_in_both_modes(served: HttpServer, mode: str, missing: int) -> None:
    got = asyncio.run(asyncio.wait_for(_sdk_session(served.url, mode), 120))
    assert got == {
        "tools": TOOLS,
        "count": {"status": "paid", "count": 341},
        "resources": ["shop://schema"],
        "templates": 2,
        "read": "shop://orders/1",
        "prompts": ["summarise_order", "status_report"],
        "prompt": 2,
        "missing": (missing, {"uri": "shop://orders/0"}),
    }


def test_the_sdk_in_auto_mode_speaks_2026_on_the_wire(served: HttpServer) -> None:
    """Recorded at the SDK's own HTTP client: every POST a modern request, no initialize, no session."""
    wire: list[dict[str, Any]] = []
    asyncio.run(asyncio.wait_for(_sdk_session(served.url, "auto", wire), 120))
    posts = [entry for entry in wire if entry.get("http") == "POST"]
    methods = [entry["body"]["method"] for entry in posts]
    assert methods[0] == "server/discover" and "initialize" not in methods, methods
    assert {"tools/list", "tools/call", "resources/read", "prompts/get"} <= set(methods)
    for entry in posts:
        headers, body = entry["headers"], entry["body"]
        assert headers["mcp-protocol-version"] == MODERN == body["params"]["_meta"][stateless.PROTOCOL_VERSION]
        assert headers["mcp-method"] == body["method"]
        assert "mcp-session-id" not in headers, entry
    named = {entry["body"]["method"]: entry["headers"].get("mcp-name") for entry in posts}
    assert named["tools/call"] == "count_orders" and named["prompts/get"] == "summarise_order"
    answers = [entry for entry in wire if "status" in entry]
    assert all("mcp-session-id" not in entry["headers"] for entry in answers), answers
    assert [entry["status"] for entry in answers].count(400) == 1, "only the unknown resource is refused"
    assert not any(entry.get("http") in ("GET", "DELETE") for entry in wire), "no stream, no session to end"


# -- subscriptions/listen over HTTP: the POST's own SSE response -----------------------------------
def _events(reply: Any, wanted: int) -> list[dict[str, Any]]:
    """Read SSE events from a streaming response until ``wanted`` messages have come (comments skipped)."""
    found: list[dict[str, Any]] = []
    buffer = b""
    while len(found) < wanted:
        line = reply.fp.readline()  # bounded by the connection's timeout
        assert line, f"the stream ended after {found}"
        buffer += line
        if line in (b"\n", b"\r\n"):
            found += [json.loads(event["data"]) for event in sse.parse(buffer)]
            buffer = b""
    return found


def _open_stream(server: HttpServer, listen: dict[str, Any]) -> tuple[Any, Any]:
    """POST a listen request and return (its connection, its streaming response), headers read."""
    conn = server.connection()
    accept = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    conn.request("POST", "/mcp", json.dumps(listen), {**accept, **headers_for(listen)})
    return conn, conn.getresponse()


def test_a_listen_stream_hears_an_order_cancelled_over_http(tmp_path: Path) -> None:
    from conftest import run_cli

    copy = tmp_path / "shop.db"
    assert run_cli(["db", "build", str(copy)]).returncode == 0
    server = HttpServer(["--db", str(copy), "--allow-writes"])
    try:
        listen = modern("subscriptions/listen", {"notifications": {"resourceSubscriptions": ["shop://orders/9"]}}, 70)
        conn, stream = _open_stream(server, listen)
        assert stream.status == 200 and stream.getheader("Content-Type") == "text/event-stream"
        assert stream.getheader("Mcp-Session-Id") is None
        (ack,) = _events(stream, 1)
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        assert ack["params"]["notifications"] == {"resourceSubscriptions": ["shop://orders/9"]}
        assert ack["params"]["_meta"][stateless.SUBSCRIPTION_ID] == 70
        # Another POST cancels order 9, confirming through the input_required round trip.
        asks = {**META, stateless.CLIENT_CAPABILITIES: {"elicitation": {"form": {}}}}
        arguments = {"order_id": 9, "reason": "asked by phone"}
        call = request("tools/call", {"name": "cancel_order", "arguments": arguments, "_meta": asks}, 71)
        first = post(server, call).json()["result"]
        assert first["resultType"] == "input_required", first
        (key,) = first["inputRequests"]
        retry = json.loads(json.dumps(call))
        retry["id"] = 72
        retry["params"]["inputResponses"] = {key: {"action": "accept", "content": {"confirm": True}}}
        retry["params"]["requestState"] = first["requestState"]
        done = post(server, retry).json()["result"]
        assert done["resultType"] == "complete" and not done["isError"], done
        (update,) = _events(stream, 1)
        assert update["method"] == "notifications/resources/updated"
        assert update["params"]["uri"] == "shop://orders/9"
        assert update["params"]["_meta"][stateless.SUBSCRIPTION_ID] == 70
        conn.close()  # closing the stream is how an HTTP client cancels
    finally:
        assert server.stop() == 0, server.stderr()
    assert "Traceback" not in server.stderr()


def test_a_ctrl_c_while_a_request_is_starting_leaves_its_connection_to_its_thread() -> None:
    """The race behind a listen stream that lost its response at Ctrl-C, made certain: the signal
    comes while the serving loop is still starting the request's thread (on a busy machine it is
    rescheduled late). Raised as KeyboardInterrupt there, socketserver shut the connection down
    under the thread serving it; asked to stop instead, the loop ends and the thread finishes."""
    began, proceed = threading.Event(), threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.wfile.write(b"HTTP/1.0 200 OK\r\n\r\nfirst\n")
            began.set()
            proceed.wait(10)
            time.sleep(0.2)  # after the loop's cleanup, had there been one
            self.wfile.write(b"second\n")

    class LateLoop(ThreadingHTTPServer):
        daemon_threads = True

        def process_request(self, request: Any, client_address: Any) -> None:
            super().process_request(request, client_address)  # the request's thread serves it
            began.wait(10)
            try:
                os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C while the loop is still in here
                time.sleep(0.5)
            finally:
                proceed.set()

    httpd = LateLoop(("127.0.0.1", 0), Handler)
    got: list[bytes] = []

    def client() -> None:
        with socket.create_connection(httpd.server_address[:2], timeout=10) as conn:
            conn.sendall(b"GET / HTTP/1.0\r\n\r\n")
            with conn.makefile("rb") as reply:
                got.append(reply.read())

    reader = threading.Thread(target=client)
    reader.start()
    serve_until_signalled(httpd)
    reader.join(15)
    httpd.server_close()
    assert got and got[0].endswith(b"first\nsecond\n"), got


def test_a_listen_stream_ends_with_its_response_when_the_server_stops() -> None:
    server = HttpServer()
    listen = modern("subscriptions/listen", {"notifications": {"resourceSubscriptions": ["shop://orders/3"]}}, id=5)
    conn, stream = _open_stream(server, listen)
    (ack,) = _events(stream, 1)
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    stopper = threading.Thread(target=server.stop)
    stopper.start()
    (end,) = _events(stream, 1)
    assert end["id"] == 5 and end["result"]["resultType"] == "complete", end
    stopper.join(30)
    conn.close()
