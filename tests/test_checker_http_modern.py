"""The checker over Streamable HTTP in the modern era (MCP 2026-07-28): `mcp-lab check --url`, both eras.

Every server is a real process on a real socket; the checker runs as the console script does.

- the reference (`mcp-lab serve --http 127.0.0.1:0`) speaks both eras and passes every check of
  each; the modern HTTP checks say their era in the JSON and in the text report;
- `--era legacy` and `--era modern` judge one era and skip the other's checks, saying why;
- a modern-only endpoint (the gallery's modern_base.py --modern-only) is not failed for refusing
  initialize: its legacy checks are skipped with the reason; `--era both` judges them anyway;
- a legacy-only endpoint is judged as before, and fails http-modern-result only when the modern
  era is asked for by name;
- the official SDK 2.3 `MCPServer` over HTTP (bench/sdk_shop_http_server.py): no false failure in
  either era (its one failure, invalid-request, is a real MUST: README, "What it says about real
  servers"); its header routing is a warning with its rule;
- the Mcp-Name values the checker writes are the ones the reference decodes.

The exhibits of the modern era (each fails or warns on its own check alone) are judged with the
other HTTP exhibits, in tests/test_checker_http.py.
"""

from __future__ import annotations

import importlib.util
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, run_cli
from http_support import HttpServer
from test_checker_http import check_url, findings, http_child, statuses

from grader import gallery
from grader.checker.catalogue import CHECKS, HTTP_CHECKS, STDIO_ONLY
from grader.checker.http_modern import forced_base64, header_value
from reference.mcp_headers import decode_value

MODERN = [i for i, c in HTTP_CHECKS.items() if c.era == "modern"]
LEGACY = [i for i, c in {**CHECKS, **HTTP_CHECKS}.items() if c.era == "legacy" and i not in STDIO_ONLY]


@pytest.fixture(scope="module")
def reference(shop_db: Path) -> Iterator[HttpServer]:
    server = HttpServer(["--db", str(shop_db)])
    yield server
    server.stop()


def by_id(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["id"]: c for c in report["checks"]}


def test_the_reference_passes_every_check_of_both_eras_over_http(reference: HttpServer) -> None:
    report, code, _ = check_url(reference.url)
    assert code == 0 and findings(report) == {}, findings(report)
    checks = by_id(report)
    for check in MODERN:
        assert checks[check]["status"] == "pass" and checks[check]["era"] == "modern", checks[check]
    assert all(checks[i]["status"] in ("pass", "skip") and checks[i]["era"] == "legacy" for i in LEGACY)
    assert checks["initialize-result"]["status"] == "pass"
    headers = checks["http-modern-headers"]["summary"]
    assert "400 with -32020 for 6 header faults" in headers and "=?base64?" in headers
    assert (
        "404 with -32601" in checks["http-modern-status"]["summary"]
        and "403 for Origin" in checks["http-modern-status"]["summary"]
    )
    assert "a stale one sent was ignored" in checks["http-modern-no-session"]["summary"]
    assert "tools/call" in checks["http-modern-result"]["summary"]


def test_the_text_report_says_the_eras(reference: HttpServer) -> None:
    done = run_cli(["check", "--url", reference.url], timeout=180)
    out = done.stdout.decode()
    assert done.returncode == 0, out
    for check in MODERN:
        assert f"  PASS  {check}" in out and any(check in line and " modern " in line for line in out.splitlines())
    eras = next(line for line in out.splitlines() if line.startswith("eras: "))
    assert "modern spoken (server/discover got HTTP 200 with a result)" in eras
    assert "legacy spoken (initialize got a result)" in eras and eras.endswith("judged: modern, legacy")


@pytest.mark.parametrize(("era", "judged", "skipped"), [("legacy", LEGACY, MODERN), ("modern", MODERN, LEGACY)])
def test_era_picks_the_era_judged_over_http(
    reference: HttpServer, era: str, judged: list[str], skipped: list[str]
) -> None:
    report, code, _ = check_url(reference.url, "--era", era)
    assert code == 0 and findings(report) == {}
    checks = by_id(report)
    assert all(
        checks[i]["summary"] == f"not judged: --era {era} (the {checks[i]['era']} era was not asked for)"
        for i in skipped
    )
    assert {checks[i]["status"] for i in judged} <= {"pass", "skip"} and "pass" in {checks[i]["status"] for i in judged}
    assert checks[judged[0]]["status"] == "pass"


