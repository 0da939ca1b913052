"""`mcp-lab check` in both eras: which eras a server speaks, --era, and the modern era's checks.

MCP 2026-07-28 (the modern era) has no initialize; the checker finds a server's eras the way a
dual-era client does (a server/discover probe in one process, initialize in another) and judges
each era the server speaks by that era's rules. Every server here is a real process over real
pipes: the reference (dual-era), the gallery's healthy legacy and modern-only bases, and the
official SDK 2.3 ``MCPServer`` (dual-era, code no one here wrote). The small rules come first, as
functions of what came back.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import sys
from pathlib import Path

import pytest
from check_support import by_id, check
from conftest import ROOT

from grader import gallery
from grader.checker.catalogue import CATALOGUE, MODERN_CHECKS
from grader.checker.era import Eras
from grader.checker.modern_checks import (
    cacheable_problems,
    discover_problems,
    forge,
    input_required_problems,
    input_responses,
    result_type_problem,
    unsupported_problems,
)
from reference import database

REFERENCE = [sys.executable, "-m", "reference.server"]
LEGACY_BASE = [sys.executable, str(gallery.BASE)]
MODERN_BASE = [sys.executable, str(gallery.MODERN_BASE)]
SDK_SERVER = [sys.executable, str(ROOT / "bench" / "sdk_shop_server.py")]
MRTR = ("modern-input-required", "modern-request-state")
BAD = ("fail", "warn")


def problems(report: dict) -> dict[str, str]:
    return {c["id"]: c["status"] for c in report["checks"] if c["status"] in BAD}


def in_era(report: dict, era: str) -> dict[str, dict]:
    return {i: c for i, c in by_id(report).items() if c["era"] == era}


# -- the rules, as functions of what came back ------------------------------------------------------
def test_which_eras_are_judged() -> None:
    """auto: every era the server speaks; a server that speaks neither is judged as legacy, as ever."""
    cases = {  # (modern spoken, legacy spoken) -> (modern judged, legacy judged)
        (True, True): (True, True),
        (True, False): (True, False),
        (False, True): (False, True),
        (False, False): (False, True),
    }
    for (modern, legacy), judged in cases.items():
        eras = Eras("auto")
        eras.set_modern(modern, "m")
        eras.set_legacy(legacy, "l")
        assert (eras.judged("modern"), eras.judged("legacy")) == judged, (modern, legacy)
    for mode, judged in {"modern": (True, False), "legacy": (False, True), "both": (True, True)}.items():
        eras = Eras(mode)
        eras.set_modern(False, "m")
        eras.set_legacy(False, "l")
        assert (eras.judged("modern"), eras.judged("legacy")) == judged, mode
        assert "--era" in eras.skip_reason("legacy" if mode == "modern" else "modern") or mode == "both"


def test_result_shapes() -> None:
    assert result_type_problem({"resultType": "complete"}) is None
    assert result_type_problem({"resultType": "input_required", "requestState": "x"}) is None
    assert "not one the client knows" in (result_type_problem({"resultType": "task"}) or "")
    assert cacheable_problems("tools/call", {"content": []}) == []  # not a cacheable method
    assert cacheable_problems("tools/list", {"resultType": "input_required"}) == []  # interim: no hints
    assert cacheable_problems("resources/read", {"ttlMs": 0, "cacheScope": "private"}) == []
    assert cacheable_problems("tools/list", {"ttlMs": True, "cacheScope": "shared"}) == [
        '"ttlMs" must be an integer >= 0, found true',
        '"cacheScope" must be "public" or "private", found "shared"',
    ]
    assert discover_problems({"supportedVersions": ["2025-11-25"], "capabilities": {}}) == [
        '"supportedVersions" ["2025-11-25"] lacks 2026-07-28, the version it was asked in'
    ]
    good = {"code": -32022, "message": "m", "data": {"supported": ["2026-07-28"], "requested": "1999-01-01"}}
    assert unsupported_problems(good, "1999-01-01") == []
    assert unsupported_problems({"code": -32602, "message": "m"}, "1999-01-01") == [
        "error -32602, not -32022 (UnsupportedProtocolVersion)"
    ]
    assert "served" in unsupported_problems(None, "1999-01-01")[0]


def test_input_required_rules() -> None:
    ask = {"confirm": {"method": "elicitation/create", "params": {"message": "sure?"}}}
    assert input_required_problems({"inputRequests": ask, "requestState": "s"}, {"elicitation": {}}) == []
    assert input_required_problems({}, {})[0].startswith('an input_required result needs "inputRequests"')
    undeclared = input_required_problems({"inputRequests": ask}, {})
    assert undeclared and 'declared no "elicitation" capability' in undeclared[0]
    roots = {"r": {"method": "roots/list"}}
    assert input_responses({**ask, **roots}) == {"confirm": {"action": "decline"}, "r": {"roots": []}}


def test_a_forged_state_keeps_its_form_and_its_signature() -> None:
    """The checker alters what a state says, the way an attacker would, so that only a server that
    verifies the state can tell."""
    key = b"k" * 32
    body = base64.urlsafe_b64encode(json.dumps({"order_id": 5, "tool": "cancel_order"}).encode()).decode().rstrip("=")
    state = body + "." + hmac.new(key, body.encode(), hashlib.sha256).hexdigest()
    forged = forge(state)
    forged_body, _, mac = forged.partition(".")
    assert mac == state.partition(".")[2] and forged_body != body
    decoded = json.loads(base64.urlsafe_b64decode(forged_body + "=" * (-len(forged_body) % 4)))
    assert decoded == {"order_id": 6, "tool": "cancel_order"}
    assert json.loads(forge('{"step": "confirm"}')) == {"step": "confirm-forged"}
    assert forge("opaque-token") != "opaque-token"


def test_every_modern_check_cites_the_revision_and_its_keyword_decides() -> None:
    for check_id, entry in MODERN_CHECKS.items():
        assert entry.era in ("modern", "both"), check_id
        assert "2026-07-28" in entry.source or entry.id == "era-mixing", check_id
        assert entry.fix and entry.rule and entry.holds, check_id
    # A legacy server's silence on the probe is described by the spec, with no keyword: a warning.
    assert CATALOGUE["era-probe"].main.keyword == "described" and not CATALOGUE["era-probe"].main.may_fail
    assert CATALOGUE["modern-no-server-requests"].main.keyword == "MUST NOT"
    assert CATALOGUE["modern-removed-methods"].main.may_fail is False  # no keyword for a removed method's code


# -- whole runs ------------------------------------------------------------------------------------
def test_the_reference_speaks_both_eras_and_the_report_says_so() -> None:
    report, code = check(REFERENCE)
    assert code == 0 and problems(report) == {}
    for check_id, entry in in_era(report, "modern").items():
        assert entry["status"] == ("skip" if check_id in MRTR else "pass"), entry
    mixing = by_id(report)["era-mixing"]["evidence"]["by_revision"]
    assert set(mixing) == {"2025-11-25", "2026-07-28"}  # judged on both eras' connections
    text, _ = check(REFERENCE, text=True)
    assert re.search(r"^  PASS  discover-result +modern +mcp-wire-lab-shop", text, re.MULTILINE)
    assert re.search(r"^  PASS  initialize-result +legacy ", text, re.MULTILINE)
    assert re.search(r"^eras: modern spoken .*; legacy spoken .*; judged: modern, legacy$", text, re.MULTILINE)


def test_a_legacy_only_server_has_its_modern_checks_skipped() -> None:
    report, code = check(LEGACY_BASE)
    assert code == 0 and problems(report) == {}
    found = by_id(report)
    # It answers the probe at once with an error (-32601): a dual-era client falls back at once.
    assert found["era-probe"]["status"] == "pass" and "-32601" in found["era-probe"]["summary"]
    for entry in in_era(report, "modern").values():
        assert entry["status"] == "skip" and "does not speak the modern era" in entry["summary"], entry
    assert found["initialize-result"]["status"] == "pass"


def test_era_both_fails_a_legacy_only_server_in_the_modern_era() -> None:
    report, code = check(LEGACY_BASE, "--era", "both")
    assert code == 1
    found = by_id(report)
    assert found["discover-result"]["status"] == "fail"
    assert "does not speak 2026-07-28" in found["discover-result"]["summary"]
    assert set(problems(report)) == {"discover-result"}


def test_era_legacy_fails_a_modern_only_server_and_era_modern_judges_it_alone() -> None:
    report, code = check(MODERN_BASE, "--era", "legacy")
    assert code == 1 and problems(report).get("initialize-result") == "fail"
    assert all(c["status"] == "skip" and "--era legacy" in c["summary"] for c in in_era(report, "modern").values())
    text, code = check(MODERN_BASE, "--era", "modern", text=True)
    assert code == 0
    assert "judged: modern (--era modern)" in text
    assert re.search(r"^  skip  initialize-result +legacy +not judged: --era modern", text, re.MULTILINE)
    assert "(1 server processes)" in text or re.search(r"\(\d+\.\d s, 1 server process", text)


def test_era_both_fails_a_modern_only_server_once_in_the_legacy_era() -> None:
    """Asked for by name, the legacy era of a modern-only server fails at initialize, and only there."""
    report, code = check(MODERN_BASE, "--era", "both")
    assert code == 1 and problems(report) == {"initialize-result": "fail"}
    assert "speaks only the modern era" in by_id(report)["initialize-result"]["summary"]
    assert by_id(report)["ping"]["summary"].startswith("not reached: initialize was refused")


def test_a_modern_only_server_names_its_versions_to_initialize() -> None:
    """Refusing initialize is conformant for a modern-only server; it SHOULD name its versions."""
    report, _ = check(MODERN_BASE)
    removed = by_id(report)["modern-removed-methods"]
    assert removed["status"] == "pass"
    assert by_id(report)["initialize-result"]["status"] == "skip"


def test_the_sdk_server_in_both_eras_has_no_false_failure() -> None:
    """The official SDK 2.3 MCPServer (dual-era): every modern check that applies passes; in either
    era it fails only where tests/test_checker.py documents it (it does not answer lines it cannot
    parse, a real MUST of JSON-RPC, in both eras alike)."""
    report, code = check(SDK_SERVER, "--era", "modern")
    # What it does with lines it cannot parse is the same in both eras (no answer: JSON-RPC's MUST).
    assert code == 1 and problems(report) == {"parse-error": "fail", "invalid-request": "fail"}, report
    assert by_id(report)["parse-error"]["evidence"]["keyword"] == "MUST"
    for check_id, entry in in_era(report, "modern").items():
        assert entry["status"] == ("skip" if check_id in MRTR else "pass"), entry
    assert by_id(report)["modern-subscriptions"]["status"] == "pass"  # it declares listChanged
    for check_id in ("id-echo", "notification-silence", "method-not-found", "survives-bad-input", "tools-list"):
        assert by_id(report)[check_id]["status"] == "pass", check_id  # judged in the modern session
    legacy, code = check(SDK_SERVER, "--era", "legacy")
    assert code == 1
    assert {i: s for i, s in problems(legacy).items() if s == "fail"} == {
        "parse-error": "fail",
        "invalid-request": "fail",
    }
    assert all(c["status"] == "skip" for c in in_era(legacy, "modern").values())


def test_the_references_cancel_order_round_trip_where_it_asks_for_input(tmp_path: Path) -> None:
    """With writes on, the reference's cancel_order asks the user to confirm (input_required): the
    round trip and a tampered requestState are judged. Until the tool asks, they are skipped, saying why."""
    copy = database.build(tmp_path / "copy.db")
    # The checker calls cancel_order with its example arguments (order 1); the reference asks only
    # about a cancel that would change something, so order 1 is one that can still be cancelled.
    import sqlite3

    with sqlite3.connect(copy) as conn:
        conn.execute("UPDATE orders SET status = 'pending' WHERE id = 1")
    conn.close()
    server = [*REFERENCE, "--allow-writes", "--db", str(copy)]
    report, _ = check(server, "--era", "modern", "--call-tools")
    found = by_id(report)
    if found["modern-input-required"]["status"] == "skip":
        assert "no tool call answered input_required" in found["modern-input-required"]["summary"]
        pytest.skip("the reference's cancel_order does not answer input_required yet")
    assert found["modern-input-required"]["status"] == "pass", found["modern-input-required"]
    assert found["modern-request-state"]["status"] == "pass", found["modern-request-state"]


VARIANTS = [sys.executable, str(ROOT / "tests" / "servers" / "modern_variants.py")]


@pytest.mark.parametrize(
    ("mode", "check_id", "words"),
    [
        ("listen-unacknowledged", "modern-subscriptions", "came before its acknowledgement"),
        ("asks-undeclared", "modern-input-required", 'declared no "elicitation" capability'),
    ],
)
def test_subscriptions_and_round_trips_can_fail(mode: str, check_id: str, words: str) -> None:
    """A listen stream that notifies before it acknowledges; a tool that asks a client for an
    elicitation it did not declare. Each breaks its MUST, and nothing else."""
    report, code = check([*VARIANTS, mode], "--call-tools")
    assert code == 1 and problems(report) == {check_id: "fail"}
    assert words in by_id(report)[check_id]["summary"]
    assert by_id(report)[check_id]["evidence"]["keyword"] == "MUST"


# The modern reference after 12 s on the CPU before it reads stdin: longer than the probe's 10 s.
BUSY_START = (
    "import runpy, sys, time\n"
    "end = time.monotonic() + 12\n"
    "while time.monotonic() < end:\n"
    "    pass\n"
    "sys.argv = ['reference.server', '--db', sys.argv[1]]\n"
    "runpy.run_module('reference.server', run_name='__main__')\n"
)


@pytest.mark.slow
def test_a_server_still_starting_on_the_cpu_is_waited_for_not_taken_for_silent(shop_db: Path) -> None:
    """On a busy machine a server may take longer than the probe's timeout to start: while it works
    (and writes nothing) the probe waits on, so it is judged modern, not a legacy server ignoring it."""
    report, _ = check([sys.executable, "-c", BUSY_START, str(shop_db)], "--era", "modern")
    found = by_id(report)
    assert found["era-probe"]["status"] == "pass", found["era-probe"]
    assert found["modern-result-type"]["status"] == "pass", found["modern-result-type"]
