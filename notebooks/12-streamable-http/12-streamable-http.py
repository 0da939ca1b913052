# ---
# jupyter:
#   jupytext:
#     comment_magics: false
#     notebook_metadata_filter: language_info,-language_info.codemirror_mode,-language_info.file_extension,-language_info.mimetype,-language_info.nbconvert_exporter,-language_info.pygments_lexer,-language_info.version,-jupytext.text_representation.jupytext_version
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
#   language_info:
#     name: python
# ---

# %% [markdown] id="title"
# # Stage 12: Streamable HTTP and auth
#
# Until now a host started your server as its own child and spoke to it through two pipes. Nobody
# else could reach it. MCP has a second transport for a server that lives on its own, maybe on
# another machine, and serves many clients. The spec (MCP 2026-07-28, Transports > Streamable HTTP):
#
# > In the **Streamable HTTP** transport, the server operates as an independent process that can
# > handle multiple client connections.
#
# The messages do not change: the same `tools/call`, the same `_meta` envelope of stage 03, the
# same ids. What changes is everything around them. A message now travels in an HTTP request,
# proxies and gateways stand between the client and the server, and anyone who can reach the port
# can knock: another program on the machine, or a web page in the user's own browser.
#
# In this stage you write that transport, `mcp_http.py`: an HTTP server, made with Python's
# `http.server`, in front of the course's finished dispatcher. It speaks 2026-07-28 first (one
# POST per message, no session), and, for the clients that still send `initialize`, the sessions
# of the revisions before it. At the end the checker (`mcp-lab check --url`), the official SDK's
# HTTP client (in both eras) and the MCP Inspector use it, with a token.

# %% id="setup" nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false, "task": false}
from grader.course import lab

lab.setup("12")

# %% [markdown] id="given"
# ## 0. What you are given
#
# The dispatcher is the course's: `open_shop(shared=True).server("http")` makes a
# `reference.server.Server`, the finished server of stages 03 to 10 (both eras, tools, resources,
# prompts) without a transport. `server.handle_line(body)` takes one message's bytes and returns
# the reply (a dict), or `None` when nothing is owed, exactly as on stdio.
#
# The cell below is the whole file. The parts already written are plumbing that `http.server`
# needs and that is not MCP:
#
# - `make_server(address, token)` builds a `ThreadingHTTPServer` (a thread per connection) and
#   hangs the shop, a table of sessions (part 6), a lock and the token on it. It does not start
#   serving: `main()` calls `serve_forever()`, and so do the checks. Port 0 means any free port.
# - `Handler` is a `BaseHTTPRequestHandler`: `http.server` calls `do_POST`, `do_GET` or
#   `do_DELETE` for each request, with the request line in `self.path` and the headers in
#   `self.headers` (`self.headers.get("Origin")` is `None` when there is none; names are read in
#   any case).
# - `reply(status, body, content_type, headers)` writes one response with its `Content-Length`;
#   `fail(status, text)` writes an HTTP error whose body is a JSON-RPC error without an id.
# - `admitted()` runs first for every request: the Origin (part 3), the token (part 5), the path.
# - `do_POST` reads the body and asks `is_modern(...)` which era it belongs to: a 2026-07-28 POST
#   goes to `post_modern` (parts 1 and 2); any other to the sessions of part 6.
# - `decode_value(value)` reads a header value written as `=?base64?...?=` (part 2).
#
# You write the methods and functions marked `YOUR CODE HERE`, one part at a time. Each part below
# says which ones, quotes the rule, shows the reference server doing it, and has a cell to try
# yours. Run the `%%module mcp_http` cell again after each change: it saves `mcp_http.py`.

# %% id="mcp_http" nbgrader={"grade": false, "grade_id": "mcp_http", "locked": false, "schema_version": 3, "solution": true, "task": false}
%%module mcp_http
# mcp_http.py: the shop's MCP server over Streamable HTTP, standard library only. MCP 2026-07-28
# first: one POST per message, no session, the request metadata headers checked against the body;
# then the sessions of 2025-11-25 for older clients. The messages are the course's dispatcher's
# (reference.server.Server); the transport is yours: parts 1 to 6 of the lesson.

import base64
import binascii
import hmac
import json
import secrets
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from reference.lifecycle import SUPPORTED
from reference.server import open_shop

ENDPOINT = "/mcp"
MODERN = "2026-07-28"
VERSION_HEADER = "MCP-Protocol-Version"
METHOD_HEADER = "Mcp-Method"
NAME_HEADER = "Mcp-Name"
SESSION_HEADER = "Mcp-Session-Id"
PROTOCOL_KEY = "io.modelcontextprotocol/protocolVersion"  # the version in a 2026-07-28 request's _meta
NAMED_BY = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}  # what Mcp-Name repeats
JSON_TYPE = "application/json"
SSE_TYPE = "text/event-stream"
LOOPBACK = ("localhost", "127.0.0.1", "::1")
MAX_BODY = 1 << 20  # bytes of one message, as for one stdio line
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
HEADER_MISMATCH, MISSING_CAPABILITY, UNSUPPORTED_VERSION = -32020, -32021, -32022


def log(text):
    """One line for a human, on stderr."""
    sys.stderr.write(f"[mcp_http] {text}\n")
    sys.stderr.flush()


def encode(message):
    """A message as compact UTF-8 JSON: one line, no newline at its end."""
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def is_modern(version, message):
    """Whether a POST is a 2026-07-28 one: its MCP-Protocol-Version says so, or its body's _meta names a
    version. Anything else is an older client's, served with sessions (part 6)."""
    if version is not None and version.strip() == MODERN:
        return True
    params = message.get("params") if isinstance(message, dict) else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and PROTOCOL_KEY in meta


def is_initialize(message):
    return isinstance(message, dict) and message.get("method") == "initialize" and "id" in message


def accepts_only_sse(accept):
    """Whether an Accept header lists text/event-stream but neither application/json nor */*."""
    kinds = {part.split(";")[0].strip().lower() for part in (accept or "*/*").split(",")}
    return SSE_TYPE in kinds and not kinds & {JSON_TYPE, "application/*", "*/*"}


