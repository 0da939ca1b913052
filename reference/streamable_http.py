"""Streamable HTTP: the same server over one HTTP endpoint instead of a pipe, in both eras.

The messages, the dispatcher and the lifecycle are the stdio server's (:class:`reference.server.Server`);
only the transport differs. One endpoint, ``/mcp``. Which era a POST belongs to is read from it
(basic/versioning, Backward Compatibility): ``MCP-Protocol-Version: 2026-07-28``, or a body whose
``_meta`` carries the per-request fields, is modern; a 2025 header or none is legacy.

Legacy (2025-11-25 back to 2025-03-26), sessions:

- ``POST`` carries one JSON-RPC message. A request is answered in the HTTP response: as
  ``application/json``, or as an SSE stream of one event (``text/event-stream``) when the client
  accepts only that. A notification or a response gets ``202 Accepted`` and no body. A body that is
  not JSON, or not a valid message, gets 400 with the JSON-RPC error (id null).
- ``GET`` gets ``405``: this server sends no messages of its own (no notifications, no requests of
  its own), so it offers no stream to listen on. ``DELETE`` ends a session (204); after it, the
  session's id gets 404.
- Sessions: the response to ``initialize`` carries ``Mcp-Session-Id``; every later request must
  send it back (400 without it, 404 for an id that is unknown or ended). Each session is its own
  :class:`~reference.server.Server`, so its own lifecycle: its negotiated revision and its client's
  name (for the write audit). All sessions share the shop; one message is handled at a time.

Modern (2026-07-28), no session: each request is served by a fresh ``Server`` that lives for that
request only, so nothing of one request reaches another. ``Mcp-Session-Id`` is ignored and never
issued. The envelope is judged first (-32602), then the metadata headers against the body
(:mod:`reference.mcp_headers`, -32020), then the version (-32022); each is 400, an unknown or
removed method 404 (-32601). A notification gets 202; ``GET`` and ``DELETE`` 405 (``Allow: POST``).

Before any of that, for both, :mod:`reference.http_guard`: Origin (403), Host (421), the bearer
token (401), Accept (406), and for a session MCP-Protocol-Version (400).

It listens on 127.0.0.1 unless told otherwise; port 0 picks a free port (the line on stderr says
which). SSE events carry no ids, so a broken stream cannot be resumed; none needs to be, as each
carries one complete reply.

    >>> import http.client, json, threading
    >>> from reference.server import open_shop
    >>> httpd = HttpServer(("127.0.0.1", 0), open_shop().server_factory("http"))
    >>> threading.Thread(target=httpd.serve_forever, daemon=True).start()
    >>> conn = http.client.HTTPConnection("127.0.0.1", httpd.server_address[1], timeout=10)
    >>> ping = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    >>> conn.request("POST", "/mcp", ping, {"Content-Type": "application/json"})
    >>> response = conn.getresponse(); response.status, json.loads(response.read())["error"]["code"]  # no session
    (400, -32600)
    >>> init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "doc", "version": "1"}}
    >>> conn.request("POST", "/mcp", json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}),
    ...              {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
    >>> response = conn.getresponse(); session = response.getheader("Mcp-Session-Id"); _ = response.read()
    >>> response.status, len(session)
    (200, 32)
    >>> conn.request("POST", "/mcp", ping, {"Content-Type": "application/json", "Mcp-Session-Id": session})
    >>> response = conn.getresponse(); response.status, json.loads(response.read())
    (200, {'jsonrpc': '2.0', 'id': 1, 'result': {}})
    >>> meta = {stateless.PROTOCOL_VERSION: "2026-07-28", stateless.CLIENT_CAPABILITIES: {}}
    >>> listing = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": meta}})
    >>> conn.request("POST", "/mcp", listing, {"Content-Type": "application/json",
    ...                                        "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"})
    >>> response = conn.getresponse(); reply = json.loads(response.read())
    >>> response.status, response.getheader("Mcp-Session-Id"), reply["result"]["resultType"]  # no session
    (200, None, 'complete')
    >>> httpd.shutdown(); httpd.server_close()
"""

