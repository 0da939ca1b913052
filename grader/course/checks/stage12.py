"""The checks of stage 12 (Streamable HTTP and auth).

The learner's ``mcp_http.py`` is a transport: an ``http.server`` in front of the course's
dispatcher (one ``reference.server.Server`` per session). Every check runs it as a server, built
by its own ``make_server(address, token)`` in a process of its own (in the grading sandbox too),
reached at a URL of this machine through :mod:`grader.course.http_bridge`, and speaks real HTTP to
it: one cell per group of rules (POST and its answers, sessions, the headers a request must pass,
SSE, the bearer token), then the whole server through ``mcp-lab check --url``, the official SDK's
Streamable HTTP client and the MCP Inspector's CLI (``--transport http``). A failure shows the HTTP
request sent and the response that came, and names the rule (the checker's ids where it has one).
The hidden cells draw the token, the origins, the session ids, the request ids and the tool calls.
"""

from __future__ import annotations

import base64
import json
import random
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from grader.checker.http_probe import ACCEPT, JSON_TYPE, SSE_TYPE, Exchange, HttpProbe, sse_state
from reference.framing import encode
from reference.lifecycle import LATEST

from ..calls import call
from ..drive import REPLY_TIMEOUT, run_async_bounded
from ..expect import Failure, describe_id, same_json, show
from ..http_bridge import HttpBridge, serve
from ..work import Work
from . import public
from .stage05 import (
    SHOP_TOOLS,
    TOOL_IS_ERROR,
    Call,
    _envelope_error,
    _unavailable,
    check_call_result,
    launch_inspector,
)

MODULE = "mcp_http"
SESSION = "Mcp-Session-Id"
VERSION = "MCP-Protocol-Version"
# The headers of a response that a failure shows (the others, Date and Server, say nothing).
SHOWN_HEADERS = ("content-type", "content-length", "mcp-session-id", "www-authenticate", "allow", "connection")
VISIBLE = {
    "foreign": ["https://evil.example", "http://localhost.evil.example", "null"],
    "loopback": ["http://localhost:6274", "http://127.0.0.1:8080", "http://[::1]:3000"],
    "versions": ["1999-01-01", "2025-13-45"],
}


# -- speaking HTTP to the learner's server, with the evidence a failure shows ---------------------------
def request_lines(sent: Exchange) -> list[str]:
    """An HTTP request as a failure shows it: the request line, the headers, the body."""
    lines = [f"{sent.method} /mcp HTTP/1.1", *(f"{k}: {v}" for k, v in sent.sent_headers.items())]
    if sent.body:
        lines.append(show(sent.body))
    return lines


def response_lines(got: Exchange) -> list[str]:
    """The response as a failure shows it: the status line, the headers that matter, the body."""
    if got.status is None:
        return [f"(no response: {got.error})"]
    lines = [f"HTTP/1.1 {got.status} {got.reason}"]
    lines += [f"{k.title()}: {v}" for k, v in got.headers.items() if k in SHOWN_HEADERS]
    if got.data:
        lines.append(show(got.data.replace(b"\r", b"\\r").replace(b"\n", b"\\n")))
    return lines


def failure(check: str, summary: str, got: Exchange, expected: str, **details: Any) -> Failure:
    return Failure(check, summary, sent=request_lines(got), expected=expected, received=response_lines(got), **details)


