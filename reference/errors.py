"""The one table of JSON-RPC error codes, shared by the server, the client and the checker.

>>> str(RpcError(METHOD_NOT_FOUND, "tools/lisst"))
'Method not found: tools/lisst'
>>> lookup(-32602).name
'Invalid params'
>>> RpcError(INVALID_PARAMS, "unknown tool 'x'").code
-32602
>>> lookup(-32022).name
'Unsupported protocol version'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ErrorCode:
    code: int
    name: str
    when: str


PARSE_ERROR = ErrorCode(-32700, "Parse error", "the line is not JSON (or not UTF-8)")
INVALID_REQUEST = ErrorCode(
    -32600, "Invalid Request", "JSON, but not a valid request: no method, a null or float id, wrong types"
)
METHOD_NOT_FOUND = ErrorCode(-32601, "Method not found", "the server does not serve this method")
INVALID_PARAMS = ErrorCode(-32602, "Invalid params", "bad params, an unknown tool, an unusable cursor")
INTERNAL_ERROR = ErrorCode(-32603, "Internal error", "the server failed unexpectedly")

# MCP's own codes. -32020..-32099 is the spec's range from 2026-07-28 on (basic/index, Error Codes).
HEADER_MISMATCH = ErrorCode(
    -32020, "Header mismatch", "HTTP only (2026-07-28): an Mcp-* header is missing or disagrees with the body"
)
MISSING_CAPABILITY = ErrorCode(
    -32021,
    "Missing required client capability",
    "(2026-07-28) the request needs a capability its _meta did not declare; data.requiredCapabilities",
)
UNSUPPORTED_VERSION = ErrorCode(
    -32022,
    "Unsupported protocol version",
    "(2026-07-28) the request's _meta names a version the server does not serve; data.supported, data.requested",
)
# Legacy only (2025-11-25 and before): retired in 2026-07-28, where an unknown resource is -32602.
RESOURCE_NOT_FOUND = ErrorCode(-32002, "Resource not found", "resources/read of a URI the server does not have")

TABLE: dict[int, ErrorCode] = {
    e.code: e
    for e in (
        PARSE_ERROR,
        INVALID_REQUEST,
        METHOD_NOT_FOUND,
        INVALID_PARAMS,
        INTERNAL_ERROR,
        HEADER_MISMATCH,
        MISSING_CAPABILITY,
        UNSUPPORTED_VERSION,
        RESOURCE_NOT_FOUND,
    )
}


def lookup(code: int) -> ErrorCode | None:
    """The table row for ``code``; ``None`` for a code outside the table (e.g. -32000..-32099)."""
    return TABLE.get(code)


class RpcError(Exception):
    """A protocol error: raise it in a handler and the dispatcher answers with a JSON-RPC error."""

    def __init__(self, kind: ErrorCode, detail: str = "", data: Any = None) -> None:
        self.kind = kind
        self.detail = detail
        self.data = data
        super().__init__(f"{kind.name}: {detail}" if detail else kind.name)

    @property
    def code(self) -> int:
        return self.kind.code

    @property
    def message(self) -> str:
        """The error's text as sent: the code's name, then the detail."""
        return str(self)

    def to_error(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.kind.code, "message": str(self)}
        if self.data is not None:
            error["data"] = self.data
        return error


def json_type(value: Any) -> str:
    """The JSON name of a decoded value's type, for error messages a client author can act on.

    >>> json_type(None), json_type(True), json_type(1.5), json_type([])
    ('null', 'boolean', 'number', 'array')
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return {str: "string", list: "array"}.get(type(value), "object")
