"""A host's log of one session with a case's server, in the format Claude Desktop writes (mcp-server-NAME.log).

Some cases come with no server to probe: only the log a user attached to their bug report. The
log is made by running the case's server (in this process, on in-memory pipes) through the
session a desktop host runs at start-up (initialize with the newest revision it knows,
``initialized``, the three list methods, a ping, a few tool calls) and writing each message the way
the host logs it: ``Message from client: ...``, ``Message from server: ...``, and for a stdout line
that is not JSON, the JSON parser's complaint (``Unexpected token 'S', "Server rea"... is not
valid JSON``). The line where the defect shows is the first that differs from the same session
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
SESSION: list[dict[str, Any]] = [
    {
        "method": "initialize",
        "params": {
            "protocolVersion": "2026-07-28",
            "capabilities": {},
            "clientInfo": {"name": "claude-ai", "version": "0.1.0"},
        },
        "jsonrpc": "2.0",
        "id": 0,
    },
    {"method": "notifications/initialized", "jsonrpc": "2.0"},
    {"method": "tools/list", "params": {}, "jsonrpc": "2.0", "id": 1},
    {"method": "resources/list", "params": {}, "jsonrpc": "2.0", "id": 2},
    {"method": "prompts/list", "params": {}, "jsonrpc": "2.0", "id": 3},
    {
        "method": "tools/call",
        "params": {"name": "count_orders", "arguments": {"status": "paid"}},
        "jsonrpc": "2.0",
        "id": 4,
    },
    {"method": "tools/call", "params": {"name": "get_order", "arguments": {"order_id": 7}}, "jsonrpc": "2.0", "id": 5},
    {"method": "ping", "jsonrpc": "2.0", "id": 6},
    {
        "method": "tools/call",
        "params": {"name": "search_products", "arguments": {"query": "mug", "limit": 3}},
        "jsonrpc": "2.0",
        "id": 7,
    },
    {
        "method": "tools/call",
        "params": {"name": "list_orders", "arguments": {"status": "shipped", "limit": 2}},
        "jsonrpc": "2.0",
        "id": 8,
    },
    {"method": "notifications/cancelled", "params": {"requestId": 8, "reason": "user"}, "jsonrpc": "2.0"},
]
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


def _session_lines(defect: Defect | None) -> list[tuple[str, str, str]]:
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
    for message in SESSION:
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
    clock = _Clock(random.Random(seed))
    broken = _session_lines(defect)
    healthy = _session_lines(None)
    lines = [f"{clock.stamp()} [{NAME}] [{level}] {text}" for level, text, _ in broken]
    first = 0
    padded = healthy + [("", "", "")] * max(0, len(broken) - len(healthy))
    for number, (mine, theirs) in enumerate(zip(broken, padded[: len(broken)], strict=True), 1):
        if mine[:2] != theirs[:2]:
            first = number
            break
    return HostLog(lines, first)
