"""subscriptions/listen on stdio (MCP 2026-07-28), over real pipes.

The acknowledgement comes first and carries the part of the filter the shop honours (its URIs; no
list flags, its lists never change); every message of a stream carries its id; a stream stays open
while other requests are served; a cancelled order is announced to the streams watching its URI
and to no other; ``notifications/cancelled`` ends a stream silently; the end of input ends the open
ones with the graceful response. Bad filters are -32602 saying what is wrong. The official SDK 2.3
client's ``listen()`` hears a cancel made by its own ``call_tool``.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, Wire, run_cli

from reference import stateless

SUB = stateless.SUBSCRIPTION_ID
META = {
    stateless.PROTOCOL_VERSION: "2026-07-28",
    stateless.CLIENT_CAPABILITIES: {"elicitation": {}},
    stateless.CLIENT_INFO: {"name": "pytest-listen", "version": "1"},
}
ACK = "notifications/subscriptions/acknowledged"
UPDATED = "notifications/resources/updated"


def modern(params: dict[str, Any]) -> dict[str, Any]:
    return {**params, "_meta": META}


def read(wire: Wire) -> dict[str, Any]:
    """The next message, a notification too (Wire.recv takes replies only: notifications are a
    legacy server's fault, and a stream's messages are this revision's point)."""
    message = json.loads(wire.recv_line())
    assert isinstance(message, dict) and message.get("jsonrpc") == "2.0", message
    return message


def listen(wire: Wire, request_id: Any, notifications: Any) -> dict[str, Any]:
    """Open a stream; return its acknowledgement (the next line)."""
    wire.send(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "subscriptions/listen",
            "params": modern({"notifications": notifications}),
        }
    )
    return read(wire)


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    path = tmp_path / "shop.db"
    assert run_cli(["db", "build", str(path)]).returncode == 0
    return path


@pytest.fixture
def writer(start_server: Callable[..., Wire], copy: Path) -> Wire:
    return start_server([sys.executable, "-m", "reference.server", "--db", str(copy), "--allow-writes"])


def first_with(path: Path, status: str) -> int:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT min(id) FROM orders WHERE status = ?", (status,)).fetchone()[0]


def confirmed_cancel(wire: Wire, order_id: int) -> list[Any]:
    """Cancel ``order_id`` through the question and a yes; return the messages after the final reply."""
    params = {"name": "cancel_order", "arguments": {"order_id": order_id, "reason": "listen test"}}
    state = wire.result("tools/call", modern(params))["requestState"]
    yes = {"confirm": {"action": "accept", "content": {"confirm": True}}}
    done = wire.result("tools/call", modern({**params, "requestState": state, "inputResponses": yes}))
    assert done["structuredContent"]["status"] == "cancelled", done
    return until_reply(wire)


def until_reply(wire: Wire) -> list[Any]:
    """Everything that comes before the reply to one more request (a legacy ping has no place here)."""
    wire.send({"jsonrpc": "2.0", "id": "sync", "method": "server/discover", "params": modern({})})
    before = []
    while (message := read(wire)).get("id") != "sync":
        before.append(message)
    return before


def test_the_acknowledgement_comes_first_with_the_honoured_subset(server: Wire) -> None:
    asked = {
        "toolsListChanged": True,
        "promptsListChanged": True,
        "resourcesListChanged": False,
        "resourceSubscriptions": [
            "shop://orders/7",
            "shop://orders/0",
            "http://elsewhere/x",
            "shop://schema",
            "shop://orders/7",
        ],
        "somethingLater": True,  # a kind this revision does not define: not honoured, not an error
    }
    ack = listen(server, 5, asked)
    assert ack == {
        "jsonrpc": "2.0",
        "method": ACK,
        "params": {"notifications": {"resourceSubscriptions": ["shop://orders/7", "shop://schema"]}, "_meta": {SUB: 5}},
    }
    # The stream stays open, and the connection keeps serving other requests meanwhile.
    assert server.result("tools/list", modern({}))["resultType"] == "complete"
    ack = listen(server, "second", {})
    assert ack["params"] == {"notifications": {}, "_meta": {SUB: "second"}}


def test_discover_declares_subscribe_and_legacy_initialize_does_not(start_server: Callable[..., Wire]) -> None:
    modern_wire = start_server()
    capabilities = modern_wire.result("server/discover", modern({}))["capabilities"]
    assert capabilities["resources"] == {"subscribe": True, "listChanged": False}
    assert capabilities["tools"] == {"listChanged": False} and capabilities["prompts"] == {"listChanged": False}
    legacy = start_server()
    assert legacy.initialize()["capabilities"]["resources"] == {"subscribe": False, "listChanged": False}
    error = legacy.error("subscriptions/listen", modern({"notifications": {}}))
    assert error["code"] == -32600  # an initialized connection takes no 2026-07-28 request
    assert legacy.error("subscriptions/listen", {"notifications": {}})["code"] == -32601


