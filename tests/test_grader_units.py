"""Unit tests of the checker's pure pieces, with small inputs and exact expectations.

The end-to-end tests (test_checker.py, test_gallery.py) run whole servers; these run no process at
all, so that a regression in one rule shows up here, fast and by name:

- stdout_rules: what a host's line reader would make of one stdout line (``line_problems``), the
  JSON-RPC envelope (``envelope_problem``), and how lines become verdicts (``judge_lines``);
- verdicts.Findings: the worst finding wins, the catalogue decides what a report lists;
- tool_calls: arguments built from an inputSchema, schema and result shapes, when a call is safe;
- probe: id matching by value *and* JSON type, evidence cutting;
- versions.judge_negotiation on answers filled in by hand;
- shop_contract.has_number, the catalogue's wording, and the text and JSON reports;
- structured_output: results of tools with an outputSchema, judged per negotiated revision.

Several of these found real checker bugs (crashes on list-valued types and names, a non-numeric
minimum, JSON with leading whitespace, a count ending a sentence); they stay as regression tests.
"""

from __future__ import annotations

import io
import json
import re
from typing import Any

import pytest

from grader.checker.catalogue import CATALOGUE, CHECKS, HTTP_CHECKS, MODERN_CHECKS, STDIO_ONLY
from grader.checker.check import Report
from grader.checker.context import Context
from grader.checker.probe import CUT, Frame, Reply, same_id, show, show_json
from grader.checker.report import WIDTH, write_json, write_text
from grader.checker.shop_contract import has_number
from grader.checker.stdout_rules import FAIL_LINE, WARN_LINE, envelope_problem, judge_lines, line_problems
from grader.checker.structured_output import judge_structured_output, result_problems
from grader.checker.structured_output import schema_problem as output_schema_problem
from grader.checker.tool_calls import (
    EXAMPLE_TEXT,
    SHOP_TOOLS,
    example_arguments,
    is_shop,
    result_problem,
    result_text,
    safe_to_call,
    schema_problem,
    violating_arguments,
)
from grader.checker.verdicts import STATUSES, Findings, Result
from grader.checker.versions import UNKNOWN, Negotiation, judge_negotiation
from reference.child import Line

RESULT = b'{"jsonrpc":"2.0","id":1,"result":{}}'
NOTIFICATION = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}'
STDOUT_CHECKS = ("stdout-json-lines", "stdout-line-ending", "stdout-strict-json", "stdout-line-size")


def line(data: bytes, size: int | None = None, complete: bool = True, at: float = 0.0) -> Line:
    """A stdout line as reference.child delivers it; ``size`` larger than ``data`` makes a cut line."""
    return Line(data, at, len(data) if size is None else size, complete)


def problems(data: bytes, size: int | None = None, complete: bool = True) -> list[tuple[str, str]]:
    return [(p.check, p.severity) for p in line_problems(line(data, size, complete))]


def what(data: bytes, size: int | None = None, complete: bool = True) -> list[str]:
    return [p.what for p in line_problems(line(data, size, complete))]


def padded(size: int) -> bytes:
    """A valid response line of exactly ``size`` bytes."""
    head, tail = b'{"jsonrpc":"2.0","id":1,"result":{"text":"', b'"}}'
    data = head + b"x" * (size - len(head) - len(tail)) + tail
    assert len(data) == size
    return data


# -- stdout_rules.line_problems ------------------------------------------------------------------
@pytest.mark.parametrize(
    "data",
    [
        RESULT,
        NOTIFICATION,
        b'{"jsonrpc":"2.0","id":1,"result":{}}   ',  # trailing whitespace is JSON whitespace
        '{"jsonrpc":"2.0","id":1,"result":{"text":"caf\u00e9 \u2615 \U0001f600"}}'.encode(),
        rb'{"jsonrpc":"2.0","id":1,"result":{"text":"\ud83d\ude00"}}',  # a valid surrogate pair
    ],
)
def test_a_clean_object_line_has_no_problem(data: bytes) -> None:
    assert line_problems(line(data)) == []


def test_crlf_is_a_line_ending_warning_and_the_content_is_still_judged() -> None:
    # The \r is JSON whitespace and no MUST forbids it; strict hosts choke on it: a warning.
    assert problems(RESULT + b"\r") == [("stdout-line-ending", "warn")]
    assert what(RESULT + b"\r") == ['the line ends in "\\r\\n"']
    # The \r is taken off before the content is read: a bare "\r" is also a blank line.
    assert problems(b"\r") == [("stdout-line-ending", "warn"), ("stdout-json-lines", "fail")]


@pytest.mark.parametrize("data", [b"", b"   ", b"\t"])
def test_a_blank_line(data: bytes) -> None:
    assert problems(data) == [("stdout-json-lines", "fail")]
    assert what(data)[0].startswith("a blank line")


def test_plain_text_is_not_json_and_gets_no_hint() -> None:
    assert problems(b"Server started") == [("stdout-json-lines", "fail")]
    (text,) = what(b"Server started")
    assert text.startswith("not JSON: ")
    for hint in ("logging", "indent", "Content-Length"):
        assert hint not in text


@pytest.mark.parametrize(
    "data",
    [
        b"2025-11-25 12:00:00,123 INFO shop: started",  # parses as the number 2025, then junk
        b"[INFO] shop: started",
    ],
)
def test_a_log_line_gets_the_logging_hint(data: bytes) -> None:
    assert problems(data) == [("stdout-json-lines", "fail")]
    assert "logging" in what(data)[0]


def test_a_dated_log_line_is_one_value_then_junk() -> None:
    # raw_decode reads 2025 (4 characters), so the junk starts at column 5.
    assert what(b"2025-11-25 INFO x")[0].startswith("not one JSON value: extra text at column 5")


@pytest.mark.parametrize("data", [b"{", b'  "jsonrpc": "2.0",', b"}", b'\t"id": 1'])
def test_a_pretty_printed_fragment_gets_the_indent_hint(data: bytes) -> None:
    assert problems(data) == [("stdout-json-lines", "fail")]
    assert "indent" in what(data)[0]


@pytest.mark.parametrize("data", [b"Content-Length: 12", b"content-length: 12"])
def test_an_lsp_header_gets_the_header_hint(data: bytes) -> None:
    assert problems(data) == [("stdout-json-lines", "fail")]
    assert "Content-Length header" in what(data)[0]


@pytest.mark.parametrize("data", [b'{"a":1}{"b":2}', b'{"a":1} {"b":2}'])
def test_two_objects_on_one_line(data: bytes) -> None:
    # Only stdout-json-lines: the strict parse's "Extra data" is not a NaN problem.
    assert problems(data) == [("stdout-json-lines", "fail")]
    assert what(data) == ["two messages on one line: extra text at column 8"]


