"""The request metadata headers of Streamable HTTP 2026-07-28: what the body says, said again above it.

A modern POST repeats three of its body's fields as headers, so that a proxy or a load balancer can
route it without reading the body (``basic/transports/streamable-http``, Request Metadata):

- ``MCP-Protocol-Version``: ``params._meta["io.modelcontextprotocol/protocolVersion"]``, on every POST;
- ``Mcp-Method``: the JSON-RPC ``method``, on every request;
- ``Mcp-Name``: ``params.name`` (``tools/call``, ``prompts/get``) or ``params.uri`` (``resources/read``).

A value that is not plain visible ASCII (a name in another script, a leading space) travels as
``=?base64?...?=`` (the UTF-8 bytes in Base64), decoded before it is compared. The server that reads
the body MUST refuse a request whose headers are missing, malformed or disagree with it: 400 with
-32020 (HeaderMismatch). Otherwise a gateway routing on the header and the server acting on the body
would act on two different requests.

    >>> decode_value("=?base64?SGVsbG8sIOS4lueVjA==?="), decode_value("get_order")
    ('Hello, 世界', 'get_order')
    >>> decode_value("=?base64?not base64?=") is None
    True
    >>> body = {"method": "tools/call", "params": {"name": "get_order", "_meta": {PROTOCOL_VERSION: "2026-07-28"}}}
    >>> check({"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "get_order"}, body)
    >>> check({"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call"}, body)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    reference.errors.RpcError: Header mismatch: no Mcp-Name header: a tools/call request must name ...
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Mapping
from typing import Any

from .errors import HEADER_MISMATCH, RpcError
from .stateless import CLIENT_CAPABILITIES, PROTOCOL_VERSION

VERSION_HEADER = "MCP-Protocol-Version"
METHOD_HEADER = "Mcp-Method"
NAME_HEADER = "Mcp-Name"
ROUTING_HEADERS = (VERSION_HEADER, METHOD_HEADER, NAME_HEADER)
NAMED_BY = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}  # Mcp-Name's body field

_SENTINEL = re.compile(r"=\?base64\?(?P<payload>.*)\?=", re.DOTALL)
_FIELD_VALUE = re.compile(r"[\x20-\x7e\t]*")  # RFC 9110 field-value characters (visible ASCII, space, tab)
_RULE = "2026-07-28, basic/transports/streamable-http, Server Validation"


def decode_value(value: str) -> str | None:
    """A header value as its body value: ``=?base64?...?=`` decoded (UTF-8), any other value as it is.

    ``None`` for a sentinel whose payload is not canonical Base64 of UTF-8: it matches no body value.
    """
    found = _SENTINEL.fullmatch(value)
    if found is None:
        return value
    payload = found.group("payload")
    try:
        raw = base64.b64decode(payload, validate=True)
        if base64.b64encode(raw).decode("ascii") != payload:  # one spelling per value: no trailing bits
            return None
        return raw.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def _field(headers: Mapping[str, str], name: str) -> str | None:
    """A header's value without the whitespace around it, which is not part of it (RFC 9110, 5.5)."""
    value = headers.get(name)
    return value.strip(" \t") if value is not None else None


def has_envelope(params: Any) -> bool:
    """Whether ``params._meta`` has both required per-request fields (their values are judged later)."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and PROTOCOL_VERSION in meta and CLIENT_CAPABILITIES in meta


def _mismatch(detail: str) -> RpcError:
    return RpcError(HEADER_MISMATCH, f"{detail} ({_RULE})")


def check(
    headers: Mapping[str, str],
    message: Mapping[str, Any],
    all_values: Callable[[str], list[str] | None] | None = None,
) -> None:
    """Raise -32020 unless the routing headers are present, well-formed and agree with ``message``.

    ``headers`` is read case-insensitively when it is an ``http.client.HTTPMessage`` (names are); a
    plain dict must use the spellings above. ``all_values(name)`` lists every copy of a header, when
    the caller can tell: a header sent twice is refused, as a reader of the first copy and a reader
    of the last would disagree.
    """
    for name in ROUTING_HEADERS:
        copies = (all_values(name) if all_values is not None else None) or []
        if len(copies) > 1:
            raise _mismatch(f"the {name} header appears {len(copies)} times; send it once")
        value = _field(headers, name)
        if value is not None and not _FIELD_VALUE.fullmatch(value):
            raise _mismatch(f"the {name} header carries characters a header may not: send it as =?base64?...?=")
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(PROTOCOL_VERSION) if isinstance(meta, dict) else None
    sent = _field(headers, VERSION_HEADER)
    if sent is None:
        raise _mismatch(f"no {VERSION_HEADER} header: every POST needs it, equal to _meta's {PROTOCOL_VERSION}")
    if sent != version:
        raise _mismatch(f"{VERSION_HEADER} is {sent!r} but the body's _meta says {version!r}: they must be equal")
    method = message.get("method")
    said = _field(headers, METHOD_HEADER)
    if said is None:
        raise _mismatch(f"no {METHOD_HEADER} header: every request needs it, equal to the body's method")
    if said != method:
        raise _mismatch(f"{METHOD_HEADER} is {said!r} but the body's method is {method!r}: they must be equal")
    field = NAMED_BY.get(method) if isinstance(method, str) else None
    target = params.get(field) if field is not None and isinstance(params, dict) else None
    if not isinstance(target, str):
        return  # nothing to name: the method itself answers a missing name (-32602)
    named = _field(headers, NAME_HEADER)
    if named is None:
        raise _mismatch(f"no {NAME_HEADER} header: a {method} request must name its params.{field} there")
    decoded = decode_value(named)
    if decoded is None:
        raise _mismatch(f"the {NAME_HEADER} header is not valid =?base64?...?= (canonical Base64 of UTF-8)")
    if decoded != target:
        raise _mismatch(f"{NAME_HEADER} is {decoded!r} but the body's params.{field} is {target!r}: they must be equal")
