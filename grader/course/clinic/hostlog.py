"""A host's log of one session with a case's server, in the format Claude Desktop writes (mcp-server-NAME.log).

Some cases come with no server to probe: only the log a user attached to their bug report. The
log is made by running the case's server (in this process, on in-memory pipes) through the
session a desktop host runs at start-up and writing each message the way the host logs it. A host
of MCP 2026-07-28 probes with ``server/discover``, then lists the tools and calls a few, every
request carrying its ``_meta`` (protocol version, client capabilities, client info); where a
defect does not show in that session, the log is an older host's, of 2025-11-25 (``initialize``,
``initialized``, the three list methods, a ping, a few tool calls). Each message is logged as
``Message from client: ...``, ``Message from server: ...``, and for a stdout line that is not
JSON, the JSON parser's complaint (``Unexpected token 'S', "Server rea"... is not valid JSON``).
The line where the defect shows is the first that differs from the same session
with the healthy server.

    >>> from grader.course.clinic.defects import FAMILIES
    >>> import random
    >>> log = render(FAMILIES["ping_body"](random.Random(1)))
    >>> "Message from server" in log.lines[log.line - 1] and '"pong"' in log.lines[log.line - 1] or log.line
    True
"""

from __future__ import annotations

import io
import json
import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from .defects import CaseServer, Defect

NAME = "shop"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "claude-ai", "version": "1.4.2"},
}
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("count_orders", {"status": "paid"}),
    ("get_order", {"order_id": 7}),
    ("search_products", {"query": "mug", "limit": 3}),
    ("list_orders", {"status": "shipped", "limit": 2}),
]


def _modern(method: str, id: int, **params: Any) -> dict[str, Any]:
    return {"method": method, "params": {**params, "_meta": META}, "jsonrpc": "2.0", "id": id}


# A host of 2026-07-28: it probes with server/discover, then every request carries _meta.
MODERN_SESSION: list[dict[str, Any]] = [
    _modern("server/discover", 0),
    _modern("tools/list", 1),
    *[_modern("tools/call", n, name=name, arguments=arguments) for n, (name, arguments) in enumerate(CALLS, 2)],
    {"method": "notifications/cancelled", "params": {"requestId": 5, "reason": "user"}, "jsonrpc": "2.0"},
]


def _legacy(method: str, id: int, **params: Any) -> dict[str, Any]:
    return {"method": method, "params": params, "jsonrpc": "2.0", "id": id}


# An older host, of 2025-11-25: the initialize handshake, then plain requests on the initialized connection.
LEGACY_SESSION: list[dict[str, Any]] = [
    _legacy(
        "initialize",
        0,
        protocolVersion="2025-11-25",
        capabilities={},
        clientInfo={"name": "claude-ai", "version": "0.9.8"},
    ),
    {"method": "notifications/initialized", "jsonrpc": "2.0"},
    _legacy("tools/list", 1),
    _legacy("resources/list", 2),
    _legacy("prompts/list", 3),
    _legacy("tools/call", 4, name="count_orders", arguments={"status": "paid"}),
    _legacy("tools/call", 5, name="get_order", arguments={"order_id": 7}),
    {"method": "ping", "jsonrpc": "2.0", "id": 6},
    *[_legacy("tools/call", n, name=name, arguments=arguments) for n, (name, arguments) in enumerate(CALLS[2:], 7)],
    {"method": "notifications/cancelled", "params": {"requestId": 8, "reason": "user"}, "jsonrpc": "2.0"},
]
SESSIONS = {"modern": MODERN_SESSION, "legacy": LEGACY_SESSION}
START = datetime(2026, 11, 26, 9, 14, 5, 120000, tzinfo=UTC)


@dataclass
class HostLog:
    lines: list[str]
    line: int  # 1-based number of the line where the defect first shows (0: it does not show)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


class _Clock:
    def __init__(self, rng: random.Random) -> None:
        self.now = START
        self.rng = rng

    def stamp(self, most: int = 40) -> str:
        self.now += timedelta(milliseconds=self.rng.randint(1, most))
        return self.now.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _parser_complaint(data: bytes) -> str:
    """What a Node host's JSON.parse says of a line that is not JSON."""
    text = data.decode("utf-8", "replace")
    if not text.strip():
        return "Unexpected end of JSON input"
    shown = f'"{text[:10]}"...' if len(text) > 10 else f'"{text}"'
    return f"Unexpected token '{text.lstrip()[:1]}', {shown} is not valid JSON"


class QuietServer(CaseServer):
    """A case's server run in this process for its log: its own log lines are not the host's."""

    log = staticmethod(lambda message: None)


def _session_lines(defect: Defect | None, era: str) -> list[tuple[str, str, str]]:
    """(level, text, kind) for each log line; kind is 'client', 'server' or 'host'."""
    from reference.database import ensure_default, open_readonly
    from reference.shop import shop_toolbox

    plain = Defect("healthy", "", "")
    server = QuietServer(defect or plain, shop_toolbox(open_readonly(ensure_default())))
    out = io.BytesIO()
    entries: list[tuple[str, str, str]] = [("info", "Initializing server...", "host")]

    def flush_out() -> None:
        data = out.getvalue()
        out.seek(0)
        out.truncate()
        if not data:
            return
        for raw in data.split(b"\n")[:-1] if data.endswith(b"\n") else data.split(b"\n"):
            try:
                message = json.loads(raw)
            except (ValueError, UnicodeDecodeError):
                entries.append(("error", _parser_complaint(raw), "server"))
                continue
            entries.append(("info", f"Message from server: {json.dumps(message, separators=(',', ':'))}", "server"))

    server.defect.start(server, out)
    entries.append(("info", "Server started and connected successfully", "host"))
    flush_out()
    for message in SESSIONS[era]:
        line = json.dumps(message, separators=(",", ":"))
        entries.append(("info", f"Message from client: {line}", "client"))
        reply = server.handle_line(line.encode())
        if reply is not None:
            server.write_frame(out, reply)
        flush_out()
    entries.append(("info", "Client transport closed", "host"))
    return entries


def render(defect: Defect, seed: int = 0) -> HostLog:
    """The host's log of the start-up session with ``defect``'s server, and the line the defect shows on."""
    key = (defect.family, json.dumps(defect.params, sort_keys=True), seed)
    if key not in _RENDERED:
        _RENDERED[key] = _render(defect, seed)
    return _RENDERED[key]


_RENDERED: dict[tuple[str, str, int], HostLog] = {}  # this process's logs: the same defect, the same log


def _render(defect: Defect, seed: int) -> HostLog:
    """The log of a 2026-07-28 host if the defect shows there, else of a 2025-11-25 host (an older
    host, whose handshake and ping the modern era no longer has)."""
    found = HostLog([], 0)
    for era in ("modern", "legacy"):
        found = _render_era(defect, seed, era)
        if found.line:
            return found
    return found


def _render_era(defect: Defect, seed: int, era: str) -> HostLog:
    clock = _Clock(random.Random(seed))
    broken = _session_lines(defect, era)
    healthy = _session_lines(None, era)
    lines = [f"{clock.stamp()} [{NAME}] [{level}] {text}" for level, text, _ in broken]
    first = 0
    padded = healthy + [("", "", "")] * max(0, len(broken) - len(healthy))
    for number, (mine, theirs) in enumerate(zip(broken, padded[: len(broken)], strict=True), 1):
        if mine[:2] != theirs[:2]:
            first = number
            break
    return HostLog(lines, first)