class Client:
    """An MCP client over HTTP to the learner's server: a session id and a revision once initialized."""

    def __init__(self, bridge: HttpBridge, token: str | None = None, timeout: float = REPLY_TIMEOUT) -> None:
        self.bridge = bridge
        self.probe = HttpProbe(bridge.url, timeout)
        self.token = token
        self.session: str | None = None
        self.version: str | None = None

    def headers(self, **changes: str | None) -> dict[str, str]:
        """A POST's headers: the types, the token, the session's id and revision, then ``changes``
        (``Origin="..."``, ``Accept=...``; a value of None leaves the header out)."""
        sent = {"Content-Type": JSON_TYPE, "Accept": ACCEPT}
        if self.token is not None:
            sent["Authorization"] = f"Bearer {self.token}"
        if self.session is not None:
            sent[SESSION] = self.session
        if self.version is not None:
            sent[VERSION] = self.version
        for name, value in changes.items():
            name = {"Session": SESSION, "Version": VERSION}.get(name, name)
            sent.pop(name, None)
            if value is not None:
                sent[name] = value
        return sent

    def http(self, method: str, message: Any, headers: dict[str, str], check: str, want: Any = None) -> Exchange:
        """One HTTP request; a response must come (a failure of ``check`` that says why, if none does)."""
        body = b"" if message is None else message if isinstance(message, bytes) else encode(message).rstrip(b"\n")
        got = self.probe.http(method, body, headers, "request", want=want)
        if got.status is None:
            raise self.no_response(got, check)
        return got

    def no_response(self, got: Exchange, check: str) -> Failure:
        stub = _wait_for(self.bridge.not_written)
        if stub is not None:
            return Failure(check, f"{stub} is not written yet (it raises NotImplementedError)")
        crashed = "Traceback" in self.bridge.stderr_tail(4000)
        summary = (
            "your server raised an exception handling this request, and closed the connection without a response"
            if crashed
            else f"no HTTP response ({got.error})"
        )
        return failure(check, summary, got, "a response", stderr=self.bridge.stderr_tail())

    def post(self, message: Any, check: str, **changes: str | None) -> Exchange:
        want = message.get("id") if isinstance(message, dict) and "method" in message else None
        return self.http("POST", message, self.headers(**changes), check, want)

    def initialize(self, check: str, version: str = LATEST, id: Any = 1, **changes: str | None) -> Exchange:
        """initialize, then notifications/initialized: the session's id and revision are kept."""
        message = initialize_message(version, id)
        got = self.post(message, check, Session=None, Version=None, **changes)
        if got.status != 200:
            raise failure(check, "initialize must be answered 200 with its result", got, "HTTP/1.1 200 OK")
        reply = reply_to(got, message, "http-content-type")
        if "result" not in reply:
            raise failure(check, "initialize must be answered with its result", got, "a result")
        self.session = got.headers.get(SESSION.lower())
        self.version = reply["result"].get("protocolVersion")
        # Its status is test_post's to judge (202): here a refusal only, which would end the session.
        accepted = self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, check)
        if accepted.status >= 300:
            raise failure(check, "notifications/initialized was refused", accepted, "HTTP/1.1 202 Accepted")
        return got

    def last_sent(self, method: str) -> Exchange:
        """The last exchange that sent ``method``."""
        return next(e for e in reversed(self.probe.exchanges) if e.rpc_method == method)

    def ask(self, message: dict[str, Any], check: str, **changes: str | None) -> dict[str, Any]:
        """A request in the session: 200 and its response, with the request's id."""
        got = self.post(message, check, **changes)
        if got.status != 200:
            raise failure(check, f"{message['method']} in the session must be answered 200", got, "HTTP/1.1 200 OK")
        return reply_to(got, message, "http-content-type")

    def delete(self, check: str, **changes: str | None) -> Exchange:
        return self.http("DELETE", None, self.headers(**{"Content-Type": None, **changes}), check)


def _wait_for(find: Any, seconds: float = 0.5) -> Any:
    """``find()`` once it finds something, trying for ``seconds`` (stderr arrives on a thread of its own)."""
    for _ in range(int(seconds / 0.05) + 1):
        found = find()
        if found is not None:
            return found
        time.sleep(0.05)
    return None


def initialize_message(version: str = LATEST, id: Any = 1) -> dict[str, Any]:
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "course", "version": "1.0"}}
    return {"jsonrpc": "2.0", "id": id, "method": "initialize", "params": params}


def message(method: str, id: Any, params: dict[str, Any] | None = None) -> dict[str, Any]:
    found: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        found["params"] = params
    return found


def reply_to(got: Exchange, sent: dict[str, Any], check: str) -> dict[str, Any]:
    """The response to ``sent`` in ``got``'s body (JSON or SSE): the same id, in the same JSON type."""
    if got.content_type not in (JSON_TYPE, SSE_TYPE):
        raise failure(
            check,
            "a request's response comes as Content-Type: application/json (or text/event-stream)",
            got,
            f"Content-Type: {JSON_TYPE}, the response as the body",
        )
    if got.problems:
        check = "http-sse" if got.is_sse else check
        raise failure(check, f"the body cannot be read: {'; '.join(got.problems)}", got, "one JSON-RPC response")
    replies = [m for m in got.messages if isinstance(m, dict) and "method" not in m]
    for reply in replies:
        if "id" in reply and same_json(reply["id"], sent["id"]) and type(reply["id"]) is type(sent["id"]):
            return reply
    near = [r for r in replies if json.dumps(r.get("id")).strip('"') == json.dumps(sent["id"]).strip('"')]
    if near:
        raise failure("id-echo", "the response carries the request's id in another JSON type", got, show(sent["id"]))
    raise failure(check, "the body holds no response to this request", got, f"a response with id {show(sent['id'])}")


def expect_202(got: Exchange) -> None:
    if got.status != 202 or got.data:
        body = f"a {len(got.data)}-byte body" if got.data else "no body"
        raise failure(
            "http-notification-202",
            f"a notification or a response is accepted with 202 and no body, not {got.status} with {body}",
            got,
            "HTTP/1.1 202 Accepted, Content-Length: 0",
        )