@pytest.mark.parametrize(
    ("data", "kind"),
    [(b"[1,2]", "list"), (b"[]", "list"), (b"42", "int"), (b"1.5", "float"), (b'"text"', "str"), (b"true", "bool")],
)
def test_a_json_value_that_is_not_an_object(data: bytes, kind: str) -> None:
    assert problems(data) == [("stdout-json-lines", "fail")]
    assert what(data) == [f"a JSON {kind}, not an object"]


@pytest.mark.parametrize(("data", "at"), [(b'{"a":"\xff"}', 6), (b'{"a":"\xc3"}', 6), (b"\xfe{}", 0)])
def test_invalid_utf8_is_a_strict_json_failure(data: bytes, at: int) -> None:
    assert problems(data) == [("stdout-strict-json", "fail")]
    assert what(data) == [f"not valid UTF-8 at byte {at}"]


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_strict_json_failures(constant: str) -> None:
    data = f'{{"jsonrpc":"2.0","id":1,"result":{{"x":{constant}}}}}'.encode()
    assert problems(data) == [("stdout-strict-json", "fail")]
    assert what(data)[0].startswith(f"{constant} is not JSON")


@pytest.mark.parametrize(
    "data",
    [rb'{"a":"\ud800"}', rb'{"a":"x\udfffy"}', rb'{"\udc00":1}', rb'{"a":[{"b":"\ud83d"}]}', rb'{"a":"\ude00\ud83d"}'],
)
def test_a_lone_surrogate_is_a_strict_json_warning(data: bytes) -> None:
    # Valid JSON text (an escape), but RFC 8259 section 8.2 calls receivers unpredictable: a warning.
    assert problems(data) == [("stdout-strict-json", "warn")]
    assert line_problems(line(data))[0].rule == "surrogate"
    assert what(data) == ["a lone surrogate (\\ud800-\\udfff) in a string"]


def test_size_thresholds() -> None:
    assert (WARN_LINE, FAIL_LINE) == (65536, 10 * 1024 * 1024)
    assert problems(padded(WARN_LINE)) == []
    assert problems(padded(WARN_LINE + 1)) == [("stdout-line-size", "warn")]
    assert what(padded(WARN_LINE + 1)) == ["a 65537-byte line (over 64 KiB)"]
    # Past the kept length a line is cut (reference.child keeps 1 MiB): build those by size.
    head = b'{"jsonrpc":"2.0","id":1,"result":{"text":"xxx'
    assert line(head, size=FAIL_LINE).cut
    assert problems(head, size=FAIL_LINE) == [("stdout-line-size", "warn")]
    # A host's limit, not the spec's: past 10 MiB still a warning, with the reason.
    assert problems(head, size=FAIL_LINE + 1) == [("stdout-line-size", "warn")]
    assert what(head, size=FAIL_LINE + 1) == ["a 10485761-byte line (over 10 MiB: the TypeScript SDK refuses it)"]


@pytest.mark.parametrize("data", [b"not json at all", b'{"a":"\xff', b'{"a":NaN', b""])
def test_a_cut_line_is_not_parsed(data: bytes) -> None:
    # Only its size is judged: the kept part of a cut line is never whole JSON.
    assert problems(data, size=WARN_LINE + 1) == [("stdout-line-size", "warn")]
    assert problems(data, size=FAIL_LINE + 1) == [("stdout-line-size", "warn")]


def test_a_last_line_without_newline() -> None:
    assert problems(RESULT, complete=False) == [("stdout-json-lines", "fail")]
    assert what(RESULT, complete=False) == ["the last line has no newline"]
    # Unterminated and not JSON: both said.
    assert problems(b"partial {", complete=False) == [("stdout-json-lines", "fail"), ("stdout-json-lines", "fail")]


@pytest.mark.parametrize("data", [b" " + RESULT, b"\t" + RESULT])
def test_leading_whitespace_is_json_whitespace(data: bytes) -> None:
    assert line_problems(line(data)) == []


# -- stdout_rules.envelope_problem ---------------------------------------------------------------
@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": 1, "result": {}},
        {"jsonrpc": "2.0", "id": "a", "error": {"code": -32601, "message": "Method not found"}},
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}},
        {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}},
        {"jsonrpc": "2.0", "id": 5, "method": "roots/list"},
        [1, 2],  # not an object: stdout-json-lines says so, not envelope
    ],
)
def test_a_valid_envelope(message: Any) -> None:
    assert envelope_problem(message) is None


JSONRPC = 'the "jsonrpc" member is missing or not "2.0"'
ONE_OF = "a response must have exactly one of result and error"
CODE = "the error code is not an integer"
TEXT = "the error message is not a string"


@pytest.mark.parametrize(
    ("message", "problem"),
    [
        ({"id": 1, "result": {}}, JSONRPC),
        ({"jsonrpc": "1.0", "id": 1, "result": {}}, JSONRPC),
        ({"jsonrpc": 2.0, "id": 1, "result": {}}, JSONRPC),
        ({"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "m"}}, ONE_OF + " (it has both)"),
        ({"jsonrpc": "2.0", "id": 1}, ONE_OF),
        ({"jsonrpc": "2.0", "result": {}}, 'a result response without an "id"'),
        ({"jsonrpc": "2.0", "id": 1, "error": None}, '"error" is not an object'),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": "-32601", "message": "m"}}, CODE),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": True, "message": "m"}}, CODE),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601.0, "message": "m"}}, CODE),
        ({"jsonrpc": "2.0", "id": 1, "error": {"message": "m"}}, CODE),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601}}, TEXT),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": 5}}, TEXT),
        ({"jsonrpc": "2.0", "method": 5}, '"method" is not a string'),
        ({"jsonrpc": "2.0", "id": 3, "method": None}, '"method" is not a string'),
    ],
)
def test_a_broken_envelope(message: Any, problem: str) -> None:
    assert envelope_problem(message) == problem


# -- stdout_rules.judge_lines ---------------------------------------------------------------------
def judged(lines: list[Line], messages: list[Any] | None = None, revision: str = "2025-11-25") -> dict[str, Result]:
    found = Findings()
    decoded = [json.loads(x.data) for x in lines] if messages is None else messages
    judge_lines(lines, [(m, revision) for m in decoded], found)
    return found.results()


def test_judge_lines_passes_clean_lines() -> None:
    results = judged([line(RESULT), line(NOTIFICATION)])
    for check in (*STDOUT_CHECKS, "envelope"):
        assert results[check].status == "pass", check
    assert results["stdout-json-lines"].summary == "all 2 stdout lines are single JSON objects"
    assert results["stdout-line-size"].summary == f"longest line {len(NOTIFICATION)} bytes"


