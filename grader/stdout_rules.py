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
        return " (a piece of pretty-printed JSON: json.dumps(..., indent=...) spreads one message over lines)"
    if stripped[:4].isdigit() or stripped[:1] == "[":
        return " (a log line: logging writes to stdout here)"
    return ""


def line_problems(line: Line) -> list[Problem]:
    """Everything wrong with one stdout line (an empty list for a clean line)."""
    found: list[Problem] = []
    data = line.data
    if data.endswith(b"\r"):
        found.append(Problem("stdout-line-ending", "fail", 'the line ends in "\\r\\n"', line))
        data = data[:-1]
    if line.size > FAIL_LINE:
        found.append(Problem("stdout-line-size", "fail", f"a {line.size}-byte line (over 10 MiB)", line))
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
        found.append(Problem("stdout-strict-json", "fail", "a lone surrogate (\\ud800-\\udfff) in a string", line))
    return found


def envelope_problem(message: Any) -> str | None:
    """What is wrong with a decoded message's JSON-RPC envelope, or None."""
    if not isinstance(message, dict):
        return None  # stdout-json-lines reports it
    if message.get("jsonrpc") != "2.0":
        return 'the "jsonrpc" member is missing or not "2.0"'
    if "method" in message:
        return None if isinstance(message["method"], str) else '"method" is not a string'
    has_result, has_error = "result" in message, "error" in message
    if has_result == has_error:
        return "a response must have exactly one of result and error" + (" (it has both)" if has_result else "")
    if "id" not in message:
        return 'a response without an "id"'
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


def judge_lines(lines: Iterable[Line], messages: Iterable[Any], found: Any) -> None:
    """Report the stdout rules for all ``lines`` (and decoded ``messages``) into ``found``."""
    lines = list(lines)
    first: dict[str, Problem] = {}
    counts: dict[str, int] = {}
    for line in lines:
        for problem in line_problems(line):
            counts[problem.check] = counts.get(problem.check, 0) + 1
            best = first.get(problem.check)
            if best is None or (problem.severity == "fail" and best.severity == "warn"):
                first[problem.check] = problem
    for check, ok in [
        ("stdout-json-lines", f"all {len(lines)} stdout lines are single JSON objects"),
        ("stdout-line-ending", 'every line ends in "\\n"'),
        ("stdout-strict-json", "strict UTF-8 JSON throughout"),
        ("stdout-line-size", f"longest line {max((x.size for x in lines), default=0)} bytes"),
    ]:
        problem = first.get(check)
        if problem is None:
            found.passed(check, ok)
            continue
        evidence = {
            "received": show(problem.line.data),
            "line_bytes": problem.line.size,
            "at_seconds": round(problem.line.at, 3),
            "lines_affected": counts[check],
        }
        found.add(check, problem.severity, f"{problem.what} ({counts[check]} line(s))", evidence)
    bad = [(m, p) for m in messages if (p := envelope_problem(m))]
    if bad:
        message, problem = bad[0]
        found.failed(
            "envelope",
            f"{problem} ({len(bad)} message(s))",
            {"received": show_json(message)},
        )
    else:
        found.passed("envelope", "every message has a valid JSON-RPC 2.0 envelope")
