"""The checker on real servers no one here wrote: true findings reported, no false fail.

The corpus (bench/corpus.py) is installed by bench/install_corpus.sh, which .ci/run calls; without
it these tests skip and say how to install it. Every verdict below is one a spec author would sign:
each fail names a MUST (or a schema), each warning a SHOULD, a description without keyword, a
recommendation or a point where revisions disagree. The README's checker section has the table.
startup-time (a host recommendation that depends on how busy the machine is) is left out.

Over Streamable HTTP (`mcp-lab check --url`), the same way: server-everything in its
streamableHttp mode and the SDK's own HTTP server (bench/sdk_shop_http_server.py), each started
on a free port (bench/corpus.py: serve_http), and the reference beside them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import corpus  # noqa: E402  (bench/ is not a package)

from grader.checker.catalogue import HTTP_CHECKS, STDIO_ONLY  # noqa: E402
from grader.checker.severity import FAILING  # noqa: E402

pytestmark = pytest.mark.skipif(
    not corpus.installed(), reason=f"the real-server corpus is not installed: run {corpus.INSTALL}"
)
LOAD_DEPENDENT = {"startup-time"}
# What each server breaks, and why (README, checker section):
#   parse-error, invalid-request: none answers a line that is not JSON, a null id, a float id or a
#     request without a method (JSON-RPC 2.0: a request MUST get a response, -32700 / -32600);
#   unknown-tool: an unknown tool gets an isError result (listed under protocol errors, no MUST);
#   structured-output: list_allowed_directories' text block is not the JSON of its
#     structuredContent (a SHOULD);
#   resources-read: a URI that names nothing gets -32602, where Resources > Error Handling says
#     -32002 (a SHOULD);
#   prompts-get: the SDK-based servers answer an unknown prompt (and a missing argument) with error
#     code 0, where Prompts > Error Handling says -32602 (a SHOULD). mcp-server-time and the SDK shop
#     declare resources and prompts though they have none: both lists are empty, which is fine.
NO_REPLY = {"parse-error": "fail", "invalid-request": "fail"}
SDK_ERRORS = {"resources-read": "warn", "prompts-get": "warn"}
EXPECTED: dict[str, dict[str, str]] = {
    "server-everything": {**NO_REPLY, "unknown-tool": "warn", "resources-read": "warn"},
    "server-filesystem": {**NO_REPLY, "unknown-tool": "warn", "structured-output": "warn"},
    "mcp-server-time": {**NO_REPLY, **SDK_ERRORS},
    "sdk-shop": {**NO_REPLY, "unknown-tool": "warn", **SDK_ERRORS},
}
# Over HTTP (README, "What it says about real servers"):
#   http-session (server-everything): after DELETE ended a session (200), its id gets 400, not 404
#     (Session Management: MUST); an id never issued gets 400 too (the spec's 404: described);
#   http-origin (server-everything): it answers a request from Origin https://evil.example (it allows
#     every origin, for the Inspector): servers MUST validate Origin and answer 403;
#   invalid-request: server-everything answers a null or fractional id, or no method, with 400 and
#     -32700 (a warning: the status answers; JSON-RPC's code for valid JSON is -32600); the SDK takes a
#     null or fractional id for a notification (202, no answer: a request MUST get a response);
#   parse-error (server-everything): invalid UTF-8 is decoded leniently and answered -32601;
#   unknown-tool, resources-read, prompts-get: as over stdio.
HTTP_EXPECTED: dict[str, dict[str, str]] = {
    "server-everything-http": {
        "http-session": "fail",
        "http-origin": "fail",
        "parse-error": "warn",
        "invalid-request": "warn",
        "unknown-tool": "warn",
        "resources-read": "warn",
    },
    # http-modern-headers: the SDK routes a POST by its MCP-Protocol-Version header, so a modern body under
    #   a 2025 header reaches its legacy transport and gets 400 -32600 "Missing session ID", not -32020
    #   (a warning: the request is refused, with another code; README, "What it says about real servers").
    "sdk-shop-http": {"invalid-request": "fail", "unknown-tool": "warn", **SDK_ERRORS, "http-modern-headers": "warn"},
    "reference-http": {},
}


def check(argv: list[str], env: dict[str, str] | None = None) -> dict[str, dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-m", "grader.cli", "check", "--json", "--", *argv],
        capture_output=True,
        text=True,
        timeout=300,  # a cold launcher downloads first; this only stops a hang
        env={**{k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}, **(env or {})},
        cwd=ROOT,
    )
    assert done.returncode in (0, 1), done.stderr
    assert "internal error" not in done.stderr, done.stderr
    return {c["id"]: c for c in json.loads(done.stdout)["checks"]}


def check_url(url: str) -> dict[str, dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-m", "grader.cli", "check", "--json", "--url", url],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode in (0, 1), done.stderr
    assert "internal error" not in done.stderr, done.stderr
    report = json.loads(done.stdout)
    assert report["url"] == url and "command" not in report
    return {c["id"]: c for c in report["checks"]}


def findings(report: dict[str, dict[str, Any]]) -> dict[str, str]:
    return {i: c["status"] for i, c in report.items() if c["status"] in ("fail", "warn") and i not in LOAD_DEPENDENT}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_checker_reports_the_true_findings_and_no_false_fail(name: str) -> None:
    report = check(corpus.COMMANDS[name])
    assert findings(report) == EXPECTED[name], {i: report[i]["summary"] for i in findings(report)}
    for check_id, status in findings(report).items():
        keyword = report[check_id]["evidence"]["keyword"]
        assert (keyword in FAILING) == (status == "fail"), (check_id, status, keyword)
        assert report[check_id]["evidence"]["source"]
    # Every check was reached: a skip gives its own reason, never "not reached".
    assert not [i for i, c in report.items() if c["summary"].startswith("not reached")]
    # Revisions are judged one by one, each named in the evidence.
    by_revision = report["tool-error-kind"]["evidence"]["by_revision"]
    assert set(by_revision) == {"2025-11-25", "2025-06-18"}
    assert "not_judged" not in report["version-negotiation"]["evidence"]


def test_a_slow_read_only_tool_is_waited_for() -> None:
    """server-everything's trigger-long-running-operation runs 10 s: within the 30 s call timeout."""
    report = check(corpus.COMMANDS["server-everything"])
    assert report["tools-call-result"]["status"] == "pass"
    assert report["exit-on-eof"]["summary"] == "exited with status 0 after stdin closed"


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("npx") is None, reason="npx is not installed")
def test_a_cold_and_a_warm_launcher_give_the_same_verdicts(tmp_path: Path) -> None:
    """npx with an empty npm cache downloads the package: once, in the warm-up start."""
    env = {"npm_config_cache": str(tmp_path / "npm-cache"), "npm_config_update_notifier": "false"}
    cold = check(corpus.LAUNCHED_FILESYSTEM, env)
    warm = check(corpus.LAUNCHED_FILESYSTEM, env)
    assert findings(cold) == findings(warm) == EXPECTED["server-filesystem"]
    for report in (cold, warm):
        assert "not_judged" not in report["version-negotiation"]["evidence"]
        startup = report["startup-time"]
        assert "cold_seconds" in startup["evidence"] and "cold) start took" in startup["summary"]
    # The cold start carried the download; the warm start did not.
    assert cold["startup-time"]["evidence"]["cold_seconds"] > warm["startup-time"]["evidence"]["warm_seconds"]


