"""Side by side: where a server's session first parts from the reference's, and the rule it breaks.

Both timelines come from the same script (:func:`.timeline.run`). Step by step, the frames each
server wrote are compared on what the rules fix (the id and its JSON type, result or error, the
error code, the negotiated revision, silence after a notification, JSON on every line, the exit)
and not on free text (error messages, server names). The first difference names a check of the
checker's catalogue, so the learner reads the rule and the fix.

    >>> import sys
    >>> from grader.course import lab
    >>> from grader.course.timeline import run
    >>> script = [lab.request("ping", id="7")]
    >>> diff = compare(run(lab.exhibit("string_ids_mangled"), script), run(lab.reference(), script))
    >>> diff.check, diff.why
    ('id-echo', 'sent id "7" (a string), got 7 (a number)')
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from itertools import zip_longest
from typing import Any

from grader.checker.catalogue import CHECKS, MODERN_CHECKS, Check
from grader.checker.probe import same_id

from .expect import code_name, describe_id
from .timeline import Event, Timeline

# The check a wrong error code breaks, by the code the reference sent.
_BY_CODE = {-32700: "parse-error", -32600: "invalid-request", -32601: "method-not-found"}
# The check a wrong result breaks, by the method of the request.
_BY_METHOD = {"initialize": "initialize-result", "ping": "ping", "tools/list": "tools-list"}


@dataclass
class Difference:
    """The first place where the learner's session and the reference's part."""

    step: int  # the script step (the frame sent); past the script: after stdin closed
    sent: Event | None  # the frame sent in that step (the learner's copy)
    learner: Event | None  # the learner's frame that differs (None: it sent nothing)
    reference: Event | None  # the reference's frame in its place (None: it sent nothing)
    check: str  # the id of the check in the catalogue
    why: str  # one sentence: what differs

    @property
    def rule(self) -> Check:
        return CHECKS.get(self.check) or MODERN_CHECKS[self.check]

    def text(self) -> str:
        """The difference in words: what differs, the rule it breaks, how to fix it."""
        where = f"step {self.step}" if self.sent is not None else "after stdin closed"
        lines = [f"First difference ({where}): {self.check}: {self.why}"]
        if self.sent is not None:
            lines.append(f"  sent:      {self.sent.summary()}")
        if self.learner is not None and self.reference is not None and self.learner.data != self.reference.data:
            lines += content_lines(self.learner.data, self.reference.data)
        else:
            lines.append(f"  yours:     {self.learner.summary() if self.learner else '(nothing)'}")
            lines.append(f"  reference: {self.reference.summary() if self.reference else '(nothing)'}")
        lines.append(f"  rule:      {self.rule.rule}")
        lines.append(f"  fix:       {self.rule.fix}")
        return "\n".join(lines)


def compare(learner: Timeline, reference: Timeline) -> Difference | None:
    """The first difference between two sessions of the same script, or None when they agree."""
    for step in range(max(learner.steps, reference.steps) + 2):
        sent = learner.sent(step)
        mine, theirs = learner.received(step), reference.received(step)
        for index, (a, b) in enumerate(zip_longest(mine, theirs)):
            found = _differ(sent, a, b, learner, step, index)
            if found:
                return Difference(step, sent, a, b, *found)
    if learner.exit_code != reference.exit_code:
        why = f"exit status {learner.exit_code} after stdin closed; the reference exits with {reference.exit_code}"
        return Difference(learner.steps + 1, None, None, None, "exit-on-eof", why)
    return None


def _differ(
    sent: Event | None, a: Event | None, b: Event | None, learner: Timeline, step: int, index: int
) -> tuple[str, str] | None:
    """(check, why) when the learner's event ``a`` is not what the reference's ``b`` shows."""
    a = None if a is not None and a.kind == "timeout" else a
    b = None if b is not None and b.kind == "timeout" else b
    if a is None and b is None:
        return None
    if a is not None and a.kind == "not-json":
        return "stdout-json-lines", "a stdout line that is not JSON: stdout carries JSON-RPC messages only"
    if a is not None and a.data.endswith(b"\r"):
        return "stdout-line-ending", 'the line ends in "\\r\\n"; end every message with "\\n" alone'
    if a is not None and "strict" in a.flag:
        return "stdout-strict-json", "the line is not strict JSON in UTF-8 (NaN, Infinity or bad bytes)"
    if a is not None and a.kind in ("server-request", "server-notification"):
        if step == 0:
            return "stdout-silent-at-start", "the server wrote to stdout before it was asked anything"
        return "no-early-server-requests", f"the server sent a {a.kind.removeprefix('server-')} of its own"
    if sent is None:  # before the first frame, or after stdin closed
        if a is not None and b is None:
            if step == 0:
                return "stdout-silent-at-start", "the server wrote to stdout before it was asked anything"
            return "stdout-flush", "this reply came only after stdin closed: it sat unflushed in a buffer"
        return None
    if a is None:
        return _missing(sent, b, learner, step)
    if b is None:
        if sent.kind in ("notification", "response"):
            return "notification-silence", f"an answer to a {sent.kind}, which must get no reply at all"
        return "envelope", "a message the reference does not send here"
    return _messages(_method(sent), a.message, b.message)


def _missing(sent: Event, b: Event | None, learner: Timeline, step: int) -> tuple[str, str]:
    """The learner sent nothing where the reference sent ``b``: a crash, a missing flush, or silence."""
    late = [e for e in learner.events if e.step > learner.steps and e.link == sent.n]
    if late:
        return "stdout-flush", "no reply while stdin was open; it came only when stdin closed (a missing flush)"
    slow = [e for e in learner.events if e.step > step and e.link == sent.n]
    if slow:
        check = "startup-time" if _method(sent) == "initialize" else _check_for(_method(sent), b and b.message)
        return check, f"the reply came {slow[0].at - sent.at:.1f} s after the request, too late for the wait"
    here = [e for e in learner.events if e.step == step]
    if any(e.kind == "send-failed" or (e.kind == "timeout" and "exited" in e.text) for e in here):
        bad = sent.kind in ("not-json", "invalid", "batch", "response")
        check = "survives-bad-input" if bad else _check_for(_method(sent), b.message if b is not None else None)
        return check, "the server exited instead of answering (its stderr, the 2> lines, says why)"
    if sent.kind == "request" and sent.message["id"] in (0, ""):
        shown = describe_id(sent.message["id"])
        return "id-echo", f"no reply to the id {shown}: it is a valid id (an `if not id:` test?)"
    check = _check_for(_method(sent), b.message if b is not None else None)
    return check, f"no reply to this {sent.kind} (the reference answers it)"


def _messages(method: str | None, a: Any, b: Any) -> tuple[str, str] | None:
    if isinstance(b, list) or isinstance(a, list):
        if not (isinstance(a, list) and isinstance(b, list)):
            return "invalid-request", "a batch is answered by an array of replies, or by one -32600 error"
        if len(a) != len(b):
            return "invalid-request", f"{len(a)} replies in the batch reply; the reference sends {len(b)}"
        for x, y in zip(a, b, strict=True):
            found = _messages(None, x, y)
            if found:
                return found
        return None
    if not isinstance(a, dict) or a.get("jsonrpc") != "2.0" or ("result" in a) == ("error" in a):
        return "envelope", 'a response is {"jsonrpc": "2.0", "id": ..., and exactly one of "result" and "error"}'
    if "error" in a and (not isinstance(a["error"], dict) or not isinstance(a["error"].get("code"), int)):
        return "envelope", 'an error is an object with an integer "code" and a string "message"'
    if not same_id(a.get("id"), b.get("id")) or ("id" in a) != ("id" in b):
        want, got = b.get("id"), a.get("id")
        check = "id-echo" if want is not None else _check_for(method, b)
        return check, f"sent id {describe_id(want)}, got {describe_id(got, 'id' in a)}"
    if ("error" in a) != ("error" in b):
        if "error" in b:
            return _check_for(method, b), f"expected the error {code_name(b['error']['code'])}, got a result"
        return _check_for(method, b), f"expected a result, got the error {code_name(a['error'].get('code'))}"
    if "error" in b:
        if a["error"]["code"] != b["error"]["code"]:
            got = code_name(a["error"]["code"])
            return _check_for(method, b), f"expected the error {code_name(b['error']['code'])}, got {got}"
        return None
    return _results(method, a["result"], b["result"])


def _results(method: str | None, a: Any, b: Any) -> tuple[str, str] | None:
    """Results compared on what the rules fix, method by method (free text is free)."""
    if method == "initialize":
        if not isinstance(a, dict):
            return "initialize-result", "the initialize result is not an object"
        if a.get("protocolVersion") != b.get("protocolVersion"):
            return "version-negotiation", (
                f"protocolVersion {a.get('protocolVersion')!r}; the reference answers {b.get('protocolVersion')!r}"
            )
        info = a.get("serverInfo")
        if not isinstance(a.get("capabilities"), dict) or not (
            isinstance(info, dict) and isinstance(info.get("name"), str) and isinstance(info.get("version"), str)
        ):
            return "initialize-result", "the result needs a capabilities object and serverInfo with name and version"
        return None
    if method == "ping" and a != {}:
        return "ping", f"ping's result must be {{}}, got {a!r}"
    if method == "tools/list":
        tools = a.get("tools") if isinstance(a, dict) else None
        names = [t.get("name") for t in tools if isinstance(t, dict)] if isinstance(tools, list) else []
        want = [t.get("name") for t in b.get("tools", [])]
        if sorted(map(str, names)) != sorted(map(str, want)):
            return "tools-list", f"tools {names}; the reference lists {want}"
    if method == "tools/call" and isinstance(b, dict):
        if not isinstance(a, dict) or bool(a.get("isError")) != bool(b.get("isError")):
            return "tool-error-kind", "isError differs from the reference's (a tool execution error or a success)"
        if "structuredContent" in b and "structuredContent" not in a:
            return "structured-output", "the result carries no structuredContent; the reference's does"
    if isinstance(a, dict) and isinstance(b, dict) and "resultType" in b and a.get("resultType") != b["resultType"]:
        got = repr(a["resultType"]) if "resultType" in a else "none"
        return "modern-result-type", f"resultType {got}; the reference's result says {b['resultType']!r}"
    if isinstance(a, dict) and isinstance(b, dict):
        for key in ("ttlMs", "cacheScope"):
            if key in b and (key not in a or type(a[key]) is not type(b[key])):
                got = repr(a[key]) if key in a else "none"
                return "modern-cacheable", f"{key} {got}; the reference's result carries {key} {b[key]!r}"
    return None


# -- the first difference in content: what the rules above do not tell apart, shown, never hidden --------
WINDOW = 120  # characters shown on each side of the first differing character


@dataclass
class ContentDifference:
    """Where two sessions first differ byte for byte, once no rule tells them apart (a server's name,
    an error's words, a field the checks above do not compare): shown, so that "same" means the same."""

    step: int
    sent: Event | None
    learner: Event | None
    reference: Event | None

    def text(self) -> str:
        where = f"step {self.step}" if self.sent is not None else "before the first frame or after stdin closed"
        lines = [f"No rule of the catalogue tells the two apart; the first difference in content ({where}):"]
        if self.sent is not None:
            lines.append(f"  sent:      {self.sent.summary()}")
        mine = self.learner.data if self.learner is not None else b""
        theirs = self.reference.data if self.reference is not None else b""
        if self.learner is None or self.reference is None:
            lines.append(f"  yours:     {self.learner.summary() if self.learner else '(nothing)'}")
            lines.append(f"  reference: {self.reference.summary() if self.reference else '(nothing)'}")
        else:
            lines += content_lines(mine, theirs)
        return "\n".join(lines)


def content_difference(learner: Timeline, reference: Timeline) -> ContentDifference | None:
    """The first frame whose bytes differ from the reference's in the same step (None: byte for byte the same)."""
    for step in range(max(learner.steps, reference.steps) + 2):
        mine = [e for e in learner.received(step) if e.direction == "received"]
        theirs = [e for e in reference.received(step) if e.direction == "received"]
        for a, b in zip_longest(mine, theirs):
            if a is None or b is None or a.data != b.data:
                return ContentDifference(step, learner.sent(step), a, b)
    return None


def json_path_difference(a: Any, b: Any, path: str = "") -> tuple[str, str, str] | None:
    """(where, yours, the reference's) at the first place two JSON values differ; None when they are equal.

    >>> json_path_difference({"result": {"content": [], "structuredContent": {"n": 1}}}, {"result": {"content": []}})
    ('result.structuredContent', '{"n": 1}', '(absent)')
    """
    if a == b and type(a) is type(b):
        return None
    if isinstance(a, dict) and isinstance(b, dict):
        for key in [*b, *[k for k in a if k not in b]]:
            where = f"{path}.{key}" if path else str(key)
            if key not in a:
                return where, "(absent)", _cut(json.dumps(b[key], ensure_ascii=False))
            if key not in b:
                return where, _cut(json.dumps(a[key], ensure_ascii=False)), "(absent)"
            found = json_path_difference(a[key], b[key], where)
            if found:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        for index, (x, y) in enumerate(zip(a, b, strict=False)):
            found = json_path_difference(x, y, f"{path}[{index}]")
            if found:
                return found
        if len(a) != len(b):
            return f"{path} (length)", str(len(a)), str(len(b))
        return None
    return (
        path or "(the whole message)",
        _cut(json.dumps(a, ensure_ascii=False)),
        _cut(json.dumps(b, ensure_ascii=False)),
    )


def _cut(text: str, most: int = 2 * WINDOW) -> str:
    return text if len(text) <= most else f"{text[:most]}... ({len(text)} characters)"


def byte_window(a: bytes, b: bytes, width: int = WINDOW) -> tuple[str, str, int]:
    """The two lines around their first differing byte (``width`` characters each side), and its offset."""
    at = next((n for n, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    start = max(0, at - width)

    def window(data: bytes) -> str:
        text = data[start : at + width].decode("utf-8", "backslashreplace")
        before = "..." if start > 0 else ""
        after = "..." if at + width < len(data) else ""
        return before + text + after

    return window(a), window(b), at


def content_lines(mine: bytes, theirs: bytes, names: tuple[str, str] = ("yours", "reference")) -> list[str]:
    """The lines that show two frames' first difference: where (a JSON path), around which byte, how long each is."""
    width = max(len(name) for name in names) + 1
    first, second = (f"{name + ':':<{width}}" for name in names)
    lines = []
    try:
        path = json_path_difference(json.loads(mine), json.loads(theirs))
    except ValueError:
        path = None
    if path is not None:
        where, yours, reference = path
        lines += [f"  differs at {where}:", f"    {first} {yours}", f"    {second} {reference}"]
    shown_mine, shown_theirs, at = byte_window(mine, theirs)
    lines += [f"  {first} {shown_mine}", f"  {second} {shown_theirs}"]
    lines.append(
        f"  lengths: {names[0]} {len(mine)} bytes, {names[1]} {len(theirs)} bytes; first different byte at {at}"
    )
    return lines


def _method(sent: Event | None) -> str | None:
    message = sent.message if sent is not None else None
    return message.get("method") if isinstance(message, dict) else None


def _check_for(method: str | None, reference_reply: Any) -> str:
    """The check behind the reference's reply: its error code's rule, else the method's."""
    error = reference_reply.get("error") if isinstance(reference_reply, dict) else None
    if isinstance(error, dict):
        code = error.get("code")
        if code == -32602 and method == "tools/call":
            return "unknown-tool"
        return _BY_CODE.get(code, "envelope")
    if method == "tools/call":
        return "tools-call-result"
    return _BY_METHOD.get(method or "", "envelope")
