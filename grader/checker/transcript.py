"""The rules judged on any session: a few lines sent, what came back, beside what the reference did.

``mcp-lab check`` runs sessions of its own design. A learner chasing a defect writes their own:
a handful of lines that make a server break a rule. :func:`broken` says which rules a server
broke on such a session, judged against the reference server's session on the same lines (the
reference is right by definition: what it did, a server may do). Each judge reads the wire only:

    >>> ref = Session([b'{"jsonrpc":"2.0","id":7,"method":"ping"}'],
    ...               [Received(b'{"jsonrpc":"2.0","id":7,"result":{}}')])
    >>> bad = Session(ref.sent, [Received(b'{"jsonrpc":"2.0","id":"7","result":{}}')])
    >>> sorted(broken(bad, ref))
    ['id-echo']
    >>> broken(ref, ref)
    {}
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from reference.child import Line
from reference.stateless import CACHEABLE, CLIENT_CAPABILITIES, PROTOCOL_VERSION, SUPPORTED, is_modern

from .modern_checks import cacheable_problems, result_type_problem, unsupported_problems
from .signatures import kind_of
from .stdout_rules import envelope_problem, line_problems
from .structured_output import result_problems
from .tool_calls import result_problem


@dataclass
class Received:
    data: bytes  # one stdout line, without its newline
    after_close: bool = False  # it came only once stdin was closed
    early: bool = False  # it came before anything was sent


@dataclass
class Session:
    sent: list[bytes]  # the lines sent, without newlines
    received: list[Received]
    died: bool = False  # the process ended while its stdin was still open
    exit_code: int | None = None
    stderr: str = ""
    tool_schemas: dict[str, Any] = field(default_factory=dict)  # outputSchema by tool, from the reference

    def messages(self) -> list[Any]:
        """The sent lines as the server should read them (``None`` for a line that is not JSON)."""
        found = []
        for line in self.sent:
            try:
                found.append(json.loads(line.decode("utf-8")))
            except (ValueError, UnicodeDecodeError):
                found.append(None)
        return found

    def replies(self) -> list[Any]:
        """The received lines that parse as JSON (others are judged by the stdout rules)."""
        found = []
        for item in self.received:
            try:
                found.append(json.loads(item.data.decode("utf-8")))
            except (ValueError, UnicodeDecodeError):
                continue
        return found


def _key(id: Any) -> str:
    return json.dumps(id, sort_keys=True)


def _loose(id: Any) -> str:
    return str(id).strip('"') if id is not None else "null"


def _requests(session: Session) -> dict[str, dict[str, Any]]:
    """The sent requests (a method and a string or integer id), by exact id."""
    found = {}
    for message in session.messages():
        if isinstance(message, dict) and isinstance(message.get("method"), str) and "id" in message:
            id = message["id"]
            if isinstance(id, str) or (isinstance(id, int) and not isinstance(id, bool)):
                found[_key(id)] = message
    return found


def _responses(session: Session) -> list[dict[str, Any]]:
    flat: list[Any] = []
    for reply in session.replies():
        flat.extend(reply if isinstance(reply, list) else [reply])
    return [r for r in flat if isinstance(r, dict) and "method" not in r]


def _by_id(session: Session) -> dict[str, dict[str, Any]]:
    return {_key(r.get("id")): r for r in _responses(session) if r.get("id") is not None}


def _codes(session: Session, code: int) -> int:
    return sum(1 for r in _responses(session) if isinstance(r.get("error"), dict) and r["error"].get("code") == code)


def _stdout_json_lines(case: Session, ref: Session) -> str:
    for item in case.received:
        line = Line(item.data, 0.0, len(item.data))
        problems = [p for p in line_problems(line) if p.check == "stdout-json-lines"]
        if problems:
            return f"a stdout line is not one JSON message: {item.data[:80]!r}"
    return ""


def _stdout_silent_at_start(case: Session, ref: Session) -> str:
    early = [item.data for item in case.received if item.early]
    if early:
        return f"it wrote {early[0][:60]!r} before anything was sent"
    # A server answers in order: a line of text before its first reply was written before it answered
    # anything, however slowly it started (no time window: what counts must not depend on the load).
    # Not a framing header, a blank line or a piece of pretty-printed JSON: those begin a reply.
    for item in case.received:
        if _decode_line(item.data) is not None:
            break
        text = not item.data[:1].isspace() and item.data[:1] not in (b"{", b"[", b"}", b"]", b'"')
        if text and kind_of(item.data) != "header":
            return f"it wrote {item.data[:60]!r} before its first reply"
    return ""


def _decode_line(data: bytes) -> Any:
    try:
        return json.loads(data.rstrip(b"\r"))
    except ValueError:
        return None


def _stdout_flush(case: Session, ref: Session) -> str:
    requests = _requests(case)
    for item in case.received:
        if not item.after_close:
            continue
        try:
            reply = json.loads(item.data)
        except ValueError:
            continue
        if isinstance(reply, dict) and _key(reply.get("id")) in requests and not case.died:
            return f"the reply to id {json.dumps(reply.get('id'))} came only when stdin was closed"
    return ""


def _id_echo(case: Session, ref: Session) -> str:
    requests = _requests(case)
    answered = _by_id(case)
    # A falsy id (0, "") taken for a missing one: the request gets no reply at all, where the
    # reference answers it, and the server lives on.
    for key in requests:
        if json.loads(key) in (0, "") and key in _by_id(ref) and key not in answered and not case.died:
            return f'the request with id {key} got no reply at all (0 and "" are ids like any other)'
    for key, reply in answered.items():
        if key not in requests and key not in _by_id(ref):
            loose = [k for k in requests if _loose(json.loads(k)) == _loose(reply.get("id"))]
            if loose:
                return f"a request with id {loose[0]} was answered with id {json.dumps(reply.get('id'))}"
    ref_answered = _by_id(ref)
    for key, reply in answered.items():
        mine, theirs = reply.get("result"), ref_answered.get(key, {}).get("result")
        if key in ref_answered and mine is not None and theirs is not None and mine != theirs:
            for other_key, other in ref_answered.items():
                if other_key != key and other.get("result") == mine:
                    return f"the reply with id {key} carries the result of the request with id {other_key}"
    strangers = [k for k in answered if k not in requests and k not in _by_id(ref)]
    unanswered = [k for k in requests if k in _by_id(ref) and k not in answered]
    if strangers and unanswered:
        return f"a reply came with id {strangers[0]}, which no request had; the request {unanswered[0]} got none"
    for key in requests:
        if key in _by_id(ref) and key not in answered:
            zero = next((r for r in _responses(case) if r.get("id") is None and "result" in r), None)
            if zero is not None:
                return f"the request with id {key} was answered with id null"
    return ""


def _notification_silence(case: Session, ref: Session) -> str:
    notifications = [m for m in case.messages() if isinstance(m, dict) and "method" in m and "id" not in m]
    if not notifications:
        return ""
    extra = len(_responses(case)) - len(_responses(ref))
    nulls = sum(1 for r in _responses(case) if r.get("id") is None) - sum(
        1 for r in _responses(ref) if r.get("id") is None
    )
    if extra > 0 and nulls > 0:
        return f"{extra} more reply(ies) than the reference, with id null: a notification was answered"
    return ""


def _parse_error(case: Session, ref: Session) -> str:
    want, got = _codes(ref, -32700), _codes(case, -32700)
    if got < want and not case.died:
        return f"{want - got} line(s) that are not JSON did not get -32700"
    return ""


def _invalid_request(case: Session, ref: Session) -> str:
    want, got = _codes(ref, -32600), _codes(case, -32600)
    if got < want and not case.died:
        return f"{want - got} invalid request(s) did not get -32600"
    return ""


def _method_not_found(case: Session, ref: Session) -> str:
    ref_answered = _by_id(ref)
    for key, reply in _by_id(case).items():
        theirs = ref_answered.get(key, {}).get("error")
        mine = reply.get("error")
        unknown = isinstance(theirs, dict) and theirs.get("code") == -32601
        if unknown and (not isinstance(mine, dict) or mine.get("code") != -32601):
            code = mine.get("code") if isinstance(mine, dict) else "a result"
            return f"the unknown method of request {key} got {code}, not -32601"
    return ""


def _survives_bad_input(case: Session, ref: Session) -> str:
    if case.died and not ref.died:
        return f"the server exited (status {case.exit_code}) while its stdin was open"
    return ""


def _envelope(case: Session, ref: Session) -> str:
    for reply in _responses(case):
        problem = envelope_problem(reply)
        if problem:
            return f"{problem}: {json.dumps(reply)[:100]}"
    return ""


def _ping(case: Session, ref: Session) -> str:
    requests = _requests(case)
    for key, reply in _by_id(case).items():
        if requests.get(key, {}).get("method") == "ping" and "result" in reply and reply["result"] != {}:
            return f"ping {key} was answered with {json.dumps(reply['result'])}, not {{}}"
    return ""


def _version_negotiation(case: Session, ref: Session) -> str:
    requests = _requests(case)
    ref_answered = _by_id(ref)
    for key, reply in _by_id(case).items():
        if requests.get(key, {}).get("method") != "initialize":
            continue
        mine = (reply.get("result") or {}).get("protocolVersion") if isinstance(reply.get("result"), dict) else None
        theirs = ref_answered.get(key, {}).get("result", {}).get("protocolVersion")
        if theirs is not None and mine != theirs:
            asked = (requests[key].get("params") or {}).get("protocolVersion")
            return f"initialize asked for {asked!r}; the server answered {mine!r} (a supported revision: {theirs!r})"
    return ""


def _tools_call_result(case: Session, ref: Session) -> str:
    requests = _requests(case)
    for key, reply in _by_id(case).items():
        if requests.get(key, {}).get("method") == "tools/call" and "result" in reply:
            problem = result_problem(reply["result"])
            if problem:
                return f"the result of tools/call {key}: {problem}"
    return ""


def _structured_output(case: Session, ref: Session) -> str:
    requests = _requests(case)
    ref_answered = _by_id(ref)
    for key, reply in _by_id(case).items():
        request = requests.get(key, {})
        theirs = ref_answered.get(key, {}).get("result")
        mine = reply.get("result")
        if request.get("method") != "tools/call" or not isinstance(theirs, dict) or not isinstance(mine, dict):
            continue
        if "structuredContent" in theirs and not mine.get("isError"):
            name = (request.get("params") or {}).get("name")
            schema = case.tool_schemas.get(name)
            if "structuredContent" not in mine:
                return f"the result of {name} (request {key}) carries no structuredContent"
            if schema is not None:
                problem, _ = result_problems(schema, mine)
                if problem:
                    return f"the result of {name} (request {key}): {problem}"
    return ""


def _shop_contract(case: Session, ref: Session) -> str:
    requests = _requests(case)
    ref_answered = _by_id(ref)
    for key, reply in _by_id(case).items():
        request = requests.get(key, {})
        theirs = ref_answered.get(key, {}).get("result")
        mine = reply.get("result")
        if request.get("method") != "tools/call" or not isinstance(theirs, dict) or not isinstance(mine, dict):
            continue
        if theirs.get("isError") or mine.get("isError") or result_problem(mine):
            continue
        mine_value = mine.get("structuredContent") or _text_json(mine)
        theirs_value = theirs.get("structuredContent") or _text_json(theirs)
        if mine_value is not None and theirs_value is not None and mine_value != theirs_value:
            name = (request.get("params") or {}).get("name")
            shown = json.dumps(mine_value)[:80], json.dumps(theirs_value)[:80]
            return f"{name} (request {key}) answered {shown[0]}; the shop holds {shown[1]}"
    return ""


def _text_json(result: dict[str, Any]) -> Any:
    try:
        return json.loads(result["content"][0]["text"])
    except (KeyError, IndexError, TypeError, ValueError):
        return None


# -- MCP 2026-07-28: requests that carry _meta (the modern era) ---------------------------------------
def _modern(request: dict[str, Any]) -> dict[str, Any] | None:
    """The _meta of a request of the 2026-07-28 era, or ``None``."""
    params = request.get("params")
    return params["_meta"] if is_modern(params) else None


def _modern_result_type(case: Session, ref: Session) -> str:
    requests = _requests(case)
    for key, reply in _by_id(case).items():
        request = requests.get(key, {})
        if _modern(request) is not None and "result" in reply:
            problem = result_type_problem(reply["result"])
            if problem:
                return f"the result of {request.get('method')} {key} (a 2026-07-28 request): {problem}"
    return ""


def _modern_cacheable(case: Session, ref: Session) -> str:
    requests = _requests(case)
    for key, reply in _by_id(case).items():
        request = requests.get(key, {})
        method = request.get("method")
        if _modern(request) is not None and method in CACHEABLE and "result" in reply:
            problems = cacheable_problems(str(method), reply["result"])
            if problems:
                return f"the result of {method} {key}: {problems[0]}"
    return ""


def _refused_by_ref(case: Session, ref: Session, code: int) -> list[tuple[str, dict[str, Any], Any]]:
    """(id, request, the case's reply or None) of each 2026-07-28 request the reference refused with ``code``."""
    requests, mine = _requests(case), _by_id(case)
    found = []
    for key, theirs in _by_id(ref).items():
        request = requests.get(key)
        error = theirs.get("error")
        refused = isinstance(error, dict) and error.get("code") == code
        if request is not None and _modern(request) is not None and refused:
            found.append((key, request, mine.get(key)))
    return found


def _what(reply: Any) -> str:
    if reply is None:
        return "no reply"
    error = reply.get("error")
    return f"error {error.get('code')}" if isinstance(error, dict) else "a result (it was served)"


def _modern_envelope_errors(case: Session, ref: Session) -> str:
    for key, request, reply in _refused_by_ref(case, ref, -32602):
        meta = _modern(request) or {}
        version, capabilities = meta.get(PROTOCOL_VERSION), meta.get(CLIENT_CAPABILITIES)
        malformed = not isinstance(version, str) or not isinstance(capabilities, dict)
        error = reply.get("error") if isinstance(reply, dict) else None
        if malformed and reply is not None and not (isinstance(error, dict) and error.get("code") == -32602):
            lacks = PROTOCOL_VERSION if not isinstance(version, str) else CLIENT_CAPABILITIES
            return f'request {key}: its _meta lacks a valid "{lacks}", and it got {_what(reply)}, not -32602'
    return ""


def _modern_unsupported_version(case: Session, ref: Session) -> str:
    for key, request, reply in _refused_by_ref(case, ref, -32022):
        version = (_modern(request) or {}).get(PROTOCOL_VERSION)
        if reply is None or version in SUPPORTED:
            continue
        problems = unsupported_problems(reply.get("error"), version if isinstance(version, str) else "")
        if problems:
            return f"request {key} asked for version {json.dumps(version)}: {problems[0]}"
    return ""


def _era_mixing(case: Session, ref: Session) -> str:
    """A request of the other era on a connection (an initialize after a 2026-07-28 request, a
    2026-07-28 request after an initialize) that the reference answered and the case ignored."""
    answered, ref_answered = _by_id(case), _by_id(ref)
    era = ""
    for message in case.messages():
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            continue
        modern = is_modern(message.get("params"))
        legacy = message["method"] == "initialize" and not modern
        other = (era == "legacy" and modern) or (era == "modern" and legacy)
        key = _key(message.get("id"))
        if other and "id" in message and key in ref_answered and key not in answered and not case.died:
            what = "a 2026-07-28 request" if modern else "an initialize"
            return f"{what} (id {key}) on a connection of the other era got no reply at all"
        era = era or ("modern" if modern else "legacy" if legacy else "")
    return ""


JUDGES = {
    "stdout-json-lines": _stdout_json_lines,
    "stdout-silent-at-start": _stdout_silent_at_start,
    "stdout-flush": _stdout_flush,
    "id-echo": _id_echo,
    "notification-silence": _notification_silence,
    "parse-error": _parse_error,
    "invalid-request": _invalid_request,
    "method-not-found": _method_not_found,
    "survives-bad-input": _survives_bad_input,
    "envelope": _envelope,
    "ping": _ping,
    "version-negotiation": _version_negotiation,
    "tools-call-result": _tools_call_result,
    "structured-output": _structured_output,
    "shop-contract": _shop_contract,
    "modern-result-type": _modern_result_type,
    "modern-cacheable": _modern_cacheable,
    "modern-envelope-errors": _modern_envelope_errors,
    "modern-unsupported-version": _modern_unsupported_version,
    "era-mixing": _era_mixing,
}


def broken(case: Session, ref: Session) -> dict[str, str]:
    """The rules ``case`` broke on its session that ``ref`` (the reference, same lines) kept: rule -> evidence."""
    found = {}
    for rule, judge in JUDGES.items():
        mine = judge(case, ref)
        if mine and not judge(ref, ref):
            found[rule] = mine
    return found
