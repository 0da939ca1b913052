"""A correct Streamable HTTP MCP shop server: the base of the gallery's HTTP exhibits.

The gallery's healthy stdio shop (``grader/gallery/base.py``) answers the messages; this serves it
at one endpoint, ``/mcp``, as MCP 2025-11-25 says: a POST per message; a request answered as
``application/json`` (or as an SSE stream when the client accepts only that), a notification or a
response with 202 and no body; ``Mcp-Session-Id`` issued with initialize and then required (400
without it, 404 for an id unknown or ended by DELETE); ``MCP-Protocol-Version`` checked (400);
a foreign ``Origin`` refused (403). Every exhibit subclasses :class:`HttpShop` and overrides one
method, so the healthy version of each piece lives here, once.

    $ python grader/gallery/over_http/base.py             # a free port: stderr says which
    $ python grader/gallery/over_http/base.py --port 8000 # then: mcp-lab check --url http://127.0.0.1:8000/mcp

Standard library only, plus the gallery's shop and the reference's small pieces (SSE, the guards).
"""

from __future__ import annotations

import argparse
import json
import secrets
import sqlite3
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from grader.gallery.base import ShopServer
from reference import sse
from reference.database import ensure_default, open_readonly
from reference.http_guard import accepts, origin_allowed, version_problem
from reference.lifecycle import LATEST
from reference.shop import shop_toolbox
from reference.streamable_http import serve_until_signalled

ENDPOINT = "/mcp"
SESSION = "Mcp-Session-Id"
JSON = "application/json"


class Session(ShopServer):
    """The gallery's stdio shop, one per session, its replies collected instead of written to stdout."""

    def __init__(self, db: sqlite3.Connection) -> None:  # the shop's connection is the server's, shared
        self.version, self.initialized, self.db = LATEST, False, db
        self.toolbox = shop_toolbox(db)
        self.replies: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any]) -> None:
        self.replies.append(message)

    def answer(self, body: bytes) -> list[dict[str, Any]]:
        self.replies = []
        self.handle_line(body)
        return self.replies


class Shop(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int, handler: type[HttpShop]) -> None:
        super().__init__(("127.0.0.1", port), handler)
        self.db = open_readonly(ensure_default(), shared=True)
        self.sessions: dict[str, Session] = {}
        self.lock = threading.Lock()  # one message at a time: the sessions share one connection

    def new_session(self) -> Session:
        return Session(self.db)


class HttpShop(BaseHTTPRequestHandler):
    server: Shop
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: the checker reads nothing here

    def reply(self, status: int, body: bytes = b"", content_type: str | None = None, **headers: str) -> None:
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        if status != 204:  # a 204 has no content, and so no Content-Length
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if status != 204:
            self.wfile.write(body)

    def refuse(self, status: int, message: str) -> None:
        error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}
        self.reply(status, json.dumps(error).encode(), JSON)

    # -- the pieces an exhibit overrides ----------------------------------------------------------
    def origin_ok(self) -> bool:
        # DNS rebinding: a browser marks a web page's requests with its Origin; only this machine's pass.
        return origin_allowed(self.headers.get("Origin"))

    def session_for(self, message: Any) -> Session | None:
        """The request's session, a new one for initialize; None after refusing (400, 404)."""
        session_id = self.headers.get(SESSION)
        if session_id is None:
            if isinstance(message, dict) and message.get("method") == "initialize":
                return self.server.new_session()
            self.refuse(400, f"Bad Request: send the {SESSION} header that initialize gave you")
            return None
        if session_id not in self.server.sessions:
            self.refuse(404, "Not Found: no such session; initialize again")
            return None
        return self.server.sessions[session_id]

    def accepted(self) -> None:
        """A notification or a response: 202, no body."""
        self.reply(202)

    def stream(self, message: dict[str, Any], **headers: str) -> None:
        """A reply as an SSE stream of one event, for a client that accepts only that."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.send_header("Connection", "close")
        self.close_connection = True
        self.end_headers()
        self.wfile.write(sse.event(message))

    # -- the endpoint -------------------------------------------------------------------------------
    def do_GET(self) -> None:
        self.reply(405, Allow="POST, DELETE")

    def do_DELETE(self) -> None:
        if not self.origin_ok():
            return self.refuse(403, "Forbidden: foreign Origin")
        session_id = self.headers.get(SESSION)
        with self.server.lock:
            ended = self.server.sessions.pop(session_id or "", None)
        if ended is None:
            return self.refuse(404, "Not Found: no such session")
        self.reply(204)

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if not self.origin_ok():
            return self.refuse(403, "Forbidden: foreign Origin")
        if self.path != ENDPOINT:
            return self.refuse(404, f"Not Found: the endpoint is {ENDPOINT}")
        try:
            message = json.loads(body)
        except ValueError:
            message = None  # the session's shop answers it: -32700
        with self.server.lock:
            session = self.session_for(message)
            if session is None:
                return
            problem = version_problem(self.headers.get("MCP-Protocol-Version"), session.version)
            if problem is not None and self.headers.get(SESSION) is not None:
                return self.refuse(400, f"Bad Request: {problem}")
            replies = session.answer(body)
            headers = {}
            if self.headers.get(SESSION) is None and replies and "result" in replies[0]:
                session_id = secrets.token_hex(16)
                self.server.sessions[session_id] = session
                headers[SESSION.replace("-", "_")] = session_id
        if not replies:
            return self.accepted()
        reply = replies[0]
        if reply.get("id") is None:  # the body was no message we could answer: the request was bad
            return self.reply(400, json.dumps(reply).encode(), JSON)
        json_ok, _ = accepts(self.headers.get("Accept"))
        if json_ok:
            return self.reply(200, json.dumps(reply).encode(), JSON, **headers)
        self.stream(reply, **headers)


def main(handler: type[HttpShop] = HttpShop) -> int:
    parser = argparse.ArgumentParser(description="A gallery shop server over Streamable HTTP.")
    parser.add_argument("--port", type=int, default=0, help="the port on 127.0.0.1 (default: any free one)")
    args = parser.parse_args()
    try:
        httpd = Shop(args.port, handler)
    except OSError as exc:
        print(f"cannot listen on 127.0.0.1:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    return serve_until_stopped(httpd, f"http://127.0.0.1:{httpd.server_address[1]}{ENDPOINT}")


def serve_until_stopped(httpd: Any, url: str) -> int:
    """Serve ``httpd`` until Ctrl-C or SIGTERM (how the tests end an exhibit), then close it; 0."""
    print(f"Streamable HTTP on {url}; Ctrl-C ends it", file=sys.stderr)
    sys.stderr.flush()
    serve_until_signalled(httpd)
    httpd.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