def expect_status(got: Exchange, status: int, check: str, summary: str, **headers: str) -> None:
    names = [name.replace("_", "-") for name in headers]
    missing = [name for name in names if name.lower() not in got.headers]
    if got.status != status or missing:
        more = f" with {', '.join(names)}" if names else ""
        raise failure(check, summary, got, f"HTTP/1.1 {status}{more}")


@contextmanager
def running(work: Work, token: str | None = None) -> Iterator[HttpBridge]:
    """The learner's server, built by their make_server and reachable over HTTP (bounded; ended after)."""
    with serve(work, MODULE, token) as bridge:
        yield bridge


# -- 6. Older clients: POST and its answers --------------------------------------------------------
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


# -- 1. One POST per message, no session (2026-07-28) -------------------------------------------------
MODERN = "2026-07-28"
METHOD_HEADER, NAME_HEADER = "Mcp-Method", "Mcp-Name"
NAMED_BY = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
HEADER_MISMATCH, METHOD_NOT_FOUND, UNSUPPORTED = -32020, -32601, -32022


def modern_message(method: str, id: Any, params: dict[str, Any] | None = None, version: str = MODERN) -> dict[str, Any]:
    """A 2026-07-28 request: its version and capabilities in ``params._meta``."""
    meta = {f"{PREFIX}protocolVersion": version, f"{PREFIX}clientCapabilities": {}}
    meta[f"{PREFIX}clientInfo"] = {"name": "course", "version": "1.0"}
    return message(method, id, {**(params or {}), "_meta": meta})


PREFIX = "io.modelcontextprotocol/"


def routing(sent: dict[str, Any]) -> dict[str, str]:
    """The request metadata headers a 2026-07-28 client sends with ``sent``."""
    params = sent.get("params") or {}
    found = {VERSION: params.get("_meta", {}).get(f"{PREFIX}protocolVersion", MODERN), METHOD_HEADER: sent["method"]}
    target = params.get(NAMED_BY.get(sent["method"], ""))
    if isinstance(target, str):
        found[NAME_HEADER] = target if target.isascii() and target.isprintable() else _base64(target)
    return found


def _base64(value: str) -> str:
    return "=?base64?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="


class ModernClient(Client):
    """A 2026-07-28 client: every request a POST of its own, enveloped, with its routing headers."""

    def modern(self, sent: dict[str, Any], check: str, **changes: str | None) -> Exchange:
        return self.post(sent, check, **{**routing(sent), **changes})

    def served(self, sent: dict[str, Any], check: str, **changes: str | None) -> dict[str, Any]:
        """A request that must be served: 200, no session minted, and its response."""
        got = self.modern(sent, check, **changes)
        if got.status != 200:
            raise self.refused(got, sent, check)
        if SESSION.lower() in got.headers:
            raise failure(
                "http-modern-no-session",
                f"a {MODERN} response carries {SESSION}: this revision has no session (mint none, echo none)",
                got,
                f"no {SESSION} header",
            )
        return reply_to(got, sent, "http-modern-status")

    def refused(self, got: Exchange, sent: dict[str, Any], check: str) -> Failure:
        """Why a request that must be served was not: a session asked for, or the wrong status."""
        replies = [m for m in got.messages if isinstance(m, dict) and "error" in m]
        if got.status in (400, 404) and replies and replies[0].get("id") is None:
            return failure(
                "http-modern-no-session",
                f"a {MODERN} request was refused as an older client's (no session): this revision has no session",
                got,
                "HTTP/1.1 200 OK, the response in the body",
                hint="route a POST whose MCP-Protocol-Version (or _meta) says 2026-07-28 to post_modern, before any "
                "session is looked for",
            )
        return failure(
            check, f"{sent['method']} ({MODERN}) must be answered 200 with its response", got, "HTTP/1.1 200 OK"
        )


