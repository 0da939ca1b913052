"""The checker over Streamable HTTP (`mcp-lab check --url`), and resources and prompts on both transports.

Every server is a real process on a real socket; the checker runs as the console script does.

- the reference (`mcp-lab serve --http 127.0.0.1:0`) passes every check that applies over HTTP,
  with and without a bearer token; the stdio-only checks say "stdio only"; a token never shows;
- each HTTP gallery exhibit fails its own check and nothing else; the healthy HTTP base passes;
- resources-list and prompts-get fail on a stdio server that breaks them (the reference passes
  them over stdio: tests/test_checker.py);
- a wrong invocation is one line and exit 2; a server that never answers gets verdicts in bounded time.
"""

from __future__ import annotations

import ast
import json
import re
import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, run_cli
from http_support import HttpServer

from grader import gallery
from grader.checker.catalogue import CHECKS, HTTP_CHECKS, STDIO_ONLY
from reference.child import ChildProcess

URL_LINE = re.compile(r"on (http://\S+/mcp)")
START_TIMEOUT = 30.0
TOKEN = "s3cret-token-for-the-checker"
HTTP_EXHIBITS = gallery.http_exhibits()


def check_url(url: str, *options: str, timeout: float = 180) -> tuple[dict[str, Any], int, str]:
    done = run_cli(["check", "--json", *options, "--url", url], timeout=timeout)
    assert done.returncode in (0, 1), done.stderr.decode()
    stderr = done.stderr.decode()
    assert "internal error" not in stderr, stderr
    return json.loads(done.stdout), done.returncode, done.stdout.decode() + stderr


def statuses(report: dict[str, Any]) -> dict[str, str]:
    return {c["id"]: c["status"] for c in report["checks"]}


def findings(report: dict[str, Any]) -> dict[str, str]:
    return {i: s for i, s in statuses(report).items() if s in ("fail", "warn")}


@contextmanager
def http_child(argv: list[str]) -> Iterator[str]:
    """A server that prints its URL on stderr, started as a child; its URL until the block ends."""
    child = ChildProcess(argv, cwd=str(ROOT))
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while (found := URL_LINE.search(child.stderr_tail(4000))) is None:
            if child.process.poll() is not None:
                pytest.fail(f"{argv} exited ({child.process.returncode}): {child.stderr_tail(4000)}")
            if time.monotonic() > deadline:
                pytest.fail(f"{argv} printed no URL in {START_TIMEOUT:g} s: {child.stderr_tail(4000)}")
            time.sleep(0.02)
        yield found.group(1)
    finally:
        child.close(grace=0.0)  # stdin closed, then SIGTERM: the HTTP servers end on it


# -- the reference ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def reference(shop_db: Path) -> Iterator[HttpServer]:
    server = HttpServer(["--db", str(shop_db)])
    yield server
    server.stop()


def test_the_reference_over_http_passes_every_check(reference: HttpServer) -> None:
    report, code, _ = check_url(reference.url)
    assert code == 0
    assert set(report) == {"url", "checks", "counts"} and report["url"] == reference.url
    assert [c["id"] for c in report["checks"]] == [*CHECKS, "era-mixing", *HTTP_CHECKS]
    assert findings(report) == {}, [c for c in report["checks"] if c["status"] in ("fail", "warn")]
    skipped = {c["id"]: c["summary"] for c in report["checks"] if c["status"] == "skip"}
    assert set(skipped) == STDIO_ONLY | {"http-auth"}
    assert all(skipped[i].startswith("stdio only") for i in STDIO_ONLY)
    passed = {i for i, s in statuses(report).items() if s == "pass"}
    assert passed == ((set(CHECKS) - STDIO_ONLY) | set(HTTP_CHECKS) | {"era-mixing"}) - {"http-auth"}
    checks = {c["id"]: c for c in report["checks"]}
    assert "404 once ended by DELETE" in checks["http-session"]["summary"]
    assert "SSE stream" in checks["http-sse"]["summary"]  # it streams when asked for SSE alone
    assert report["counts"] == {"pass": len(passed), "fail": 0, "warn": 0, "skip": len(skipped)}


def test_the_text_report_over_http(reference: HttpServer) -> None:
    done = run_cli(["check", "--url", reference.url], timeout=180)
    out = done.stdout.decode()
    assert done.returncode == 0, out
    assert out.startswith(f"mcp-lab check: --url {reference.url}\n")
    for check in HTTP_CHECKS:
        assert re.search(rf"(PASS|skip)  {check} ", out), check
    assert re.search(r"checks: \d+ pass, 0 fail, 0 warn, \d+ skip \([\d.]+ s, \d+ sessions\)\n$", out)


@pytest.fixture(scope="module")
def guarded(shop_db: Path) -> Iterator[HttpServer]:
    server = HttpServer(["--db", str(shop_db), "--auth-token", TOKEN])
    yield server
    server.stop()


