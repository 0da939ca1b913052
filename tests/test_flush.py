"""stdout-flush wherever it shows: a reply held back until the next write, or until EOF.

Each test runs ``mcp-lab check --json`` as a real process on a real server over real pipes. A
server that flushes some replies and not others (the gallery's partial_flush: tool results stay
in its buffer) is diagnosed as stdout-flush, with the held request and reply as evidence, and the
checks the late replies used to break pass, because the checker nudges the held replies out with a
ping instead of waiting out each call's timeout. A slow tool that answers late on its own is not a
flush problem.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from check_support import BAD, SERVERS, by_id, causes, check

from grader import gallery


def test_partial_flushing_is_diagnosed_as_stdout_flush() -> None:
    report, code = check(gallery.command("partial_flush"))
    found = by_id(report)
    flush = found["stdout-flush"]
    assert code == 1 and flush["status"] == "fail", flush
    assert "tools/call" in flush["summary"] and "held back" in flush["summary"]
    assert '"method":"tools/call"' in flush["evidence"]["sent"]
    held_id = json.dumps(json.loads(flush["evidence"]["sent"])["id"])
    assert flush["evidence"]["received"].startswith(f'{{"jsonrpc":"2.0","id":{held_id},"result":')
    # Nudged out, the held replies are judged: the checks they used to break pass.
    for later in ("id-echo", "tools-call-result", "tool-error-kind", "shop-contract", "unknown-tool"):
        assert found[later]["status"] == "pass", found[later]
    assert [c["id"] for c in report["checks"] if c["status"] in BAD] == ["stdout-flush"]


def test_a_slow_tool_is_not_a_flush_problem(tmp_path: Path) -> None:
    # `wait` answers after 2 s on a thread; the nudge's ping is answered first: no buffer held it.
    server = [sys.executable, str(SERVERS / "slow_tool.py"), str(tmp_path / "record"), "--seconds", "2"]
    report, _ = check(server, "--call-timeout", "5")
    found = by_id(report)
    assert found["stdout-flush"]["status"] == "pass", found["stdout-flush"]
    assert found["tools-call-result"]["status"] == "pass", found["tools-call-result"]


@pytest.mark.slow
def test_replies_held_until_stdin_closes_are_a_missing_flush() -> None:
    # Only initialize is flushed; every later reply comes out when the process exits at EOF.
    report, code = check([sys.executable, str(SERVERS / "flushes_once.py")])
    found = by_id(report)
    flush = found["stdout-flush"]
    assert code == 1 and flush["status"] == "fail", flush
    assert "came out only when stdin closed" in flush["summary"]
    assert report["checks"][0]["id"] == "stdout-flush"
    # The requests that got no reply in time: their replies were in the buffer all along.
    marked = causes(report)
    for consequence in ("ping", "tools-list", "survives-bad-input", "parse-error"):
        assert marked.get(consequence) == "stdout-flush", found[consequence]
    assert set(marked.values()) == {"stdout-flush"}
