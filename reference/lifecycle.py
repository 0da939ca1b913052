"""The initialize lifecycle: version negotiation and what the negotiated revision changes.

The client proposes a revision; if the server supports it, it MUST answer with the same one,
otherwise with one it does support (its latest). Everything revision-dependent asks the session.
Both sides MUST then respect the negotiated revision for the rest of the connection, so once an
initialize has been answered, another one is refused (-32600) and the session stays as it was: a
client that wants another revision starts a new connection.

    >>> negotiate("2025-06-18")
    '2025-06-18'
    >>> negotiate("1999-01-01")
    '2025-11-25'
    >>> Session(version="2025-03-26").batches_allowed
    True
    >>> Session(version="2025-03-26").structured_output, Session(version="2025-06-18").structured_output
    (False, True)
    >>> session = Session()
    >>> session.initialize({"protocolVersion": "2025-06-18"}, {}, {}, "")["protocolVersion"]
    '2025-06-18'
    >>> session.initialize({"protocolVersion": "2025-03-26"}, {}, {}, "")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    reference.errors.RpcError: Invalid Request: initialize was already answered (revision 2025-06-18 ...
    >>> session.version
    '2025-06-18'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import INVALID_PARAMS, INVALID_REQUEST, RpcError

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
    client_version: str = ""  # clientInfo from initialize: who is on the other end, for the audit

    @property
    def batches_allowed(self) -> bool:
        """JSON arrays of messages: a MUST in 2025-03-26 only (removed again in 2025-06-18)."""
        return self.version == "2025-03-26"

    @property
    def structured_output(self) -> bool:
        """From 2025-06-18 tools may declare an outputSchema and results carry structuredContent."""
        return self.version >= "2025-06-18"

    @property
    def bad_arguments_are_tool_errors(self) -> bool:
        """From 2025-11-25 (SEP-1303) bad tool arguments are an ``isError`` result, not -32602."""
        return self.version >= "2025-11-25"

    def initialize(
        self, params: Any, server_info: dict[str, Any], capabilities: dict[str, Any], instructions: str
    ) -> dict[str, Any]:
        """Handle ``initialize`` params and build its result.

        Only the first successful initialize negotiates; a refused one (bad params) changes
        nothing, so the client may correct it and try again.
        """
        if self.initialize_seen:
            raise RpcError(
                INVALID_REQUEST,
                f"initialize was already answered (revision {self.version} negotiated); "
                "start a new connection to negotiate again",
            )
        if not isinstance(params, dict):
            raise RpcError(INVALID_PARAMS, "initialize params must be an object")
        self.version = negotiate(params.get("protocolVersion"))
        self.initialize_seen = True
        client = params.get("clientInfo")
        if isinstance(client, dict) and isinstance(client.get("name"), str):
            self.client_name = client["name"]
        if isinstance(client, dict) and isinstance(client.get("version"), str):
            self.client_version = client["version"]
        return {
            "protocolVersion": self.version,
            "capabilities": capabilities,
            "serverInfo": server_info,
            "instructions": instructions,
        }