def decode_value(value):
    """A header value as the body value it repeats: =?base64?...?= decoded (UTF-8 in Base64), any other
    value as it is; None for a broken =?base64?...?=, which repeats no value."""
    if not (value.startswith("=?base64?") and value.endswith("?=")):
        return value
    try:
        return base64.b64decode(value[len("=?base64?") : -len("?=")], validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


# -- 1. One POST per message ------------------------------------------------------------------------
def modern_status(reply):
    """The HTTP status of a 2026-07-28 POST's response, from the dispatcher's reply (None: nothing owed)."""
    ### BEGIN SOLUTION
    if reply is None:
        return 202
    code = reply.get("error", {}).get("code") if isinstance(reply.get("error"), dict) else None
    if code == METHOD_NOT_FOUND:
        return 404
    if code in (PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS, HEADER_MISMATCH, MISSING_CAPABILITY, UNSUPPORTED_VERSION):
        return 400
    return 200
    ### END SOLUTION


# -- 2. The request metadata headers ----------------------------------------------------------------
def header_problem(headers, message):
    """What is wrong with a 2026-07-28 request's MCP-Protocol-Version, Mcp-Method and Mcp-Name against
    its body (a sentence), or None when each is there and says what the body says."""
    ### BEGIN SOLUTION
    params = message.get("params") if isinstance(message.get("params"), dict) else {}
    meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
    version = headers.get(VERSION_HEADER)
    if version is None:
        return f"no {VERSION_HEADER} header: every POST needs it, equal to _meta's {PROTOCOL_KEY}"
    if version.strip() != meta.get(PROTOCOL_KEY):
        return f"{VERSION_HEADER} is {version.strip()!r} but the body's _meta says {meta.get(PROTOCOL_KEY)!r}"
    method = headers.get(METHOD_HEADER)
    if method is None:
        return f"no {METHOD_HEADER} header: every request needs it, equal to the body's method"
    if method.strip() != message.get("method"):
        return f"{METHOD_HEADER} is {method.strip()!r} but the body's method is {message.get('method')!r}"
    field = NAMED_BY.get(message.get("method"))
    target = params.get(field) if field is not None else None
    if not isinstance(target, str):
        return None  # nothing to name
    name = headers.get(NAME_HEADER)
    if name is None:
        return f"no {NAME_HEADER} header: a {message['method']} request names its params.{field} there"
    if decode_value(name.strip()) != target:
        return f"{NAME_HEADER} is {name.strip()!r} but the body's params.{field} is {target!r}"
    return None
    ### END SOLUTION


# -- 3. Origin --------------------------------------------------------------------------------------
def origin_allowed(origin):
    """Whether a web page from ``origin`` may talk to this server: one served from this machine,
    http(s)://localhost, 127.0.0.1 or [::1], any port."""
    ### BEGIN SOLUTION
    try:
        parts = urlsplit(origin)
        parts.port  # a malformed port raises ValueError
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and parts.hostname in LOOPBACK
    ### END SOLUTION


# -- 4. SSE -----------------------------------------------------------------------------------------
def sse_event(message):
    """One message as one SSE event, as bytes: its type, its data on one line, a blank line."""
    ### BEGIN SOLUTION
    return b"event: message\ndata: " + encode(message) + b"\n\n"
    ### END SOLUTION


# -- 5. The bearer token ----------------------------------------------------------------------------
def token_ok(authorization, token):
    """Whether an Authorization header (None when absent) carries Bearer TOKEN, compared in constant time."""
    ### BEGIN SOLUTION
    if authorization is None:
        return False
    scheme, _, given = authorization.strip().partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode())
    ### END SOLUTION


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: a client sends many messages on one connection
    server_version = "my-shop-http"

    # -- given: writing a response, reading a body ----------------------------------------------------
    def reply(self, status, body=b"", content_type=None, headers=None):
        """One HTTP response: the status line, the headers, Content-Length, the body (a 204 has neither)."""
        self.send_response(status)
        if content_type is not None:
            self.send_header("Content-Type", content_type)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if status != 204:  # RFC 9110: a 204 has no content, so no Content-Length either
            self.send_header("Content-Length", str(len(body)))
        if self.unread:  # the request's body is still on the connection: it must not pass for a request
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if status != 204:
            self.wfile.write(body)

    def fail(self, status, text, headers=None, code=INVALID_REQUEST):
        """An HTTP error whose body is a JSON-RPC error without an id (the spec allows one)."""
        log(f"{self.command} {self.path}: {status} {text}")
        error = {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": text}}
        self.reply(status, encode(error), JSON_TYPE, headers)

    def read_body(self):
        """The request's body, or None after answering why it cannot be read."""
        length = self.headers.get("Content-Length", "")
        if not length.strip().isdigit():
            self.fail(411, "Length Required: send the message with a Content-Length")
            return None
        if int(length) > MAX_BODY:
            self.fail(413, f"Content Too Large: a message may have at most {MAX_BODY} bytes")
            return None
        self.unread = False
        return self.rfile.read(int(length))

    def log_message(self, format, *args):
        """http.server logs every request on stderr: fail() logs the ones that matter."""

    # -- given: the routes ----------------------------------------------------------------------------
    def admitted(self):
        """Whether the request may go on: False once answered 403 (Origin), 401 (token) or 404 (path)."""
        length = self.headers.get("Content-Length", "0").strip()
        self.unread = length not in ("", "0") or "Transfer-Encoding" in self.headers
        origin = self.headers.get("Origin")
        if origin is not None and self.refuse_origin(origin):  # part 3
            return False
        if self.server.token is not None and self.refuse_unauthorized(self.server.token):  # part 5
            return False
        if urlsplit(self.path).path != ENDPOINT:
            self.fail(404, f"Not Found: the MCP endpoint is {ENDPOINT}")
            return False
        return True

    def do_POST(self):
        if not self.admitted():
            return
        body = self.read_body()
        if body is None:
            return
        try:
            message = json.loads(body)
        except ValueError as exc:
            self.fail(400, f"Parse error: {exc}", code=PARSE_ERROR)
            return
        if is_modern(self.headers.get(VERSION_HEADER), message):
            self.post_modern(body, message)  # parts 1 and 2
            return
        found = self.session_for(message)  # part 6; None: answered 400 or 404 already
        if found is None:
            return
        server, new = found
        version = self.headers.get(VERSION_HEADER)
        if version is not None and not self.version_ok(version):  # part 6; False: answered 400
            return
        with self.server.lock:  # the shop's connection serves one message at a time
            reply = server.handle_line(body)
        headers = {}
        if new and isinstance(reply, dict) and "result" in reply:
            headers[SESSION_HEADER] = self.begin_session(server)  # part 6
        self.answer(reply, headers)  # part 6

    def do_GET(self):
        if self.admitted():
            self.get()  # part 1

    def do_DELETE(self):
        if self.admitted():
            self.end_session()  # part 6

    # -- 1. One POST per message, no session ------------------------------------------------------------
    def post_modern(self, body, message):
        """A 2026-07-28 POST: its headers checked against its body (a request's), then a Server of its
        own, for this request alone; its reply with modern_status's status, and never a session id."""
        ### BEGIN SOLUTION
        if isinstance(message, dict) and "method" in message and "id" in message:
            problem = header_problem(self.headers, message)  # part 2
            if problem is not None:
                log(f"POST {ENDPOINT}: 400 Header mismatch: {problem}")
                error = {"code": HEADER_MISMATCH, "message": f"Header mismatch: {problem}"}
                self.reply(400, encode({"jsonrpc": "2.0", "id": message["id"], "error": error}), JSON_TYPE)
                return
        server = self.server.shop.server("http")  # no session: nothing of one request reaches another
        with self.server.lock:
            reply = server.handle_line(body)  # this request's Server, dropped after it
        status = modern_status(reply)
        if status == 202:
            self.reply(202)
        elif status == 200 and accepts_only_sse(self.headers.get("Accept")):
            self.send_sse(reply, {})  # part 4
        else:
            self.reply(status, encode(reply), JSON_TYPE)
        ### END SOLUTION

    def get(self):
        """GET: no stream here. 2026-07-28 has none (405, Allow: POST); for an older client, this server
        sends no messages of its own, so it offers none either (405, Allow: POST, DELETE)."""
        ### BEGIN SOLUTION
        if is_modern(self.headers.get(VERSION_HEADER), None):
            self.fail(405, f"Method Not Allowed: {MODERN} sends every message as a POST", {"Allow": "POST"})
            return
        self.fail(405, "Method Not Allowed: this server sends no messages of its own; POST yours",
                  {"Allow": "POST, DELETE"})
        ### END SOLUTION

    # -- 6. Older clients: sessions ---------------------------------------------------------------------
    def answer(self, reply, headers):
        """The response to a POST, from the dispatcher's reply (None when nothing is owed);
        ``headers``: more headers to send (the new session's id)."""
        ### BEGIN SOLUTION
        if reply is None:  # a notification or a response: accepted, nothing to say
            self.reply(202, headers=headers)
        elif isinstance(reply, dict) and "error" in reply and reply.get("id") is None:
            self.reply(400, encode(reply), JSON_TYPE, headers)  # not a message anyone can answer
        elif accepts_only_sse(self.headers.get("Accept")):
            self.send_sse(reply, headers)  # part 4
        else:
            self.reply(200, encode(reply), JSON_TYPE, headers)
        ### END SOLUTION

    def session_for(self, message):
        """(server, new) for this POST, or None once answered 400 (no id) or 404 (an unknown id)."""
        ### BEGIN SOLUTION
        session_id = self.headers.get(SESSION_HEADER)
        if session_id is None:
            if is_initialize(message):
                return self.server.shop.server("http"), True
            self.fail(400, f"Bad Request: no {SESSION_HEADER} header; initialize first, then send its id")
            return None
        with self.server.lock:
            server = self.server.sessions.get(session_id)
        if server is None:
            self.fail(404, "Not Found: no such session (it ended, or never began); initialize again")
            return None
        return server, False
        ### END SOLUTION

    def begin_session(self, server):
        """Keep ``server`` under a new session id, and return the id."""
        ### BEGIN SOLUTION
        session_id = secrets.token_hex(16)  # 128 random bits, visible ASCII
        with self.server.lock:
            self.server.sessions[session_id] = server
        return session_id
        ### END SOLUTION

    def end_session(self):
        """DELETE: 405 in 2026-07-28 (no session to end); for an older client, 204 once the session is
        gone, 400 without an id, 404 for an unknown one."""
        ### BEGIN SOLUTION
        if is_modern(self.headers.get(VERSION_HEADER), None):
            self.fail(405, f"Method Not Allowed: {MODERN} has no session to end", {"Allow": "POST"})
            return
        session_id = self.headers.get(SESSION_HEADER)
        if session_id is None:
            self.fail(400, f"Bad Request: DELETE needs the {SESSION_HEADER} of the session to end")
            return
        with self.server.lock:
            server = self.server.sessions.pop(session_id, None)
        if server is None:
            self.fail(404, "Not Found: no such session (it ended, or never began)")
            return
        log(f"session {session_id[:8]}... ended by the client")
        self.reply(204)
        ### END SOLUTION

    def version_ok(self, version):
        """Whether this server speaks the revision a request's MCP-Protocol-Version names; False once
        answered 400."""
        ### BEGIN SOLUTION
        if version in SUPPORTED:
            return True
        self.fail(400, f"Bad Request: unsupported {VERSION_HEADER} {version}; supported: {', '.join(SUPPORTED)}")
        return False
        ### END SOLUTION

    # -- 3. Origin --------------------------------------------------------------------------------------
    def refuse_origin(self, origin):
        """True once a request from a foreign ``origin`` is answered 403; False when it may go on."""
        ### BEGIN SOLUTION
        if origin_allowed(origin):
            return False
        self.fail(403, f"Forbidden: requests from origin {origin} are not accepted")
        return True
        ### END SOLUTION

    # -- 4. SSE -----------------------------------------------------------------------------------------
    def send_sse(self, reply, headers):
        """The reply as an SSE stream of one event (the client accepts nothing else)."""
        ### BEGIN SOLUTION
        self.reply(200, sse_event(reply), SSE_TYPE, {"Cache-Control": "no-cache", "X-Accel-Buffering": "no", **headers})
        ### END SOLUTION

    # -- 5. The bearer token ----------------------------------------------------------------------------
    def refuse_unauthorized(self, token):
        """True once a request without ``token`` is answered 401 with a challenge; False when it carries it."""
        ### BEGIN SOLUTION
        authorization = self.headers.get("Authorization")
        if token_ok(authorization, token):
            return False
        challenge = 'Bearer realm="shop"'
        if authorization is not None:  # RFC 6750: say why the token given was refused
            challenge += ', error="invalid_token"'
        self.fail(401, "Unauthorized: send Authorization: Bearer TOKEN", {"WWW-Authenticate": challenge})
        return True
        ### END SOLUTION


def make_server(address, token=None):
    """The HTTP server on ``address`` (not serving yet): the shop, the sessions (part 6), the token on it."""
    httpd = ThreadingHTTPServer(address, Handler)
    httpd.daemon_threads = True
    httpd.shop = open_shop(shared=True)  # the course's dispatcher: one Server per request, or per session
    httpd.sessions = {}  # session id -> that session's Server
    httpd.lock = threading.Lock()
    httpd.token = token  # None: no token needed
    return httpd


def main(argv):
    """python mcp_http.py [HOST:PORT [TOKEN]]: serve until Ctrl-C (port 0: any free port)."""
    host, _, port = (argv[1] if len(argv) > 1 else "127.0.0.1:8000").rpartition(":")
    httpd = make_server((host or "127.0.0.1", int(port)), argv[2] if len(argv) > 2 else None)
    log(f"Streamable HTTP on http://{host or '127.0.0.1'}:{httpd.server_address[1]}{ENDPOINT}; Ctrl-C ends it")
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    httpd.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

# %% [markdown] id="post"
# ## 1. One POST per message, and no session
#
# One URL carries everything. The spec (MCP 2026-07-28, Transports > Streamable HTTP):
#
# > The server **MUST** provide a single HTTP endpoint path (hereafter referred to as the **MCP
# > endpoint**) that supports POST.
#
# > Every JSON-RPC message sent from the client **MUST** be a new HTTP POST request to the MCP
# > endpoint.
#
# So one message is one POST, and the HTTP response carries what the server owes for it. A
# request is owed its response, in the body:
#
# > If the body is a JSON-RPC _request_, the server **MUST** return either `Content-Type:
# > application/json` (a single JSON object) or `Content-Type: text/event-stream` (an SSE response
# > stream).
#
# Here is the course's reference server answering a `tools/call`. The request is the one you
# built in stage 03: its version and capabilities ride in `params._meta`, so the server needs
# nothing from an earlier request to serve it. The three headers after the content types are
# part 2's.
#
# ```http
# $ mcp-lab serve --http 127.0.0.1:8000
#
# POST /mcp HTTP/1.1
# Host: 127.0.0.1:8000
# Content-Type: application/json
# Accept: application/json, text/event-stream
# MCP-Protocol-Version: 2026-07-28
# Mcp-Method: tools/call
# Mcp-Name: count_orders
#
# {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"count_orders","arguments":{"status":"paid"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}
#
# HTTP/1.1 200 OK
# Content-Type: application/json
#
# {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete",...,"structuredContent":{"status":"paid","count":341},"isError":false,...}}
# ```
#
# **No session.** Every request carries all the server needs, so the server keeps nothing between
# two of them: each POST gets a `Server` of its own, made for it and dropped after it. Any
# instance behind a load balancer can take any request. 2026-07-28 removed sessions from the
# transport (its changelog, major change 1), and says what a server that speaks only this
# revision **SHOULD** do when an older client still sends a session id (Backward Compatibility >
# Earlier Streamable HTTP Revisions):
#
# > An `Mcp-Session-Id` header on a request: ignore it, and do not mint or echo session IDs.
#
# The course's server speaks the older revisions too (part 6), in sessions; a POST it serves as a
# 2026-07-28 one gets this treatment (its choice, the same as the SHOULD).
#
# **Nothing owed.** A notification is owed no response. On stdio "nothing" meant writing no line;
# HTTP has no silence, so the spec gives an accepted notification an empty answer (Sending
# Messages):
#
# > If the server accepts it, the server **MUST** return HTTP status code `202 Accepted` with no
# > body.
#
# But which notification would a 2026-07-28 client send? None of the core protocol's. The spec
# says so in a note under the same rules:
#
# > This revision of the core protocol defines no client-to-server _notifications_ over Streamable
# > HTTP. The only client-sent notification in the core protocol, `notifications/cancelled`, is
# > used only on the stdio transport; on Streamable HTTP, closing the SSE response stream is itself
# > the cancellation signal and no `notifications/cancelled` message is expected [...]. The
# > notification rules above describe the transport mechanics for a notification POST; header
# > requirements for notification POSTs are not defined by this revision.
#
# So in 2026-07-28 the 202 is for a notification an extension defines (the course's server accepts
# any notification, and the checks send one of their own). The 202 a server sees every day comes
# from an older client: its `notifications/initialized` after `initialize`, in the session of
# part 6, under 2025-11-25's rule, which is the same ("If the server accepts the input, the server
# **MUST** return HTTP status code 202 Accepted with no body"):
#
# ```http
# $ mcp-lab serve --http 127.0.0.1:8000
#
# POST /mcp HTTP/1.1
# Host: 127.0.0.1:8000
# Content-Type: application/json
# Accept: application/json, text/event-stream
#
# {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"lesson","version":"1.0"}}}
#
# HTTP/1.1 200 OK
# Mcp-Session-Id: 7a44cec7aa2a570d258f47c86c708f15
#
# {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25",...}}
#
# POST /mcp HTTP/1.1
# Host: 127.0.0.1:8000
# Mcp-Session-Id: 7a44cec7aa2a570d258f47c86c708f15
# MCP-Protocol-Version: 2025-11-25
# Content-Type: application/json
# Accept: application/json, text/event-stream
#
# {"jsonrpc":"2.0","method":"notifications/initialized"}
#
# HTTP/1.1 202 Accepted
# Content-Length: 0
# ```
#
# **Cancelling.** On stdio a client cancels a request with `notifications/cancelled`. Over HTTP in
# 2026-07-28 it closes the request's response instead (Streamable HTTP > Cancellation):
#
# > Closing the SSE response stream **MUST** be treated by the server as cancellation of that
# > request. Because each request has its own response stream, the transport-level disconnect is
# > unambiguous. The server **SHOULD** stop work on the cancelled request as soon as practical and
# > **MUST NOT** send any further messages for it.
#
# and Cancellation > Transport-Specific Cancellation: "The server **MUST** treat a client
# disconnect as cancellation of that request. No `notifications/cancelled` message is required or
# expected." The shop's server answers each request at once, in one body, so it has no long work
# to stop: a client that hangs up before the answer simply never reads it. *Before 2026-07-28* it
# was the other way round: 2025-11-25 says a disconnection **SHOULD NOT** be interpreted as the
# client cancelling its request, and "To cancel, the client **SHOULD** explicitly send an MCP
# `CancelledNotification`", a POST that gets 202 like any notification.
#
# **Errors with a status.** A proxy reads the status line, not the body, so the status says what
# kind of error the body holds. The spec fixes it for some errors (Request Metadata > Protocol
# Version Header):
#
# > If the server does not implement the requested protocol version [...], it **MUST** respond
# > with `400 Bad Request` and an `UnsupportedProtocolVersionError` listing its supported versions.
#
# > If the server does not implement the requested RPC method, it **MUST** respond with `404 Not
# > Found` and a JSON-RPC error with code `-32601` (`Method not found`).
#
# Base Protocol > General fields > `_meta` adds two: a request that lacks a required `_meta`
# field (-32602) and one that needs a capability it did not declare (-32021): "On HTTP, the
# response status **MUST** be `400 Bad Request`". A header mismatch (-32020, part 2) is 400 too.
# For the other errors that refuse a request as it was sent (a body that is no request, -32700
# and -32600; any other -32602, such as an unknown tool) the spec names no status, and the course's
# server chooses 400. The course's table: -32601 is 404; -32700, -32600, -32602, -32020, -32021,
# -32022 are 400; any other reply is 200 (a tool's own failure is a result with `isError`, and is
# 200 too).
#
# ```http
# $ mcp-lab serve --http 127.0.0.1:8000
#
# POST /mcp HTTP/1.1
# Host: 127.0.0.1:8000
# Content-Type: application/json
# Accept: application/json, text/event-stream
# MCP-Protocol-Version: 2026-07-28
# Mcp-Method: shop/restock
#
# {"jsonrpc":"2.0","id":3,"method":"shop/restock","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}
#
# HTTP/1.1 404 Not Found
# Content-Type: application/json
#
# {"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found: shop/restock"}}
#
# POST /mcp HTTP/1.1
# Host: 127.0.0.1:8000
# Content-Type: application/json
# Accept: application/json, text/event-stream
# MCP-Protocol-Version: 2099-01-01
# Mcp-Method: server/discover
#
# {"jsonrpc":"2.0","id":4,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}
#
# HTTP/1.1 400 Bad Request
# Content-Type: application/json
#
# {"jsonrpc":"2.0","id":4,"error":{"code":-32022,...,"data":{"supported":["2026-07-28"],"requested":"2099-01-01"}}}
# ```
#
# **POST only.** 2026-07-28 removed the GET stream and the sessions (the page's opening note), so
# there is no stream to open with GET and no session to end with DELETE. To an older client that
# tries, a server that speaks only this revision **SHOULD** answer (Earlier Streamable HTTP
# Revisions):
#
# > HTTP GET or DELETE to the MCP endpoint: respond with `405 Method Not Allowed`.
#
# The course's server gives a GET or DELETE that says 2026-07-28 (its `MCP-Protocol-Version`) this
# answer. HTTP requires an `Allow` header with a 405 (RFC 9110): here, `Allow: POST`.
#
# ```http
# $ mcp-lab serve --http 127.0.0.1:8000
#
# GET /mcp HTTP/1.1
# Host: 127.0.0.1:8000
# Accept: text/event-stream
# MCP-Protocol-Version: 2026-07-28
#
# HTTP/1.1 405 Method Not Allowed
# Allow: POST
#
# {"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Method Not Allowed: GET; 2026-07-28 sends every message as a POST"}}
# ```
#
# **Before 2026-07-28** (2025-03-26 to 2025-11-25): the server could give each client a session
# at `initialize` (`Mcp-Session-Id`) and then want it back on every request; GET opened a stream
# for the server's own messages and DELETE ended the session. Part 6 serves those clients.
#
# ### Your turn: `modern_status`, `post_modern` and `get`
#
# - `modern_status(reply)`: the status for the dispatcher's reply, by the table above; `None`
#   (nothing owed) is 202.
# - `post_modern(body, message)`: for a request (a dict with `method` and `id`), first
#   `header_problem` (part 2: until you write it, leave that step out). Then a new `Server`,
#   `self.server.shop.server("http")`, handles the body under `self.server.lock`; send the reply
#   with `modern_status`'s status: 202 with no body, else the reply as `application/json` (or,
#   for a 200 to a client that accepts only `text/event-stream`, `self.send_sse(reply, {})`, part
#   4). Never look for a session, never send `Mcp-Session-Id`.
# - `get()`: when `is_modern(self.headers.get(VERSION_HEADER), None)`, 405 with
#   `{"Allow": "POST"}` (`self.fail`); else part 6's 405 for older clients, with
#   `{"Allow": "POST, DELETE"}`. `end_session()` (DELETE) begins the same way: 405 for a
#   2026-07-28 request.

# %% id="try-post"
with lab.serve_http("mcp_http") as url:
    call = lab.modern("tools/call", id=1, params={"name": "count_orders", "arguments": {"status": "paid"}})
    modern = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "count_orders"}
    lab.http(url, "POST", call, modern)
    lab.http(url, "POST", call, {**modern, "Mcp-Session-Id": "0123456789abcdef0123456789abcdef"})
    lab.http(url, "POST", lab.modern("shop/restock", id=3), {**modern, "Mcp-Method": "shop/restock"})
    lab.http(url, "GET", headers={"Accept": "text/event-stream", "MCP-Protocol-Version": "2026-07-28"})