def test_a_cancelled_order_is_announced_to_the_streams_watching_it(writer: Wire, copy: Path) -> None:
    paid = first_with(copy, "paid")
    uri = f"shop://orders/{paid}"
    assert listen(writer, 1, {"resourceSubscriptions": [uri]})["params"]["notifications"] == {
        "resourceSubscriptions": [uri]
    }
    assert listen(writer, 2, {"resourceSubscriptions": ["shop://orders/1"]})["method"] == ACK
    assert listen(writer, "3", {"resourceSubscriptions": [uri, "shop://schema"]})["method"] == ACK
    after = confirmed_cancel(writer, paid)
    announced = {(message["params"]["_meta"][SUB], message["params"]["uri"]) for message in after}
    assert all(message["method"] == UPDATED for message in after), after
    # The order's watchers hear of it, tagged with their own ids; stream 2 watches another order.
    # The schema changed as well: the copy's first write made its notes and audit tables.
    assert announced == {(1, uri), ("3", uri), ("3", "shop://schema")}
    assert len(after) == 3
    # Reading the resource again shows the change the notification announced.
    read = writer.result("resources/read", modern({"uri": uri}))
    assert '"status": "cancelled"' in read["contents"][0]["text"]


def test_cancelling_a_stream_ends_it_without_a_word(writer: Wire, copy: Path) -> None:
    paid, pending = first_with(copy, "paid"), first_with(copy, "pending")
    listen(writer, 7, {"resourceSubscriptions": [f"shop://orders/{paid}", f"shop://orders/{pending}"]})
    writer.notify("notifications/cancelled", {"requestId": 7, "reason": "done"})
    writer.notify("notifications/cancelled", {"requestId": 12345})  # unknown: ignored
    writer.notify("notifications/cancelled", ["malformed"])  # malformed: ignored
    assert confirmed_cancel(writer, paid) == []  # no notification, and no response for id 7
    # The id is free again: a new stream may take it.
    assert listen(writer, 7, {})["params"]["_meta"] == {SUB: 7}


def test_the_end_of_input_ends_open_streams_gracefully(server: Wire) -> None:
    listen(server, "keep", {"resourceSubscriptions": ["shop://schema"]})
    listen(server, 9, {})
    server.notify("notifications/cancelled", {"requestId": 9})
    server.child.close_stdin()
    response = read(server)
    assert response == {
        "jsonrpc": "2.0",
        "id": "keep",
        "result": {
            "resultType": "complete",
            "_meta": {stateless.SERVER_INFO: response["result"]["_meta"][stateless.SERVER_INFO], SUB: "keep"},
        },
    }
    cancelled = read(server)
    assert cancelled["method"] == "notifications/cancelled" and cancelled["params"]["requestId"] == "keep"
    assert cancelled["params"]["_meta"] == {SUB: "keep"}
    assert server.child.wait(30) == 0
    assert server.child.read_line(2) is None  # nothing for the cancelled stream 9


@pytest.mark.parametrize(
    ("notifications", "says"),
    [
        (None, "needs params.notifications, an object"),
        ([], "needs params.notifications, an object"),
        ({"toolsListChanged": "yes"}, "notifications.toolsListChanged must be true or false"),
        ({"resourceSubscriptions": "shop://schema"}, "must be an array of URI strings"),
        ({"resourceSubscriptions": [7]}, "must be an array of URI strings"),
        ({"resourceSubscriptions": [""]}, "1 to 2048 characters"),
        ({"resourceSubscriptions": [f"shop://orders/{n}" for n in range(1, 102)]}, "at most 100"),
    ],
)
def test_a_bad_filter_is_invalid_params_that_says_what_is_wrong(server: Wire, notifications: Any, says: str) -> None:
    params = {} if notifications is None else {"notifications": notifications}
    error = server.error("subscriptions/listen", modern(params))
    assert error["code"] == -32602 and says in error["message"], error
    assert server.result("tools/list", modern({}))["resultType"] == "complete"


def test_a_listen_needs_its_envelope_and_a_fresh_id(server: Wire) -> None:
    error = server.error("subscriptions/listen", {"notifications": {}})
    assert error["code"] == -32602 and "_meta" in error["message"]
    listen(server, 4, {})
    server.send({"jsonrpc": "2.0", "id": 4, "method": "subscriptions/listen", "params": modern({"notifications": {}})})
    error = read(server)
    assert (
        error["id"] == 4 and error["error"]["code"] == -32600 and "already names an open" in error["error"]["message"]
    )


