"""The checker names the root cause: one defect, one diagnosis, on the whole gallery.

Every check runs ``mcp-lab check --json`` as a real process on a real server over real pipes:

- for every exhibit of the gallery, the first failing check of the report (the first one not
  passing, where the exhibit only warns) is the exhibit's own check, and every check marked
  ``caused_by`` names a root that fails (or warns) in the same report and is no consequence itself:
  ``check_support.assert_leads_with_its_own_check``, asserted in ``test_gallery.py`` on each of the
  three runs of every exhibit (a fourth run here only for that cost 50 checker runs);
- the one-defect exhibits mark exactly the consequences their evidence shows, in JSON and in text;
- a second, independent defect is never marked as a consequence (partial flushing is in test_flush.py);
- a reply with a mistyped id fails id-echo even when it ends the session before id-echo's step;
- a stray blank line after each reply is one defect, not two;
- with every other reply unflushed, every finding but stdout-flush is marked as its consequence.
"""

from __future__ import annotations

import json
import sys

import pytest
from check_support import BAD, SERVERS, by_id, causes, check

from grader import gallery

# Each one-defect exhibit with consequences: exactly these checks are marked, with their root.
CONSEQUENCES = {
    # The server/discover probe (era-probe) is held back, or unreadable, like every other reply.
    "missing_flush": {"initialize-result": "stdout-flush", "startup-time": "stdout-flush", "era-probe": "stdout-flush"},
    "pretty_printed": {
        "initialize-result": "stdout-json-lines",
        "stdout-silent-at-start": "stdout-json-lines",
        "era-probe": "stdout-json-lines",
    },
    "content_length": {
        "initialize-result": "stdout-json-lines",
        "startup-time": "stdout-json-lines",
        "era-probe": "stdout-json-lines",
        # Not stdout-silent-at-start: its header lines start a reply (framed the LSP way), and
        # the checker does not count them as "before the first request", fast machine or slow.
        "stdout-line-ending": "stdout-json-lines",
    },
    "dies_on_bad_line": {"parse-error": "survives-bad-input"},
    "log_to_stdout": {"tools-call-result": "stdout-json-lines"},
    "child_writes_stdout": {"stdout-json-lines": "tools-call-result"},
    "wrong_result_shape": {"shop-contract": "tools-call-result"},
    "early_server_request": {"stdout-silent-at-start": "no-early-server-requests"},
    # Both stdout rules are truly broken by a banner, and both errors of this one are real.
    "banner": {},
    "tool_error_as_protocol_error": {},
}


@pytest.mark.parametrize("name", sorted(CONSEQUENCES))
def test_consequences_are_marked_with_their_root(name: str) -> None:
    report, _ = check(gallery.command(name))
    assert causes(report) == CONSEQUENCES[name]


def test_the_text_report_leads_with_the_root_and_says_what_follows_from_it() -> None:
    text, code = check(gallery.command("missing_flush"), text=True)
    assert code == 1
    lines = text.splitlines()
    assert lines[1].startswith("  FAIL  stdout-flush ")
    marked = [line for line in lines if "because of stdout-flush" in line]
    assert [line.split()[1] for line in marked] == ["initialize-result", "startup-time", "era-probe"]
    assert marked[0].startswith("  FAIL  initialize-result") and "fails because of stdout-flush: " in marked[0]
    assert marked[1].startswith("  WARN  startup-time") and "warns because of stdout-flush: " in marked[1]
    # The consequence's fix is the root's: only the root's rule and fix are printed.
    assert sum(line.strip().startswith("fix:") for line in lines) == 1


def test_an_independent_defect_is_not_marked_as_a_consequence() -> None:
    report, _ = check([sys.executable, str(SERVERS / "two_defects.py")])
    found = by_id(report)
    assert found["stdout-flush"]["status"] == "fail" and found["ping"]["status"] == "fail"
    assert causes(report) == {}


def test_a_mistyped_id_on_the_first_reply_is_named_as_id_echo() -> None:
    report, _ = check([sys.executable, str(SERVERS / "str_ids.py")])
    found = by_id(report)
    echo = found["id-echo"]
    assert echo["status"] == "fail" and "caused_by" not in echo
    assert json.loads(echo["evidence"]["received"])["id"] == "1"
    assert report["checks"][0]["id"] == "id-echo"
    assert causes(report) == {
        "initialize-result": "id-echo",
        "startup-time": "id-echo",
        "stdout-silent-at-start": "id-echo",
        "era-probe": "id-echo",
    }


def test_a_stray_blank_line_after_each_reply_is_reported_once() -> None:
    report, _ = check([sys.executable, str(SERVERS / "blank_after_reply.py")])
    found = by_id(report)
    assert found["stdout-json-lines"]["status"] == "fail" and "caused_by" not in found["stdout-json-lines"]
    assert causes(report) == {"tools-call-result": "stdout-json-lines"}
    roots = [c["id"] for c in report["checks"] if c["status"] == "fail" and "caused_by" not in c]
    assert roots == ["stdout-json-lines"]


def test_every_finding_of_replies_flushed_every_other_time_is_marked_as_the_flush() -> None:
    # The reference with every second flush forgotten: a held reply to a session's later
    # server/discover (never nudged) comes out with the next message, after the checker gave up.
    report, code = check([sys.executable, str(SERVERS / "flushes_every_other.py")])
    found = by_id(report)
    assert code == 1 and found["stdout-flush"]["status"] == "fail"
    assert report["checks"][0]["id"] == "stdout-flush" and "caused_by" not in report["checks"][0]
    for collateral in ("era-mixing", "modern-unsupported-version"):
        assert found[collateral]["status"] == "fail", found[collateral]
    bad = {c["id"] for c in report["checks"] if c["status"] in BAD}
    assert causes(report) == dict.fromkeys(bad - {"stdout-flush"}, "stdout-flush")