@pytest.mark.parametrize("name", sorted(HTTP_EXPECTED))
def test_over_http_the_checker_reports_the_true_findings_and_no_false_fail(name: str) -> None:
    with corpus.serve_http(name) as url:
        report = check_url(url)
    assert findings(report) == HTTP_EXPECTED[name], {i: report[i]["summary"] for i in findings(report)}
    for check_id, status in findings(report).items():
        keyword = report[check_id]["evidence"]["keyword"]
        assert (keyword in FAILING) == (status == "fail"), (check_id, status, keyword)
    assert not [i for i, c in report.items() if c["summary"].startswith("not reached")]
    # Every check that applies over HTTP was judged; only the stdio-only ones and http-auth (no
    # credentials given) are skipped, and shop-contract where the server is no shop.
    skipped = {i for i, c in report.items() if c["status"] == "skip"}
    # ... and the modern era's checks where the server does not speak it (server-everything 2026.8.31).
    modern = {i for i, c in HTTP_CHECKS.items() if c.era == "modern"}
    if report["http-modern-result"]["summary"].startswith("not judged: the server does not speak the modern era"):
        skipped -= modern
    assert skipped - STDIO_ONLY <= {"http-auth", "shop-contract", "shop-read-only"}, skipped - STDIO_ONLY
    by_revision = report["tool-error-kind"]["evidence"]["by_revision"]
    assert set(by_revision) == {"2025-11-25", "2025-06-18"}
    assert report["http-sse"]["status"] == "pass"  # every one of them streams, when asked for SSE alone at least


def test_over_http_the_findings_name_the_rule_broken() -> None:
    """server-everything over HTTP: the session ended by DELETE and the foreign Origin, with their evidence."""
    with corpus.serve_http("server-everything-http") as url:
        report = check_url(url)
    session, origin = report["http-session"], report["http-origin"]
    assert "DELETE ended the session" in session["summary"] and "not 404" in session["summary"]
    assert session["evidence"]["received"].startswith("HTTP 400")
    assert "https://evil.example" in origin["summary"] and origin["evidence"]["expected"] == "403 Forbidden"