def check_modern_post(work: Work, ids: Sequence[Any], calls: Sequence[Call], stale: str) -> None:
    """2026-07-28 requests served each in a POST of its own, with no session (a stale id ignored, none
    minted); a notification 202; an unknown method 404, an unsupported version and a broken body 400;
    GET and DELETE 405."""
    with running(work) as bridge:
        client = ModernClient(bridge)
        discover = modern_message("server/discover", ids[0])
        result = client.served(discover, "http-modern-status").get("result")
        if not isinstance(result, dict) or result.get("resultType") != "complete":
            raise Failure(
                "http-modern-result", "server/discover answers with the dispatcher's result", received=show(result)
            )
        for n, (tool, arguments) in enumerate(calls):
            sent = modern_message("tools/call", f"{ids[1]}-{n}", {"name": tool, "arguments": arguments})
            result = client.served(sent, "http-modern-status", Session=stale if n == 0 else None).get("result")
            if not isinstance(result, dict):
                raise Failure(
                    "tools-call-result", f"{tool} answers with a result", sent=show(sent), received=show(result)
                )
            check_call_result(result, (tool, arguments), MODERN, sent)
        listing = modern_message("tools/list", ids[1])
        client.served(listing, "http-modern-status", Session=stale)
        got = client.modern(modern_message("mcp-lab/no-such-method", ids[0]), "http-modern-status")
        if got.status != 404 or error_of(got) != METHOD_NOT_FOUND:
            raise failure("http-modern-status", f"an unknown method ({MODERN}) gets 404 with -32601", got,
                          "HTTP/1.1 404 Not Found, error -32601")  # fmt: skip
        got = client.modern(modern_message("server/discover", ids[1], version="2099-01-01"), "http-modern-status")
        if got.status != 400 or error_of(got) != UNSUPPORTED:
            raise failure("http-modern-status", "a version this server does not serve gets 400 with -32022", got,
                          "HTTP/1.1 400 Bad Request, error -32022 with the supported versions")  # fmt: skip
        note = {"jsonrpc": "2.0", "method": "notifications/mcp-lab", "params": {"_meta": discover["params"]["_meta"]}}
        expect_202(client.post(note, "http-notification-202", **{VERSION: MODERN, METHOD_HEADER: note["method"]}))
        got = client.http(
            "POST", b'{"jsonrpc": "2.0", "id": 9, "method": ', client.headers(Version=MODERN), "http-post"
        )
        if got.status != 400:
            raise failure("http-post", "a body that is not JSON gets 400 Bad Request", got, "HTTP/1.1 400 Bad Request")
        for verb in ("GET", "DELETE"):
            heads = client.headers(**{"Content-Type": None, "Accept": SSE_TYPE if verb == "GET" else ACCEPT})
            got = client.http(verb, None, {**heads, VERSION: MODERN}, "http-modern-status")
            if got.status != 405 or "allow" not in got.headers:
                stream = " (a stream: 2026-07-28 has none)" if got.is_sse else ""
                raise failure("http-modern-status", f"{verb} with {VERSION}: {MODERN} gets 405 and Allow{stream}",
                              got, "HTTP/1.1 405 Method Not Allowed, Allow: POST")  # fmt: skip


def error_of(got: Exchange) -> Any:
    errors = [m.get("error") for m in got.messages if isinstance(m, dict) and isinstance(m.get("error"), dict)]
    return errors[0].get("code") if errors else None


# -- 2. The request metadata headers --------------------------------------------------------------------
HeaderCase = tuple[dict[str, str], dict[str, Any], bool]  # (headers, the request, whether they agree)


def header_cases(name: str, other: str, id: Any) -> list[HeaderCase]:
    """Headers that agree with their request, and headers that do not (missing, another value, another
    version), around a tools/call of ``name`` (``other``: a name it is not)."""
    call = modern_message("tools/call", id, {"name": name, "arguments": {}})
    listing = modern_message("tools/list", id)
    read = modern_message("resources/read", id, {"uri": f"shop://orders/{len(name)}"})
    good = routing(call)
    cases: list[HeaderCase] = [
        (good, call, True),
        ({**good, NAME_HEADER: _base64(name)}, call, True),
        (routing(listing), listing, True),
        (routing(read), read, True),
        ({k: v for k, v in good.items() if k != NAME_HEADER}, call, False),
        ({**good, NAME_HEADER: other}, call, False),
        ({**good, NAME_HEADER: _base64(other)}, call, False),
        ({**good, METHOD_HEADER: "tools/list"}, call, False),
        ({k: v for k, v in good.items() if k != METHOD_HEADER}, call, False),
        ({**routing(listing), METHOD_HEADER: "prompts/list"}, listing, False),
        ({k: v for k, v in good.items() if k != VERSION}, call, False),
        ({**good, VERSION: "2025-11-25"}, call, False),
        ({**routing(read), NAME_HEADER: "shop://orders/0"}, read, False),
    ]
    return cases


def check_header_problem(work: Work, cases: Sequence[HeaderCase]) -> None:
    """header_problem(headers, message): None exactly when every routing header is there and agrees."""
    header_problem = work.module(MODULE).header_problem
    for headers, sent, agree in cases:
        given = work.stdlib("email.message.Message")()  # as http.server's self.headers: names in any case
        for key, value in headers.items():
            given.add_header(key, value)
        found = call(header_problem, "http-modern-headers", given, sent)
        if agree and found is not None:
            raise Failure("http-modern-headers", "header_problem refused headers that agree with the body",
                          sent=show(headers), expected="None", received=show(found), request=show(sent))  # fmt: skip
        if not agree and not (isinstance(found, str) and found):
            raise Failure("http-modern-headers", "header_problem let through headers that do not agree with the body",
                          sent=show(headers), expected="a sentence saying which header is wrong", received=show(found),
                          request=show(sent))  # fmt: skip