# %% [markdown] id="try-post-expected"
# `lab.serve_http` runs your file as the checks do, in a process of its own, and `lab.http` prints
# each request and its response as they go over the wire. Expect, in order: 200 with the count and
# no `Mcp-Session-Id`; the same for the call that sent a session id nobody issued (ignored); 404
# with -32601; 405 with `Allow: POST`. Last, your server's log lines (stderr).

# %% id="test_post" nbgrader={"grade": true, "grade_id": "test_post", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 3}
# 2026-07-28: each request a POST of its own, served with no session (a session id ignored, none
# sent); 202 for a notification, 404 for an unknown method, 400 for a version not served or a
# broken body; GET and DELETE 405.
# Hidden when graded: other ids, other tool calls, another session id.
lab.check("test_post")

# %% [markdown] id="headers"
# ## 2. The request metadata headers
#
# A gateway in front of many MCP servers wants to route a request, or count calls per tool,
# without reading the body. So a 2026-07-28 POST repeats three of its body's fields as headers
# (Request Metadata):
#
# > Every POST request to the MCP endpoint **MUST** include an `MCP-Protocol-Version` header.
#
# > The header value **MUST** match the `io.modelcontextprotocol/protocolVersion` field carried in
# > the request body's `_meta`.
#
# | Header | Repeats | On |
# |---|---|---|
# | `MCP-Protocol-Version` | `params._meta["io.modelcontextprotocol/protocolVersion"]` | every POST |
# | `Mcp-Method` | `method` | every request |
# | `Mcp-Name` | `params.name` (or `params.uri`) | `tools/call`, `prompts/get` (`resources/read`) |
# | `Mcp-Param-{Name}` | an argument a tool marks with `x-mcp-header` | `tools/call` of that tool |
#
# (Standard Request Headers: "These headers are **REQUIRED** for compliance.")
#
# Two copies of one fact can disagree. If the gateway routes on the header and the server acts on
# the body, a client can send `Mcp-Name: count_orders` past a gateway that forbids `cancel_order`,
# and have the server run `cancel_order`. So the server that reads the body holds the headers to
# it (Server Validation):
#
# > Servers that process the request body **MUST** reject requests where the values specified in
# > the headers do not match the corresponding values in the request body.
#
# > When rejecting a request due to header validation failure, servers **MUST** return HTTP status
# > `400 Bad Request` and **MUST** include a JSON-RPC error response
#
# with the code `-32020`, `HeaderMismatch`. A header that is missing is refused the same way (the
# spec's validation failures include "A required standard header (`MCP-Protocol-Version`,
# `Mcp-Method`, `Mcp-Name`) is missing"). The error carries the request's id: the body was read,
# and it is that request which is refused (Base Protocol: error responses **MUST** include the
# same ID as the request they correspond to, in its JSON type: `0` stays the number `0`, and
# `0` is an id like any other, never "no id").
#
# ```http
# $ mcp-lab serve --http 127.0.0.1:8000
#
# POST /mcp HTTP/1.1
# Host: 127.0.0.1:8000
# Content-Type: application/json
# Accept: application/json, text/event-stream
# MCP-Protocol-Version: 2026-07-28
# Mcp-Method: tools/call
# Mcp-Name: get_order
#
# {"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"count_orders","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}
#
# HTTP/1.1 400 Bad Request
# Content-Type: application/json
#
# {"jsonrpc":"2.0","id":6,"error":{"code":-32020,"message":"Header mismatch: Mcp-Name is 'get_order' but the body's params.name is 'count_orders'..."}}
# ```
#
# A header holds plain visible ASCII; a tool name may not. Such a value travels in Base64 between
# two markers, `=?base64?` and `?=` (Value Encoding):
#
# > [...] servers **MUST** decode an encoded `Mcp-Name` or `Mcp-Param-{Name}` value before
# > comparing it to the corresponding request body value [...]
#
# The spec asks clients to encode a value that cannot be a plain ASCII header value, and any plain
# value that looks like the markers; a server decodes whatever comes encoded. So
# `=?base64?Y291bnRfb3JkZXJz?=` is `count_orders`, and the request is served:
#
# ```http
# $ mcp-lab serve --http 127.0.0.1:8000
#
# POST /mcp HTTP/1.1
# Host: 127.0.0.1:8000
# Content-Type: application/json
# Accept: application/json, text/event-stream
# MCP-Protocol-Version: 2026-07-28
# Mcp-Method: tools/call
# Mcp-Name: =?base64?Y291bnRfb3JkZXJz?=
#
# {"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"count_orders","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}
#
# HTTP/1.1 200 OK
# Content-Type: application/json
#
# {"jsonrpc":"2.0","id":7,"result":{"resultType":"complete",...}}
# ```
#
# **Headers from a tool's own parameters.** A server may ask for more: a tool marks a parameter of
# its `inputSchema` with `x-mcp-header`, and clients then repeat that argument in a header of its
# own, `Mcp-Param-{Name}` (Custom Headers from Tool Parameters):
#
# > MCP servers **MAY** designate specific tool parameters to be mirrored into HTTP headers using
# > an `x-mcp-header` extension property in the parameter's schema within the tool's
# > `inputSchema`.
#
# > While the use of `x-mcp-header` is optional for servers, clients **MUST** support this
# > feature.
#
# The spec's example: a tool `execute_sql` whose `region` says `"x-mcp-header": "Region"` is called
# with `Mcp-Param-Region: us-west1` beside `Mcp-Name: execute_sql`, so a gateway can route by
# region. The value follows the same Value Encoding (`=?base64?...?=`), and a server that processes
# the body holds it to the body as it holds `Mcp-Name` (Server Behavior for Custom Headers):
#
# > Any server that processes the message body **MUST** validate that encoded header values, after
# > decoding if Base64-encoded, match the corresponding values in the request body. Servers
# > **MUST** reject requests with a `400 Bad Request` HTTP status and JSON-RPC error code `-32020`
# > (`HeaderMismatch`) if any validation fails.
#
# The shop's tools mark no parameter, so its server expects no `Mcp-Param` header and checks
# none. The spec asks nothing of a server about one its tools did not designate (intermediaries
# that do not recognize one **MUST** forward it and otherwise ignore it); the course's server
# ignores it too, and serves the request.
#
# ### Your turn: `header_problem`
#
# `header_problem(headers, message)`: `None` when the headers agree with the request, else one
# sentence saying which header is wrong (it becomes the error's message). In this order:
# `MCP-Protocol-Version` present and equal to `_meta`'s version; `Mcp-Method` present and equal
# to `method`; then, only when `NAMED_BY` names a field for the method and the body holds a string
# there, `Mcp-Name` present and, through `decode_value`, equal to it. Strip the spaces around a
# header value (they are not part of it). Ignore headers the shop does not define (an
# `Mcp-Param-...` one included). Then call it in `post_modern`: a problem is 400 with
# `{"code": HEADER_MISMATCH, "message": "Header mismatch: " + problem}` and the request's id,
# exactly as it came (a request is a message with an `"id"` member, whatever its value: `0` too).

