"""The initialize lifecycle: version negotiation and what the negotiated revision changes.

The client proposes a revision; if the server supports it, it MUST answer with the same one,
otherwise with one it does support (its latest). Everything revision-dependent asks the session.

    >>> negotiate("2025-06-18")
    '2025-06-18'
    >>> negotiate("1999-01-01")
    '2025-11-25'
    >>> Session(version="2025-03-26").batches_allowed
    True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import INVALID_PARAMS, RpcError

LATEST = "2025-11-25"
SUPPORTED = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")


def negotiate(requested: Any) -> str:
    if not isinstance(requested, str):
        raise RpcError(INVALID_PARAMS, '"protocolVersion" must be a string such as "2025-11-25"')
    return requested if requested in SUPPORTED else LATEST


@dataclass
class Session:
    """What one connection has agreed on. Before initialize, the latest revision applies."""

    version: str = LATEST
    initialize_seen: bool = False
    initialized: bool = False  # the client sent notifications/initialized
    client_name: str = ""

    @property
    def batches_allowed(self) -> bool:
        """JSON arrays of messages: a MUST in 2025-03-26 only (removed again in 2025-06-18)."""
        return self.version == "2025-03-26"

    @property
    def bad_arguments_are_tool_errors(self) -> bool:
        """From 2025-11-25 (SEP-1303) bad tool arguments are an ``isError`` result, not -32602."""
        return self.version >= "2025-11-25"

    def initialize(
        self, params: Any, server_info: dict[str, Any], capabilities: dict[str, Any], instructions: str
    ) -> dict[str, Any]:
        """Handle ``initialize`` params and build its result."""
        if not isinstance(params, dict):
            raise RpcError(INVALID_PARAMS, "initialize params must be an object")
        self.version = negotiate(params.get("protocolVersion"))
        self.initialize_seen = True
        client = params.get("clientInfo")
        if isinstance(client, dict) and isinstance(client.get("name"), str):
            self.client_name = client["name"]
        return {
            "protocolVersion": self.version,
            "capabilities": capabilities,
            "serverInfo": server_info,
            "instructions": instructions,
        }