def check_headers_served(work: Work, other: str, id: Any) -> None:
    """Over HTTP: a count_orders call whose headers disagree (``other``: another tool's name) gets 400 with
    -32020 and its own id, in its JSON type; the same call with its name in Base64, or with an Mcp-Param
    header no tool designates, is served. Once with ``id``, once with the id 0 (an id like any other)."""
    with running(work) as bridge:
        client = ModernClient(bridge)
        for request_id in [id] if same_json(id, 0) else [id, 0]:
            sent = modern_message("tools/call", request_id, {"name": "count_orders", "arguments": {}})
            client.served(sent, "http-modern-headers", **{NAME_HEADER: _base64("count_orders")})
            client.served(sent, "http-modern-headers", **{"Mcp-Param-Region": "us-west1"})
            changes: dict[str, str | None]
            for changes in ({METHOD_HEADER: "tools/list"}, {NAME_HEADER: other}, {NAME_HEADER: None}, {VERSION: None}):
                got = client.modern(sent, "http-modern-headers", **changes)
                _header_mismatch(got, request_id, changes)


def _header_mismatch(got: Exchange, id: Any, changes: dict[str, str | None]) -> None:
    """``got`` is 400 with a -32020 error that carries ``id``, the same value in the same JSON type."""
    errors = [m for m in got.messages if isinstance(m, dict) and isinstance(m.get("error"), dict)]
    code = errors[0]["error"].get("code") if errors else None
    what = ", ".join(f"{k}: {v}" if v else f"no {k}" for k, v in changes.items())
    expected = f"HTTP/1.1 400 Bad Request, error -32020 with id {describe_id(id)}"
    if got.status != 400 or code != HEADER_MISMATCH:
        summary = f"a request with {what} gets 400 with -32020 (HeaderMismatch)"
        if same_json(id, 0) and got.status == 200:
            summary += ": this request's id is 0, and a message with an id member is a request, whatever its value"
        raise failure("http-modern-headers", summary, got, expected)
    echoed = errors[0].get("id", MISSING)
    if echoed is MISSING or not same_json(echoed, id):
        raise failure(
            "id-echo",
            f"the -32020 error for a request with {what} carries id {describe_id(echoed, echoed is not MISSING)}, "
            f"not the request's {describe_id(id)}",
            got,
            expected,
            hint='copy message["id"] into the error unchanged: no str(), no int(), no `or`-default (0 is a valid id)',
        )


MISSING = object()


# -- 6. Older clients: sessions ---------------------------------------------------------------------
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


# -- 3. Origin -------------------------------------------------------------------------------------
def check_origin(work: Work, foreign: Sequence[str], loopback: Sequence[str]) -> None:
    """403 for every foreign Origin, on initialize and in a session, on POST, GET and DELETE;
    loopback origins, and none at all, are served."""
    with running(work) as bridge:
        client = Client(bridge)
        got = client.post(initialize_message(), "http-origin", Origin=foreign[0])
        expect_status(got, 403, "http-origin", f"an initialize from Origin: {foreign[0]} gets 403 Forbidden")
        if got.headers.get(SESSION.lower()):
            raise failure("http-origin", "a refused initialize begins no session", got, "no Mcp-Session-Id")
        client.initialize("http-origin", Origin=loopback[0])
        for origin in foreign:
            got = client.post(message("ping", "origin"), "http-origin", Origin=origin)
            expect_status(got, 403, "http-origin", f"a request from Origin: {origin} gets 403 Forbidden")
        for method in ("GET", "DELETE"):
            headers = client.headers(**{"Content-Type": None, "Origin": foreign[-1]})
            got = client.http(method, None, headers, "http-origin")
            expect_status(got, 403, "http-origin", f"every request from a foreign Origin gets 403, a {method} too")
        for origin in [*loopback, None]:
            what = f"Origin: {origin}" if origin else "no Origin (a client that is not a browser)"
            reply = client.ask(message("ping", "loopback"), "http-origin", Origin=origin)
            if "result" not in reply:
                raise Failure("http-origin", f"a request with {what} is served", received=show(reply))


# -- 4. SSE -----------------------------------------------------------------------------------------
def check_sse_event(work: Work, messages: Sequence[Any]) -> None:
    """sse_event(message): one event whose data, read as a client reads it, is the message."""
    sse_event = work.module(MODULE).sse_event
    for sent in messages:
        event = call(sse_event, "http-sse", sent)
        if not isinstance(event, bytes):
            raise Failure("http-sse", "sse_event returns bytes (the body's bytes)", received=show(repr(event)))
        events, problems, ignored = sse_state(event, ended=True)
        data = [_json(e["data"]) for e in events]
        right = len(events) == 1 and same_json(data[0], sent) and events[0].get("event", "message") == "message"
        if problems or ignored or not right:
            raise Failure(
                "http-sse",
                f"sse_event({show(sent)}) is not one event whose data is the message",
                expected=f"event: message\\ndata: {encode(sent).decode().rstrip()}\\n\\n",
                received=show(event.replace(b"\n", b"\\n")),
                problems="; ".join(problems + [f"a line no client reads: {x!r}" for x in ignored[:3]]) or "-",
            )


