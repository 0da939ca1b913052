"""Which era a stdio server speaks: reading the outcome of a ``server/discover`` probe.

MCP 2026-07-28 (the *modern* era) has no handshake: every request carries its version and the
client's capabilities in ``params._meta``. Servers of 2025-11-25 and before (the *legacy* era)
expect ``initialize`` first. A client of both eras probes with ``server/discover`` and reads the
outcome (2026-07-28, basic/transports/stdio, Backward Compatibility):

- a ``DiscoverResult``: modern, pick a version from ``supportedVersions``;
- a recognised modern error (``-32022`` with ``data.supported``): modern, ask again in a version
  the server lists, and do *not* fall back to ``initialize``;
- any other error, whatever its code, or no answer in time: legacy, run ``initialize``.

    >>> discover = {"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {}}
    >>> judge({"jsonrpc": "2.0", "id": 0, "result": discover}, "2026-07-28").era
    'modern'
    >>> judge({"jsonrpc": "2.0", "id": 0, "error": {"code": -32601, "message": "Method not found"}}, "2026-07-28").era
    'legacy'
    >>> late = judge({"error": {"code": -32022, "data": {"supported": ["2026-07-28"]}}}, "2099-01-01",
    ...              speaks=("2099-01-01", "2026-07-28"))
    >>> late.era, late.retry_with
    ('modern', '2026-07-28')
    >>> judge({"error": {"code": -32022, "data": {"supported": ["2025-11-25"]}}}, "2026-07-28").reason
    ... # doctest: +ELLIPSIS
    "the server is modern but serves ['2025-11-25'] ...: force the legacy era to use it"
    >>> judge(None, "2026-07-28", waited=5).reason
    'no answer to server/discover within 5 s: a legacy server (stdio, Backward Compatibility)'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .errors import HEADER_MISMATCH as _HEADER
from .errors import MISSING_CAPABILITY as _CAPABILITY
from .errors import UNSUPPORTED_VERSION as _VERSION
from .stateless import MODERN

MODERN_VERSIONS: tuple[str, ...] = (MODERN,)  # the modern versions this client speaks, preferred first
HEADER_MISMATCH, MISSING_CAPABILITY, UNSUPPORTED_VERSION = _HEADER.code, _CAPABILITY.code, _VERSION.code
MODERN_ERRORS = frozenset({HEADER_MISMATCH, MISSING_CAPABILITY, UNSUPPORTED_VERSION})

ERAS = ("auto", "modern", "legacy")
RULE = "stdio, Backward Compatibility"  # where 2026-07-28 states the probe's rules


@dataclass(frozen=True)
class Verdict:
    """What a probe's outcome says.

    ``era`` is ``"modern"`` or ``"legacy"``. A modern verdict carries the ``DiscoverResult`` and the
    version to speak, or ``retry_with`` (probe again in that version), or neither: the server is
    modern but shares no version with this client, which ``reason`` explains.
    """

    era: str
    reason: str
    version: str | None = None
    result: dict[str, Any] | None = None
    retry_with: str | None = None


def supported_versions(error: Any) -> list[str]:
    """The ``data.supported`` list of a -32022 error (empty when absent or malformed).

    >>> supported_versions({"code": -32022, "data": {"supported": ["2026-07-28", 7]}})
    ['2026-07-28']
    """
    data = error.get("data") if isinstance(error, dict) else None
    listed = data.get("supported") if isinstance(data, dict) else None
    return [v for v in listed if isinstance(v, str)] if isinstance(listed, list) else []


def common_version(offered: Sequence[str], speaks: Sequence[str]) -> str | None:
    """The first version this client speaks (its preference order) that the server offers."""
    return next((v for v in speaks if v in offered), None)


def judge(
    reply: dict[str, Any] | None,
    asked: str,
    speaks: Sequence[str] = MODERN_VERSIONS,
    waited: float = 0.0,
    died: bool = False,
) -> Verdict:
    """Read the reply to a ``server/discover`` sent in version ``asked`` (``None``: no reply).

    ``died``: the server closed its stdout instead of answering (some legacy servers exit on a
    request that comes before ``initialize``); ``waited``: the seconds given to it.
    """
    if reply is None:
        if died:
            return Verdict("legacy", f"the server exited on server/discover: a legacy server ({RULE})")
        return Verdict("legacy", f"no answer to server/discover within {waited:g} s: a legacy server ({RULE})")
    error = reply.get("error")
    if isinstance(error, dict):
        code = error.get("code")
        said = f"{code} {error.get('message', '')}".strip()
        if code not in MODERN_ERRORS or isinstance(code, bool):
            return Verdict("legacy", f"server/discover got {said}, not a modern error: a legacy server ({RULE})")
        if code == UNSUPPORTED_VERSION:
            offered = supported_versions(error)
            retry = common_version(offered, speaks)
            if retry is not None and retry != asked:
                return Verdict(
                    "modern", f"server/discover got {said}: modern, asking again in {retry}", retry_with=retry
                )
            handshake = [v for v in offered if v < MODERN]  # dated versions: earlier ones are legacy
            hint = f"; it also lists {', '.join(handshake)}: force the legacy era to use it" if handshake else ""
            return Verdict(
                "modern",
                f"the server is modern but serves {offered or 'no version it names'} and this client speaks "
                f"{list(speaks)}: no version in common (2026-07-28 basic/versioning: do not fall back to "
                f"initialize){hint}",
            )
        return Verdict("modern", f"server/discover got {said}: a modern server refused the probe")
    result = reply.get("result")
    offered = result.get("supportedVersions") if isinstance(result, dict) else None
    if not isinstance(offered, list):
        return Verdict("legacy", f"server/discover got a result that is not a DiscoverResult: a legacy server ({RULE})")
    version = common_version([v for v in offered if isinstance(v, str)], speaks)
    if version is None:
        return Verdict(
            "modern",
            f"the server's supportedVersions {offered} share no version with this client's {list(speaks)}",
            result=result,
        )
    return Verdict("modern", f"server/discover answered: a modern server, speaking {version}", version, result)
