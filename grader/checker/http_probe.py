"""The HTTP probe: one MCP session over Streamable HTTP, spoken to message by message, on record.

It speaks to the server as the spec's client does (MCP 2025-11-25, Transports > Streamable HTTP):
every message a POST of its own to the MCP endpoint, ``Accept: application/json,
text/event-stream``, the ``Mcp-Session-Id`` issued with the initialize result sent back on every
later request, with ``MCP-Protocol-Version`` set to the negotiated revision, plus the headers the
user gave (``--header``). It offers the stdio probe's interface (``request``, ``notify``,
``send_raw``, ``close``...), so the checker's judges run over either transport unchanged; what is
HTTP's own (status, headers, the body, its SSE events) is kept in an :class:`Exchange` per HTTP
request, for the transport's checks.

The standard library's ``http.client``, a fresh connection per request, and every wait bounded:
the whole exchange (connect, response, body) by the probe's timeout. An SSE body is read as it
comes, with :func:`reference.sse.parse`, and left as soon as the awaited response is in it.

    >>> import sys, threading
    >>> from reference.server import open_shop
    >>> from reference.streamable_http import HttpServer
    >>> httpd = HttpServer(("127.0.0.1", 0), open_shop().server_factory("http"))
    >>> threading.Thread(target=httpd.serve_forever, daemon=True).start()
    >>> probe = HttpProbe(httpd.url, timeout=5)
    >>> params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "doc", "version": "1"}}
    >>> probe.request("initialize", params, id=1).result["protocolVersion"], len(probe.session_id)
    ('2025-11-25', 32)
    >>> probe.notify("notifications/initialized").status, probe.request("ping", id=7).message
    (202, {'jsonrpc': '2.0', 'id': 7, 'result': {}})
    >>> _ = probe.close(); httpd.shutdown(); httpd.server_close()
"""

from __future__ import annotations

import http.client
import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from reference.child import Line
from reference.framing import encode
from reference.sse import parse as parse_sse

from .probe import Frame, Received, Reply, same_id, show

JSON_TYPE = "application/json"
SSE_TYPE = "text/event-stream"
ACCEPT = f"{JSON_TYPE}, {SSE_TYPE}"
SESSION_HEADER = "Mcp-Session-Id"
VERSION_HEADER = "MCP-Protocol-Version"
MAX_BODY = 4 * 1024 * 1024  # bytes of one response body read (a longer one is cut, and says so)
SSE_FIELDS = ("data", "event", "id", "retry")
# The Origin of a page on another site, as a DNS-rebinding attack sends it: the transport checks of
# both eras send it and expect 403 Forbidden (http_checks.py, http_modern.py).
FOREIGN_ORIGIN = "https://evil.example"


class BadUrl(ValueError):
    """A URL the checker cannot speak to (not http or https, no host)."""


