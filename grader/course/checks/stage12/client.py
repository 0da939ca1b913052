"""Speaking HTTP to the learner's ``mcp_http.py``, with the evidence a failure shows: the request
sent (request line, headers, body) and the response that came (status line, the headers that
matter, body). Every stage-12 check talks to the learner's server through :class:`Client`, on a
server :func:`running` starts; the public cells' token and values are here too.

    >>> message("ping", 5)
    {'jsonrpc': '2.0', 'id': 5, 'method': 'ping'}
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from grader.checker.http_probe import ACCEPT, JSON_TYPE, SSE_TYPE, Exchange, HttpProbe
from reference.framing import encode
from reference.lifecycle import LATEST

from ...drive import REPLY_TIMEOUT
from ...expect import Failure, same_json, show
from ...http_bridge import HttpBridge, serve
from ...work import Work

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


TOKEN = "course-token-7f3a"  # the public cells' token; hidden ones draw their own


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


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None