def test_judge_lines_on_nothing() -> None:
    results = judged([], [])
    assert results["stdout-json-lines"].summary == "all 0 stdout lines are single JSON objects"
    assert results["stdout-line-size"].summary == "longest line 0 bytes"
    assert results["envelope"].status == "pass"


def test_judge_lines_lists_every_problem_of_a_check() -> None:
    cut = b'{"jsonrpc":"2.0","id":1,"result":{"text":"'
    lines = [line(cut, WARN_LINE + 1, at=0.1), line(cut, FAIL_LINE + 1, at=0.2), line(cut, WARN_LINE + 2, at=0.3)]
    result = judged(lines, [])["stdout-line-size"]
    assert result.status == "warn"
    assert result.summary == f"a {WARN_LINE + 1}-byte line (over 64 KiB) (3 line(s))"
    assert (result.evidence["line_bytes"], result.evidence["at_seconds"]) == (WARN_LINE + 1, 0.1)
    assert result.evidence["lines_affected"] == 3
    shown = result.evidence["problems"]
    assert [p.split(":")[0] for p in shown] == [
        f"a {WARN_LINE + 1}-byte line (over 64 KiB)",
        f"a {FAIL_LINE + 1}-byte line (over 10 MiB",
        f"a {WARN_LINE + 2}-byte line (over 64 KiB)",
    ]


def test_judge_lines_cuts_a_long_list_of_problems() -> None:
    lines = [line(f"junk {n}".encode(), at=n / 10) for n in range(12)]
    result = judged(lines, [])["stdout-json-lines"]
    assert result.evidence["lines_affected"] == 12
    assert len(result.evidence["problems"]) == 9 and result.evidence["problems"][-1] == "... and 4 more"


def test_judge_lines_keeps_the_first_of_equal_rank() -> None:
    lines = [line(b"first junk", at=0.5), line(RESULT, at=0.75), line(b"second junk", at=1.25)]
    results = judged(lines, [json.loads(RESULT)])
    result = results["stdout-json-lines"]
    assert result.status == "fail"
    assert result.summary.endswith(" (2 line(s))")
    problems = result.evidence.pop("problems")
    assert result.evidence == {"received": "first junk", "line_bytes": 10, "at_seconds": 0.5, "lines_affected": 2}
    assert len(problems) == 2 and problems[0].endswith(": first junk") and problems[1].endswith(": second junk")
    for check in ("stdout-line-ending", "stdout-strict-json", "stdout-line-size", "envelope"):
        assert results[check].status == "pass", check


def test_judge_lines_counts_each_check_apart() -> None:
    nan = b'{"jsonrpc":"2.0","id":2,"result":{"x":NaN}}'
    lines = [line(RESULT + b"\r"), line(nan), line(RESULT), line(RESULT + b"\r")]
    results = judged(lines, [json.loads(RESULT), json.loads(nan), json.loads(RESULT)])
    assert results["stdout-json-lines"].status == "pass"  # the \r and the NaN are other checks' business
    assert results["stdout-json-lines"].summary == "all 4 stdout lines are single JSON objects"
    assert results["stdout-line-ending"].status == "warn"
    assert results["stdout-line-ending"].evidence["lines_affected"] == 2
    assert results["stdout-line-ending"].evidence["received"] == show(RESULT + b"\r")
    assert results["stdout-strict-json"].status == "fail"
    assert results["stdout-strict-json"].evidence["lines_affected"] == 1
    assert results["stdout-line-size"].status == "pass"


def test_judge_lines_reports_the_first_bad_envelope() -> None:
    good = {"jsonrpc": "2.0", "id": 1, "result": {}}
    old = {"jsonrpc": "1.0", "id": 2, "result": {}}
    neither = {"jsonrpc": "2.0", "id": 3}
    result = judged([], [good, old, neither, {"id": 4, "result": {}}])["envelope"]
    assert result.status == "fail"
    assert result.summary == f"{JSONRPC} (3 message(s))"
    assert result.evidence["received"] == '{"jsonrpc":"1.0","id":2,"result":{}}'
    # Every kind of problem is listed, not only the first.
    assert [p.split(": {")[0] for p in result.evidence["problems"]] == [JSONRPC, ONE_OF, JSONRPC]