def test_the_reference_with_a_bearer_token(guarded: HttpServer) -> None:
    report, code, output = check_url(guarded.url, "--header", f"Authorization: Bearer {TOKEN}")
    assert code == 0 and findings(report) == {}
    assert statuses(report)["http-auth"] == "pass"
    assert {i for i, s in statuses(report).items() if s == "skip"} == STDIO_ONLY
    assert TOKEN not in output, "the credentials given with --header never show in the report"


def test_a_server_that_needs_a_token_says_so_when_none_is_given(guarded: HttpServer) -> None:
    report, code, _ = check_url(guarded.url)
    assert code == 1
    initialize = next(c for c in report["checks"] if c["id"] == "initialize-result")
    assert initialize["status"] == "fail" and "HTTP 401" in initialize["summary"]
    assert "--header 'Authorization: Bearer TOKEN'" in initialize["summary"]


def test_a_server_that_needs_no_token_warns_when_one_is_given(reference: HttpServer) -> None:
    report, code, _ = check_url(reference.url, "--header", f"Authorization: Bearer {TOKEN}")
    assert code == 0 and findings(report) == {"http-auth": "warn"}
    auth = next(c for c in report["checks"] if c["id"] == "http-auth")
    assert auth["evidence"]["keyword"] == "SHOULD"


# -- the HTTP gallery ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", [e.name for e in HTTP_EXHIBITS])
def test_each_http_exhibit_fails_its_check_and_nothing_else(name: str) -> None:
    exhibit = gallery.get(name)
    assert exhibit.transport == "http" and exhibit.check in HTTP_CHECKS
    assert HTTP_CHECKS[exhibit.check].era in ("both", exhibit.era)  # a modern exhibit breaks a rule of 2026-07-28
    with http_child(gallery.command(name, port=0)) as url:
        report, code, _ = check_url(url)
    assert code == (1 if exhibit.expect == "fail" else 0)
    assert findings(report) == {exhibit.check: exhibit.expect}, {c["id"]: c["summary"] for c in report["checks"]}
    failed = next(c for c in report["checks"] if c["id"] == exhibit.check)
    assert failed["evidence"]["keyword"] == ("MUST" if exhibit.expect == "fail" else "SHOULD")
    assert failed["evidence"]["received"] and failed["era"] == HTTP_CHECKS[exhibit.check].era


def test_a_204_with_content_length_fails_http_session(tmp_path: Path) -> None:
    """RFC 9110: a 204 has no content, and a server MUST NOT send Content-Length with it (the helper that
    sends Content-Length: 0 with every reply did, in stage 12's lesson)."""
    server = tmp_path / "no_content_with_length.py"
    server.write_text(
        "from grader.gallery.over_http.base import HttpShop, main\n"
        "class Server(HttpShop):\n"
        "    def reply(self, status, body=b'', content_type=None, **headers):\n"
        "        if status != 204:\n"
        "            return super().reply(status, body, content_type, **headers)\n"
        "        self.send_response(204)\n"
        "        self.send_header('Content-Length', '0')\n"
        "        self.end_headers()\n"
        "raise SystemExit(main(Server))\n",
        encoding="utf-8",
    )
    with http_child([sys.executable, str(server)]) as url:
        report, code, _ = check_url(url)
    assert code == 1 and findings(report) == {"http-session": "fail"}, findings(report)
    failed = next(c for c in report["checks"] if c["id"] == "http-session")
    assert "Content-Length: 0" in failed["summary"] and failed["evidence"]["source"].startswith("RFC 9110")


def test_the_http_base_passes_every_check() -> None:
    with http_child([sys.executable, str(gallery.HTTP_BASE)]) as url:
        report, code, _ = check_url(url)
    assert code == 0 and findings(report) == {}
    # It serves tools only: resources and prompts are skipped, as the capabilities say.
    skipped = {i for i, s in statuses(report).items() if s == "skip"}
    unserved = {"http-auth", "resources-list", "resources-read", "prompts-list", "prompts-get"}
    # A legacy-only server: server/discover gets 400 with no modern error, so the modern era is not judged.
    modern = {i for i, c in HTTP_CHECKS.items() if c.era == "modern"}
    assert skipped == STDIO_ONLY | unserved | modern
    reasons = {c["id"]: c["summary"] for c in report["checks"]}
    assert all("does not speak the modern era" in reasons[i] for i in modern), reasons


def test_mcp_lab_gallery_run_starts_an_http_exhibit_on_its_port() -> None:
    port = free_port()
    with http_child([sys.executable, "-m", "grader.cli", "gallery", "run", "broken_sse", "--port", str(port)]) as url:
        assert url == f"http://127.0.0.1:{port}/mcp"


