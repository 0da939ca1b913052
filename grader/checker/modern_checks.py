"""Judges of the modern era (MCP 2026-07-28): what one reply, or the whole session, must look like.

Pure functions of what came back, so that each rule is written once and read on its own; the
conversation that gathers the replies is :mod:`grader.checker.modern_session`.

    >>> discover_problems({"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {}})
    []
    >>> discover_problems({"supportedVersions": "2026-07-28"})
    ['"supportedVersions" must be a list of version strings', '"capabilities" must be an object']
    >>> cacheable_problems("tools/list", {"resultType": "complete", "tools": [], "ttlMs": -1})
    ['"ttlMs" must be an integer >= 0, found -1', '"cacheScope" must be "public" or "private", found none']
    >>> result_type_problem({"tools": []})
    'no "resultType"'
    >>> unsupported_problems({"code": -32022, "message": "no", "data": {"requested": "1999-01-01"}}, "1999-01-01")
    ['"data.supported" must be a list of the versions the server serves']
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from reference.stateless import CACHEABLE, MODERN, SERVER_INFO

from .probe import Received

RESULT_TYPES = ("complete", "input_required")  # the core's; an extension adds its own only when asked
UNSUPPORTED_VERSION = -32022
MISSING_CAPABILITY = -32021
INPUT_METHODS = {"elicitation/create": "elicitation", "sampling/createMessage": "sampling", "roots/list": "roots"}


def _missing(value: Any) -> str:
    return "none" if value is None else json.dumps(value)


def discover_problems(result: Any) -> list[str]:
    """Why ``result`` is not a DiscoverResult (schema.ts), or nothing."""
    if not isinstance(result, dict):
        return ["the result is not an object"]
    problems = []
    versions = result.get("supportedVersions")
    if not isinstance(versions, list) or not versions or not all(isinstance(v, str) for v in versions):
        problems.append('"supportedVersions" must be a list of version strings')
    elif MODERN not in versions:
        problems.append(f'"supportedVersions" {json.dumps(versions)} lacks {MODERN}, the version it was asked in')
    if not isinstance(result.get("capabilities"), dict):
        problems.append('"capabilities" must be an object')
    return problems


def server_info_problem(result: Any) -> str | None:
    """The SHOULD of server/discover: the server's name and version in ``_meta``."""
    meta = result.get("_meta") if isinstance(result, dict) else None
    info = meta.get(SERVER_INFO) if isinstance(meta, dict) else None
    if not isinstance(info, dict) or not isinstance(info.get("name"), str) or not isinstance(info.get("version"), str):
        return f'no _meta["{SERVER_INFO}"] with a "name" and a "version" string'
    return None


def result_type_problem(result: Any) -> str | None:
    """Why a modern result's ``resultType`` is wrong, or None."""
    if not isinstance(result, dict):
        return "the result is not an object"
    kind = result.get("resultType")
    if kind is None:
        return 'no "resultType"'
    if kind not in RESULT_TYPES:
        return f'"resultType" {_missing(kind)} is not one the client knows ({", ".join(RESULT_TYPES)})'
    return None


def cacheable_problems(method: str, result: Any) -> list[str]:
    """Why a complete result of a cacheable method lacks its caching hints (server/utilities/caching)."""
    if method not in CACHEABLE or not isinstance(result, dict) or result.get("resultType", "complete") != "complete":
        return []
    problems = []
    ttl = result.get("ttlMs")
    if not isinstance(ttl, int) or isinstance(ttl, bool) or ttl < 0:
        problems.append(f'"ttlMs" must be an integer >= 0, found {_missing(ttl)}')
    scope = result.get("cacheScope")
    if scope not in ("public", "private"):
        problems.append(f'"cacheScope" must be "public" or "private", found {_missing(scope)}')
    return problems