IDLESS = {"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}}


def test_an_error_without_id_is_judged_by_the_revision() -> None:
    # 2025-11-25 makes JSONRPCErrorResponse.id optional: a pass that says so.
    newer = judged([], [IDLESS], revision="2025-11-25")["envelope"]
    assert newer.status == "pass" and "without an id, which 2025-11-25 allows" in newer.summary
    # Up to 2025-06-18 the schema requires an id (JSON-RPC 2.0: null): revisions disagree, a warning.
    older = judged([], [IDLESS], revision="2025-06-18")["envelope"]
    assert older.status == "warn" and "2025-06-18" in older.summary
    assert older.rule is not None and older.rule.keyword == "revisions disagree"
    # A result without an id is broken in every revision.
    assert judged([], [{"jsonrpc": "2.0", "result": {}}])["envelope"].status == "fail"


# -- verdicts.Findings ----------------------------------------------------------------------------
WORST_LAST = ["skip", "pass", "warn", "fail"]


@pytest.mark.parametrize("first", STATUSES)
@pytest.mark.parametrize("second", STATUSES)
def test_findings_keep_the_worst_and_list_every_problem(first: str, second: str) -> None:
    found = Findings()
    found.add("ping", first, "first", {"n": 1})
    found.add("ping", second, "second", {"n": 2})
    result = found.results()["ping"]
    keep_second = WORST_LAST.index(second) > WORST_LAST.index(first)
    assert result.status == (second if keep_second else first)
    problems = [f"{s}: {w}" for s, w in ((first, "first"), (second, "second")) if s in ("fail", "warn")]
    lead = "second" if keep_second else "first"  # equal rank: the first stays
    if len(problems) == 2:  # nothing hidden by the merge: both are listed
        assert result.summary == f"{lead} (and 1 more problem(s))"
        assert result.evidence == {"n": 2 if keep_second else 1, "problems": problems}
    else:
        assert result.summary == lead
        assert result.evidence == {"n": 2 if keep_second else 1}
    assert found.status("ping") == result.status


def test_findings_by_revision_say_which_failed() -> None:
    found = Findings()
    found.passed("structured-output", "fine", revision="2025-11-25")
    found.failed("structured-output", "no structuredContent", {"x": 1}, revision="2025-06-18")
    result = found.results()["structured-output"]
    assert result.status == "fail"
    assert result.summary == "no structuredContent [fails under 2025-06-18; passes under 2025-11-25]"
    assert result.evidence["by_revision"] == {
        "2025-11-25": {"status": "pass", "summary": "fine"},
        "2025-06-18": {"status": "fail", "summary": "no structuredContent"},
    }
    found.skipped("structured-output", "the session did not start", revision="2024-11-05")
    assert "not judged under 2024-11-05" in found.results()["structured-output"].summary


def test_only_a_must_or_a_schema_can_fail() -> None:
    found = Findings()
    with pytest.raises(ValueError, match="SHOULD rule can warn, never fail"):
        found.failed("tool-names", "repeated names")
    with pytest.raises(ValueError, match="revisions disagree rule can warn"):
        found.failed("tool-error-kind", "-32602", rule="kind")
    found.failed("tool-error-kind", "accepted bad arguments")  # MUST validate all tool inputs
    with pytest.raises(KeyError):
        found.warned("ping", "x", rule="no-such-rule")


def test_findings_helpers_and_evidence_copy() -> None:
    found = Findings()
    evidence = {"received": "x"}
    found.warned("startup-time", "slow", evidence)
    evidence["received"] = "changed"
    found.passed("ping", "ok")
    found.failed("envelope", "bad")
    found.skipped("shop-contract", "not a shop")
    assert found.status("no-early-server-requests") is None
    results = found.results()
    assert [results[c].status for c in ("startup-time", "ping", "envelope", "shop-contract")] == [
        "warn",
        "pass",
        "fail",
        "skip",
    ]
    assert results["startup-time"].evidence == {"received": "x"}
    assert results["envelope"].as_json() == {
        "id": "envelope",
        "era": "both",
        "status": "fail",
        "summary": "bad",
        "evidence": {},
    }


@pytest.mark.parametrize(("check", "status"), [("no-such-check", "pass"), ("ping", "error"), ("ping", "PASS")])
def test_findings_refuse_unknown_ids_and_statuses(check: str, status: str) -> None:
    found = Findings()
    with pytest.raises(ValueError):
        found.add(check, status, "x")
    assert found.status("ping") is None


def test_findings_results_list_the_whole_catalogue_in_order() -> None:
    found = Findings()
    found.failed("tools-list", "broken")
    found.passed("stdout-json-lines", "fine")
    found.unreached = "not reached: the server exited"
    results = found.results()
    assert list(results) == list(CHECKS)
    assert [r.id for r in results.values()] == list(CHECKS)
    assert results["tools-list"].status == "fail"
    assert results["stdout-json-lines"].status == "pass"
    others = [r for c, r in results.items() if c not in ("tools-list", "stdout-json-lines")]
    assert len(others) == len(CHECKS) - 2
    assert all(r.status == "skip" and r.summary == "not reached: the server exited" for r in others)
    assert Findings().results()["ping"].summary == "not reached: an earlier step did not complete"


# -- tool_calls -----------------------------------------------------------------------------------
def test_example_text_is_not_ascii() -> None:
    assert not EXAMPLE_TEXT.isascii()
    assert EXAMPLE_TEXT.encode("utf-8").decode("utf-8") == EXAMPLE_TEXT


def test_example_arguments_fill_every_required_property() -> None:
    schema = {
        "type": "object",
        "properties": {
            "status": {"type": "string", "enum": ["shipped", "pending"], "default": "pending"},
            "kind": {"type": "string", "enum": ["a", "b"]},
            "empty_enum": {"type": "boolean", "enum": []},
            "limit": {"type": "integer", "minimum": 5},
            "page": {"type": "integer", "minimum": 0},
            "ratio": {"type": "number"},
            "flag": {"type": "boolean"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "filter": {
                "type": "object",
                "properties": {"q": {"type": "string"}, "n": {"type": "integer"}},
                "required": ["q"],
            },
            "query": {"type": "string"},
            "maybe": {"type": ["null", "integer"]},
            "untyped": {},
            "optional": {"type": "string"},
        },
        "required": [
            "status",
            "kind",
            "empty_enum",
            "limit",
            "page",
            "ratio",
            "flag",
            "tags",
            "filter",
            "query",
            "maybe",
            "untyped",
            "ghost",
            7,
        ],
    }
    assert example_arguments(schema) == {
        "status": "pending",  # a default beats the enum
        "kind": "a",
        "empty_enum": False,
        "limit": 5,
        "page": 1,  # at least 1
        "ratio": 1,
        "flag": False,
        "tags": [],
        "filter": {"q": EXAMPLE_TEXT},
        "query": EXAMPLE_TEXT,
        "maybe": 1,
        "untyped": EXAMPLE_TEXT,
        "ghost": EXAMPLE_TEXT,  # required but not described
    }


@pytest.mark.parametrize(
    "schema",
    [
        None,
        "object",
        {"type": "object"},
        {"type": "object", "properties": {"a": {"type": "string"}}},
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": "a"},
    ],
)
def test_example_arguments_without_required_properties(schema: Any) -> None:
    assert example_arguments(schema) == {}


def test_example_arguments_survive_a_non_numeric_minimum() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": "3"}}, "required": ["n"]}
    assert isinstance(example_arguments(schema), dict)


@pytest.mark.parametrize(
    ("kind", "wrong"),
    [("integer", "not-a-number"), ("number", "not-a-number"), ("string", 12345), ("boolean", "yes")],
)
def test_violating_arguments_give_the_wrong_json_type(kind: str, wrong: Any) -> None:
    schema = {"type": "object", "properties": {"x": {"type": kind}}, "required": ["x"]}
    assert violating_arguments(schema) == {"x": wrong}


def test_violating_arguments_break_the_first_typed_property_and_fill_the_rest() -> None:
    schema = {
        "type": "object",
        "properties": {"tags": {"type": "array"}, "q": {"type": "string"}, "n": {"type": "integer"}},
        "required": ["q", "n"],
    }
    assert violating_arguments(schema) == {"q": 12345, "n": 1}


@pytest.mark.parametrize(
    "schema",
    [
        None,
        {"type": "object"},
        {"type": "object", "properties": []},
        {"type": "object", "properties": {"x": {}}},
        {"type": "object", "properties": {"x": True}},
        {"type": "object", "properties": {"x": {"type": "array"}, "y": {"type": "object"}, "z": {"type": "null"}}},
    ],
)
def test_violating_arguments_none_when_nothing_is_typed(schema: Any) -> None:
    assert violating_arguments(schema) is None


def test_violating_arguments_survive_a_type_list() -> None:
    schema = {"type": "object", "properties": {"x": {"type": ["string", "null"]}}}
    assert violating_arguments(schema) in (None, {"x": 12345})


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        ("object", "inputSchema is not an object"),
        (None, "inputSchema is not an object"),
        ({"type": "array"}, 'inputSchema "type" must be "object", found \'array\''),
        ({"properties": {}}, 'inputSchema "type" must be "object", found None'),
        ({"type": "object", "properties": []}, '"properties" must be an object'),
        ({"type": "object", "properties": {"x": "string"}}, "property 'x' must be a schema object"),
        ({"type": "object", "properties": {"x": {"type": "str"}}}, "property 'x' has an unknown type 'str'"),
        (
            {"type": "object", "properties": {"x": {"type": ["string", "text"]}}},
            "property 'x' has an unknown type ['string', 'text']",
        ),
        ({"type": "object", "required": "x"}, '"required" must be a list of property names'),
        ({"type": "object", "required": ["x", 1]}, '"required" must be a list of property names'),
        ({"type": "object", "additionalProperties": "no"}, '"additionalProperties" must be a boolean or a schema'),
        ({"type": "object", "additionalProperties": None}, '"additionalProperties" must be a boolean or a schema'),
    ],
)
def test_schema_problem(schema: Any, problem: str) -> None:
    assert schema_problem(schema) == problem


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object"},
        {"type": "object", "additionalProperties": False},
        {
            "type": "object",
            "properties": {"x": {"type": ["string", "null"]}, "y": True, "z": {}, "n": {"type": "integer"}},
            "required": ["x"],
            "additionalProperties": {"type": "string"},
        },
    ],
)
def test_schema_problem_accepts_a_good_schema(schema: Any) -> None:
    assert schema_problem(schema) is None