def split_url(url: str) -> tuple[str, str, int, str]:
    """(scheme, host, port, path with query) of an http(s) URL.

    >>> split_url("http://127.0.0.1:8000/mcp"), split_url("https://example.com/api/mcp?x=1")[1:]
    (('http', '127.0.0.1', 8000, '/mcp'), ('example.com', 443, '/api/mcp?x=1'))
    """
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise BadUrl(f"not a URL: {url!r} ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BadUrl(f"expected an http:// or https:// URL with a host, such as http://127.0.0.1:8000/mcp, got {url!r}")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return parts.scheme, parts.hostname, port or (443 if parts.scheme == "https" else 80), path


def media_type(value: str | None) -> str:
    """``application/json; charset=utf-8`` -> ``application/json``."""
    return (value or "").split(";")[0].strip().lower()


@dataclass
class Exchange:
    """One HTTP request and what came back (``error`` when no whole response came)."""

    kind: str  # "request", "notification", "response", "raw" (a bad body), "delete", or a check's label
    method: str  # the HTTP method
    sent_headers: dict[str, str]  # as sent; the user's own header values are masked (they may be secrets)
    body: bytes
    at: float  # seconds since the probe started
    status: int | None = None
    reason: str = ""
    headers: dict[str, str] = field(default_factory=dict)  # names lowercased
    data: bytes = b""  # the body as read (cut at MAX_BODY)
    events: list[dict[str, Any]] | None = None  # an SSE body's dispatched events
    messages: list[Any] = field(default_factory=list)  # JSON-RPC messages in the body or its events
    problems: list[str] = field(default_factory=list)  # what a client could not read in the body
    ignored: list[str] = field(default_factory=list)  # SSE lines that are no field a client reads
    error: str = ""  # no (whole) response: a timeout or a failed connection
    elapsed: float = 0.0
    complete: bool = False  # the body was read to its end
    want: Any = None  # the id of the request whose response this exchange should carry

    @property
    def content_type(self) -> str:
        return media_type(self.headers.get("content-type"))

    @property
    def is_sse(self) -> bool:
        return self.content_type == SSE_TYPE

    @property
    def rpc_method(self) -> str:
        """The JSON-RPC method of the message sent ("a response" for one, "?" for a bad body)."""
        message = _decode(self.body.decode("utf-8", "replace"))
        if isinstance(message, dict) and isinstance(message.get("method"), str):
            return message["method"]
        return "a response" if isinstance(message, dict) and "id" in message else "?"

    def request_line(self) -> str:
        body = show(self.body, 200) if self.body else ""
        return f"{self.method} {body}".rstrip()

    def status_line(self) -> str:
        """The response as evidence shows it, on one line: status, content type, body (cut)."""
        if self.status is None:
            return f"no response: {self.error}"
        kind = self.headers.get("content-type")
        head = f"HTTP {self.status} {self.reason}" + (f" ({kind})" if kind else "")
        if not self.data:
            return f"{head}, no body"
        if self.is_sse and self.events is not None and not self.problems:
            shown = " | ".join(show(e["data"].encode(), 160) for e in self.events[:3])
            return f"{head} {len(self.events)} event(s): {shown}"
        text = show(self.data, 240).replace("\r", "\\r").replace("\n", "\\n")
        return f"{head} {text}"


def sse_state(data: bytes, ended: bool) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    r"""(dispatched events, problems, ignored lines) of an SSE body read so far (``ended``: all of it).

    An event with empty data (a priming event, ``id: X`` then ``data:``) is not dispatched, as the
    HTML standard's algorithm says; nor is a last event the stream ends inside.

    >>> sse_state(b'id: 1\ndata:\n\nevent: message\ndata: {"a": 1}\n\n', ended=True)
    ([{'event': 'message', 'data': '{"a": 1}'}], [], [])
    >>> sse_state(b'data: {\n  "a": 1\n}\n\n', ended=True)[2]
    ['  "a": 1', '}']
    >>> sse_state(b'data: {"a": 1}\n', ended=True)[1]
    ['the stream ended inside an event (no blank line after it): clients drop that event']
    """
    if not ended:  # only whole lines: the rest is still on its way
        data = data[: max(data.rfind(b"\n"), data.rfind(b"\r")) + 1]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return [], ["the stream is not UTF-8 (an SSE stream always is)"], []
    events = [e for e in parse_sse(data) if e.get("data") != ""]
    lines = re.split(r"\r\n|\r|\n", text)
    ignored = [x for x in lines if x and not x.startswith(":") and x.partition(":")[0] not in SSE_FIELDS]
    problems: list[str] = []
    if ended:
        tail = re.sub(r"\r\n|\r", "\n", text).rsplit("\n\n", 1)[-1]
        if any(x.partition(":")[0] == "data" for x in tail.split("\n")):
            problems.append("the stream ended inside an event (no blank line after it): clients drop that event")
    return events, problems, ignored


class HttpProbe:
    """One MCP session over Streamable HTTP (a session id once initialize has given one)."""

    def __init__(
        self,
        url: str,
        timeout: float,
        headers: Mapping[str, str] | None = None,
        name: str = "probe",
    ) -> None:
        self.url = url
        self.scheme, self.host, self.port, self.path = split_url(url)
        self.timeout = timeout
        self.name = name
        self.user_headers = dict(headers or {})
        self.session_id: str | None = None
        self.protocol_version: str | None = None  # sent as MCP-Protocol-Version once negotiated
        self.frames: list[Frame] = []
        self.received: list[Received] = []
        self.exchanges: list[Exchange] = []
        self.stalled = False
        self.in_flight: list[Any] = []
        self.revision: str | None = None
        self.exit_code: int | None = None
        self.started = time.monotonic()
        self.closed = False

    def __enter__(self) -> HttpProbe:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    # -- HTTP ------------------------------------------------------------------------------
    def headers_for(self, overrides: Mapping[str, str | None] | None = None) -> dict[str, str]:
        """The headers of a POST: the client's, the user's, this session's, then ``overrides``
        (a value of None leaves that header out)."""
        sent = {"Content-Type": JSON_TYPE, "Accept": ACCEPT, **self.user_headers}
        if self.session_id is not None:
            sent[SESSION_HEADER] = self.session_id
        if self.protocol_version is not None:
            sent[VERSION_HEADER] = self.protocol_version
        for name, value in (overrides or {}).items():
            for key in [k for k in sent if k.lower() == name.lower()]:
                del sent[key]
            if value is not None:
                sent[name] = value
        return sent

    def _masked(self, headers: Mapping[str, str]) -> dict[str, str]:
        mine = {k.lower() for k in self.user_headers}
        return {k: ("<given with --header>" if k.lower() in mine else v) for k, v in headers.items()}

    def http(
        self,
        method: str,
        body: bytes = b"",
        headers: Mapping[str, str] | None = None,
        kind: str = "request",
        timeout: float | None = None,
        want: Any = None,
    ) -> Exchange:
        """One HTTP request, its response read within ``timeout``; with ``want`` (a request id)
        an SSE body is left as soon as the response with that id is in it."""
        limit = self.timeout if timeout is None else timeout
        sent = dict(headers if headers is not None else self.headers_for())
        exchange = Exchange(kind, method, self._masked(sent), body, self.elapsed(), want=want)
        self.exchanges.append(exchange)
        self.frames.append(Frame("sent", exchange.at, exchange.request_line().encode()))
        start = time.monotonic()
        deadline = start + limit
        connection_class = http.client.HTTPSConnection if self.scheme == "https" else http.client.HTTPConnection
        conn = connection_class(self.host, self.port, timeout=limit)
        try:
            conn.request(method, self.path, body=body if method != "GET" else None, headers=sent)
            sock = conn.sock
            response = conn.getresponse()
            exchange.status, exchange.reason = response.status, response.reason
            exchange.headers = {k.lower(): v for k, v in response.getheaders()}
            self._read_body(exchange, response, sock, deadline, want)
        except TimeoutError:
            exchange.error = f"no whole HTTP response within {limit:g} s"
        except (OSError, http.client.HTTPException) as exc:
            exchange.error = f"the HTTP request failed: {type(exc).__name__}: {exc}"
        finally:
            conn.close()
        exchange.elapsed = time.monotonic() - start
        self.frames.append(Frame("received", self.elapsed(), exchange.status_line().encode()))
        return exchange

    def _read_body(
        self, exchange: Exchange, response: http.client.HTTPResponse, sock: Any, deadline: float, want: Any
    ) -> None:
        buffer = b""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            if sock is not None:
                sock.settimeout(left)
            chunk = response.read1(65536)  # TimeoutError past the deadline
            if not chunk:
                exchange.complete = True
                break
            buffer += chunk
            if len(buffer) > MAX_BODY:
                exchange.problems.append(f"the body is longer than {MAX_BODY} bytes: cut there")
                break
            if exchange.is_sse and want is not None:
                events, _, _ = sse_state(buffer, ended=False)
                if any(_answers(_decode(e["data"]), want) for e in events):
                    break  # the response is in: the rest of the stream is not waited for
        exchange.data = buffer
        self._decode_body(exchange)

    def _decode_body(self, exchange: Exchange) -> None:
        if not exchange.data:
            return
        if exchange.is_sse:
            events, problems, ignored = sse_state(exchange.data, ended=exchange.complete)
            exchange.events, exchange.ignored = events, ignored
            exchange.problems += problems
            for event in events:
                message = _decode(event["data"])
                if message is _NOT_JSON:
                    exchange.problems.append(f"an event's data is not JSON: {show(event['data'].encode(), 120)}")
                elif event.get("event", "message") != "message":
                    exchange.problems.append(
                        f'an event of type "{event["event"]}" carries a message: clients read only "message" events'
                    )
                else:
                    exchange.messages.append(message)
            return
        message = _decode(exchange.data.decode("utf-8", "replace"))
        if message is _NOT_JSON:
            exchange.problems.append("the body is not JSON")
        else:
            exchange.messages.append(message)

    # -- the stdio probe's interface -------------------------------------------------------------
    def send(self, message: Any, kind: str = "", timeout: float | None = None) -> Exchange:
        if not kind:
            kind = (
                "request" if isinstance(message, dict) and "method" in message and "id" in message else "notification"
            )
            if isinstance(message, dict) and "method" not in message:
                kind = "response"
        return self.http("POST", encode(message).rstrip(b"\n"), self.headers_for(), kind, timeout)

    def send_raw(self, data: bytes) -> Exchange:
        return self.http("POST", data.rstrip(b"\n"), self.headers_for(), "raw")

    def notify(self, method: str, params: dict[str, Any] | None = None) -> Exchange:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        return self.send(message, "notification")

    def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        id: Any = None,
        timeout: float | None = None,
        give_up: bool = False,
    ) -> Reply:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": id if id is not None else method, "method": method}
        if params is not None:
            message["params"] = params
        reply = self.exchange(message, timeout)
        if give_up and reply.message is None and self.stalled:
            # Disconnecting is no cancellation (the spec): say so, and go on.
            self.stalled = False
            self.in_flight.append(message["id"])
            reason = f"mcp-lab check: no reply within {reply.elapsed:.0f} s"
            self.notify("notifications/cancelled", {"requestId": message["id"], "reason": reason})
        return reply

    def exchange(self, message: dict[str, Any], timeout: float | None = None) -> Reply:
        """POST ``message`` (a request) and find the response carrying its id in what comes back."""
        want = message.get("id")
        headers = self.headers_for({VERSION_HEADER: None} if message.get("method") == "initialize" else None)
        sent = self.http("POST", encode(message).rstrip(b"\n"), headers, "request", timeout, want)
        reply = Reply(message, None, sent.elapsed)
        for item in sent.messages:
            if not isinstance(item, dict):
                continue  # no message (a body of null, a number): http-content-type's to judge
            data = encode(item).rstrip(b"\n") if _encodable(item) else show(sent.data).encode()
            received = Received(Line(data, self.elapsed(), len(data)), item, True)
            self.received.append(received)
            if reply.message is None and _answers(item, want) and same_id(item.get("id"), want):
                reply.message = item
            elif reply.message is None and _answers(item, want):
                reply.near_miss = received
                reply.others.append(received)
            else:
                reply.others.append(received)
        if reply.message is None:
            reply.why = self._why(sent, reply)
            self.stalled = bool(sent.error) and "within" in sent.error
        elif message.get("method") == "initialize":
            self._begin(sent, reply.message)
        return reply

    def _begin(self, sent: Exchange, message: dict[str, Any]) -> None:
        """A session begins: keep its id and its revision for the requests that follow."""
        result = message.get("result")
        if isinstance(result, dict) and isinstance(result.get("protocolVersion"), str):
            self.protocol_version = result["protocolVersion"]
            self.session_id = sent.headers.get(SESSION_HEADER.lower())

    def _why(self, sent: Exchange, reply: Reply) -> str:
        if reply.near_miss is not None:
            return "the response came back with the id in another JSON type"
        if sent.error:
            return sent.error
        if sent.status is not None and 300 <= sent.status < 400:
            where = sent.headers.get("location", "(no Location)")
            return f"HTTP {sent.status} {sent.reason} to {where}: the checker follows no redirect, give that URL"
        if sent.status is not None and not 200 <= sent.status < 300:
            return f"HTTP {sent.status} {sent.reason} ({show(sent.data.strip(), 160) or 'no body'})"
        if sent.status == 202 and not sent.data:
            return "202 Accepted and no body: the request was taken for a notification"
        if sent.problems:
            return "; ".join(sent.problems)
        if sent.is_sse:
            return "the SSE stream ended without the response" if sent.complete else "the SSE stream stopped"
        if sent.content_type != JSON_TYPE:
            return f"HTTP {sent.status} with Content-Type {sent.headers.get('content-type', '(none)')}"
        return "the body holds no response with this id"

    def alive(self) -> bool:
        return True  # a server over HTTP is not a process of ours: a failed request says what happened

    def stdout_closed(self) -> bool:
        return False

    def wait_exit(self, timeout: float) -> int | None:
        return None

    def drain(self, wait: float = 0.0) -> list[Received]:
        return []

    def stderr_tail(self, limit: int = 1500) -> str:
        return ""

    def transcript(self, last: int = 12) -> list[str]:
        arrow = {"sent": "->", "received": "<-"}
        return [f"{arrow[f.direction]} {f.as_evidence()}" for f in self.frames[-last:]]

    def close(self, grace: float = 0.5) -> int:
        """End the session as a client that is done with it should: DELETE with its id (once)."""
        if not self.closed and self.session_id is not None:
            self.http("DELETE", b"", self.headers_for({"Content-Type": None}), "delete", min(self.timeout, 3.0))
        self.closed = True
        return 0


_NOT_JSON = object()


def _decode(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return _NOT_JSON


def _encodable(item: Any) -> bool:
    try:
        encode(item)
    except (TypeError, ValueError):
        return False
    return True


def _answers(item: Any, want: Any) -> bool:
    """A response whose id is ``want``, in the same JSON type or another ("7" for 7)."""
    if not isinstance(item, dict) or "method" in item or "id" not in item:
        return False
    return same_id(item["id"], want) or json.dumps(item["id"]).strip('"') == json.dumps(want).strip('"')