# %% id="try-headers"
with lab.serve_http("mcp_http") as url:
    call = lab.modern("tools/call", id=6, params={"name": "count_orders", "arguments": {}})
    modern = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call"}
    lab.http(url, "POST", call, {**modern, "Mcp-Name": "get_order"})
    lab.http(url, "POST", call, {**modern, "Mcp-Name": "=?base64?Y291bnRfb3JkZXJz?="})

# %% [markdown] id="try-headers-expected"
# Expect a 400 whose body is an error -32020 with `"id":6` and a message naming `Mcp-Name`, then a
# 200 with the count: the Base64 name decoded.

# %% id="test_headers" nbgrader={"grade": true, "grade_id": "test_headers", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# Header_problem: MCP-Protocol-Version, Mcp-Method and Mcp-Name missing, or not what the body says,
# refused; Base64 names decoded; over HTTP, 400 with -32020 and the request's id.
# Hidden when graded: other names (some not ASCII), other ids, the cases in another order.
lab.check("test_headers")

# %% [markdown] id="origin"
# ## 3. Origin: a web page is not your client
#
# A server on `127.0.0.1` looks private: nothing outside the machine reaches it. But the user's
# browser is on the machine, and any web page it shows can send HTTP requests. The browser guards
# against that by the origin of the page, and an attack called *DNS rebinding* gets around the
# guard. A page on `evil.example` makes its own name resolve to `127.0.0.1`. To the browser, the
# page then talks to its own origin, and the requests land on your server. One thing gives it
# away: the browser marks every such request with the page's origin, `Origin: http://evil.example`.
# The spec turns that into a MUST (MCP 2026-07-28, Transports > Streamable HTTP > Security &
# Endpoint):
#
# > Servers **MUST** validate the `Origin` header on all incoming connections to prevent DNS
# > rebinding attacks
# >   - If the `Origin` header is present and invalid, servers **MUST** respond with HTTP 403
# >     Forbidden. The HTTP response body **MAY** comprise a JSON-RPC _error response_ that has no
# >     `id`
#
# > When running locally, servers **SHOULD** bind only to localhost (127.0.0.1) rather than all
# > network interfaces (0.0.0.0)
#
# Which origins are valid is the server's call. For a server on this machine: pages served from
# this machine, `http://localhost:6274` (the MCP Inspector's own page), `http://127.0.0.1:8080`,
# `http://[::1]:3000`. A request without `Origin` does not come from a browser (the SDK, the
# Inspector's CLI, curl) and is not refused for it.
#
# ```http
# $ mcp-lab serve --http 127.0.0.1:8000
#
# POST /mcp HTTP/1.1
# Host: 127.0.0.1:8000
# Origin: http://evil.example
# Content-Type: application/json
# Accept: application/json, text/event-stream
# MCP-Protocol-Version: 2026-07-28
# Mcp-Method: server/discover
#
# {"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}
#
# HTTP/1.1 403 Forbidden
# Content-Type: application/json
#
# {"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Forbidden: requests from origin http://evil.example are not accepted (only this machine's)"}}
#
# POST /mcp HTTP/1.1
# Host: 127.0.0.1:8000
# Origin: http://localhost:6274
# Content-Type: application/json
# Accept: application/json, text/event-stream
# MCP-Protocol-Version: 2026-07-28
# Mcp-Method: server/discover
#
# {"jsonrpc":"2.0","id":2,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}
#
# HTTP/1.1 200 OK
# Content-Type: application/json
#
# {"jsonrpc":"2.0","id":2,"result":{"resultType":"complete",...}}
# ```
#
# Compare the host name, not the text: `http://localhost.evil.example` contains `localhost`, and
# is a page on `evil.example`. `urlsplit(origin).hostname` is the name alone (without brackets for
# `[::1]`), and a port that is not a number raises `ValueError` when you read `.port`. An origin
# of `null` (a page opened from a file, a sandboxed frame) is no host at all: refuse it.
#
# The same attack shows in the `Host` header (the rebinding page's requests carry
# `Host: evil.example:8000`), so the reference server also refuses a Host that is not a loopback
# name, with 421. The checks ask only for the Origin.
#
# ### Your turn: `origin_allowed` and `refuse_origin`
#
# `origin_allowed(origin)`: `True` only for an `http` or `https` origin whose host is one of
# `LOOPBACK`, with any port (or none). `refuse_origin(origin)`: if the origin is allowed, `False`;
# else 403 (`self.fail`) and `True`. `admitted()` calls it for every request that has an `Origin`,
# before anything else: a refused request reaches no `Server`, and begins no session.