from __future__ import annotations

import contextlib
import queue
import secrets
import signal
import socket
import socketserver
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from . import envelope, lifecycle, mcp_headers, sse, stateless
from .errors import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_CAPABILITY,
    PARSE_ERROR,
    UNSUPPORTED_VERSION,
    RpcError,
)
from .framing import MAX_LINE_BYTES, FrameError, decode, encode
from .http_guard import accepts, host_allowed, is_loopback, origin_allowed, token_ok, version_problem

if TYPE_CHECKING:
    from .server import Server

ENDPOINT = "/mcp"
SESSION_HEADER = "Mcp-Session-Id"
VERSION_HEADER = "MCP-Protocol-Version"
MAX_BODY = MAX_LINE_BYTES  # the same bound as one stdio line
MAX_SESSIONS = 100  # past it, the session unused the longest is ended
PARSE_ERROR_CODE, INVALID_REQUEST_CODE = -32700, -32600
# A modern error's HTTP status (2026-07-28, streamable-http: Protocol Version Header, Server
# Validation): a request the server will not serve as sent is 400, an unknown method 404; an error
# of the method itself (an unknown tool, say) too, as the official SDKs do: one table for both.
KEEPALIVE = 15.0  # seconds of quiet on a listen stream before a ":" comment keeps proxies from closing it
STREAMS_GRACE = 10.0  # seconds the open listen streams have to end when the server stops (a bound for a
# busy machine: on a quiet one each ends within a WAKE; the process exits as soon as they have)
WAKE = 0.5  # seconds between a listen stream's looks at whether the server is shutting down
REFUSED = (PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS, HEADER_MISMATCH, MISSING_CAPABILITY, UNSUPPORTED_VERSION)
MODERN_STATUS = {**{kind.code: 400 for kind in REFUSED}, METHOD_NOT_FOUND.code: 404}


def is_modern_post(version_header: str | None, message: Any) -> bool:
    """Whether a POST is served statelessly under 2026-07-28 (basic/versioning, Backward Compatibility).

    A modern version header, or a body whose ``_meta`` carries the per-request protocol fields;
    anything else (a 2025 header, none, an unknown one without the fields) is the legacy
    transport's, sessions and all.

    >>> is_modern_post("2026-07-28", {}), is_modern_post(None, {"params": {"_meta": {stateless.PROTOCOL_VERSION: "x"}}})
    (True, True)
    >>> is_modern_post("2025-11-25", {"method": "tools/list"}), is_modern_post(None, [])
    (False, False)
    """
    if version_header in stateless.SUPPORTED:
        return True
    return isinstance(message, dict) and stateless.is_modern(message.get("params"))


def _stderr_line(message: str) -> None:
    sys.stderr.write(f"[mcp-lab serve] {message}\n")
    sys.stderr.flush()


class Sessions:
    """One server (one lifecycle) per ``Mcp-Session-Id``. Callers hold the lock."""

    def __init__(self, new_server: Callable[[], Server], limit: int = MAX_SESSIONS) -> None:
        self.new_server = new_server
        self.limit = limit
        self.servers: OrderedDict[str, Server] = OrderedDict()

    def add(self, server: Server) -> str:
        """Register an initialised server under a new id: 128 random bits, visible ASCII."""
        session_id = secrets.token_hex(16)
        self.servers[session_id] = server
        while len(self.servers) > self.limit:
            self.servers.popitem(last=False)
        return session_id

    def get(self, session_id: str) -> Server | None:
        server = self.servers.get(session_id)
        if server is not None:
            self.servers.move_to_end(session_id)
        return server

    def end(self, session_id: str) -> bool:
        return self.servers.pop(session_id, None) is not None


