"""The stdout rules, judged over every line any probe received.

A host reads stdout line by line and hands each line to a JSON parser; these rules say what such
a parser would make of the lines this server wrote.

    >>> from reference.child import Line
    >>> problems = line_problems(Line(b'Server started', 0.0, 14))
    >>> [p.check for p in problems]
    ['stdout-json-lines']
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from reference.child import Line
from reference.framing import FrameError, decode

from .probe import show, show_json

WARN_LINE = 64 * 1024
FAIL_LINE = 10 * 1024 * 1024


@dataclass
class Problem:
    check: str
    severity: str  # "fail" or "warn"
    what: str
    line: Line
    rule: str = "main"  # the catalogue rule it breaks


def _lone_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return any(0xD800 <= ord(ch) <= 0xDFFF for ch in value)
    if isinstance(value, dict):
        return any(_lone_surrogate(k) or _lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_lone_surrogate(v) for v in value)
    return False


def _hint(text: str) -> str:
    """A guess at where a non-JSON line comes from, for the summary."""
    stripped = text.strip()
    if stripped.lower().startswith("content-length:"):
        return " (an LSP Content-Length header: MCP stdio has no headers, one JSON message per line)"
    if stripped in ("{", "}", "[", "]", "},", "],") or text.startswith(("  ", "\t")):
        return " (a piece of pretty-printed JSON: an indent spreads one message over lines)"
    if stripped[:4].isdigit() or stripped[:1] == "[":
        return " (a log line: logging writes to stdout here)"
    return ""


def line_problems(line: Line) -> list[Problem]:
    """Everything wrong with one stdout line (an empty list for a clean line)."""
    found: list[Problem] = []
    data = line.data
    if data.endswith(b"\r"):
        found.append(Problem("stdout-line-ending", "warn", 'the line ends in "\\r\\n"', line))
        data = data[:-1]
    if line.size > FAIL_LINE:
        what = f"a {line.size}-byte line (over 10 MiB: the TypeScript SDK refuses it)"
        found.append(Problem("stdout-line-size", "warn", what, line))
    elif line.size > WARN_LINE:
        found.append(Problem("stdout-line-size", "warn", f"a {line.size}-byte line (over 64 KiB)", line))
    if line.cut:
        return found  # too long to judge its content
    if not line.complete:
        found.append(Problem("stdout-json-lines", "fail", "the last line has no newline", line))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        found.append(Problem("stdout-strict-json", "fail", f"not valid UTF-8 at byte {exc.start}", line))
        return found
    if not text.strip():
        found.append(Problem("stdout-json-lines", "fail", "a blank line (JSON.parse: Unexpected end of input)", line))
        return found
    try:
        # JSON may start with whitespace; raw_decode does not skip it by itself.
        value, end = json.JSONDecoder().raw_decode(text, len(text) - len(text.lstrip()))
    except (ValueError, RecursionError) as exc:
        found.append(Problem("stdout-json-lines", "fail", f"not JSON: {exc}{_hint(text)}", line))
        return found
    if text[end:].strip():
        what = "two messages on one line" if isinstance(value, dict) else "not one JSON value"
        found.append(Problem("stdout-json-lines", "fail", f"{what}: extra text at column {end + 1}{_hint(text)}", line))
        return found
    if not isinstance(value, dict):
        found.append(Problem("stdout-json-lines", "fail", f"a JSON {type(value).__name__}, not an object", line))
    try:
        # The lenient parse above accepted one value; the reference's strict decoder refuses
        # it only for what strict JSON forbids (NaN, Infinity).
        strict = decode(data)
    except FrameError as exc:
        found.append(Problem("stdout-strict-json", "fail", f"{exc} (RFC 8259 has no NaN or Infinity)", line))
        strict = None
    if strict is not None and _lone_surrogate(strict):
        found.append(
            Problem("stdout-strict-json", "warn", "a lone surrogate (\\ud800-\\udfff) in a string", line, "surrogate")
        )
    return found


def envelope_problem(message: Any) -> str | None:
    """What is wrong with a decoded message's JSON-RPC envelope, or None.

    An error response without an id is not judged here: that depends on the revision (see
    :func:`idless_error`).
    """
    if not isinstance(message, dict):
        return None  # stdout-json-lines reports it
    if message.get("jsonrpc") != "2.0":
        return 'the "jsonrpc" member is missing or not "2.0"'
    if "method" in message:
        return None if isinstance(message["method"], str) else '"method" is not a string'
    has_result, has_error = "result" in message, "error" in message
    if has_result == has_error:
        return "a response must have exactly one of result and error" + (" (it has both)" if has_result else "")
    if "id" not in message and has_result:
        return 'a result response without an "id"'
    if has_error:
        error = message["error"]
        if not isinstance(error, dict):
            return '"error" is not an object'
        code = error.get("code")
        if not isinstance(code, int) or isinstance(code, bool):
            return "the error code is not an integer"
        if not isinstance(error.get("message"), str):
            return "the error message is not a string"
    return None


def idless_error(message: Any) -> bool:
    """An error response with no ``id`` member at all (``"id": null`` is JSON-RPC's own form)."""
    return isinstance(message, dict) and "method" not in message and "error" in message and "id" not in message


SHOWN = 8  # distinct problems listed per check


def _line_evidence(problems: list[Problem]) -> dict[str, Any]:
    first = next((p for p in problems if p.severity == "fail"), problems[0])
    listed = list(dict.fromkeys(f"{p.what}: {show(p.line.data, 120)}" for p in problems))
    return {
        "received": show(first.line.data),
        "line_bytes": first.line.size,
        "at_seconds": round(first.line.at, 3),
        "lines_affected": len(problems),
        "problems": listed[:SHOWN] + [f"... and {len(listed) - SHOWN} more"] * (len(listed) > SHOWN),
    }


def judge_lines(lines: Iterable[Line], messages: Iterable[tuple[Any, str | None]], found: Any) -> None:
    """Report the stdout rules for all ``lines`` into ``found``; ``messages`` are the decoded
    ones, each with the protocol revision its session negotiated (None before initialize)."""
    lines = list(lines)
    by_check: dict[str, list[Problem]] = {}
    for line in lines:
        for problem in line_problems(line):
            by_check.setdefault(problem.check, []).append(problem)
    for check, ok in [
        ("stdout-json-lines", f"all {len(lines)} stdout lines are single JSON objects"),
        ("stdout-line-ending", 'every line ends in "\\n"'),
        ("stdout-strict-json", "strict UTF-8 JSON throughout"),
        ("stdout-line-size", f"longest line {max((x.size for x in lines), default=0)} bytes"),
    ]:
        problems = by_check.get(check)
        if not problems:
            found.passed(check, ok)
            continue
        first = next((p for p in problems if p.severity == "fail"), problems[0])
        summary = f"{first.what} ({len(problems)} line(s))"
        found.add(check, first.severity, summary, _line_evidence(problems), rule=first.rule)
    judge_envelopes(list(messages), found)


def judge_envelopes(messages: list[tuple[Any, str | None]], found: Any) -> None:
    """The envelope check; an error without an id is judged by its session's revision."""
    bad = [(m, p) for m, _ in messages if (p := envelope_problem(m))]
    if bad:
        listed = list(dict.fromkeys(f"{p}: {show_json(m, 160)}" for m, p in bad))
        found.failed(
            "envelope",
            f"{bad[0][1]} ({len(bad)} message(s))",
            {"received": show_json(bad[0][0]), "problems": listed[:SHOWN]},
        )
        return
    idless = [(m, revision) for m, revision in messages if idless_error(m)]
    older = sorted({r or "before initialize" for m, r in idless if not (r and r >= "2025-11-25")})
    if older:
        found.warned(
            "envelope",
            f"{len(idless)} error response(s) without an id in sessions on {', '.join(older)}: that revision's "
            "schema requires an id (JSON-RPC 2.0: null when it could not be read); only 2025-11-25 lets it be "
            "left out",
            {"received": show_json(idless[0][0]), "expected": '"id": null when the request\'s id is unknown'},
            rule="error-id",
        )
    elif idless:
        found.passed(
            "envelope",
            f"every message has a valid JSON-RPC 2.0 envelope ({len(idless)} error response(s) without an id, "
            "which 2025-11-25 allows; JSON-RPC 2.0 would send null)",
        )
    else:
        found.passed("envelope", "every message has a valid JSON-RPC 2.0 envelope")