def test_schema_problem_reports_an_unhashable_type() -> None:
    schema = {"type": "object", "properties": {"x": {"type": {"enum": ["string"]}}}}
    assert schema_problem(schema) == "property 'x' has an unknown type {'enum': ['string']}"


TYPED = "is not a typed content item (type one of audio, image, resource, resource_link, text)"


@pytest.mark.parametrize(
    "result",
    [
        {"content": [{"type": "text", "text": "hi"}]},
        {"content": [{"type": "text", "text": ""}], "isError": False},
        {"content": [], "isError": True},
        {"content": [{"type": "resource_link", "uri": "file:///orders/1", "name": "order 1"}]},
        {"content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}]},
        {"content": [{"type": "resource", "resource": {"uri": "x:/1", "text": "t"}}]},
    ],
)
def test_result_problem_accepts_a_call_tool_result(result: Any) -> None:
    assert result_problem(result) is None


@pytest.mark.parametrize(
    ("result", "problem"),
    [
        ([], "the result is a list, not an object"),
        (None, "the result is a NoneType, not an object"),
        ({"content": "hi"}, '"content" must be a list of content items, found str'),
        ({}, '"content" must be a list of content items, found NoneType'),
        ({"content": [{"text": "hi"}]}, f"content[0] {TYPED}"),
        ({"content": [{"type": "text", "text": "a"}, {"type": "video"}]}, f"content[1] {TYPED}"),
        ({"content": ["hi"]}, f"content[0] {TYPED}"),
        ({"content": [{"type": "text"}]}, 'content[0] is a text item without a "text" string'),
        ({"content": [{"type": "text", "text": 5}]}, 'content[0] is a text item without a "text" string'),
        ({"content": [], "isError": "true"}, '"isError" must be true or false'),
        ({"content": [], "isError": 1}, '"isError" must be true or false'),
    ],
)
def test_result_problem(result: Any, problem: str) -> None:
    assert result_problem(result) == problem


def test_result_text_joins_the_text_items() -> None:
    result = {"content": [{"type": "text", "text": "a"}, {"type": "image", "data": "x"}, {"type": "text", "text": "b"}]}
    assert result_text(result) == "a\nb"
    assert result_text(None) == result_text({"content": "x"}) == ""


@pytest.mark.parametrize(
    ("tool", "shop", "call_tools", "safe"),
    [
        ({"name": "delete_all", "annotations": {"readOnlyHint": True}}, False, False, True),
        ({"name": "delete_all", "annotations": {"readOnlyHint": "true"}}, False, False, False),
        ({"name": "delete_all", "annotations": {"readOnlyHint": False}}, False, False, False),
        ({"name": "delete_all", "annotations": ["readOnlyHint"]}, False, False, False),
        ({"name": "delete_all"}, False, False, False),
        ({"name": "delete_all"}, True, False, False),
        ({"name": "delete_all"}, False, True, True),
        ({"name": "count_orders"}, True, False, True),
        ({"name": "count_orders"}, False, False, False),
    ],
)
def test_safe_to_call(tool: dict[str, Any], shop: bool, call_tools: bool, safe: bool) -> None:
    assert safe_to_call(tool, shop, call_tools) is safe


def test_is_shop() -> None:
    shop = [{"name": n} for n in sorted(SHOP_TOOLS)]
    assert sorted(SHOP_TOOLS) == ["count_orders", "get_order", "list_orders", "search_products"]
    assert is_shop(shop)
    assert is_shop([*shop, {"name": "extra"}, "not a tool", {"no": "name"}])
    assert not is_shop(shop[1:])
    assert not is_shop([])


def test_is_shop_survives_a_nameless_tool() -> None:
    shop = [{"name": n} for n in sorted(SHOP_TOOLS)]
    assert is_shop([*shop, {"name": ["count_orders"]}])


# -- probe ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        (7, "7", False),
        ("7", 7, False),
        (1, True, False),
        (True, 1, False),
        (0, False, False),
        (1, 1.0, False),
        (0, 0, True),
        (42, 42, True),
        ("abc", "abc", True),
        ("abc", "ABC", False),
        (None, None, True),
    ],
)
def test_same_id(a: Any, b: Any, same: bool) -> None:
    assert same_id(a, b) is same


def test_show_cuts_long_frames() -> None:
    assert CUT == 300
    assert show(b"abc") == "abc"
    assert show(b'{"a":"\xff"}') == '{"a":"\\xff"}'
    assert show(b"a" * 300) == "a" * 300
    assert show(b"a" * 301) == "a" * 300 + "... (301 bytes)"
    assert show(b"abcdef", limit=3) == "abc... (6 bytes)"
    assert show("ü".encode() * 301) == "ü" * 300 + "... (602 bytes)"  # characters kept, bytes counted


def test_show_json() -> None:
    assert show_json({"a": "ü", "b": [1, None]}) == '{"a":"ü","b":[1,null]}'
    assert show_json({1, 2}) == "{1, 2}"  # not JSON: its repr
    assert show_json("x" * 400, limit=10) == '"xxxxxxxxx... (402 bytes)'
    assert Frame("received", 0.0, RESULT + b"\n").as_evidence() == RESULT.decode()