# %% id="try-origin"
MODERN = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"}
with lab.serve_http("mcp_http") as url:
    print(origin_allowed("http://localhost:6274"), origin_allowed("http://localhost.evil.example"))
    lab.http(url, "POST", lab.modern("server/discover", id=1), {**MODERN, "Origin": "http://evil.example"})

# %% [markdown] id="try-origin-expected"
# Expect `True False`, then a 403 whose body is a JSON-RPC error with `"id":null`, and no
# `Mcp-Session-Id`.

# %% id="test_origin" nbgrader={"grade": true, "grade_id": "test_origin", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# Origin: 403 for a foreign one (POST, GET, DELETE; on initialize and in a session); loopback
# origins and none served.
# Hidden when graded: other origins, other ports.
lab.check("test_origin")

# %% [markdown] id="sse"
# ## 4. SSE: when the client wants a stream
#
# A POST's response may also be a *stream*: Server-Sent Events, `Content-Type: text/event-stream`.
# In 2026-07-28 it lets a server send notifications that relate to the request while it works on
# it (progress, log messages: `notifications/progress`, `notifications/message`), then the
# response at the end. Never a request of its own: a question for the client comes back as an
# `input_required` result (stage 11), and the client asks again. An SSE stream is UTF-8 text, a
# series of events; each event
# is a few `field: value` lines and ends with a **blank line**. An MCP message travels as one
# event of type `message`, its JSON on a `data:` line:
#
# ```text
# event: message
# data: {"jsonrpc":"2.0","id":2,"result":{}}
#
# ```
#
# A client (the browser's `EventSource`, the SDK) acts on an event only when the blank line comes.
# Text after the last blank line is an event not finished yet, and when the stream ends there,
# the client drops it (WHATWG HTML, Server-sent events). JSON with a raw newline inside would be
# cut into lines that are not `data:` fields, so the data is compact JSON on one line, which JSON
# allows: a newline inside a string is written `\n`.
#
# The spec on a POST answered with a stream (MCP 2026-07-28, Transports > Receiving Messages):
#
# > The server **MAY** send JSON-RPC _notifications_ [...] before the final response. These
# > notifications **MUST** relate to the originating client request.
#
# > The server **MUST NOT** send independent JSON-RPC _requests_ on this stream.
#
# > The final JSON-RPC _response_ **SHOULD** terminate the stream.
#
# (Before 2026-07-28 a server could send its own requests on such a stream, and on a GET stream;
# 2026-07-28 puts them in `input_required` results instead. The one long-lived stream it keeps is
# the response to a `subscriptions/listen` request, for change notifications: this stage's front
# leaves it out.)
#
# And when it starts one (same section):
#
# > When initiating an SSE stream, servers **SHOULD** include the `X-Accel-Buffering: no` header in
# > the HTTP response.
#
# so that a proxy such as nginx passes each event on at once instead of holding it in a buffer.
#
# This server has nothing to send before its response, so a stream of one event, ended at once,
# is all it needs. It sends one only to a client that accepts nothing else; a client that lists
# both gets JSON (the spec requires clients to take both). The reference ends its stream by
# closing the connection; yours may give it a `Content-Length` instead, since the whole stream is
# known before it is sent:
#
# ```http
# $ mcp-lab serve --http 127.0.0.1:8000
#
# POST /mcp HTTP/1.1
# Host: 127.0.0.1:8000
# Content-Type: application/json
# Accept: text/event-stream
# MCP-Protocol-Version: 2026-07-28
# Mcp-Method: server/discover
#
# {"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}
#
# HTTP/1.1 200 OK
# Content-Type: text/event-stream
# Cache-Control: no-cache
# X-Accel-Buffering: no
#
# event: message
# data: {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete",...}}
# ```
#
# ### Your turn: `sse_event` and `send_sse`
#
# `sse_event(message)`: the bytes of one event, `event: message`, then `data: ` and the message as
# compact JSON (`encode(message)`), then the blank line. `send_sse(reply, headers)`: a 200 with
# `Content-Type: text/event-stream` whose body is that one event, with `Cache-Control: no-cache`
# (no proxy may keep a stream), `X-Accel-Buffering: no` (the SHOULD above) and `headers`.