class HttpServer(ThreadingHTTPServer):
    """The HTTP server: a thread per connection, the sessions, one message handled at a time."""

    daemon_threads = True
    block_on_close = False  # Ctrl-C ends it now, not when the last idle keep-alive connection times out

    def __init__(
        self,
        address: tuple[str, int],
        new_server: Callable[[], Server],
        auth_token: str | None = None,
        log: Callable[[str], None] = _stderr_line,
    ) -> None:
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, Handler)
        self.sessions = Sessions(new_server)
        self.lock = threading.Lock()  # the shop's connections are shared: one message at a time
        self.auth_token = auth_token
        self.loopback = is_loopback(address[0])
        self.log = log
        self.closing = threading.Event()  # set by shutdown: open listen streams end with their response
        self.listeners: set[threading.Thread] = set()  # the threads serving open listen streams

    def shutdown(self) -> None:
        self.closing.set()
        super().shutdown()

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{f'[{host}]' if ':' in str(host) else host}:{port}{ENDPOINT}"

    def handle_error(self, request: Any, client_address: Any) -> None:
        error = sys.exc_info()[1]
        self.log(f"HTTP connection from {client_address[0]} failed: {type(error).__name__}: {error}")


class Handler(BaseHTTPRequestHandler):
    server: HttpServer
    protocol_version = "HTTP/1.1"  # keep-alive: a client sends many messages on one connection
    server_version = "mcp-wire-lab"
    sys_version = ""
    timeout = 60  # a connection that sends nothing for this long is closed
    # The headers and the body go out in two writes: with Nagle's algorithm the body waits for
    # the client's delayed ACK of the headers, 40 ms a reply. TCP_NODELAY sends it at once.
    disable_nagle_algorithm = True
    unread_body = False  # the request's body is still on the connection

    # -- replies ---------------------------------------------------------------------------------
    def reply(self, status: int, body: bytes = b"", content_type: str | None = None, **headers: str) -> None:
        self.send_response(status)
        if content_type is not None:
            self.send_header("Content-Type", content_type)
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        if status != 204:  # RFC 9110 section 8.6: a 204 has no content, and so no Content-Length
            self.send_header("Content-Length", str(len(body)))
        if self.unread_body:  # the rest of the request is still on the connection: end it
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD" and status != 204:
            self.wfile.write(body)

    def fail(self, status: int, message: str, code: int = INVALID_REQUEST_CODE, **headers: str) -> None:
        """An HTTP error, its body a JSON-RPC error without an id (the spec allows one)."""
        shown = self.path if len(self.path) <= 80 else self.path[:77] + "..."
        self.server.log(f"{self.command} {shown}: {status} {message}")
        body = encode({"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}})
        self.reply(status, body, "application/json", **headers)

    def answer(self, message: Any, json_ok: bool, **headers: str) -> None:
        """The reply to a request: JSON when the client takes it, else an SSE stream of one event."""
        if json_ok:
            self.reply(200, encode(message), "application/json", **headers)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.send_header("Connection", "close")  # the stream ends when the connection does
        self.close_connection = True
        self.end_headers()
        self.wfile.write(sse.event(message))
        self.wfile.flush()

    # -- routing ---------------------------------------------------------------------------------
    def do_POST(self) -> None:
        self.route()

    do_GET = do_DELETE = do_PUT = do_PATCH = do_OPTIONS = do_HEAD = do_POST

    def route(self) -> None:
        length = self.headers.get("Content-Length", "0").strip()
        self.unread_body = "Transfer-Encoding" in self.headers or length not in ("", "0")
        origin = self.headers.get("Origin")
        if not origin_allowed(origin):
            self.fail(403, f"Forbidden: requests from origin {origin} are not accepted (only this machine's)")
            return
        if not host_allowed(self.headers.get("Host"), self.server.loopback):
            self.fail(421, "Misdirected Request: this server answers only to localhost names")
            return
        token = self.server.auth_token
        if token is not None:
            authorization = self.headers.get("Authorization")
            if not token_ok(authorization, token):
                challenge = 'Bearer realm="mcp-lab"'
                if authorization is not None:
                    challenge += ', error="invalid_token", error_description="the token is not this server\'s"'
                self.fail(401, "Unauthorized: send Authorization: Bearer TOKEN", WWW_Authenticate=challenge)
                return
        if urlsplit(self.path).path != ENDPOINT:
            self.fail(404, f"Not Found: the MCP endpoint is {ENDPOINT}")
            return
        if self.command == "POST":
            self.post()
        elif self.headers.get(VERSION_HEADER) in stateless.SUPPORTED:
            # 2026-07-28 has no GET stream and no session to DELETE (streamable-http, Earlier Revisions).
            self.fail(
                405,
                f"Method Not Allowed: {self.command}; {stateless.MODERN} sends every message as a POST",
                Allow="POST",
            )
        elif self.command == "DELETE":
            self.delete()
        else:
            # GET would open a stream for the server's own messages; this server sends none.
            self.fail(
                405, f"Method Not Allowed: {self.command}; use POST (and DELETE to end a session)", Allow="POST, DELETE"
            )

    def version_problem(self, server: Server | None) -> str | None:
        negotiated = server.session.version if server is not None and server.session.initialize_seen else None
        return version_problem(self.headers.get(VERSION_HEADER), negotiated)

    def delete(self) -> None:
        session_id = self.headers.get(SESSION_HEADER)
        if session_id is None:
            self.fail(400, f"Bad Request: DELETE needs the {SESSION_HEADER} header of the session to end")
            return
        with self.server.lock:
            server = self.server.sessions.get(session_id)
            problem = self.version_problem(server)
            if server is not None and problem is None:
                self.server.sessions.end(session_id)
        if server is None:
            self.fail(404, "Not Found: no such session (it ended, or never began)")
        elif problem is not None:
            self.fail(400, f"Bad Request: {problem}")
        else:
            self.server.log(f"session {session_id[:8]}... ended by the client (DELETE)")
            self.reply(204)

    def read_body(self) -> bytes | None:
        """The request's body, or ``None`` after answering why it cannot be read."""
        if "Transfer-Encoding" in self.headers:
            self.fail(411, "Length Required: send the message with a Content-Length")
            return None
        length = self.headers.get("Content-Length")
        if length is None or not length.strip().isdigit():
            self.fail(411, "Length Required: send the message with a Content-Length")
            return None
        size = int(length)
        if size > MAX_BODY:
            self.fail(413, f"Content Too Large: a message may have at most {MAX_BODY} bytes")
            return None
        body = self.rfile.read(size)
        self.unread_body = False
        if len(body) != size:
            self.close_connection = True
            return None
        return body

    def post(self) -> None:
        content_type = self.headers.get("Content-Type", "")
        if content_type.split(";")[0].strip().lower() != "application/json":
            self.fail(415, "Unsupported Media Type: send the message as Content-Type: application/json")
            return
        json_ok, sse_ok = accepts(self.headers.get("Accept"))
        if not (json_ok or sse_ok):
            self.fail(406, "Not Acceptable: accept application/json or text/event-stream (both, as the spec says)")
            return
        body = self.read_body()
        if body is None:
            return
        try:
            message = decode(body)
        except FrameError as exc:
            self.fail(400, f"Parse error: {exc}", code=PARSE_ERROR_CODE)
            return
        if is_modern_post(self.headers.get(VERSION_HEADER), message):
            self.post_modern(message, json_ok, sse_ok)
            return
        is_initialize = isinstance(message, dict) and message.get("method") == "initialize" and "id" in message
        session_id = self.headers.get(SESSION_HEADER)
        headers: dict[str, str] = {}
        with self.server.lock:
            sessions = self.server.sessions
            if session_id is None:
                if not is_initialize:
                    problem = (
                        f"no {SESSION_HEADER} header; send initialize first, then its {SESSION_HEADER} with every "
                        "request"
                    )
                    self.fail(400, f"Bad Request: {problem}")
                    return
                server = sessions.new_server()
            else:
                found = sessions.get(session_id)
                if found is None:
                    self.fail(404, "Not Found: no such session (it ended, or never began); initialize again")
                    return
                server = found
            problem = self.version_problem(server if session_id is not None else None)
            if problem is not None:
                self.fail(400, f"Bad Request: {problem}")
                return
            reply = server.handle_line(body)
            if session_id is None and isinstance(reply, dict) and "result" in reply:
                headers[SESSION_HEADER] = sessions.add(server)
        if reply is None:  # a notification, or a response: nothing to say
            self.reply(202, **headers)
        elif isinstance(reply, dict) and "error" in reply and reply.get("id") is None:
            # Not a message we could answer (its id unreadable): the HTTP request itself was bad.
            self.server.log(f"POST {ENDPOINT}: 400 {reply['error']['message']}")
            self.reply(400, encode(reply), "application/json", **headers)
        else:
            self.answer(reply, json_ok, **headers)

    def post_modern(self, message: Any, json_ok: bool, sse_ok: bool = True) -> None:
        """One 2026-07-28 message: no session (an ``Mcp-Session-Id`` is ignored, none is issued), a
        fresh :class:`~reference.server.Server` for each request, and its error's status from the table."""
        try:
            kind = envelope.classify(message) if isinstance(message, dict) else None
        except RpcError as exc:
            self.fail(400, f"Invalid Request: {exc.detail}")
            return
        if kind is None or isinstance(kind, envelope.Response):
            what = "a batch" if isinstance(message, list) else "a response" if kind else "not a JSON-RPC message"
            self.fail(400, f"Invalid Request: {what}; a {stateless.MODERN} POST carries one request or notification")
            return
        if isinstance(kind, envelope.Notification):
            self.reply(202)  # none is defined on HTTP in this revision (cancelling is closing the stream)
            return
        try:
            if not mcp_headers.has_envelope(kind.params):
                stateless.read_meta(kind.params)  # -32602 naming what is missing, before any header is judged
            mcp_headers.check(self.headers, message, self.headers.get_all)
        except RpcError as exc:
            reply: Any = envelope.error_message(kind.id, exc)
        else:
            server = self.server.sessions.new_server()  # this request's own: no state outlives it
            stream: queue.Queue[dict[str, Any]] = queue.Queue()
            server.deliver = stream.put  # a listen stream's messages: this request's own SSE response
            with self.server.lock:
                reply = server.dispatcher.handle_decoded(message)
            if reply is None:  # subscriptions/listen took it: the answer is a stream, until it ends
                self.listen_stream(server, kind.id, stream, sse_ok)
                return
        code = reply["error"]["code"] if "error" in reply else None
        status = MODERN_STATUS.get(code, 200) if code is not None else 200
        if status != 200:
            self.server.log(f"POST {ENDPOINT} ({stateless.MODERN}): {status} {reply['error']['message'][:200]}")
            self.reply(status, encode(reply), "application/json")
        elif json_ok:
            self.reply(200, encode(reply), "application/json")
        else:  # a stream of one event; no proxy may hold it back (streamable-http, Receiving Messages)
            self.answer(reply, False, X_Accel_Buffering="no")

    def listen_stream(self, server: Server, request_id: Any, stream: queue.Queue[dict[str, Any]], sse_ok: bool) -> None:
        """A ``subscriptions/listen`` stream as the POST's SSE response (2026-07-28, Streamable HTTP and
        ``basic/patterns/subscriptions``): the acknowledgement first, then every notification for it,
        a ``:`` comment every KEEPALIVE seconds; it ends when the client closes it (that is how a
        client cancels over HTTP) or when the server ends it with the listen request's response."""
        try:
            if not sse_ok:
                message = "Not Acceptable: subscriptions/listen answers with a stream: accept text/event-stream"
                self.reply(
                    406, encode(envelope.error_message(request_id, INVALID_REQUEST, message)), "application/json"
                )
                return
            self.server.listeners.add(threading.current_thread())
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("X-Accel-Buffering", "no")  # no proxy may hold the notifications back
            self.send_header("Connection", "close")
            self.close_connection = True
            self.end_headers()
            quiet = 0.0
            while True:
                if self.server.closing.is_set() and stream.empty():
                    with self.server.lock:  # the server shuts down: it ends the stream with its response
                        server.end_streams()
                try:
                    sent: dict[str, Any] | None = stream.get(timeout=WAKE)
                except queue.Empty:
                    quiet += WAKE
                    if quiet < KEEPALIVE:
                        continue
                    sent, data = None, b": keep-alive\n\n"
                else:
                    data = sse.event(sent)
                quiet = 0.0
                self.wfile.write(data)
                self.wfile.flush()
                if sent is not None and "method" not in sent:  # the listen request's response: the end
                    return
        except OSError:  # the client closed the stream: it cancelled the subscription
            return
        finally:
            with self.server.lock:
                server.cancelled({"requestId": request_id})
            self.server.listeners.discard(threading.current_thread())

    def log_message(self, format: str, *args: Any) -> None:
        """http.server's line per request: only its own errors (ours are logged in :meth:`fail`)."""

    def log_error(self, format: str, *args: Any) -> None:
        self.server.log("HTTP: " + format % args)


def serve_until_signalled(httpd: socketserver.BaseServer) -> None:
    """``httpd.serve_forever()`` until Ctrl-C or SIGTERM, then return with every connection as it was.

    The signals ask the loop to stop (``shutdown`` from a thread of its own: it waits for the loop)
    instead of raising KeyboardInterrupt into it: raised while the loop was still starting a
    request's thread, socketserver's cleanup shut that request's connection down under the thread
    already serving it, and an open listen stream lost the response it was about to end with.
    """

    def stop(signum: int, frame: Any) -> None:
        threading.Thread(target=httpd.shutdown, name="stop", daemon=True).start()

    main = threading.current_thread() is threading.main_thread()  # only it may set handlers
    before = {signum: signal.signal(signum, stop) for signum in (signal.SIGINT, signal.SIGTERM)} if main else {}
    try:
        with contextlib.suppress(KeyboardInterrupt):  # a Ctrl-C before the handlers were set
            httpd.serve_forever(poll_interval=0.2)
    finally:  # the handlers as they were: under mcp-lab a second Ctrl-C ends the streams' grace at once
        for signum, handler in before.items():
            signal.signal(signum, handler)


def serve_http(
    new_server: Callable[[], Server],
    address: tuple[str, int],
    auth_token: str | None = None,
    log: Callable[[str], None] = _stderr_line,
) -> int:
    """Serve until Ctrl-C (or SIGTERM); the entry point of ``mcp-lab serve --http``."""
    try:
        httpd = HttpServer(address, new_server, auth_token, log)
    except OSError as exc:
        print(f"mcp-lab serve: cannot listen on {address[0]}:{address[1]}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    if not httpd.loopback:
        log(
            f"warning: listening on {address[0]}, not only on this machine"
            + ("" if auth_token else "; anyone who can reach it can use it: add --auth-token")
        )
    # The eras first: whoever waits for the URL line (the tests do) has seen this one too.
    log(
        f"eras: {', '.join(stateless.SUPPORTED)} statelessly (one POST per message, no session), and "
        f"{', '.join(lifecycle.SUPPORTED)} in sessions after initialize"
    )
    auth = "; bearer token required" if auth_token else ""
    log(f"Streamable HTTP on {httpd.url}{auth}; Ctrl-C ends it")

    serve_until_signalled(httpd)
    # Open listen streams end with their response (subscriptions: the server's graceful close),
    # each given a moment to write it before the process goes.
    httpd.closing.set()
    deadline = time.monotonic() + STREAMS_GRACE
    with contextlib.suppress(KeyboardInterrupt):
        for thread in list(httpd.listeners):
            thread.join(max(0.0, deadline - time.monotonic()))
    with contextlib.suppress(Exception):
        httpd.server_close()
    log("stopped")
    return 0
