"""The 2026-07-28 era: every request says who it is, and every result says what it is.

MCP 2026-07-28 (the *modern* era; ``basic/versioning``) has no ``initialize``. Each request
carries, in ``params._meta``, the protocol version it speaks and the client's capabilities (both
required), and who the client is (recommended). The server reads them from *this* request and
never from an earlier one (``basic/index``, Statelessness). So a request is checked before it is
served:

- a required ``_meta`` key missing or of the wrong type: -32602 (Invalid params);
- a version the server does not serve: -32022 with ``data: {supported, requested}``;
- a method the revision removed (``initialize``, ``ping``, ``logging/setLevel``, the resource
  subscriptions): -32601, as any method the server does not serve.

Every modern result carries ``resultType`` (``"complete"``, or ``"input_required"`` for a multi
round-trip request) and the server's identity in ``_meta``; the six cacheable results also carry
``ttlMs`` and ``cacheScope`` (``server/utilities/caching``). Legacy results carry none of these.

    >>> meta = read_meta({"_meta": {PROTOCOL_VERSION: "2026-07-28", CLIENT_CAPABILITIES: {}}})
    >>> meta.version, meta.capabilities
    ('2026-07-28', {})
    >>> read_meta({"_meta": {PROTOCOL_VERSION: "2026-07-28"}})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    reference.errors.RpcError: Invalid params: params._meta lacks "io.modelcontextprotocol/clientCapabilities" ...
    >>> read_meta({"_meta": {PROTOCOL_VERSION: "2099-01-01", CLIENT_CAPABILITIES: {}}})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    reference.errors.RpcError: Unsupported protocol version: 2099-01-01 (this server serves 2026-07-28 per request...
    >>> complete("tools/list", {"tools": []}, {"name": "shop", "version": "1"})  # doctest: +NORMALIZE_WHITESPACE
    {'resultType': 'complete', 'tools': [], 'ttlMs': 300000, 'cacheScope': 'public',
     '_meta': {'io.modelcontextprotocol/serverInfo': {'name': 'shop', 'version': '1'}}}
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import MODERN_REVISION
from .errors import INVALID_PARAMS, METHOD_NOT_FOUND, RESOURCE_NOT_FOUND, UNSUPPORTED_VERSION, RpcError, json_type

MODERN = MODERN_REVISION
SUPPORTED = (MODERN,)  # the versions a request's _meta may name (legacy ones come by initialize)

PREFIX = "io.modelcontextprotocol/"
PROTOCOL_VERSION = PREFIX + "protocolVersion"
CLIENT_CAPABILITIES = PREFIX + "clientCapabilities"
CLIENT_INFO = PREFIX + "clientInfo"
LOG_LEVEL = PREFIX + "logLevel"
SERVER_INFO = PREFIX + "serverInfo"
SUBSCRIPTION_ID = PREFIX + "subscriptionId"
MODERN_KEYS = (PROTOCOL_VERSION, CLIENT_CAPABILITIES, CLIENT_INFO)  # any of them marks a modern request

# Methods of one era only (a diff of the two schemas' method constants).
REMOVED = frozenset({"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"})
ADDED = frozenset({"server/discover", "subscriptions/listen"})

# Caching hints (server/utilities/caching): the shop's lists change only when the server restarts.
CACHEABLE = frozenset(
    {"server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read"}
)
LIST_TTL_MS = 300_000  # five minutes: a client re-lists at most that often
READ_TTL_MS = 0  # an order's resource may change under a write tool: read it afresh each time


@dataclass(frozen=True)
class RequestMeta:
    """What one modern request says about itself (``params._meta``)."""

    version: str
    capabilities: dict[str, Any]
    client_name: str = ""
    client_version: str = ""
    extra: dict[str, Any] = field(default_factory=dict)  # progressToken, logLevel, trace context...

    def declares(self, capability: str) -> bool:
        """Whether this request declared ``capability`` (e.g. ``"elicitation"``) in its _meta."""
        return isinstance(self.capabilities.get(capability), dict)


def is_modern(params: Any) -> bool:
    """A request in the modern era: its ``_meta`` carries a per-request protocol field."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and any(key in meta for key in MODERN_KEYS)