def test_reply_accessors() -> None:
    error = Reply({}, {"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "m"}}, 0.0)
    assert (error.result, error.code) == (None, -32602)
    odd = Reply({}, {"jsonrpc": "2.0", "id": 1, "error": "oops"}, 0.0)
    assert (odd.error, odd.code) == (None, None)
    silent = Reply({}, None, 1.0)
    assert (silent.result, silent.error, silent.code) == (None, None, None)


def test_context_without_a_process() -> None:
    assert Context(["server"], timeout=3.0).init_timeout == 10.0
    assert Context(["server"], timeout=20.0).init_timeout == 20.0
    ctx = Context(["server"], closed=True)
    with pytest.raises(RuntimeError):
        ctx.start("main")
    assert ctx.probes == []


# -- versions.judge_negotiation -------------------------------------------------------------------
ECHO: dict[str, Any] = {"2025-06-18": "2025-06-18", "2025-03-26": "2025-03-26", "2024-11-05": "2024-11-05"}
ECHO[UNKNOWN] = "2025-11-25"


def negotiated(main: Any, answers: dict[str, Any], refused: dict[str, Any] | None = None) -> Result:
    ctx = Context(["server"])
    negotiation = Negotiation()
    for proposed, answer in answers.items():
        negotiation.record(proposed, answer)
    negotiation.refused.update(refused or {})
    judge_negotiation(ctx, main, negotiation)
    return ctx.findings.results()["version-negotiation"]


def test_negotiation_all_echoed_passes() -> None:
    result = negotiated("2025-11-25", ECHO)
    assert result.status == "pass"
    assert result.summary == (
        "negotiated 1999-01-01->2025-11-25, 2024-11-05->2024-11-05, 2025-03-26->2025-03-26, "
        "2025-06-18->2025-06-18, 2025-11-25->2025-11-25"
    )


def test_negotiation_an_unsupported_proposal_may_get_the_latest() -> None:
    # A server without 2025-06-18 answers its latest: right, as long as it never speaks 2025-06-18.
    assert negotiated("2025-11-25", {**ECHO, "2025-06-18": "2025-11-25"}).status == "pass"


def test_negotiation_only_the_main_answer() -> None:
    result = negotiated("2025-11-25", dict.fromkeys(ECHO))
    assert result.status == "pass"
    # The proposals that got no answer are named, never silently left out.
    assert result.summary.startswith("negotiated 2025-11-25->2025-11-25 (not judged: 2025-06-18: its probe did not")
    assert set(result.evidence["not_judged"]) == set(ECHO)


@pytest.mark.parametrize(
    ("main", "answers", "problem"),
    [
        (
            "2025-11-25",
            {**ECHO, UNKNOWN: UNKNOWN},
            "proposed the unknown 1999-01-01: the server echoed it instead of a version it supports",
        ),
        ("2025-11-25", {**ECHO, "2025-06-18": "latest"}, "proposed 2025-06-18: answered 'latest', not a revision date"),
        (20251125, ECHO, "proposed 2025-11-25: answered 20251125, not a revision date"),
        (
            "2025-11-25",
            {**ECHO, "2025-06-18": "2025-01-01"},
            "proposed 2025-06-18: answered 2025-01-01, which is no MCP revision",
        ),
        (
            # 2025-03-26 is spoken (to a 2024-11-05 proposal), yet proposing it got 2025-11-25.
            "2025-11-25",
            {**ECHO, "2025-03-26": "2025-11-25", "2024-11-05": "2025-03-26"},
            "proposed 2025-03-26 (which it supports elsewhere): answered 2025-11-25",
        ),
    ],
)
def test_negotiation_failures(main: Any, answers: dict[str, Any], problem: str) -> None:
    result = negotiated(main, answers)
    assert result.status == "fail"
    assert result.summary == problem
    assert result.evidence["problems"] == [problem]


def test_negotiation_an_old_only_server_is_a_warning() -> None:
    result = negotiated("2024-11-05", dict.fromkeys(ECHO, "2024-11-05"))
    assert result.status == "warn"
    assert result.summary.startswith("does not speak 2025-11-25 (answered 2024-11-05)")


def test_negotiation_a_refusal_is_a_warning() -> None:
    error = {"code": -32602, "message": "Unsupported protocol version"}
    result = negotiated("2025-11-25", {**ECHO, "2025-06-18": None}, {"2025-06-18": error})
    assert result.status == "warn"
    assert result.summary == "answered the proposal 2025-06-18 with an error instead of a version it supports"
    assert result.evidence["received"] == error
    assert "2025-06-18" not in result.evidence["answers"]


def test_negotiation_a_wrong_answer_outranks_a_refusal() -> None:
    error = {"code": -32602, "message": "no"}
    result = negotiated("2025-11-25", {**ECHO, UNKNOWN: UNKNOWN, "2025-06-18": None}, {"2025-06-18": error})
    assert result.status == "fail"


@pytest.mark.parametrize("answers", [{}, dict.fromkeys(ECHO)])
def test_negotiation_without_any_answer_is_skipped(answers: dict[str, Any]) -> None:
    result = negotiated(None, answers)
    assert (result.status, result.summary) == ("skip", "the server never answered initialize")


# -- shop_contract.has_number ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("count: 341", True),
        ("341", True),
        ("there are 341 pending orders", True),
        ('{"count": 341}', True),
        ("(341)", True),
        ("3410", False),
        ("341.5", False),
        ("1341", False),
        ("0.341", False),
        ("count: 34", False),
        ("", False),
    ],
)
def test_has_number(text: str, found: bool) -> None:
    assert has_number(text, 341) is found


def test_has_number_at_the_end_of_a_sentence() -> None:
    assert has_number("pending orders: 341.", 341)


# -- catalogue ------------------------------------------------------------------------------------
DESIGN_IDS = {
    *STDOUT_CHECKS,
    "stdout-silent-at-start",
    "stdout-flush",
    "encoding-utf8",
    "envelope",
    "id-echo",
    "notification-silence",
    "parse-error",
    "invalid-request",
    "method-not-found",
    "survives-bad-input",
    "initialize-result",
    "version-negotiation",
    "capabilities-match",
    "ping",
    "startup-time",
    "no-early-server-requests",
    "stderr-volume",
    "exit-on-eof",
    "tools-list",
    "tool-names",
    "tools-call-result",
    "unknown-tool",
    "tool-error-kind",
    "shop-contract",
    "shop-read-only",
    "structured-output",
    "resources-list",
    "resources-read",
    "prompts-list",
    "prompts-get",
}
HTTP_IDS = {
    "http-session",
    "http-protocol-version",
    "http-origin",
    "http-notification-202",
    "http-content-type",
    "http-sse",
    "http-auth",
    "http-modern-headers",
    "http-modern-status",
    "http-modern-no-session",
    "http-modern-result",
}


def test_the_catalogue_has_the_contract_ids() -> None:
    assert set(CHECKS) == DESIGN_IDS
    assert len(CHECKS) == 34
    assert set(HTTP_CHECKS) == HTTP_IDS and list(CATALOGUE) == [*CHECKS, *MODERN_CHECKS, *HTTP_CHECKS]
    assert {c.era for c in CATALOGUE.values()} == {"legacy", "modern", "both"}
    assert set(CHECKS) > STDIO_ONLY