def test_a_modern_only_endpoint_is_not_failed_for_refusing_initialize() -> None:
    with http_child([sys.executable, str(gallery.HTTP_MODERN_BASE), "--modern-only", "--port", "0"]) as url:
        report, code, _ = check_url(url)
        both, both_code, _ = check_url(url, "--era", "both")
    assert code == 0 and findings(report) == {}, findings(report)
    checks = by_id(report)
    assert all(checks[i]["status"] == "pass" for i in MODERN)
    # The tools are judged in the modern session over HTTP, as the stdio modern session does.
    assert all(checks[i]["status"] == "pass" for i in ("tools-list", "tool-names", "tools-call-result", "envelope"))
    assert "under 2026-07-28 over HTTP" in checks["tools-call-result"]["summary"]
    for check in LEGACY:
        summary = checks[check]["summary"]
        assert checks[check]["status"] == "skip" and summary.startswith("not judged: a modern-only server"), summary
    assert "initialize got HTTP 400 with error -32020" in checks["initialize-result"]["summary"]
    # --era both judges the legacy era anyway: then initialize's refusal is a failure.
    assert both_code == 1 and statuses(both)["initialize-result"] == "fail"
    assert all(statuses(both)[i] == "pass" for i in MODERN)


def test_a_legacy_only_endpoint_fails_the_modern_era_only_when_it_is_asked_for() -> None:
    with http_child([sys.executable, str(gallery.HTTP_BASE)]) as url:
        report, code, _ = check_url(url, "--era", "modern")
    assert code == 1 and findings(report) == {"http-modern-result": "fail"}
    failed = by_id(report)["http-modern-result"]
    assert "does not speak 2026-07-28" in failed["summary"] and failed["evidence"]["keyword"] == "MUST"
    assert all(statuses(report)[i] == "skip" for i in MODERN if i != "http-modern-result")


def sdk_server() -> list[str]:
    if importlib.util.find_spec("uvicorn") is None or importlib.util.find_spec("mcp") is None:
        pytest.skip("the official SDK (mcp) and uvicorn are not installed")
    return [sys.executable, str(ROOT / "bench" / "sdk_shop_http_server.py"), "--port", "0"]


def test_the_sdk_http_server_gets_no_false_failure_in_either_era() -> None:
    with http_child(sdk_server()) as url:
        report, _, _ = check_url(url)
    checks = by_id(report)
    eras = {c["era"] for c in report["checks"] if c["status"] != "skip"}
    assert eras == {"legacy", "modern", "both"}  # it speaks both eras over HTTP: both are judged
    # Its one failure is real: a null or fractional id taken for a notification (202), where a
    # request MUST get a response (legacy era; README, "What it says about real servers").
    assert {i for i, s in findings(report).items() if s == "fail"} == {"invalid-request"}
    modern = {i: checks[i]["status"] for i in MODERN}
    assert modern == {**{i: "pass" for i in MODERN}, "http-modern-headers": "warn"}, modern
    routed = checks["http-modern-headers"]
    assert routed["evidence"]["keyword"] == "described" and "Missing session ID" in routed["evidence"]["received"]
    assert "MCP-Protocol-Version: 2025-11-25" in routed["summary"]


@pytest.mark.parametrize("value", ["get_order", "shop://schema", "Grüße", " padded ", "=?base64?literal?="])
def test_the_mcp_name_values_written_are_those_the_reference_decodes(value: str) -> None:
    assert decode_value(header_value(value)) == value and decode_value(forced_base64(value)) == value
    assert header_value(value) == value or header_value(value).startswith("=?base64?")


def test_a_modern_request_that_hangs_is_a_failure_in_bounded_time() -> None:
    with http_child([sys.executable, str(ROOT / "tests" / "servers" / "http_modern_hangs.py"), "--port", "0"]) as url:
        start = time.monotonic()
        # 3 s, not 1: every other reply must come within it, also on a busy machine (a notification's
        # 202 once took longer than 1 s under the suite and failed http-notification-202).
        report, code, _ = check_url(url, "--timeout", "3", timeout=120)
        elapsed = time.monotonic() - start
    assert code == 1 and elapsed < 60, elapsed  # one wait of the timeout, not one per request left
    assert findings(report) == {"http-modern-result": "fail"}, findings(report)
    checks = by_id(report)
    assert checks["http-modern-result"]["summary"].startswith("tools/list (a 2026-07-28 POST) got no whole HTTP")
    for check in ("http-modern-headers", "http-modern-status", "http-modern-no-session"):
        assert checks[check]["status"] == "skip" and checks[check]["summary"].startswith("not reached: tools/list")
    assert checks["tools-list"]["status"] == "pass"  # the legacy session lists the tools (by_revision: one era)


def test_with_a_bearer_token_both_eras_are_judged_and_without_it_the_skip_says_so(shop_db: Path) -> None:
    server = HttpServer(["--db", str(shop_db), "--auth-token", "s3cret-modern"])
    try:
        given, code, output = check_url(server.url, "--header", "Authorization: Bearer s3cret-modern")
        bare, _, _ = check_url(server.url)
    finally:
        server.stop()
    assert code == 0 and findings(given) == {} and all(statuses(given)[i] == "pass" for i in MODERN)
    assert "s3cret-modern" not in output
    reason = by_id(bare)["http-modern-headers"]["summary"]
    assert "HTTP 401" in reason and "--header 'Authorization: Bearer TOKEN'" in reason
