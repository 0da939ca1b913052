"""The reference server over Streamable HTTP as a real child process, spoken to with http.client.

``HttpServer`` starts ``mcp-lab serve --http 127.0.0.1:0 ...`` (port 0: the server picks a free
port and says which on stderr), waits for that line, and sends real HTTP requests over real
sockets. Every wait is bounded: the start-up by ``START_TIMEOUT``, each response by the socket's
``READ_TIMEOUT``, the exit by ``EXIT_TIMEOUT``. Bounds only catch a hang; no test judges speed.
"""

from __future__ import annotations

import http.client
import json
import re
import signal
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import pytest
from conftest import MCP_LAB, READ_TIMEOUT, ROOT

from reference.child import ChildProcess

START_TIMEOUT = 30.0
EXIT_TIMEOUT = 15.0
URL_LINE = re.compile(r"Streamable HTTP on (http://\S+/mcp)")
JSON_AND_SSE = "application/json, text/event-stream"


def init_params(version: str = "2025-11-25", client: str = "http-test", client_version: str = "1.0") -> dict[str, Any]:
    return {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": client, "version": client_version}}


def request(method: str, params: Any = None, id: Any = 1) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return message


@dataclass
class Response:
    status: int
    headers: dict[str, str]  # names lowercased
    body: bytes
    raw_headers: list[tuple[str, str]] = field(default_factory=list)

    def json(self) -> Any:
        assert self.headers.get("content-type", "").startswith("application/json"), self
        return json.loads(self.body)

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())


class HttpServer:
    """``mcp-lab serve --http 127.0.0.1:0 ARGS`` as a child; ``url``, ``port`` once it listens."""

    def __init__(self, args: Sequence[str] = (), env: Mapping[str, str] | None = None, address: str = "127.0.0.1:0"):
        self.argv = [MCP_LAB, "serve", "--http", address, *args]
        self.child = ChildProcess(self.argv, env=env, cwd=str(ROOT))
        deadline = time.monotonic() + START_TIMEOUT
        while (found := URL_LINE.search(self.stderr())) is None:
            if self.child.process.poll() is not None:
                pytest.fail(f"the HTTP server exited ({self.child.process.returncode}): {self.stderr()}")
            if time.monotonic() > deadline:
                self.child.kill()
                pytest.fail(f"the HTTP server printed no URL in {START_TIMEOUT:g} s: {self.stderr()}")
            time.sleep(0.02)
        self.url = found.group(1)
        parts = urlsplit(self.url)
        assert parts.hostname is not None and parts.port is not None
        self.host, self.port = parts.hostname, parts.port
        self.token: str | None = None  # sent as Authorization: Bearer TOKEN when set

    def stderr(self) -> str:
        return self.child.stderr_tail(16000)

    def connection(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection(self.host, self.port, timeout=READ_TIMEOUT)

    def send(
        self,
        method: str,
        body: bytes | str | None = None,
        headers: Mapping[str, str] | None = None,
        path: str = "/mcp",
        conn: http.client.HTTPConnection | None = None,
    ) -> Response:
        """One HTTP request (on ``conn`` when given: keep-alive), its whole response read."""
        sent = dict(headers or {})
        if self.token is not None:
            sent.setdefault("Authorization", f"Bearer {self.token}")
        own = conn is None
        conn = conn or self.connection()
        try:
            conn.request(method, path, body=body, headers=sent)
            reply = conn.getresponse()
            data = reply.read()
            raw = list(reply.getheaders())
        finally:
            if own:
                conn.close()
        return Response(reply.status, {k.lower(): v for k, v in raw}, data, raw)

    def post(
        self,
        message: Any,
        session: str | None = None,
        headers: Mapping[str, str] | None = None,
        conn: http.client.HTTPConnection | None = None,
    ) -> Response:
        """POST one message as the spec's client does (Content-Type, Accept, the session's id)."""
        sent = {"Content-Type": "application/json", "Accept": JSON_AND_SSE}
        if session is not None:
            sent["Mcp-Session-Id"] = session
        sent.update(headers or {})
        body = message if isinstance(message, bytes | str) else json.dumps(message)
        return self.send("POST", body, sent, conn=conn)

    def initialize(self, version: str = "2025-11-25", client: str = "http-test") -> tuple[str, dict[str, Any]]:
        """The handshake: initialize (its session id), then notifications/initialized (202)."""
        reply = self.post(request("initialize", init_params(version, client), id=0))
        assert reply.status == 200, (reply, self.stderr())
        session = reply.header("Mcp-Session-Id")
        assert session, reply
        done = self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
        assert done.status == 202, done
        return session, reply.json()["result"]

    def call(self, session: str, method: str, params: Any = None, id: Any = 1) -> dict[str, Any]:
        reply = self.post(request(method, params, id), session)
        assert reply.status == 200, (reply, self.stderr())
        return reply.json()

    def stop(self, sig: int = signal.SIGINT) -> int:
        """Ctrl-C (or another signal) and the exit status."""
        if self.child.process.poll() is None:
            self.child.process.send_signal(sig)
        code = self.child.wait(EXIT_TIMEOUT)
        if code is None:
            self.child.kill()
            pytest.fail(f"the HTTP server did not end on signal {sig}: {self.stderr()}")
        self.child.close(grace=0)
        return code