def check_sse_stream(work: Work, requests: Sequence[dict[str, Any]]) -> None:
    """Requests that accept only text/event-stream get their response in a well-formed SSE stream."""
    with running(work) as bridge:
        client = Client(bridge)
        client.initialize("http-sse")
        for sent in requests:
            got = client.post(sent, "http-sse", Accept=SSE_TYPE)
            if got.status != 200 or not got.is_sse:
                raise failure(
                    "http-sse",
                    f"a client that accepts only {SSE_TYPE} gets the response as an SSE stream",
                    got,
                    f"HTTP/1.1 200 OK, Content-Type: {SSE_TYPE}, one event with the response",
                )
            reply_to(got, sent, "http-sse")


# -- 5. The bearer token ------------------------------------------------------------------------------
def check_auth(work: Work, token: str, wrong: Sequence[str]) -> None:
    """With a token: 401 and WWW-Authenticate without it or with another (``wrong``: Authorization
    values); served with it, on every request."""
    with running(work, token) as bridge:
        client = Client(bridge, token)
        for authorization in [None, *wrong]:
            what = f"Authorization: {authorization}" if authorization else "no Authorization header"
            got = client.post(initialize_message(), "http-auth", Authorization=authorization)
            expect_status(
                got, 401, "http-auth", f"an initialize with {what} gets 401 and a Bearer challenge", WWW_Authenticate=""
            )
            challenge = got.headers.get("www-authenticate", "")
            if challenge.split(" ")[0].lower() != "bearer":
                raise failure(
                    "http-auth", "the challenge names the scheme: Bearer", got, "WWW-Authenticate: Bearer ..."
                )
        client.initialize("http-auth")
        got = client.post(message("ping", "no-token"), "http-auth", Authorization=None)
        expect_status(got, 401, "http-auth", "the token is needed on every request, not only initialize")
        reply = client.ask(message("ping", "token"), "http-auth")
        if "result" not in reply:
            raise Failure("http-auth", "a request with the token is served", received=show(reply))


def wrong_tokens(token: str) -> list[str]:
    """Authorization values that must not pass: another token, a prefix, the token with more, Basic."""
    basic = base64.b64encode(f"user:{token}".encode()).decode()
    return [f"Bearer {token[:-1]}", f"Bearer {token}x", f"Basic {basic}", token]


# -- 7. The whole server: mcp-lab check --url, the SDK client, the Inspector ----------------------------
def check_session_calls(
    bridge: HttpBridge, token: str, version: str, calls: Sequence[Call], ids: Sequence[Any]
) -> None:
    """A session on ``version``: each call answered as the reference answers it (before the checker:
    a server that never answers a tools/call fails here in seconds)."""
    client = Client(bridge, token)
    client.initialize("http-content-type", version=version, id=ids[0])
    for (tool, arguments), id in zip(calls, ids[1:], strict=False):
        sent = message("tools/call", id, {"name": tool, "arguments": arguments})
        result = client.ask(sent, "tools-call-result").get("result")
        if not isinstance(result, dict):
            raise Failure("tools-call-result", f"{tool} answers with a result", sent=show(sent), received=show(result))
        check_call_result(result, (tool, arguments), version, sent)


def check_whole_server(bridge: HttpBridge, token: str) -> None:
    """``mcp-lab check --url URL --header 'Authorization: Bearer TOKEN'``: no check fails. A failure
    names the first check that fails on its own, with its evidence."""
    from grader.checker.check import run_http_check

    from .stage05 import _evidence

    report = run_http_check(bridge.url, {"Authorization": f"Bearer {token}"}, timeout=REPLY_TIMEOUT, call_timeout=5.0)
    failing = [r for r in report.results if r.status == "fail"]
    if not failing:
        return
    # The transport's own rules first (this stage's), then the first failure that is not another's consequence.
    roots = [r for r in failing if not r.caused_by] or failing
    first = next((r for r in roots if r.id.startswith("http-")), roots[0])
    shown = {k: _evidence(k, v) for k, v in first.evidence.items() if k not in ("rule", "keyword", "source", "fix")}
    others = [r.id for r in failing if r is not first]
    if others:
        shown["hint"] = f"failing too: {', '.join(others)} (mcp-lab check --url URL shows each)"
    raise Failure(first.id, f"mcp-lab check --url: {first.summary}", **shown, stderr=bridge.stderr_tail())


SDK_TIMEOUT = 15.0  # seconds for a whole SDK session over HTTP (about one on the shop)


