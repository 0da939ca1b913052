"""Defects of the 2026-07-28 era, where every request carries its ``_meta`` and every result says
what it is: results without their ``resultType`` or caching hints, an unsupported version refused
the wrong way (or served), a ``_meta`` field left unchecked, a request of the other era dropped.

    >>> import random
    >>> defect = era_mixed(random.Random(0))
    >>> defect.era, defect.params
    ('modern', {'variant': 'initialize_after_modern'})
"""

from __future__ import annotations

import json
import random
from typing import Any

from reference.server import Server
from reference.stateless import CLIENT_CAPABILITIES, MODERN, PROTOCOL_VERSION, is_modern

from .base import CaseServer, Defect


def _modern_params(message: Any) -> dict[str, Any] | None:
    """The params of a request that carries the 2026-07-28 _meta (``None`` for any other line)."""
    params = message.get("params") if isinstance(message, dict) else None
    return params if isinstance(message, dict) and "id" in message and is_modern(params) else None


def _served_as_modern(server: CaseServer, message: dict[str, Any], meta: dict[str, Any]) -> Any:
    """The reference's reply to ``message`` with its _meta replaced by ``meta`` (a check skipped)."""
    patched = {**message, "params": {**message["params"], "_meta": meta}}
    return Server.handle_line(server, json.dumps(patched).encode())


class ResultType(Defect):
    """Results that do not say what they are: no ``resultType``, or one no client knows."""

    def reply(self, server: CaseServer, message: Any, reply: Any) -> Any:
        result = reply.get("result") if isinstance(reply, dict) else None
        if _modern_params(message) is None or not isinstance(result, dict):
            return reply
        variant = self.params["variant"]
        if variant == "calls" and message.get("method") != "tools/call":
            return reply
        if variant == "value":
            return {**reply, "result": {**result, "resultType": self.params["value"]}}
        return {**reply, "result": {k: v for k, v in result.items() if k != "resultType"}}


def result_type(rng: random.Random) -> Defect:
    variant = rng.choice(["all", "calls", "value"])
    value = rng.choice(["done", "ok", "success"])
    # A missing resultType is read as "complete" by a client that follows 2026-07-28 (Base Protocol > Result
    # Responses), so only a validating client notices it; an unknown value MUST be taken as invalid.
    symptom = {
        "all": rng.choice(
            [
                "A 2026-07-28 client library in its strict validation mode rejects every result of the server as "
                "malformed; hosts in their normal mode work with it.",
                "The 2026-07-28 conformance run of a host vendor rejects even the discovery answer; the same server "
                "works with a 2025 host.",
            ]
        ),
        "calls": "A validating 2026-07-28 client lists the tools fine, then rejects every tool call's result as "
        "malformed.",
        "value": f"A new host logs \"unknown result type '{value}'\" for every answer and shows nothing.",
    }[variant]
    return ResultType(
        "result_type", "modern-result-type", symptom, {"variant": variant, "value": value}, loggable=True, era="modern"
    )


class CacheHints(Defect):
    """The list results lose their caching hints, or carry ones no client can use."""

    def reply(self, server: CaseServer, message: Any, reply: Any) -> Any:
        result = reply.get("result") if isinstance(reply, dict) else None
        method = message.get("method") if isinstance(message, dict) else None
        if _modern_params(message) is None or not isinstance(result, dict) or method != self.params["method"]:
            return reply
        variant = self.params["variant"]
        if variant == "missing":
            result = {k: v for k, v in result.items() if k not in ("ttlMs", "cacheScope")}
        elif variant == "seconds":
            result = {**result, "ttlMs": "300s"}
        else:
            result = {**result, "cacheScope": "shared"}
        return {**reply, "result": result}


def cache_hints(rng: random.Random) -> Defect:
    method = rng.choice(["tools/list", "server/discover"])
    variant = rng.choice(["missing", "seconds", "scope"])
    what = "tool list" if method == "tools/list" else "discovery answer"
    # Without ttlMs a 2026-07-28 client assumes 0 (Utilities > Caching): it re-fetches rather than refusing.
    first = (
        f"A new host asks for the server's {what} again every time it needs it, where it caches other servers'."
        if variant == "missing"
        else f"A new host refuses the server's {what} as malformed; with a 2025 host the server works."
    )
    symptom = rng.choice(
        [first, f"The MCP Inspector in 2026-07-28 mode shows the {what} in red: 'invalid cacheable result'."]
    )
    return CacheHints(
        "cache_hints",
        "modern-cacheable",
        symptom,
        {"method": method, "variant": variant},
        loggable=True,
        era="modern",
    )


class VersionRefusal(Defect):
    """A version the server does not serve, refused the wrong way (or served)."""

    def reply(self, server: CaseServer, message: Any, reply: Any) -> Any:
        error = reply.get("error") if isinstance(reply, dict) else None
        if not isinstance(error, dict) or error.get("code") != -32022 or _modern_params(message) is None:
            return reply
        variant = self.params["variant"]
        if variant == "no_data":
            return {**reply, "error": {k: v for k, v in error.items() if k != "data"}}
        if variant == "invalid_params":
            return {**reply, "error": {"code": -32602, "message": "Invalid params: unsupported protocol version"}}
        meta = {**message["params"]["_meta"], PROTOCOL_VERSION: MODERN}
        return _served_as_modern(server, message, meta)