def read_meta(params: Any) -> RequestMeta:
    """The request's ``_meta`` checked as 2026-07-28 asks (basic/index, Per-request protocol fields)."""
    if not isinstance(params, dict):
        raise RpcError(INVALID_PARAMS, "params must be an object carrying _meta")
    meta = params.get("_meta")
    if not isinstance(meta, dict):
        raise RpcError(
            INVALID_PARAMS,
            f'a {MODERN} request needs params._meta with "{PROTOCOL_VERSION}" and "{CLIENT_CAPABILITIES}"'
            + (f", got {json_type(meta)}" if meta is not None else ""),
        )
    for key in (PROTOCOL_VERSION, CLIENT_CAPABILITIES):
        if key not in meta:
            raise RpcError(INVALID_PARAMS, f'params._meta lacks "{key}" (required on every {MODERN} request)')
    version, capabilities = meta[PROTOCOL_VERSION], meta[CLIENT_CAPABILITIES]
    if not isinstance(version, str):
        raise RpcError(INVALID_PARAMS, f'"{PROTOCOL_VERSION}" must be a string such as "{MODERN}"')
    if not isinstance(capabilities, dict):
        raise RpcError(INVALID_PARAMS, f'"{CLIENT_CAPABILITIES}" must be an object ({{}} declares none)')
    if version not in SUPPORTED:
        raise unsupported(version)
    info = meta.get(CLIENT_INFO)
    if info is not None and not isinstance(info, dict):
        raise RpcError(INVALID_PARAMS, f'"{CLIENT_INFO}" must be an object with "name" and "version"')
    info = info or {}
    name, release = info.get("name"), info.get("version")
    extra = {key: value for key, value in meta.items() if key not in MODERN_KEYS}
    return RequestMeta(
        version,
        capabilities,
        name if isinstance(name, str) else "",
        release if isinstance(release, str) else "",
        extra,
    )


def unsupported(requested: Any, why: str = "") -> RpcError:
    """-32022 with ``data: {supported, requested}`` (basic/versioning, Protocol Version Negotiation)."""
    shown = requested if isinstance(requested, str) else json_type(requested)
    why = why or (
        f"this server serves {', '.join(SUPPORTED)} per request, and 2025-11-25 back to 2024-11-05 after an "
        "initialize handshake"
    )
    data = {"supported": list(SUPPORTED), "requested": requested if isinstance(requested, str) else ""}
    return RpcError(UNSUPPORTED_VERSION, f"{shown[:40]} ({why})", data)


def removed(method: str) -> RpcError:
    """-32601 for a method 2026-07-28 removed, naming what replaced it (and, to an ``initialize``, the
    versions served: a legacy client has no other way to learn them; basic/versioning)."""
    instead = {
        "initialize": f"no handshake: every request carries its version in _meta ({', '.join(SUPPORTED)}); "
        "legacy clients start a new connection with initialize",
        "ping": "a request with _meta is its own liveness check",
        "logging/setLevel": f'put "{LOG_LEVEL}" in the request\'s _meta',
        "resources/subscribe": "use subscriptions/listen",
        "resources/unsubscribe": "close the subscriptions/listen stream",
    }.get(method, "")
    data = {"supported": list(SUPPORTED)} if method == "initialize" else None
    return RpcError(
        METHOD_NOT_FOUND, f"{method} does not exist in {MODERN}" + (f": {instead}" if instead else ""), data
    )


def not_found_in_modern(exc: RpcError) -> RpcError:
    """-32002 (legacy "Resource not found") becomes -32602 with the same data (2026-07-28 retired it)."""
    if exc.code != RESOURCE_NOT_FOUND.code:
        return exc
    uri = exc.data.get("uri") if isinstance(exc.data, dict) else None
    return RpcError(INVALID_PARAMS, f"resource not found: {uri}" if uri else "resource not found", exc.data)


def complete(method: str, result: Any, server_info: dict[str, Any], ttl_ms: int | None = None) -> dict[str, Any]:
    """A modern result: ``resultType`` first, the result, caching hints where due, the server's identity.

    A result that already says what it is (``input_required``) keeps its type and gets no caching hints.
    """
    if not isinstance(result, dict):
        raise TypeError(f"a result must be a JSON object, got {json_type(result)}")
    kind = result.get("resultType", "complete")
    out: dict[str, Any] = {"resultType": kind, **{k: v for k, v in result.items() if k not in ("resultType", "_meta")}}
    if kind == "complete" and method in CACHEABLE:
        out.setdefault("ttlMs", LIST_TTL_MS if ttl_ms is None else ttl_ms)
        out.setdefault("cacheScope", "public")  # the shop is the same for every caller
    meta = dict(result["_meta"]) if isinstance(result.get("_meta"), dict) else {}
    meta[SERVER_INFO] = server_info
    out["_meta"] = meta
    return out


def discover(
    capabilities: dict[str, Any], server_info: dict[str, Any], instructions: str, ttl_ms: int = LIST_TTL_MS
) -> dict[str, Any]:
    """The ``server/discover`` result (server/discover): what the server speaks and offers, and who it is."""
    return {
        "resultType": "complete",
        "supportedVersions": list(SUPPORTED),
        "capabilities": capabilities,
        "instructions": instructions,
        "ttlMs": ttl_ms,
        "cacheScope": "public",
        "_meta": {SERVER_INFO: server_info},
    }
