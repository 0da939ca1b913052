"""What every modern request carries, and how the modern session's findings are marked.

A request of MCP 2026-07-28 carries its version, the client's capabilities and who the client is in
``params._meta`` (basic/index, General fields > _meta); the modern session's findings carry the
revision, so that a check judged in both eras says which verdict came from which.

    >>> sorted(meta({"elicitation": {}}))  # doctest: +NORMALIZE_WHITESPACE
    ['io.modelcontextprotocol/clientCapabilities', 'io.modelcontextprotocol/clientInfo',
     'io.modelcontextprotocol/protocolVersion']
    >>> from grader.checker.verdicts import Findings
    >>> found = Findings()
    >>> Revised(found).passed("ping", "fine")
    >>> found.results()["ping"].summary
    'fine'
"""

from __future__ import annotations

import json
from typing import Any

from reference.stateless import CLIENT_CAPABILITIES, CLIENT_INFO, MODERN, PROTOCOL_VERSION

from .context import CLIENT_INFO as CHECKER

ASKING = {"elicitation": {}}  # what the tool calls declare: a server may ask the user (and must ask so)
UNKNOWN_URI = "mcp-lab-check://no-such-resource/1"
IDS: list[Any] = [0, 42, "abc", "7"]  # every JSON type an id may have, and the confusable ones
NOTIFICATIONS = [
    ("notifications/mcp-lab/unknown", {"note": "a notification no server knows"}),
    ("notifications/cancelled", {"requestId": 999999, "reason": "mcp-lab check: nothing to cancel"}),
]
# An unknown method, with the envelope (without it, a modern server answers -32602 first).
META_UNKNOWN = json.dumps(
    {"jsonrpc": "2.0", "id": 11, "method": "mcp-lab/no-such-method", "params": {"_meta": {
        PROTOCOL_VERSION: MODERN, CLIENT_CAPABILITIES: {}}}},
).encode()  # fmt: skip


def meta(capabilities: dict[str, Any] | None = None, version: Any = MODERN) -> dict[str, Any]:
    """The per-request ``_meta`` envelope."""
    return {PROTOCOL_VERSION: version, CLIENT_CAPABILITIES: capabilities or {}, CLIENT_INFO: CHECKER}


class Revised:
    """The findings, every one marked with the modern revision (by_revision then tells the eras apart)."""

    def __init__(self, findings: Any) -> None:
        self.f = findings

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.f, name)
        if name in ("passed", "failed", "warned", "skipped"):
            return lambda *args, **how: method(*args, **{"revision": MODERN, **how})
        return method
