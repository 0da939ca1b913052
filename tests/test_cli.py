"""grader.cli, the ``mcp-lab`` console script: serve, session and db build.

Run as a real process. Every wrong invocation gets exactly one line on stderr, nothing on stdout,
no traceback and exit status 2; the right ones do their job (the transcript of ``session`` is
checked in test_client_session.py, the server itself in test_server_e2e.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from conftest import file_hash, run_cli

from grader.cli import main
from reference.framing import decode, encode

WRONG = {
    "no-args": [],
    "unknown-option": ["--bogus"],
    "unknown-command": ["frob"],
    "serve-unknown-option": ["serve", "--bogus"],
    "serve-extra-word": ["serve", "extra"],
    "serve-db-without-path": ["serve", "--db"],
    "serve-missing-db": ["serve", "--db", "/nonexistent/dir/shop.db"],
    "serve-allow-writes-without-db": ["serve", "--allow-writes"],
    "serve-allow-writes-missing-db": ["serve", "--allow-writes", "--db", "/nonexistent/dir/shop.db"],
    "serve-http-not-an-address": ["serve", "--http", "localhost"],
    "serve-http-bad-port": ["serve", "--http", "127.0.0.1:99999"],
    "serve-http-ipv6-without-brackets": ["serve", "--http", "::1:8000"],
    "serve-auth-token-without-http": ["serve", "--auth-token", "T"],
    "audit-without-db": ["audit"],
    "audit-missing-db": ["audit", "--db", "/nonexistent/dir/shop.db"],
    "session-no-command": ["session"],
    "session-nothing-after-dashes": ["session", "--"],
    "session-bad-timeout": ["session", "--timeout", "abc", "--", sys.executable],
    "session-zero-timeout": ["session", "--timeout", "0", "--", sys.executable],
    "session-negative-timeout": ["session", "--timeout", "-1", "--", sys.executable],
    "session-nan-timeout": ["session", "--timeout", "nan", "--", sys.executable],
    "session-huge-timeout": ["session", "--timeout", "1e9", "--", sys.executable],
    "session-timeout-without-value": ["session", "--timeout"],
    "session-unknown-option": ["session", "--bogus", "--", sys.executable],
    "session-nonexistent-command": ["session", "--", "/nonexistent/mcp-server"],
    "session-not-executable": ["session", "--", "/etc/hostname"],
    "session-a-directory": ["session", "--", "/"],
    "db-no-action": ["db"],
    "db-unknown-action": ["db", "frob"],
    "db-build-unknown-option": ["db", "build", "--bogus"],
    "db-build-two-paths": ["db", "build", "a.db", "b.db"],
    "db-build-unwritable": ["db", "build", "/proc/no/such/dir/shop.db"],
}


@pytest.mark.parametrize("args", WRONG.values(), ids=WRONG.keys())
def test_wrong_invocation_is_one_line_and_exit_2(args: list[str]) -> None:
    done = run_cli(args, timeout=30)
    stderr = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 2, stderr
    assert done.stdout == b""
    assert len(stderr.splitlines()) == 1 and stderr.endswith("\n"), stderr
    assert "Traceback" not in stderr
    assert stderr.startswith("mcp-lab"), stderr


# The same in process, except the cases that start a command (their OSError path needs a process).
IN_PROCESS = {k: v for k, v in WRONG.items() if not (v[:1] == ["session"] and v[-1:] != ["--"] and "--" in v)}


@pytest.mark.parametrize("args", IN_PROCESS.values(), ids=IN_PROCESS.keys())
def test_main_returns_2_in_process(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(args) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.splitlines()) == 1


@pytest.mark.parametrize(
    "args", [["--help"], ["serve", "--help"], ["audit", "--help"], ["session", "--help"], ["db", "build", "-h"]]
)
def test_help_exits_0(args: list[str]) -> None:
    done = run_cli(args)
    assert done.returncode == 0 and b"usage:" in done.stdout and done.stderr == b""


def test_db_build(tmp_path: Path, shop_db: Path) -> None:
    target = tmp_path / "sub" / "built.db"
    done = run_cli(["db", "build", str(target)])
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().splitlines() == [f"built the shop database at {target}"]
    assert file_hash(target) == file_hash(shop_db)
    again = run_cli(["db", "build", str(target)])
    assert again.returncode == 0 and file_hash(target) == file_hash(shop_db)


def test_db_build_default_respects_mcp_lab_db(tmp_path: Path, shop_db: Path) -> None:
    target = tmp_path / "env" / "shop.db"
    done = run_cli(["db", "build"], env={"MCP_LAB_DB": str(target)})
    assert done.returncode == 0, done.stderr
    assert file_hash(target) == file_hash(shop_db)


def test_serve_answers_on_stdio(shop_db: Path) -> None:
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "ping"},
    ]
    done = run_cli(["serve", "--db", str(shop_db)], input=b"".join(encode(r) for r in requests))
    assert done.returncode == 0, done.stderr
    replies = [decode(line) for line in done.stdout.splitlines()]
    assert [r["id"] for r in replies] == [1, 2]
    assert replies[0]["result"]["protocolVersion"] == "2025-06-18"
    assert b"Traceback" not in done.stderr


@pytest.mark.parametrize(("exhibit", "status"), [("structured_content_wrong_type", "fail"), (None, "pass")])
def test_check_judges_output_schemas_without_the_format_libraries(exhibit: str | None, status: str) -> None:
    """mcp-lab check leaves out what jsonschema would import for "format" checks (a second of CPU and
    more: grader.checker.schema_formats), and still judges structuredContent against outputSchema."""
    import json

    from grader import gallery
    from grader.checker.schema_formats import FORMAT_LIBRARIES

    server = gallery.command(exhibit) if exhibit else [sys.executable, "-m", "reference.server"]
    done = run_cli(["check", "--json", "--", *server], env={"PYTHONVERBOSE": "1"}, timeout=180)
    # python -v says "import 'NAME' # <loader>" for each module it loads (not for one kept out).
    loaded = {line.split("'")[1] for line in done.stderr.decode().splitlines() if line.startswith("import '")}
    assert "jsonschema.validators" in loaded
    assert not loaded & set(FORMAT_LIBRARIES)
    verdicts = {check["id"]: check["status"] for check in json.loads(done.stdout)["checks"]}
    assert verdicts["structured-output"] == status