def version_refusal(rng: random.Random) -> Defect:
    variant = rng.choice(["no_data", "invalid_params", "served"])
    symptom = {
        "no_data": "A host that tries a newer revision first gives up on the server instead of falling back to "
        "2026-07-28: 'the server named no version it supports'.",
        "invalid_params": "Hosts that ask for a revision the server does not know report a malformed request and "
        "never retry with another version.",
        "served": "A preview host that speaks a revision from the future connects and then misreads every answer: "
        "the server never told it that it speaks another version.",
    }[variant]
    return VersionRefusal("version_refusal", "modern-unsupported-version", symptom, {"variant": variant}, era="modern")


class MetaUnchecked(Defect):
    """A request whose _meta lacks a required field is served anyway, with a default filled in."""

    def reply(self, server: CaseServer, message: Any, reply: Any) -> Any:
        params = _modern_params(message)
        error = reply.get("error") if isinstance(reply, dict) else None
        if params is None or not isinstance(error, dict) or error.get("code") != -32602:
            return reply
        if self.params.get("method") and message.get("method") != self.params["method"]:
            return reply
        meta = params["_meta"]
        if not isinstance(meta, dict):
            return reply
        missing = self.params["missing"]
        other = CLIENT_CAPABILITIES if missing == PROTOCOL_VERSION else PROTOCOL_VERSION
        if missing in meta or other not in meta:
            return reply  # only the one field this server forgets to check
        default = MODERN if missing == PROTOCOL_VERSION else {}
        return _served_as_modern(server, message, {**meta, missing: default})


def meta_unchecked(rng: random.Random) -> Defect:
    missing = rng.choice([PROTOCOL_VERSION, CLIENT_CAPABILITIES])
    what = "protocol version" if missing == PROTOCOL_VERSION else "client capabilities"
    symptom = rng.choice(
        [
            f"A client that forgot the {what} in its requests' _meta got answers anyway, shipped, and broke "
            "against every other server.",
            f"Requests that lack the {what} are served as if they had it; another server refuses the same client.",
        ]
    )
    return MetaUnchecked("meta_unchecked", "modern-envelope-errors", symptom, {"missing": missing}, era="modern")


class VersionNewer(Defect):
    """Versions compared as text: any version from 2026-07-28 onwards is taken for 2026-07-28."""

    def reply(self, server: CaseServer, message: Any, reply: Any) -> Any:
        params = _modern_params(message)
        error = reply.get("error") if isinstance(reply, dict) else None
        if params is None or not isinstance(error, dict) or error.get("code") != -32022:
            return reply
        version = params["_meta"].get(PROTOCOL_VERSION)
        if isinstance(version, str) and version > MODERN:
            return _served_as_modern(server, message, {**params["_meta"], PROTOCOL_VERSION: MODERN})
        return reply


def version_newer(rng: random.Random) -> Defect:
    symptom = rng.choice(
        [
            "A preview build of a host, which asks for next year's revision first, never falls back to 2026-07-28: "
            "it gets answers it misreads. Hosts that ask for an old revision are told which one to use.",
            "A host that tries the newest revision it knows (2027) gets results in the old shape and no error.",
        ]
    )
    return VersionNewer("version_newer", "modern-unsupported-version", symptom, visible=False, era="modern")


def call_meta_unchecked(rng: random.Random) -> Defect:
    missing = rng.choice([PROTOCOL_VERSION, CLIENT_CAPABILITIES])
    what = "protocol version" if missing == PROTOCOL_VERSION else "client capabilities"
    symptom = (
        f"A client whose tool calls forget the {what} in _meta is served anyway; its other requests are refused "
        "as they should be, so nobody noticed the bug."
    )
    params = {"missing": missing, "method": "tools/call"}
    return MetaUnchecked("call_meta_unchecked", "modern-envelope-errors", symptom, params, visible=False, era="modern")


class EraMixed(Defect):
    """A request of the other era on a connection is dropped without a word."""

    def reply(self, server: CaseServer, message: Any, reply: Any) -> Any:
        if self.params["variant"] == "modern_after_initialize":
            dropped = server.session.initialize_seen and _modern_params(message) is not None
        else:
            legacy = _modern_params(message) is None  # an initialize without _meta: the legacy handshake
            dropped = server.modern and legacy and isinstance(message, dict) and message.get("method") == "initialize"
        return None if dropped else reply


def era_mixed(rng: random.Random) -> Defect:
    variant = rng.choice(["modern_after_initialize", "initialize_after_modern"])
    symptom = {
        "modern_after_initialize": rng.choice(
            [
                "A host that upgraded itself while connected (it started in 2025-11-25, then sent 2026-07-28 "
                "requests) hangs until it times out; a fresh start works.",
                "A client library that mixes eras on one connection by mistake waits forever instead of being told.",
            ]
        ),
        "initialize_after_modern": "A dual-era host whose discovery probe timed out falls back to initialize, "
        "and then hangs on connect; started again, it connects at once.",
    }[variant]
    return EraMixed("era_mixed", "era-mixing", symptom, {"variant": variant}, era="modern")