def check_sdk(bridge: HttpBridge, token: str, calls: Sequence[Call], mode: str = "auto") -> None:
    """The official SDK's Streamable HTTP client (``Client``), with the token, in ``mode``: "auto" speaks
    2026-07-28 (server/discover, then a POST per request), "legacy" the initialize handshake and a
    session. It lists the tools and makes ``calls``; in auto mode it must not have fallen back."""

    async def session() -> dict[str, Any]:
        import anyio
        import httpx2
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        versions: list[str] = []

        async def sent(request: Any) -> None:
            versions.append(request.headers.get(VERSION, ""))

        headers = {"Authorization": f"Bearer {token}"}
        with anyio.fail_after(SDK_TIMEOUT):
            async with httpx2.AsyncClient(headers=headers, timeout=5, event_hooks={"request": [sent]}) as http:
                transport = streamable_http_client(bridge.url, http_client=http)
                async with Client(transport, mode=mode, read_timeout_seconds=5) as client:  # type: ignore[arg-type]
                    tools = await client.list_tools()
                    results = [await client.call_tool(tool, args) for tool, args in calls]
        return {"tools": tools, "results": results, "versions": versions}

    done, box = run_async_bounded(session, SDK_TIMEOUT + 5)
    if not done:
        stub = bridge.not_written()
        if stub is not None:
            raise Failure("http-client", f"{stub} is not written yet (it raises NotImplementedError)")
        detail = _sdk_error(box) if box else "no answer in time"
        raise Failure(
            "http-client",
            f"the official MCP SDK's Streamable HTTP client could not use your server: {detail}",
            stderr=bridge.stderr_tail(),
        )
    if mode == "auto" and MODERN not in box["versions"][-1:]:
        # Why it fell back, in the words of the rule broken: the discover it sent, sent again by us.
        ModernClient(bridge, token).served(modern_message("server/discover", "sdk-discover"), "http-modern-status")
        raise Failure(
            "http-modern-status",
            f"the SDK client (mode='auto') fell back to the initialize handshake: your server did not serve "
            f"its {MODERN} server/discover",
            received=f"MCP-Protocol-Version of its requests: {', '.join(v or '-' for v in box['versions'][:8])}",
            stderr=bridge.stderr_tail(),
        )
    names = sorted(t.name for t in box["tools"].tools)
    if names != sorted(SHOP_TOOLS):
        raise Failure("tools-list", "the SDK client sees other tools than the shop's four", received=show(names))
    for (tool, arguments), result in zip(calls, box["results"], strict=True):
        received = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        version = MODERN if mode == "auto" else LATEST
        check_call_result(
            received, (tool, arguments), version, f"(the SDK client, mode={mode!r}) call_tool{(tool, arguments)}"
        )