@pytest.mark.parametrize("check_id", sorted(CATALOGUE))
def test_every_check_says_what_holds_the_rule_and_the_fix(check_id: str) -> None:
    check = CATALOGUE[check_id]
    assert check.id == check_id
    for text in (check.holds, check.rule, check.fix):
        assert text.strip() == text and text, check_id
    assert "\n" not in check.holds


@pytest.mark.parametrize("check_id", sorted(CATALOGUE))
def test_rules_cite_the_course_revision(check_id: str) -> None:
    rule = CATALOGUE[check_id].rule
    # The modern era's checks cite 2026-07-28 (in their source); the legacy era's, the course's legacy
    # revision; a check judged in both eras, either (2026-07-28 first, where the words are the same).
    era = CATALOGUE[check_id].era
    cited = {"modern": {"2026-07-28"}, "legacy": {"2025-11-25"}}.get(era, {"2026-07-28", "2025-11-25"})
    if re.search(r"\d{4}-\d{2}-\d{2}", rule):
        assert any(revision in rule for revision in cited), rule
    # Another revision may be mentioned (when a rule began), but "the spec" is always the era's.
    assert set(re.findall(r"MCP (\d{4}-\d{2}-\d{2})", rule)) <= cited, rule
    if CATALOGUE[check_id].era == "modern":
        assert CATALOGUE[check_id].source.startswith("MCP 2026-07-28"), check_id


# -- report ---------------------------------------------------------------------------------------
def sample_report() -> Report:
    return Report(
        command=["python3", "server.py"],
        results=[
            Result("ping", "pass", "ping answered {}", {"received": "hidden unless verbose"}),
            Result(
                "envelope",
                "fail",
                "bad envelope, café",
                {"received": '{"jsonrpc":"1.0"}', "sent": "ping", "near_miss": None, "problems": ["a", "b"]},
            ),
            Result("startup-time", "warn", "slow", {"elapsed": 2.5, "stderr_tail": "one\ntwo\n", "long": "x" * 200}),
            Result("shop-contract", "skip", "not a shop server"),
        ],
        wall_seconds=1.5,
        probes=["main", "bad-input"],
    )


def test_write_text() -> None:
    out = io.StringIO()
    write_text(sample_report(), out)
    lines = out.getvalue().splitlines()
    assert lines[0] == "mcp-lab check: python3 server.py"
    assert lines[1] == "  PASS  ping           legacy  ping answered {}"
    assert lines[2] == "  FAIL  envelope       both    bad envelope, café"
    # A failure: its evidence (sent before received, empty values left out), then rule and fix.
    assert lines[3:10] == [
        "        sent: ping",
        '        received: {"jsonrpc":"1.0"}',
        "        problems:",
        "          a",
        "          b",
        f"        rule: [MUST] {CHECKS['envelope'].source}: {CHECKS['envelope'].rule}",
        f"        fix: {CHECKS['envelope'].fix}",
    ]
    assert lines[10] == "  WARN  startup-time   legacy  slow"
    assert lines[11:18] == [
        "        elapsed: 2.5",
        "        stderr (last lines):",
        "          | one",
        "          | two",
        f"        long: {'x' * WIDTH} [...]",
        f"        rule: [recommendation] {CHECKS['startup-time'].source}: {CHECKS['startup-time'].rule}",
        f"        fix: {CHECKS['startup-time'].fix}",
    ]
    assert lines[18] == "  skip  shop-contract  legacy  not a shop server"
    assert lines[19] == "checks: 1 pass, 1 fail, 1 warn, 1 skip (1.5 s, 2 server processes)"
    assert len(lines) == 20
    assert re.match(r"^checks: \d+ pass, \d+ fail, \d+ warn, \d+ skip\b", lines[-1])


def test_write_text_verbose_shows_evidence_of_a_pass_without_rule() -> None:
    out = io.StringIO()
    write_text(sample_report(), out, verbose=True)
    lines = out.getvalue().splitlines()
    assert lines[1:4] == [
        "  PASS  ping           legacy  ping answered {}",
        "        received: hidden unless verbose",
        "  FAIL  envelope       both    bad envelope, café",
    ]


def test_write_json_is_the_contract() -> None:
    report = sample_report()
    out = io.StringIO()
    write_json(report, out)
    data = json.loads(out.getvalue())
    assert set(data) == {"command", "checks", "counts"}
    assert data["command"] == ["python3", "server.py"]
    assert [c["id"] for c in data["checks"]] == ["ping", "envelope", "startup-time", "shop-contract"]
    for check in data["checks"]:
        assert set(check) == {"id", "era", "status", "summary", "evidence"}
        assert check["era"] == CATALOGUE[check["id"]].era
        assert check["status"] in STATUSES
        assert isinstance(check["evidence"], dict)
        if check["status"] in ("fail", "warn"):
            assert check["evidence"]["rule"] == CHECKS[check["id"]].rule
            assert check["evidence"]["fix"] == CHECKS[check["id"]].fix
            assert check["evidence"]["keyword"] == CHECKS[check["id"]].keyword
            assert check["evidence"]["source"] == CHECKS[check["id"]].source
        else:
            assert not {"rule", "fix", "keyword", "source"} & set(check["evidence"])
    assert data["counts"] == {"pass": 1, "fail": 1, "warn": 1, "skip": 1}
    assert sum(data["counts"].values()) == len(data["checks"])
    assert "bad envelope, café" in out.getvalue()  # UTF-8 text, not \u escapes
    assert report.exit_code == 1


def test_write_json_leaves_the_report_unchanged() -> None:
    report = sample_report()
    before = [dict(r.evidence) for r in report.results]
    write_json(report, io.StringIO())
    assert [r.evidence for r in report.results] == before


def test_a_report_of_unreached_checks() -> None:
    report = Report(["server"], list(Findings().results().values()))
    assert report.counts == {"pass": 0, "fail": 0, "warn": 0, "skip": len(CHECKS)}
    assert report.exit_code == 0
    out = io.StringIO()
    write_json(report, out)
    data = json.loads(out.getvalue())
    assert [c["id"] for c in data["checks"]] == list(CHECKS)
    warn_only = Report(["server"], [Result("startup-time", "warn", "slow")])
    assert warn_only.exit_code == 0


# -- structured_output ------------------------------------------------------------------------------
COUNT_OUT = {
    "type": "object",
    "properties": {"status": {"type": "string"}, "count": {"type": "integer", "minimum": 0}},
    "required": ["count"],
    "additionalProperties": False,
}
COUNTING = [{"name": "count", "inputSchema": {"type": "object"}, "outputSchema": COUNT_OUT}]