def unsupported_problems(error: Any, requested: str) -> list[str]:
    """Why an answer to an unsupported version is not -32022 with ``data: {supported, requested}``."""
    if not isinstance(error, dict):
        return ["the request was served: a version the server does not serve must be refused with -32022"]
    if error.get("code") != UNSUPPORTED_VERSION:
        return [f"error {_missing(error.get('code'))}, not -32022 (UnsupportedProtocolVersion)"]
    data = error.get("data")
    data = data if isinstance(data, dict) else {}
    problems = []
    supported = data.get("supported")
    if not isinstance(supported, list) or not supported or not all(isinstance(v, str) for v in supported):
        problems.append('"data.supported" must be a list of the versions the server serves')
    if data.get("requested") != requested:
        problems.append(f'"data.requested" must be {json.dumps(requested)}, found {_missing(data.get("requested"))}')
    return problems


def server_requests(items: list[Received]) -> list[Received]:
    """Lines that are JSON-RPC requests (a method and an id): the modern era has none from a server."""
    return [
        i
        for i in items
        if isinstance(i.message, dict) and isinstance(i.message.get("method"), str) and "id" in i.message
    ]


def input_required_problems(result: dict[str, Any], declared: dict[str, Any]) -> list[str]:
    """Why an InputRequiredResult breaks the MRTR server rules, given the request's declared capabilities."""
    requests, state = result.get("inputRequests"), result.get("requestState")
    problems = []
    if requests is None and state is None:
        problems.append('an input_required result needs "inputRequests" or "requestState" (neither is here)')
    if state is not None and not isinstance(state, str):
        problems.append('"requestState" must be a string')
    if requests is not None and not isinstance(requests, dict):
        problems.append('"inputRequests" must be an object (key: request)')
    for key, request in (requests or {}).items() if isinstance(requests, dict) else []:
        method = request.get("method") if isinstance(request, dict) else None
        if method not in INPUT_METHODS:
            problems.append(f"inputRequests[{key!r}] is not an elicitation, sampling or roots request")
        elif INPUT_METHODS[method] not in declared:
            problems.append(
                f"inputRequests[{key!r}] asks for {method}, but the request declared no "
                f'"{INPUT_METHODS[method]}" capability (declared: {json.dumps(sorted(declared))})'
            )
    return problems


def input_responses(requests: Any) -> dict[str, Any]:
    """The checker's answers: every elicitation declined (so a confirmation confirms nothing), no roots."""
    answers: dict[str, Any] = {}
    for key, request in (requests or {}).items() if isinstance(requests, dict) else []:
        method = request.get("method") if isinstance(request, dict) else None
        answers[key] = {"roots": []} if method == "roots/list" else {"action": "decline"}
    return answers


def forge(state: str) -> str:
    """``state`` changed the way an attacker would: its decoded content altered and encoded again
    (base64 JSON, or the payload before a "." signature), else one character changed.

    >>> forge(base64.urlsafe_b64encode(b'{"order_id": 5}').decode())
    'eyJvcmRlcl9pZCI6IDZ9'
    >>> forge("opaque")
    'opaqua'
    """
    head, dot, tail = state.partition(".")
    if dot and (changed := _forge_part(head)) is not None:
        return changed + dot + tail
    if (changed := _forge_part(state)) is not None:
        return changed
    last = state[-1:] or "a"
    return state[:-1] + ("a" if last != "a" else "b") if state else "forged"


def _forge_part(text: str) -> str | None:
    try:
        value = json.loads(text)
        return json.dumps(_altered(value)) if isinstance(value, dict) else None
    except ValueError:
        pass
    for decode, encode in ((base64.urlsafe_b64decode, base64.urlsafe_b64encode), (base64.b64decode, base64.b64encode)):
        try:
            raw = decode(text + "=" * (-len(text) % 4))
            value = json.loads(raw)
        except (binascii.Error, ValueError):
            continue
        if isinstance(value, dict):
            out = encode(json.dumps(_altered(value)).encode()).decode()
            return out if text.endswith("=") else out.rstrip("=")
    return None


def _altered(value: dict[str, Any]) -> dict[str, Any]:
    """One value changed: the first integer plus one, else the first string with a suffix, else a key added."""
    out = dict(value)
    for key, item in value.items():
        if isinstance(item, int) and not isinstance(item, bool):
            out[key] = item + 1
            return out
    for key, item in value.items():
        if isinstance(item, str):
            out[key] = item + "-forged"
            return out
    out["mcp-lab"] = "forged"
    return out