def _sdk_error(error: BaseException) -> str:
    """The innermost of an exception group (anyio's task groups wrap the SDK's errors)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return f"{type(error).__name__}: {error}"[:400]


def run_inspector(work: Work, bridge: HttpBridge, token: str, method: list[str]) -> Any:
    """``mcp-inspector --cli --transport http --server-url URL --header 'Authorization: ...' --method ...``:
    the result it printed, or a Failure that says why not. Bounded, its process group killed."""
    shown = " ".join(["mcp-inspector --cli --transport http --server-url URL", *method])
    options = [
        "--cli", "--format", "json", "-q", "--connect-timeout", "10000", "--transport", "http",
        "--server-url", bridge.url, "--stored-auth-only", "--header", f"Authorization: Bearer {token}", *method,
    ]  # fmt: skip
    out, err, returncode = launch_inspector(
        work, options, check="http-client", shown=shown, stderr=lambda _: bridge.stderr_tail()
    )
    found = _json(out.decode("utf-8", "replace").strip())
    stderr = err.decode("utf-8", "replace")
    # A tool result with isError: true is printed too, and the CLI then exits 5 ("tool_is_error").
    if isinstance(found, dict) and "result" in found and (returncode == 0 or TOOL_IS_ERROR in stderr):
        return found["result"]
    text = _envelope_error(stderr)
    if text is None:  # the Inspector itself did not run (a Node.js too old, a broken install)
        raise _unavailable(work, f"the MCP Inspector failed (exit status {returncode})", stderr=stderr)
    stub = bridge.not_written()
    if stub is not None:
        raise Failure("http-client", f"{stub} is not written yet (it raises NotImplementedError)")
    summary = f"the MCP Inspector could not use your server: {' '.join(text.split())[:300]}"
    raise Failure("http-client", summary, sent=shown, stderr=bridge.stderr_tail())


def check_inspector(work: Work, bridge: HttpBridge, token: str, calls: Sequence[Call]) -> None:
    listed = run_inspector(work, bridge, token, ["--method", "tools/list"])
    tools = listed.get("tools") if isinstance(listed, dict) else None
    names = sorted(str(t.get("name")) for t in tools if isinstance(t, dict)) if isinstance(tools, list) else None
    if names != sorted(SHOP_TOOLS):
        what = "the MCP Inspector lists other tools than the shop's four"
        raise Failure("tools-list", what, expected=show(sorted(SHOP_TOOLS)), received=show(names or listed))
    for tool, arguments in calls:
        method = ["--method", "tools/call", "--tool-name", tool, "--tool-args-json", json.dumps(arguments)]
        result = run_inspector(work, bridge, token, method)
        check_call_result(result, (tool, arguments), LATEST, " ".join(["mcp-inspector --cli ... ", *method]))


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


# -- the graded cells -----------------------------------------------------------------------------------
TOKEN = "course-token-7f3a"  # the public cells' token; hidden ones draw their own


@public("12", "test_post", "2026-07-28: a POST per message, no session; 202, 404, 400 by the table; GET, DELETE 405")
def post_cell(work: Work) -> None:
    check_modern_post(work, [1, "7"], [("count_orders", {"status": "paid"})], "0123456789abcdef0123456789abcdef")


@public("12", "test_headers", "MCP-Protocol-Version, Mcp-Method, Mcp-Name checked against the body: 400 with -32020")
def headers_cell(work: Work) -> None:
    check_header_problem(work, header_cases("get_order", "count_orders", 3))
    check_headers_served(work, "get_order", "h")


@public(
    "12",
    "test_sessions",
    "older clients: Mcp-Session-Id issued at initialize, then required (400, 404, DELETE); MCP-Protocol-Version",
)
def sessions_cell(work: Work) -> None:
    check_post(work, [1, "7"], [("count_orders", {"status": "paid"})])
    check_sessions(work, "0123456789abcdef0123456789abcdef", "2025-03-26", VISIBLE["versions"])


@public("12", "test_origin", "Origin: 403 for a foreign one (POST, GET, DELETE); loopback origins and none served")
def origin_cell(work: Work) -> None:
    check_origin(work, VISIBLE["foreign"], VISIBLE["loopback"])


SSE_MESSAGES: list[Any] = [
    {"jsonrpc": "2.0", "id": 1, "result": {}},
    {"jsonrpc": "2.0", "id": "a", "result": {"text": "two\nlines, and ü"}},
]


@public("12", "test_sse", "sse_event: one event per message; a client that accepts only SSE gets its response so")
def sse_cell(work: Work) -> None:
    check_sse_event(work, SSE_MESSAGES)
    check_sse_stream(work, [message("ping", 5), message("tools/list", "list")])


@public("12", "test_auth", "the bearer token: 401 with WWW-Authenticate without it or with another, on every request")
def auth_cell(work: Work) -> None:
    check_auth(work, TOKEN, wrong_tokens(TOKEN))


@public("12", "test_mcp_lab_check", "mcp-lab check --url on your server, with its token: no check fails")
def whole_cell(work: Work) -> None:
    with running(work, TOKEN) as bridge:
        check_session_calls(bridge, TOKEN, LATEST, [("count_orders", {})], [1, 2])
        check_whole_server(bridge, TOKEN)


@public("12", "test_sdk_client", "the official MCP SDK's HTTP client, with the token, in 2026-07-28 and legacy mode")
def sdk_cell(work: Work) -> None:
    with running(work, TOKEN) as bridge:
        check_sdk(bridge, TOKEN, [("count_orders", {"status": "shipped"}), ("get_order", {"order_id": 7})], "auto")
        check_sdk(bridge, TOKEN, [("count_orders", {"status": "paid"})], "legacy")


@public("12", "test_inspector", "the MCP Inspector's CLI over HTTP, with the token, lists your tools and calls one")
def inspector_cell(work: Work) -> None:
    with running(work, TOKEN) as bridge:
        check_inspector(work, bridge, TOKEN, [("count_orders", {"status": "paid"})])


# -- what the hidden cells draw ----------------------------------------------------------------------------
def drawn_token(rng: random.Random) -> str:
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789-._~") for _ in range(rng.randint(16, 40)))


def drawn_origins(rng: random.Random) -> tuple[list[str], list[str]]:
    """(foreign origins, loopback origins), each with a drawn name or port."""
    word = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(4, 10)))
    port = rng.randint(1024, 65535)
    foreign = [
        f"http://{word}.example:{port}",
        f"https://localhost.{word}.test",
        f"http://127.0.0.1.{word}.example",
        f"http://{word}localhost",
    ]
    loopback = [f"http://localhost:{port}", f"https://127.0.0.1:{rng.randint(1024, 65535)}", f"http://[::1]:{port}"]
    rng.shuffle(foreign)
    return foreign, loopback


def drawn_session_id(rng: random.Random) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(32))