# %% id="try-sse"
print(sse_event({"jsonrpc": "2.0", "id": 2, "result": {"text": "two\nlines"}}))
with lab.serve_http("mcp_http") as url:
    lab.http(url, "POST", lab.modern("server/discover", id=1), {**MODERN, "Accept": "text/event-stream"})

# %% [markdown] id="try-sse-expected"
# Expect `b'event: message\ndata: {"jsonrpc":"2.0","id":2,"result":{"text":"two\\nlines"}}\n\n'`:
# the newline inside the text is the two characters `\n` on the data line. Then a 200 with
# `Content-Type: text/event-stream` and the discover result as one event.

# %% id="test_sse" nbgrader={"grade": true, "grade_id": "test_sse", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# Sse_event: one event per message; a client that accepts only SSE gets its response in a
# well-formed stream.
# Hidden when graded: other messages, other requests.
lab.check("test_sse")

# %% [markdown] id="auth"
# ## 5. Who may call: a bearer token, and what OAuth adds
#
# The Origin check stops web pages. It does not stop another program on the machine, or anyone
# on the network once the server listens beyond `127.0.0.1`. The spec's security warning ends:
#
# > Servers **SHOULD** implement proper authentication for all connections
#
# MCP's answer for HTTP is its Authorization chapter (MCP 2026-07-28, Basic > Authorization). It is
# **OPTIONAL** ("Authorization is **OPTIONAL** for MCP implementations"), and it is OAuth 2.1: the
# MCP server is a *resource server* that accepts access tokens, and an *authorization server* (the
# company's login, say) issues them. Whatever issues a token, the request carries it the same way
# (Authorization > Access Token Usage > Token Requirements):
#
# > MCP client **MUST** use the Authorization request header field defined in OAuth 2.1 Section
# > 5.1.1: `Authorization: Bearer <access-token>`
#
# > Note that authorization **MUST** be included in every HTTP request from client to server.
#
# > Invalid or expired tokens **MUST** receive a HTTP 401 response.
#
# And HTTP itself (RFC 9110, 401 Unauthorized): the server **MUST** send a `WWW-Authenticate`
# header with a 401, the *challenge* that says which scheme to use. Here, `Bearer`; RFC 6750 adds
# `error="invalid_token"` when a token came and was wrong.
#
# ```http
# $ mcp-lab serve --http 127.0.0.1:8000 --auth-token s3cret
#
# POST /mcp HTTP/1.1
# Host: 127.0.0.1:8000
# Content-Type: application/json
# Accept: application/json, text/event-stream
# MCP-Protocol-Version: 2026-07-28
# Mcp-Method: server/discover
#
# {"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}
#
# HTTP/1.1 401 Unauthorized
# WWW-Authenticate: Bearer realm="mcp-lab"
#
# {"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Unauthorized: send Authorization: Bearer TOKEN"}}
#
# POST /mcp HTTP/1.1
# Host: 127.0.0.1:8000
# Authorization: Bearer guess
# Content-Type: application/json
# Accept: application/json, text/event-stream
# MCP-Protocol-Version: 2026-07-28
# Mcp-Method: server/discover
#
# {"jsonrpc":"2.0","id":2,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}
#
# HTTP/1.1 401 Unauthorized
# WWW-Authenticate: Bearer realm="mcp-lab", error="invalid_token", ...
#
# {"jsonrpc":"2.0","id":null,"error":{"code":-32600,...}}
#
# POST /mcp HTTP/1.1
# Host: 127.0.0.1:8000
# Authorization: Bearer s3cret
# Content-Type: application/json
# Accept: application/json, text/event-stream
# MCP-Protocol-Version: 2026-07-28
# Mcp-Method: server/discover
#
# {"jsonrpc":"2.0","id":3,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}
#
# HTTP/1.1 200 OK
# Content-Type: application/json
#
# {"jsonrpc":"2.0","id":3,"result":{"resultType":"complete",...}}
# ```
#
# **What OAuth adds.** A server that implements the chapter **MUST** publish *Protected Resource
# Metadata* (RFC 9728): a document that names its authorization server. It says where in one of
# two ways (Authorization Server Discovery): in the 401's challenge
# (`WWW-Authenticate: Bearer resource_metadata="https://.../.well-known/oauth-protected-resource"`),
# or at that well-known URI itself. The client reads it, finds the authorization server and its
# metadata, and then needs a *client ID* there. The spec's three ways to get one (Client
# Registration), and the order in which a client that supports all of them **SHOULD** try them:
#
# 1. client information *pre-registered* with that server, if the client has it;
# 2. a *Client ID Metadata Document*, if the authorization server says it supports them
#    (`client_id_metadata_document_supported`): the client's ID is an HTTPS URL, and the document
#    at that URL describes the client (its name, its `redirect_uris`). The spec calls this the
#    case "When client and server have no prior relationship (most common)";
# 3. *Dynamic Client Registration* (RFC 7591), as a fallback, where the authorization server
#    offers it; the spec marks it deprecated, "retained for backwards compatibility";
# 4. and last, asking the user to enter the client information.
#
# Then the client sends the user to log in and consent, and gets a token made for this server
# alone: the spec says servers **MUST** validate that tokens were issued specifically for them as
# the intended audience (RFC 8707), and "**MUST NOT** accept or transit any other tokens". That
# token names a user, carries *scopes* (too few: the server **SHOULD** answer 403 with
# `error="insufficient_scope"`), expires, and can be revoked, one client at a time.
#
# **What a static token gives, and what it does not.** This stage's token is one shared secret,
# given to the server when it starts and to each client by hand. It gives one thing: whoever does
# not hold it is refused, on every request. It does not say *who* called (every holder is the
# same caller, so the audit of stage 11 can name only the client's own claim in `clientInfo`), it
# has no scopes (a holder may call every tool), it never expires and cannot be taken back from one
# client without changing it for all. It travels in clear text over plain HTTP, so beyond this
# machine it needs HTTPS, as OAuth's tokens do. And a client that follows the spec, given a 401,
# starts OAuth discovery: it must be handed the token instead (the Inspector's `--header`).
#
# Compare the token in constant time: `==` stops at the first byte that differs, so the time a
# refusal takes tells an attacker how much of a guess was right. `hmac.compare_digest(a, b)` takes
# the same time wherever they differ.
#
# ### Your turn: `token_ok` and `refuse_unauthorized`
#
# `token_ok(authorization, token)`: `True` only for `Bearer` (any case: HTTP schemes are
# case-insensitive), a space, and exactly the token; compare with `hmac.compare_digest` on bytes.
# `refuse_unauthorized(token)`: if the request's `Authorization` carries it, `False`; else 401 with
# `WWW-Authenticate: Bearer realm="shop"` (and `, error="invalid_token"` when a header came) and
# `True`. `admitted()` calls it for every request when the server has a token.

