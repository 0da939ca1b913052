"""What the checker says, and to whom: fix hints in the server's language, a quiet exit into a closed pipe.

Every server here is a real process: a small Node server (tests/servers/tiny_node_server.js) for
Node wording, the same kind of stdlib Python server started under a name that tells nothing for
neutral wording. The closed pipe is a real pipe whose reading end is closed before the CLI writes.
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

from grader.checker.catalogue import CHECKS
from grader.checker.language import server_language

ROOT = Path(__file__).resolve().parent.parent
SERVERS = ROOT / "tests" / "servers"
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
# A stdlib server that, like tiny_node_server.js, answers everything but a line that is not JSON.
MUTE_ON_BAD_LINES = """\
import json, sys
for raw in sys.stdin.buffer:
    try:
        msg = json.loads(raw)
    except ValueError:
        continue
    if "id" not in msg:
        continue
    if msg.get("id") is None or isinstance(msg.get("id"), float) or "method" not in msg:
        reply = {"error": {"code": -32600, "message": "Invalid Request"}}
    elif msg["method"] == "initialize":
        reply = {"result": {"protocolVersion": "2025-11-25", "capabilities": {},
                            "serverInfo": {"name": "mute", "version": "1"}}}
    elif msg["method"] == "ping":
        reply = {"result": {}}
    else:
        reply = {"error": {"code": -32601, "message": "Method not found"}}
    out = {"jsonrpc": "2.0", "id": msg.get("id") if "result" in reply or msg.get("id") is not None else None, **reply}
    sys.stdout.buffer.write(json.dumps(out).encode() + b"\\n")
    sys.stdout.buffer.flush()
"""


def check(argv: list[str]) -> tuple[dict[str, dict[str, Any]], str]:
    """The JSON report (by check id) and the text report, from two real runs."""
    base = [sys.executable, "-m", "grader.cli", "check"]
    done = subprocess.run([*base, "--json", "--", *argv], capture_output=True, text=True, timeout=90, env=ENV)
    assert done.returncode == 1, done.stderr
    text = subprocess.run([*base, "--", *argv], capture_output=True, text=True, timeout=90, env=ENV).stdout
    return {c["id"]: c for c in json.loads(done.stdout)["checks"]}, text


@pytest.mark.parametrize(
    ("argv", "language"),
    [
        (["python3", "server.py"], "python"),
        (["uvx", "mcp-server-time"], "python"),
        (["node", "build/index.js"], "node"),
        (["npx", "-y", "@modelcontextprotocol/server-everything"], "node"),
        (["tsx", "src/server.ts"], "node"),
        (["/usr/local/bin/server-binary", "--stdio"], "neutral"),
        ([], "neutral"),
    ],
)
def test_the_command_tells_the_language(argv: list[str], language: str) -> None:
    assert server_language(argv) == language


def test_a_console_script_is_known_by_its_shebang() -> None:
    script = Path(sys.executable).parent / "mcp-lab"  # pip's console script: #!/.../python
    assert server_language([str(script), "serve"]) == "python"


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_a_node_server_gets_node_wording_and_no_code_page() -> None:
    found, text = check(["node", str(SERVERS / "tiny_node_server.js")])
    parse = found["parse-error"]
    assert parse["status"] == "fail"
    assert parse["evidence"]["fix"] == CHECKS["parse-error"].node
    assert "JSON.parse" in parse["evidence"]["fix"] and "json.loads" not in text
    # Invalid UTF-8 decoded leniently and answered -32601: it answered, so only a warning, listed.
    assert "warn: invalid UTF-8 got code -32601, not -32700 (decoded leniently)" in parse["evidence"]["problems"]
    # PYTHONIOENCODING means nothing to Node: no code-page probe, no cp1252 in the verdict.
    assert found["encoding-utf8"]["status"] == "pass"
    assert "cp1252" not in found["encoding-utf8"]["summary"]
    assert "JSON.parse in try/catch" in text
    # It serves no tools/list at all: the shop checks say why they are skipped.
    assert found["shop-contract"]["summary"] == "not a shop server (it serves no tools)"


def test_a_command_that_tells_nothing_gets_neutral_wording(tmp_path: Path) -> None:
    server = tmp_path / "server"  # no suffix, run by an interpreter under a name that tells nothing
    server.write_text(MUTE_ON_BAD_LINES)
    runner = tmp_path / "shopd"
    runner.symlink_to(Path(getattr(sys, "_base_executable", sys.executable)).resolve())
    assert server_language([str(runner), str(server)]) == "neutral"
    found, text = check([str(runner), str(server)])
    assert found["parse-error"]["evidence"]["fix"] == CHECKS["parse-error"].neutral
    assert "json.loads" not in text and "JSON.parse" not in text
    assert "cp1252" not in found["encoding-utf8"]["summary"]


@pytest.mark.parametrize(
    "args",
    [
        ["gallery", "list", "--reveal"],
        ["clinic", "list"],
        ["check", "--json", "--", sys.executable, "-m", "reference.server"],
        ["check", "--", sys.executable, "-m", "reference.server"],
    ],
)
def test_output_into_a_closed_pipe_exits_quietly(args: list[str]) -> None:
    """`mcp-lab gallery list --reveal | head -1`: the reader is gone before the writer is done."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # a reader that has already gone away, as head does after one line
    try:
        done = subprocess.run(
            [sys.executable, "-m", "grader.cli", *args],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=90,
            env=ENV,
            cwd=ROOT,
        )
    finally:
        os.close(write_end)
    assert done.stderr == ""  # no traceback, no "Exception ignored" either
    assert done.returncode == 141  # 128 + SIGPIPE, as a command ended by the signal


def test_head_one_in_a_real_shell_pipeline() -> None:
    mcp_lab = Path(sys.executable).parent / "mcp-lab"
    done = subprocess.run(
        ["sh", "-c", f"'{mcp_lab}' gallery list --reveal | head -1"],
        capture_output=True,
        text=True,
        timeout=60,
        env=ENV,
    )
    assert done.returncode == 0 and done.stderr == ""
    assert len(done.stdout.splitlines()) == 1


@pytest.mark.parametrize(
    ("exhibit", "keyword"),
    [
        # "orders.count" keeps to MCP 2025-11-25's name characters: only the hosts' pattern refuses it.
        ("bad_tool_names", "recommendation"),
        # Two tools of one name break the spec's SHOULD (Tools > Tool Names).
        ("duplicate_tool_names", "SHOULD"),
    ],
)
def test_a_tool_name_warning_names_the_rule_it_breaks(exhibit: str, keyword: str) -> None:
    from grader import gallery

    done = subprocess.run(
        [sys.executable, "-m", "grader.cli", "check", "--json", "--", *gallery.command(exhibit)],
        capture_output=True,
        text=True,
        timeout=90,
        env=ENV,
    )
    names = {c["id"]: c for c in json.loads(done.stdout)["checks"]}["tool-names"]
    assert names["status"] == "warn", names
    assert names["evidence"]["keyword"] == keyword, names["evidence"]


def test_every_rule_names_its_revision_and_a_check_of_both_eras_the_current_one() -> None:
    from grader.checker.catalogue import CATALOGUE

    revisions = ("2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26")
    for check in CATALOGUE.values():
        rules = [check.main, *check.also.values()]
        for rule in rules:
            if "MCP" in rule.source and "Wire Lab" not in rule.source:
                assert any(r in rule.source for r in revisions), (check.id, rule.source)
        # A check the modern session judges too cites 2026-07-28's text, not only the legacy one's.
        if check.era == "both" and "MCP" in check.source:
            assert "2026-07-28" in check.source, (check.id, check.source)