def structured(value: Any, text: str | None = None) -> dict[str, Any]:
    shown = json.dumps(value) if text is None else text
    return {"content": [{"type": "text", "text": shown}], "structuredContent": value, "isError": False}


def judge_one(result: Any, version: str = "2025-11-25", tools: list[dict[str, Any]] | None = None) -> Result:
    found = Findings()
    judge_structured_output(version, COUNTING if tools is None else tools, [("count", {}, result)], found)
    return found.results()["structured-output"]


@pytest.mark.parametrize("value", [{"count": 3}, {"status": "paid", "count": 0}])
def test_structured_output_passes_conforming_results(value: dict[str, Any]) -> None:
    verdict = judge_one(structured(value))
    assert verdict.status == "pass", verdict
    assert verdict.summary.startswith("under 2025-11-25, 1 result(s) of 1 tool(s)")


@pytest.mark.parametrize(
    ("result", "problem"),
    [
        ({"content": [{"type": "text", "text": '{"count": 3}'}], "isError": False}, "has no structuredContent"),
        (structured({"count": "3"}), "at count: '3' is not of type 'integer'"),
        (structured({"count": -1}), "at count: -1 is less than the minimum of 0"),
        (structured({"status": "paid"}), "at the top level: 'count' is a required property"),
        (structured({"count": 1, "extra": True}), "Additional properties are not allowed"),
        (structured([1, 2]), "structuredContent must be a JSON object"),
        (structured(None), "structuredContent must be a JSON object"),
    ],
)
def test_structured_output_fails_missing_or_wrong_structured_content(result: dict[str, Any], problem: str) -> None:
    verdict = judge_one(result)
    assert verdict.status == "fail", verdict
    assert problem in verdict.summary, verdict.summary
    assert verdict.evidence["sent"] == '{"name":"count","arguments":{}}'
    assert "outputSchema" in verdict.evidence and verdict.evidence["problems"]


@pytest.mark.parametrize(
    ("result", "problem"),
    [
        ({"content": [], "structuredContent": {"count": 3}}, "no text block"),
        (structured({"count": 3}, text="3 orders"), "no text block holds the same JSON"),
        (structured({"count": 3}, text='{"count": 4}'), "no text block holds the same JSON"),
    ],
)
def test_structured_output_warns_when_the_text_does_not_carry_the_json(result: dict[str, Any], problem: str) -> None:
    verdict = judge_one(result)
    assert verdict.status == "warn", verdict
    assert problem in verdict.summary


def test_a_failure_outranks_a_warning_and_keeps_its_own_evidence() -> None:
    found = Findings()
    calls = [
        ("count", {"n": 1}, {"content": [], "structuredContent": {"count": 3}}),
        ("count", {"n": 2}, structured({})),
    ]
    judge_structured_output("2025-06-18", COUNTING, calls, found)
    verdict = found.results()["structured-output"]
    assert verdict.status == "fail" and "'count' is a required property" in verdict.summary
    assert verdict.evidence["sent"] == '{"name":"count","arguments":{"n":2}}'
    assert verdict.evidence["problems"] == [f"count: {verdict.summary.removeprefix('under 2025-06-18, count: ')}"]


@pytest.mark.parametrize(
    "result",
    [
        {"content": [{"type": "text", "text": "no count today"}], "isError": True},
        {"content": [{"type": "text", "text": "x"}], "structuredContent": {"count": "x"}, "isError": True},
        None,  # a protocol error: no result at all
    ],
)
def test_error_results_are_not_judged(result: Any) -> None:
    verdict = judge_one(result)
    assert verdict.status == "skip" and "none was called successfully" in verdict.summary


@pytest.mark.parametrize("version", ["2025-03-26", "2024-11-05", None, 20250618])
def test_structured_output_is_skipped_before_2025_06_18(version: Any) -> None:
    verdict = judge_one(structured({"count": "3"}), version=version)
    assert verdict.status == "skip" and "begins with 2025-06-18" in verdict.summary


def test_structured_output_without_any_output_schema_is_skipped() -> None:
    tools = [{"name": "count", "inputSchema": {"type": "object"}}]
    verdict = judge_one({"content": [{"type": "text", "text": "3"}], "isError": False}, tools=tools)
    assert verdict.status == "skip" and "no tool declares an outputSchema" in verdict.summary
    # Without a schema, structuredContent is optional, but still a JSON object.
    assert judge_one(structured("3"), tools=tools).status == "fail"


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        ([], "not a JSON Schema object"),
        ({"type": "array", "items": {}}, '"type" must be "object"'),
        ({"properties": {}}, '"type" must be "object"'),
        ({"type": "object", "properties": {"n": {"type": "integr"}}}, "not a valid JSON Schema"),
        ({"type": "object", "required": "count"}, "not a valid JSON Schema"),
    ],
)
def test_unusable_output_schemas_fail(schema: Any, problem: str) -> None:
    message = output_schema_problem(schema)
    assert message is not None and problem in message
    tools = [{"name": "count", "inputSchema": {"type": "object"}, "outputSchema": schema}]
    verdict = judge_one(structured({"count": 3}), tools=tools)
    assert verdict.status == "fail" and problem in verdict.summary


def test_output_schema_dialect_follows_dollar_schema() -> None:
    draft7 = {"$schema": "http://json-schema.org/draft-07/schema#", **COUNT_OUT}
    assert output_schema_problem(draft7) is None
    assert result_problems(draft7, structured({"count": 3})) == (None, None)
    nullable = {**COUNT_OUT, "properties": {"count": {"type": ["integer", "null"]}}}
    assert result_problems(nullable, structured({"count": None})) == (None, None)


def test_a_result_that_is_no_call_tool_result_is_left_to_tools_call_result() -> None:
    assert result_problems(COUNT_OUT, {"content": "3", "structuredContent": {"count": 3}}) == (None, None)
    assert judge_one({"content": "3", "structuredContent": {"count": 3}}).status == "pass"


def test_a_tool_name_failure_says_the_course_asks_more_than_the_spec() -> None:
    """The naming rule is a SHOULD (the checker warns); stage 04 grades the strict form, and says so."""
    from grader.course.checks.stage04 import NAMES_BAD, check_names
    from grader.course.expect import Failure

    lax = next(name for name in NAMES_BAD if "." in name)
    try:
        check_names(lambda name: True, [(lax, False)])
    except Failure as failure:
        text = failure.text()
    else:
        raise AssertionError("a name with a dot was accepted")
    flat = " ".join(text.split())  # the prose is wrapped under its label
    assert "a SHOULD in the spec" in flat and "this course asks the strict form" in flat, text
    assert "rule: " in flat and "SHOULD" in flat.split("rule: ")[1], text