# %% id="try-auth"
with lab.serve_http("mcp_http", token="s3cret") as url:
    lab.http(url, "POST", lab.modern("server/discover", id=1), MODERN)
    lab.http(url, "POST", lab.modern("server/discover", id=2), {**MODERN, "Authorization": "Bearer s3cret"})

# %% [markdown] id="try-auth-expected"
# Expect a 401 with `WWW-Authenticate: Bearer realm="shop"`, then a 200 with the discover result
# (and no session id).

# %% id="test_auth" nbgrader={"grade": true, "grade_id": "test_auth", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# The bearer token: 401 with WWW-Authenticate without it, with another, a prefix of it, Basic; served
# with it, and needed on every request.
# Hidden when graded: another token, other wrong ones.
lab.check("test_auth")

# %% [markdown] id="sessions"
# ## 6. Older clients: sessions
#
# A client written for 2025-11-25 or before does not send `_meta`; it sends `initialize` first,
# and expects the transport of its own revision. `is_modern` sends its POSTs here. The SDK in
# legacy mode, and the MCP Inspector's CLI, are such clients. Everything in this part is that
# older revision's: the quotes are from MCP 2025-11-25, Transports > Streamable HTTP.
#
# **The answers.** A request gets its response as JSON (or SSE, part 4); a notification, or a
# response the client sends back, gets 202 with no body, as in part 1; a body that is no message
# gets 400. A GET asked for a stream of the server's own messages:
#
# > The server **MUST** either return `Content-Type: text/event-stream` in response to this HTTP
# > GET, or else return HTTP 405 Method Not Allowed
#
# The shop's server never speaks first, so its GET is 405 in this era too, with
# `Allow: POST, DELETE`: DELETE ends a session.
#
# On stdio one process was one client, so the connection *was* the session. Over HTTP every
# message is a request of its own, maybe on a new TCP connection, maybe from another client. The
# server needs a name for each conversation, and the spec lets it hand one out (Session Management):
#
# > A server using the Streamable HTTP transport **MAY** assign a session ID at initialization
# > time, by including it in an `MCP-Session-Id` header on the HTTP response containing the
# > `InitializeResult`.
#
# > The session ID **MUST** only contain visible ASCII characters (ranging from 0x21 to 0x7E).
#
# The id **SHOULD** also be "globally unique and cryptographically secure": whoever holds it can
# speak in that session, so it must not be guessable. `secrets.token_hex(16)` is 128 random bits,
# written as 32 hex digits. From then on the client sends it back:
#
# > If an `MCP-Session-Id` is returned by the server during initialization, clients using the
# > Streamable HTTP transport **MUST** include it in the `MCP-Session-Id` header on all of their
# > subsequent HTTP requests.
#
# > Servers that require a session ID **SHOULD** respond to requests without an `MCP-Session-Id`
# > header (other than initialization) with HTTP 400 Bad Request.
#
# > The server **MAY** terminate the session at any time, after which it **MUST** respond to
# > requests containing that session ID with HTTP 404 Not Found.
#
# A 404 tells the client to start over with a new initialize. A client that is done ends the
# session itself with `DELETE`. The course's server keeps sessions, so it holds you to all of
# it: 400 without an id, 404 for an id it never issued or has ended, 204 for a DELETE.
#
# ```http
# $ mcp-lab serve --http 127.0.0.1:8000
#
# POST /mcp HTTP/1.1
# Host: 127.0.0.1:8000
# Content-Type: application/json
# Accept: application/json, text/event-stream
#
# {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"lesson","version":"1.0"}}}
#
# HTTP/1.1 200 OK
# Mcp-Session-Id: 7a44cec7aa2a570d258f47c86c708f15
#
# {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25",...}}
#
# POST /mcp HTTP/1.1
# Host: 127.0.0.1:8000
# Content-Type: application/json
# Accept: application/json, text/event-stream
#
# {"jsonrpc":"2.0","id":2,"method":"ping"}
#
# HTTP/1.1 400 Bad Request
# Content-Type: application/json
#
# {"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Bad Request: no Mcp-Session-Id header; ..."}}
#
# DELETE /mcp HTTP/1.1
# Host: 127.0.0.1:8000
# Mcp-Session-Id: 7a44cec7aa2a570d258f47c86c708f15
#
# HTTP/1.1 204 No Content
#
# POST /mcp HTTP/1.1
# Host: 127.0.0.1:8000
# Mcp-Session-Id: 7a44cec7aa2a570d258f47c86c708f15
# Content-Type: application/json
# Accept: application/json, text/event-stream
#
# {"jsonrpc":"2.0","id":3,"method":"ping"}
#
# HTTP/1.1 404 Not Found
# Content-Type: application/json
#
# {"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Not Found: no such session (it ended, or never began); initialize again"}}
# ```
#
# Each session is its own `Server`, so each keeps its own lifecycle: a client that negotiated
# 2025-03-26 gets no `outputSchema` in `tools/list`, while another, on 2025-11-25, does, from the
# same process. The revision also rides on every request (Protocol Version Header):
#
# > If using HTTP, the client **MUST** include the `MCP-Protocol-Version: <protocol-version>` HTTP
# > header on all subsequent requests to the MCP server
#
# > If the server receives a request with an invalid or unsupported `MCP-Protocol-Version`, it
# > **MUST** respond with `400 Bad Request`.
#
# ```http
# $ mcp-lab serve --http 127.0.0.1:8000
#
# POST /mcp HTTP/1.1
# Host: 127.0.0.1:8000
# Content-Type: application/json
# Accept: application/json, text/event-stream
#
# {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"lesson","version":"1.0"}}}
#
# HTTP/1.1 200 OK
# Mcp-Session-Id: 7a44cec7aa2a570d258f47c86c708f15
#
# {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25",...}}
#
# POST /mcp HTTP/1.1
# Host: 127.0.0.1:8000
# Mcp-Session-Id: 7a44cec7aa2a570d258f47c86c708f15
# MCP-Protocol-Version: 1999-01-01
# Content-Type: application/json
# Accept: application/json, text/event-stream
#
# {"jsonrpc":"2.0","id":2,"method":"ping"}
#
# HTTP/1.1 400 Bad Request
# Content-Type: application/json
#
# {"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Bad Request: unsupported MCP-Protocol-Version '1999-01-01'; ..."}}
# ```
#
# A request without the header is served: the spec tells a server with no other clue to assume
# 2025-03-26, and this server has one, the revision its session negotiated. (The reference also
# refuses a supported revision that is not the session's; the checks do not ask that of yours.)
#
# ### Your turn: `answer`, `session_for`, `begin_session`, `end_session`, `version_ok`
#
# - `answer(reply, headers)`: the response to an older client's POST. `None` is a 202 with no
#   body; an error with `"id": null` (the dispatcher could read no message) is 400 with that error;
#   any other reply a 200 as `application/json`, or `self.send_sse(reply, headers)` for a client
#   that accepts only `text/event-stream` (`accepts_only_sse`). Send `headers` with each: it holds
#   the new session's id after an initialize.
# - `session_for(message)`: no `Mcp-Session-Id` header and an initialize (`is_initialize`): a new
#   `Server`, `self.server.shop.server("http")`, and `True` (it is new). No header and anything
#   else: 400. A header: the `Server` in `self.server.sessions` under that id and `False`; an id
#   that is not there: 404. Return `None` once you have answered with `self.fail`.
# - `begin_session(server)`: a new id from `secrets.token_hex(16)`, the server kept under it;
#   return the id. `do_POST` calls it only when the initialize succeeded, and puts the id in the
#   response's headers.
# - `end_session()`: DELETE. A 2026-07-28 one: 405 (part 1). No id: 400; an id not in the table:
#   404; else remove it, 204.
# - `version_ok(version)`: `True` for a revision in `SUPPORTED`, else 400 and `False`.
#
# Several threads serve requests at once: take `self.server.lock` around every use of
# `self.server.sessions`.

