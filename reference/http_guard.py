"""The checks an HTTP request passes before its message reaches the dispatcher (Streamable HTTP).

On stdio only the process that started the server can talk to it. Over HTTP anyone who can reach
the port can, a web page in the user's own browser included. So, before any JSON is read:

- ``Origin`` (a MUST of 2025-11-25: DNS rebinding). A page on ``evil.example`` whose name is
  made to resolve to 127.0.0.1 can send requests to a local server, and the browser marks them
  with the page's origin. Absent (not a browser) or a loopback origin: allowed; anything else: 403.
- ``Host``, when the server listens on loopback only: the same attack shows in the Host header, so
  a name that is not loopback gets 421.
- ``Authorization: Bearer TOKEN`` when the server has a token: 401 with ``WWW-Authenticate``
  without it or with another one, compared in constant time (a comparison that stops at the first
  wrong byte tells an attacker how many bytes were right).
- ``Accept``: a client must accept ``application/json`` or ``text/event-stream``, or there is no
  way to answer it (406).
- ``MCP-Protocol-Version`` on a session's request (the legacy era): a revision the server does not
  support, or not the one negotiated in this session, is 400; absent, the session's negotiated
  revision applies. A 2026-07-28 request's headers are checked against its body instead
  (:mod:`reference.mcp_headers`).

    >>> parse_address("127.0.0.1:0"), parse_address("[::1]:8000"), parse_address(":8000")
    (('127.0.0.1', 0), ('::1', 8000), ('127.0.0.1', 8000))
    >>> origin_allowed(None), origin_allowed("http://localhost:6274"), origin_allowed("https://evil.example")
    (True, True, False)
    >>> token_ok("Bearer s3cret", "s3cret"), token_ok("Bearer guess", "s3cret"), token_ok(None, "s3cret")
    (True, False, False)
    >>> accepts("application/json, text/event-stream"), accepts("text/event-stream"), accepts("text/html")
    ((True, True), (False, True), (False, False))
    >>> version_problem("2025-06-18", "2025-11-25")
    'MCP-Protocol-Version 2025-06-18 is not the revision this session negotiated (2025-11-25)'
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
from urllib.parse import urlsplit

from .lifecycle import SUPPORTED

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
DEFAULT_HOST = "127.0.0.1"


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6; no host: 127.0.0.1). Port 0: any free port."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"expected HOST:PORT such as 127.0.0.1:8000, got {text!r}")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        raise ValueError(f"write an IPv6 address in brackets, e.g. [::1]:8000, got {text!r}")
    return host or DEFAULT_HOST, int(port)


def is_loopback(host: str | None) -> bool:
    if host is None:
        return False
    host = host.lower().rstrip(".")
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def origin_allowed(origin: str | None) -> bool:
    """No Origin (a client that is not a browser), or a web origin on this machine's loopback."""
    if origin is None:
        return True
    try:
        parts = urlsplit(origin)
        parts.port  # noqa: B018 (a malformed port raises ValueError)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and is_loopback(parts.hostname)


def host_allowed(host_header: str | None, bound_to_loopback: bool) -> bool:
    """A server that listens on loopback only answers only to loopback names."""
    if not bound_to_loopback or host_header is None:
        return True
    try:
        return is_loopback(urlsplit("//" + host_header).hostname)
    except ValueError:
        return False


def token_ok(authorization: str | None, token: str) -> bool:
    """Whether ``Authorization`` carries ``Bearer TOKEN``, compared in constant time."""
    if authorization is None:
        return False
    scheme, _, given = authorization.strip().partition(" ")
    if scheme.lower() != "bearer":
        return False
    # Digests of the same length: compare_digest's time depends on neither value nor length.
    given_digest = hashlib.sha256(given.strip().encode("utf-8")).digest()
    return hmac.compare_digest(given_digest, hashlib.sha256(token.encode("utf-8")).digest())


def accepts(accept: str | None) -> tuple[bool, bool]:
    """(``application/json`` acceptable, ``text/event-stream`` acceptable); no header: anything is."""
    if accept is None:
        return True, True
    ranges = {part.split(";")[0].strip().lower() for part in accept.split(",")}
    wildcard = "*/*" in ranges
    json_ok = wildcard or bool(ranges & {"application/json", "application/*"})
    sse_ok = wildcard or bool(ranges & {"text/event-stream", "text/*"})
    return json_ok, sse_ok


def version_problem(header: str | None, negotiated: str | None) -> str | None:
    """Why an ``MCP-Protocol-Version`` header is refused (400), or ``None`` when it is fine."""
    if header is None:
        return None  # the spec: assume a revision; the session's negotiated one is the one to assume
    if header not in SUPPORTED:
        return f"unsupported MCP-Protocol-Version {header!r}; this server supports {', '.join(SUPPORTED)}"
    if negotiated is not None and header != negotiated:
        return f"MCP-Protocol-Version {header} is not the revision this session negotiated ({negotiated})"
    return None