@pytest.mark.parametrize("name", [e.name for e in HTTP_EXHIBITS])
def test_http_exhibit_source(name: str) -> None:
    source = gallery.get(name).path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    assert ast.get_docstring(tree) == f"Gallery exhibit: {name}."
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    base = "ModernShop" if gallery.get(name).era == "modern" else "HttpShop"
    assert [c.name for c in classes] == ["Server"] and [ast.unparse(b) for b in classes[0].bases] == [base]
    methods = [n.name for n in classes[0].body if isinstance(n, ast.FunctionDef)]
    assert len(methods) == 1, f"one defect, in one overridden method: {methods}"
    assert len(source.splitlines()) <= 40


def test_every_http_exhibit_file_is_catalogued() -> None:
    files = {p.stem for p in gallery.HTTP_DIR.glob("*.py")} - {"__init__", "base", "modern_base"}
    assert files == {e.name for e in HTTP_EXHIBITS}
    assert {e.check for e in HTTP_EXHIBITS} >= {"http-origin", "http-session", "http-notification-202", "http-sse"}


# -- resources and prompts over stdio -------------------------------------------------------------
def test_resources_and_prompts_fail_on_a_stdio_server_that_breaks_them() -> None:
    done = run_cli(["check", "--json", "--", sys.executable, str(ROOT / "tests" / "servers" / "broken_features.py")])
    assert done.returncode == 1, done.stderr.decode()
    report = json.loads(done.stdout)
    assert findings(report) == {"resources-list": "fail", "prompts-get": "fail"}
    checks = {c["id"]: c for c in report["checks"]}
    assert 'no "name" string' in checks["resources-list"]["summary"]
    assert 'role must be "user" or "assistant"' in checks["prompts-get"]["summary"]
    assert checks["prompts-get"]["evidence"]["keyword"] == "schema"


# -- wrong invocations and hostile servers ---------------------------------------------------------
def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


WRONG = {
    "url-and-command": (["check", "--url", "http://127.0.0.1:9/mcp", "--", sys.executable], "not both"),
    "header-without-url": (["check", "--header", "A: b", "--", sys.executable], "--header is for --url"),
    "header-without-colon": (["check", "--url", "http://127.0.0.1:9/mcp", "--header", "A b"], "'NAME: VALUE'"),
    "url-not-http": (["check", "--url", "ftp://example.com/mcp"], "http:// or https://"),
    "url-without-host": (["check", "--url", "http:///mcp"], "http:// or https://"),
    "url-without-value": (["check", "--url"], "expected one argument"),
    "gallery-port-for-stdio": (["gallery", "run", "banner", "--port", "8000"], "stdio server"),
}


@pytest.mark.parametrize("case", sorted(WRONG))
def test_a_wrong_invocation_is_one_line_and_exit_2(case: str) -> None:
    args, words = WRONG[case]
    done = run_cli(args)
    stderr = done.stderr.decode()
    assert done.returncode == 2 and done.stdout == b"", (done.returncode, done.stdout, stderr)
    assert len(stderr.splitlines()) == 1 and words in stderr and "Traceback" not in stderr


def test_a_url_nothing_listens_on_is_one_line_and_exit_2() -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    done = run_cli(["check", "--url", url])
    stderr = done.stderr.decode()
    assert done.returncode == 2 and done.stdout == b""
    assert stderr.splitlines() == [f"mcp-lab check: cannot reach {url}: Connection refused"]


@contextmanager
def silent_listener() -> Iterator[str]:
    """A socket that accepts connections, reads what comes and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    server.settimeout(0.2)
    stop = threading.Event()
    held: list[socket.socket] = []

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            held.append(conn)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}/mcp"
    finally:
        stop.set()
        thread.join(5)
        for conn in held:
            conn.close()
        server.close()


@pytest.mark.slow
def test_a_server_that_never_answers_gets_its_verdicts_in_bounded_time() -> None:
    with silent_listener() as url:
        start = time.monotonic()
        report, code, _ = check_url(url, "--timeout", "1", timeout=90)
        elapsed = time.monotonic() - start
    assert code == 1 and elapsed < 45, elapsed
    initialize = next(c for c in report["checks"] if c["id"] == "initialize-result")
    assert initialize["status"] == "fail" and "no whole HTTP response within" in initialize["summary"]
    assert statuses(report)["envelope"] == "skip" and statuses(report)["version-negotiation"] == "skip"


def test_a_stream_no_client_can_read_is_the_root_of_what_it_breaks() -> None:
    with http_child([sys.executable, str(ROOT / "tests" / "servers" / "http_sse_always_broken.py")]) as url:
        report, code, _ = check_url(url)
    assert code == 1
    checks = {c["id"]: c for c in report["checks"]}
    assert report["checks"][0]["id"] == "http-sse" and checks["http-sse"]["status"] == "fail"
    assert "an event's data is not JSON" in checks["http-sse"]["summary"]
    assert checks["initialize-result"]["status"] == "fail"
    assert checks["initialize-result"]["caused_by"] == "http-sse"
    assert {i for i, c in checks.items() if c["status"] == "fail" and "caused_by" not in c} == {"http-sse"}