# %% id="try-sessions"
with lab.serve_http("mcp_http") as url:
    first = lab.http(url, "POST", lab.initialize(id=1))
    session = {"Mcp-Session-Id": first.session, "MCP-Protocol-Version": "2025-11-25"}
    lab.http(url, "POST", lab.notification("notifications/initialized"), session)
    lab.http(url, "POST", lab.request("ping", id=2), session)
    lab.http(url, "POST", lab.request("ping", id=3))
    lab.http(url, "GET", headers={"Accept": "text/event-stream"})
    lab.http(url, "DELETE", headers=session)

# %% [markdown] id="try-sessions-expected"
# Expect, in order: 200 with the
# initialize result and an `Mcp-Session-Id`; 202 with `Content-Length: 0`; 200 with
# `{"jsonrpc":"2.0","id":2,"result":{}}`; 400 for the ping without a session; 405 with
# `Allow: POST, DELETE`; 204. Last, your server's log lines (stderr).

# %% id="test_sessions" nbgrader={"grade": true, "grade_id": "test_sessions", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# Older clients: answers (200, 202, 400, GET 405); Mcp-Session-Id issued at initialize, then
# required (400, 404, DELETE), one Server each; MCP-Protocol-Version (400 for a revision not
# supported).
# Hidden when graded: other ids, tool calls, session ids, revisions and versions.
lab.check("test_sessions")

# %% [markdown] id="whole"
# ## 7. The whole server, with real clients
#
# Your transport is complete. Start it from a terminal in this folder, with a token of your own:
#
# ```sh
# ../../.venv/bin/python mcp_http.py 127.0.0.1:8000 s3cret
# ```
#
# and, from another terminal, point the checker at it. It runs every check that applies over
# HTTP, in both eras, plus the transport's own (2026-07-28's headers, statuses and no session;
# the older clients' sessions and revision header; Origin, 202, content types, SSE, and, with the
# header, the token):
#
# ```sh
# .venv/bin/mcp-lab check --url http://127.0.0.1:8000/mcp --header 'Authorization: Bearer s3cret'
# ```
#
# The official Python SDK's `Client` reaches it through its Streamable HTTP transport, with the
# token on an `httpx2` client. In its default mode, `"auto"`, it sends `server/discover` as a
# 2026-07-28 request and, served, stays in that era; `mode="legacy"` sends `initialize` and keeps
# the session your part 6 gives it:
#
# ```python
# import asyncio
#
# import httpx2
# from mcp import Client
# from mcp.client.streamable_http import streamable_http_client
#
#
# async def main():
#     async with httpx2.AsyncClient(headers={"Authorization": "Bearer s3cret"}) as http:
#         transport = streamable_http_client("http://127.0.0.1:8000/mcp", http_client=http)
#         async with Client(transport, mode="auto") as client:
#             print(await client.call_tool("count_orders", {"status": "paid"}))
#
#
# asyncio.run(main())
# ```
#
# (Save it as a file and run it with `../../.venv/bin/python`, while your server runs.)
#
# And the MCP Inspector's CLI, over HTTP (it sends `initialize`: part 6 serves it):
#
# ```sh
# npx -y @modelcontextprotocol/inspector@2.12.0 --cli --transport http --server-url http://127.0.0.1:8000/mcp \
#     --header 'Authorization: Bearer s3cret' --method tools/list
# ```
#
# The three cells below do the same, each on a fresh copy of your server with a token.

# %% id="test_mcp_lab_check" nbgrader={"grade": true, "grade_id": "test_mcp_lab_check", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 3}
# Mcp-lab check --url on your server, with its token: no check fails.
# Hidden when graded: another token, and older clients' sessions in three revisions with other calls.
lab.check("test_mcp_lab_check")

# %% id="test_sdk_client" nbgrader={"grade": true, "grade_id": "test_sdk_client", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# The official MCP SDK's HTTP client, with the token: in mode "auto" (2026-07-28, no fallback) it
# lists your tools and calls two; in mode "legacy" (a session) it lists them and calls one.
# Hidden when graded: another token, other calls.
lab.check("test_sdk_client")

# %% id="test_inspector" nbgrader={"grade": true, "grade_id": "test_inspector", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# The MCP Inspector's CLI over HTTP, with the token, lists your tools and calls one.
# Hidden when graded: another token, another call.
lab.check("test_inspector")

# %% [markdown] id="recall"
# ## Recall
#
# 1. On stdio a notification got no reply at all. What does it get over HTTP, and why can it not
#    get nothing? Which notification does a 2026-07-28 client send over HTTP to cancel a request?
# 2. A 2026-07-28 server keeps no session. What lets it serve any request alone, and what does a
#    load balancer gain?
# 3. A gateway routes on `Mcp-Name`, your server acts on the body. What could a client do if your
#    server did not compare them?
# 4. Why must an older client's session id be unguessable? What could someone do with yours?
# 5. A page on `evil.example` reaches your server on `127.0.0.1`. How, and which header gives it
#    away? Why is `"localhost" in origin` the wrong test?
# 6. Why must an SSE event end with a blank line, and why is its JSON on one line?
# 7. Your server has a static token. Name two things an OAuth access token would tell it that the
#    static one cannot.

# %% [markdown] id="end"
# ## What you have now
#
# The shop's server on both of MCP's transports: a pipe for the host that starts it, and an HTTP
# endpoint for any client that holds the token. It serves each 2026-07-28 request alone, holds its
# headers to its body, keeps older clients' sessions apart, refuses web pages from elsewhere, and
# streams when asked. The messages never changed: the dispatcher you built in
# stages 01 to 05 answered all of them.

# %% [markdown] id="read-next"
# ## Read next in the spec
#
# The pages this stage relies on, in the spec repository (`docs/specification/...`):
#
# - `2026-07-28/basic/transports/streamable-http.mdx`: Security & Endpoint (Origin, localhost,
#   authentication), Sending Messages (202, the note on notifications), Receiving Messages (SSE,
#   `X-Accel-Buffering`), Cancellation, Request Metadata (Protocol Version Header, Standard Request
#   Headers, Custom Headers from Tool Parameters and `x-mcp-header`, Value Encoding, Server
#   Validation, -32020), Backward Compatibility > Earlier Streamable HTTP Revisions.
# - `2026-07-28/basic/patterns/cancellation.mdx`: Transport-Specific Cancellation.
# - `2026-07-28/basic/patterns/mrtr.mdx` and `subscriptions.mdx`: what replaced the server's own
#   requests and the GET stream.
# - `2026-07-28/basic/index.mdx`: Messages (ids in responses), Error Codes, General fields >
#   `_meta` (the 400s of -32602 and -32021).
# - `2026-07-28/basic/versioning.mdx`: Backward Compatibility (one endpoint, both eras).
# - `2026-07-28/basic/authorization/index.mdx` (Protocol Requirements, Overview, Access Token
#   Usage, Error Handling), `authorization-server-discovery.mdx` (Protected Resource Metadata),
#   `client-registration.mdx` (the order of preference; Client ID Metadata Documents),
#   `security-considerations.mdx`.
# - `2026-07-28/changelog.mdx`: Major changes 1, 4 and 9; Minor change 4.
# - `2025-11-25/basic/transports.mdx`: Streamable HTTP (Sending Messages, Listening for Messages
#   from the Server, Session Management, Protocol Version Header), for older clients.
