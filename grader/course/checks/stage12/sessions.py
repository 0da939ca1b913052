"""Stage 12's older clients (cell ``test_sessions``): POST and its answers, an ``Mcp-Session-Id``
issued at ``initialize`` and then required (400, 404, DELETE), and ``MCP-Protocol-Version``. The
hidden cells draw the session ids:

    >>> import random
    >>> len(drawn_session_id(random.Random(0)))
    32
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from grader.checker.http_probe import SSE_TYPE
from reference.lifecycle import LATEST

from ...expect import Failure, show
from ...work import Work
from .. import public
from ..stage05.capstone import Call, check_call_result
from .client import SESSION, VISIBLE, Client, expect_202, expect_status, failure, initialize_message, message, running


def check_post(work: Work, ids: Sequence[Any], calls: Sequence[Call]) -> None:
    """initialize, a notification, a response, requests answered in the body, a body that is no
    message, GET. ``ids``: the request ids to use (two at least); ``calls``: tool calls to make."""
    with running(work) as bridge:
        client = Client(bridge)
        client.initialize("http-content-type", id=ids[0])
        expect_202(client.last_sent("notifications/initialized"))
        ping = message("ping", ids[1])
        reply = client.ask(ping, "http-content-type")
        if reply != {"jsonrpc": "2.0", "id": ids[1], "result": {}}:
            raise Failure("http-content-type", "ping's response is the dispatcher's reply", received=show(reply))
        answer = {"jsonrpc": "2.0", "id": f"server-{ids[1]}", "result": {}}  # a response to a server's request
        expect_202(client.post(answer, "http-notification-202"))
        for n, (tool, arguments) in enumerate(calls):
            sent = message("tools/call", f"{ids[1]}-{n}", {"name": tool, "arguments": arguments})
            result = client.ask(sent, "tools-call-result").get("result")
            if not isinstance(result, dict):
                raise Failure(
                    "tools-call-result", f"{tool} answers with a result", sent=show(sent), received=show(result)
                )
            check_call_result(result, (tool, arguments), client.version or LATEST, sent)
        for bad in (b'{"jsonrpc": "2.0", "id": 9, "method": ', b"ping"):
            got = client.http("POST", bad, client.headers(), "http-post")
            if got.status != 400:
                raise failure(
                    "http-post",
                    "a body that is not a JSON-RPC message gets 400 Bad Request (an HTTP error status)",
                    got,
                    "HTTP/1.1 400 Bad Request, the body a JSON-RPC error with id null (-32700)",
                )
        got = client.http("GET", None, client.headers(**{"Content-Type": None, "Accept": SSE_TYPE}), "http-post")
        if got.status == 200 and got.is_sse:
            return  # a server that offers a stream of its own messages may (this lesson's does not)
        expect_status(
            got, 405, "http-post", "GET gets 405 Method Not Allowed (no stream of the server's own)", Allow=""
        )


def check_sessions(work: Work, unknown: str, other_version: str, versions: Sequence[str]) -> None:
    """A session id issued at initialize, then required; sessions kept apart; DELETE ends one; the
    MCP-Protocol-Version header: 400 for a revision not supported (``versions``), served without one."""
    with running(work) as bridge:
        first, second = Client(bridge), Client(bridge)
        got = first.initialize("http-session")
        session = first.session
        if session is None:
            raise failure("http-session", f"initialize's response carries {SESSION}: the session's id", got, SESSION)
        if not session or any(not 0x21 <= ord(c) <= 0x7E for c in session):
            raise failure(
                "http-session", "a session id is visible ASCII only (0x21 to 0x7E)", got, "e.g. 32 hex digits"
            )
        second.initialize("http-session", version=other_version)
        if second.session == session:
            raise Failure(
                "http-session",
                "two initializes got the same session id: each session gets a new one (random, unguessable)",
                received=f"{SESSION}: {session} (twice)",
            )
        ping = message("ping", "no-session")
        got = first.post(ping, "http-session", Session=None)
        expect_status(got, 400, "http-session", f"a request without {SESSION} (after initialize) gets 400 Bad Request")
        got = first.post(ping, "http-session", Session=unknown)
        expect_status(
            got, 404, "http-session", "a request with a session id the server never issued gets 404 Not Found"
        )
        # Each session is its own server: its own revision, its own lifecycle.
        listing = first.ask(message("tools/list", "list-1"), "http-session")
        older = second.ask(message("tools/list", "list-2"), "http-session")
        tools = [listing.get("result", {}).get("tools"), older.get("result", {}).get("tools")]
        if not all(isinstance(t, list) and t for t in tools):
            raise Failure("http-session", "tools/list must list the shop's tools", received=show(tools))
        with_schema = [any("outputSchema" in t for t in found if isinstance(t, dict)) for found in tools]
        if with_schema != [True, other_version >= "2025-06-18"]:
            raise Failure(
                "http-session",
                f"each session is its own Server: the {LATEST} session's tools/list has outputSchema, the "
                f"{other_version} one's {'has' if other_version >= '2025-06-18' else 'has not'}",
                hint="one Server per session id, kept from initialize on: never one Server for all",
                received=f"outputSchema in the {LATEST} session: {with_schema[0]}; in the other: {with_schema[1]}",
            )
        again = first.ask(initialize_message(LATEST, "again"), "http-session")
        if again.get("error", {}).get("code") != -32600:
            raise Failure(
                "http-session",
                "initialize inside a session goes to that session's Server, which refuses a second one (-32600)",
                received=show(again),
            )
        got = first.delete("http-session")
        if not 200 <= got.status < 300:
            raise failure("http-session", "DELETE with the session's id ends it", got, "HTTP/1.1 204 No Content")
        got = first.post(message("ping", "after-delete"), "http-session")
        expect_status(got, 404, "http-session", "a request with the id of a session ended by DELETE gets 404 Not Found")
        got = first.delete("http-session", Session=None)
        expect_status(got, 400, "http-session", f"DELETE without {SESSION} gets 400 Bad Request")
        reply = second.ask(message("ping", "still-there"), "http-session")
        if "result" not in reply:
            raise Failure("http-session", "ending one session leaves the others as they were", received=show(reply))
        for version in versions:
            got = second.post(message("ping", "version"), "http-protocol-version", Version=version)
            expect_status(
                got, 400, "http-protocol-version", f"MCP-Protocol-Version: {version} (not supported) gets 400"
            )
        reply = second.ask(message("ping", "no-version"), "http-protocol-version", Version=None)
        if "result" not in reply:
            what = "a request without MCP-Protocol-Version (the session's revision applies) is served"
            raise Failure("http-protocol-version", what, received=show(reply))


@public(
    "12",
    "test_sessions",
    "older clients: Mcp-Session-Id issued at initialize, then required (400, 404, DELETE); MCP-Protocol-Version",
)
def sessions_cell(work: Work) -> None:
    check_post(work, [1, "7"], [("count_orders", {"status": "paid"})])
    check_sessions(work, "0123456789abcdef0123456789abcdef", "2025-03-26", VISIBLE["versions"])


def drawn_session_id(rng: random.Random) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(32))