# -- the official SDK 2.3 client's listen() --------------------------------------------------------
async def _sdk_listen(copy: Path, order_id: int) -> dict[str, Any]:
    import mcp_types
    from mcp import Client, StdioServerParameters
    from mcp.client.subscriptions import ResourceUpdated

    async def on_elicit(context: Any, params: Any) -> Any:
        return mcp_types.ElicitResult(action="accept", content={"confirm": True})

    uri = f"shop://orders/{order_id}"
    argv = ["-m", "reference.server", "--db", str(copy), "--allow-writes"]
    server = StdioServerParameters(command=sys.executable, args=argv, cwd=str(ROOT))
    watched = [uri, "shop://orders/0"]
    async with (
        Client(server, read_timeout_seconds=30, elicitation_callback=on_elicit) as client,
        client.listen(tools_list_changed=True, resource_subscriptions=watched) as stream,
    ):
        honoured = stream.honored
        done = await client.call_tool("cancel_order", {"order_id": order_id, "reason": "sdk listen"})
        event = await asyncio.wait_for(stream.__anext__(), 30)
    return {
        "honoured": (honoured.tools_list_changed, honoured.resource_subscriptions),
        "status": done.structured_content["status"],
        "event": event == ResourceUpdated(uri=uri) or event,
    }


def test_the_official_sdk_client_listens_and_hears_the_cancel(copy: Path) -> None:
    paid = first_with(copy, "paid")
    got = asyncio.run(asyncio.wait_for(_sdk_listen(copy, paid), 120))
    assert got == {"honoured": (None, [f"shop://orders/{paid}"]), "status": "cancelled", "event": True}


def test_a_connection_keeps_a_bounded_number_of_streams(server: Wire) -> None:
    from reference.subscriptions import MAX_STREAMS

    for n in range(MAX_STREAMS):
        assert listen(server, f"s{n}", {})["method"] == ACK
    error = server.error("subscriptions/listen", modern({"notifications": {}}))
    assert error["code"] == -32600 and "notifications/cancelled" in error["message"]
    server.notify("notifications/cancelled", {"requestId": "s0"})
    assert listen(server, "one more", {})["method"] == ACK


def test_the_pieces_work_across_servers_of_one_process_as_http_will_use_them(copy: Path) -> None:
    """Two Servers of one Shop (HTTP makes one per connection), in process through the real
    dispatcher: a stream opened on one, with its own deliver (an SSE stream, on HTTP), hears a cancel
    confirmed on the other; the state one sealed, another opens; a cancelled stream hears no more."""
    from reference.server import open_shop

    shop = open_shop(copy, allow_writes=True, shared=True)
    listener, caller, other = shop.server("http"), shop.server("http"), shop.server("http")
    heard: list[dict[str, Any]] = []
    listener.deliver = heard.append

    def line(server: Any, request_id: Any, method: str, params: dict[str, Any]) -> Any:
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": modern(params)}
        return server.handle_line(json.dumps(message).encode())

    paid, pending = first_with(copy, "paid"), first_with(copy, "pending")
    watched = [f"shop://orders/{paid}", f"shop://orders/{pending}"]
    assert line(listener, "L", "subscriptions/listen", {"notifications": {"resourceSubscriptions": watched}}) is None
    assert heard[0]["method"] == ACK and heard[0]["params"]["_meta"] == {SUB: "L"}
    assert list(listener.listening) == ['"L"'] and listener.outbox == []  # its deliver, not the outbox

    params = {"name": "cancel_order", "arguments": {"order_id": paid, "reason": "two servers"}}
    state = line(caller, 1, "tools/call", params)["result"]["requestState"]
    yes = {"confirm": {"action": "accept", "content": {"confirm": True}}}
    done = line(other, 2, "tools/call", {**params, "requestState": state, "inputResponses": yes})["result"]
    assert done["structuredContent"]["status"] == "cancelled"
    assert heard[1:] == [
        {
            "jsonrpc": "2.0",
            "method": UPDATED,
            "params": {"uri": f"shop://orders/{paid}", "_meta": {SUB: "L"}},
        }
    ]
    assert caller.outbox == [] and other.outbox == []  # nothing for connections that did not listen

    listener.handle_line(
        json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "L"}}).encode()
    )
    params = {"name": "cancel_order", "arguments": {"order_id": pending, "reason": "two servers"}}
    state = line(caller, 3, "tools/call", params)["result"]["requestState"]
    line(caller, 4, "tools/call", {**params, "requestState": state, "inputResponses": yes})
    assert len(heard) == 2  # the stream was cancelled: nothing more on it
    assert shop.writes is not None
    shop.writes.close()
