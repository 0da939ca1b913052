"""The conformance checker (`mcp-lab check`): its contract, its verdicts, and its own robustness.

Every server here is a real process the checker starts itself. The hostile ones (hanging,
flooding, forking, ignoring SIGTERM, dying at once) must give verdicts within bounded time and
leave no process behind.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader.checker.catalogue import CATALOGUE, CHECKS, MODERN_CHECKS

ROOT = Path(__file__).resolve().parent.parent
SERVERS = Path(__file__).resolve().parent / "servers"
REFERENCE = [sys.executable, "-m", "reference.server"]
SDK_SERVER = [sys.executable, str(ROOT / "bench" / "sdk_shop_server.py")]
DESIGN_IDS = [
    "stdout-json-lines", "stdout-silent-at-start", "stdout-flush", "stdout-line-ending", "stdout-strict-json",
    "stdout-line-size", "encoding-utf8", "envelope", "id-echo", "notification-silence", "parse-error",
    "invalid-request", "method-not-found", "survives-bad-input", "initialize-result", "version-negotiation",
    "capabilities-match", "ping", "startup-time", "no-early-server-requests", "stderr-volume", "exit-on-eof",
    "tools-list", "tool-names", "tools-call-result", "unknown-tool", "tool-error-kind", "shop-contract",
    "shop-read-only", "structured-output", "resources-list", "resources-read", "prompts-list", "prompts-get",
]  # fmt: skip
# The modern era's checks (MCP 2026-07-28), reported after them.
MODERN_IDS = [
    "era-probe", "discover-result", "modern-result-type", "modern-cacheable", "modern-envelope-errors",
    "modern-unsupported-version", "modern-removed-methods", "modern-resource-not-found", "modern-no-server-requests",
    "modern-input-required", "modern-request-state", "modern-subscriptions", "era-mixing",
]  # fmt: skip
# Checks of what the reference offers only with --allow-writes (a tool that asks for input) or not at all.
NOT_OFFERED = {"modern-input-required", "modern-request-state"}  # no tool asks without --allow-writes


def mcp_lab(*args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    return subprocess.run(
        [sys.executable, "-m", "grader.cli", *args], capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT
    )


def check_json(server: list[str], *options: str, timeout: float = 90) -> tuple[dict, int, float]:
    start = time.monotonic()
    done = mcp_lab("check", "--json", *options, "--", *server, timeout=timeout)
    elapsed = time.monotonic() - start
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout), done.returncode, elapsed


def statuses(report: dict) -> dict[str, str]:
    return {c["id"]: c["status"] for c in report["checks"]}


def test_catalogue_has_exactly_the_design_ids() -> None:
    assert list(CHECKS) == DESIGN_IDS
    assert list(MODERN_CHECKS) == MODERN_IDS


def test_reference_passes_every_check_and_json_follows_the_contract() -> None:
    report, code, _ = check_json(REFERENCE)
    assert code == 0
    assert set(report) == {"command", "checks", "counts"}
    assert report["command"] == REFERENCE
    assert [c["id"] for c in report["checks"]] == DESIGN_IDS + MODERN_IDS
    for check in report["checks"]:
        assert set(check) == {"id", "era", "status", "summary", "evidence"}
        assert check["era"] == CATALOGUE[check["id"]].era
        assert isinstance(check["summary"], str) and check["summary"]
        assert isinstance(check["evidence"], dict)
    bad = {i: s for i, s in statuses(report).items() if s != "pass"}
    # Both eras judged; only what the reference does not offer here (no tool asks for input
    # without --allow-writes, no change notifications) is left unjudged.
    assert bad == dict.fromkeys(NOT_OFFERED, "skip"), [c for c in report["checks"] if c["status"] != "pass"]
    passed = len(DESIGN_IDS) + len(MODERN_IDS) - len(NOT_OFFERED)
    assert report["counts"] == {"pass": passed, "fail": 0, "warn": 0, "skip": len(NOT_OFFERED)}


def test_text_report_names_every_check_and_the_totals() -> None:
    done = mcp_lab("check", "--", *REFERENCE)
    assert done.returncode == 0, done.stdout + done.stderr
    for check_id in DESIGN_IDS + MODERN_IDS:
        era = CATALOGUE[check_id].era
        status = "skip" if check_id in NOT_OFFERED else "PASS"
        assert re.search(rf"^  {status}  {check_id} +{era} +\S", done.stdout, re.MULTILINE), check_id
    passed = len(DESIGN_IDS) + len(MODERN_IDS) - len(NOT_OFFERED)
    assert f"checks: {passed} pass, 0 fail, 0 warn, {len(NOT_OFFERED)} skip" in done.stdout
    assert "eras: modern spoken (server/discover answered a result); legacy spoken" in done.stdout


def test_a_notification_named_like_a_request_must_get_no_reply(tmp_path: Path) -> None:
    """A server that takes every method outside notifications/ for a request answers {"method": "ping"}
    (no id): notification-silence fails under JSON-RPC's rule, though every well-named notification is quiet."""
    server = tmp_path / "by_name.py"
    server.write_text(
        "from grader.gallery.base import ShopServer\n"
        "class Server(ShopServer):\n"
        "    def is_notification(self, message):\n"
        "        return str(message.get('method')).startswith('notifications/')\n"
        "    def handle_message(self, message):\n"
        "        if isinstance(message, dict) and 'id' not in message and not self.is_notification(message):\n"
        "            self.handle_request(None, message.get('method'), message.get('params', {}))\n"
        "            return\n"
        "        super().handle_message(message)\n"
        "Server.main()\n",
        encoding="utf-8",
    )
    report, code, _ = check_json([sys.executable, str(server)])
    assert code == 1
    failing = {c["id"]: c for c in report["checks"] if c["status"] == "fail"}
    assert set(failing) == {"notification-silence"}, failing
    silence = failing["notification-silence"]
    assert silence["summary"].startswith('the server answered {"jsonrpc":"2.0","method":"ping"}')
    assert '"id":null' in silence["evidence"]["received"].replace(" ", "")
    assert silence["evidence"]["source"].startswith("JSON-RPC 2.0 section 4.1")
    assert silence["evidence"]["keyword"] == "MUST NOT" and '"id" not in msg' in silence["evidence"]["fix"]


def test_a_failure_is_explained_with_sent_received_expected_rule_and_fix(tmp_path: Path) -> None:
    server = tmp_path / "answers_notifications.py"
    server.write_text(
        "import json, sys\n"
        "for raw in sys.stdin.buffer:\n"
        "    msg = json.loads(raw)\n"
        "    reply = {'jsonrpc': '2.0', 'id': msg.get('id')}\n"
        "    if msg.get('method') == 'initialize':\n"
        "        reply['result'] = {'protocolVersion': '2025-11-25', 'capabilities': {},\n"
        "                           'serverInfo': {'name': 'x', 'version': '1'}}\n"
        "    elif msg.get('method') == 'ping':\n"
        "        reply['result'] = {}\n"
        "    else:\n"
        "        reply['error'] = {'code': -32601, 'message': 'Method not found'}\n"
        "    sys.stdout.write(json.dumps(reply) + '\\n'); sys.stdout.flush()\n"
    )
    report, code, _ = check_json([sys.executable, str(server)])
    assert code == 1
    silence = next(c for c in report["checks"] if c["id"] == "notification-silence")
    assert silence["status"] == "fail"
    evidence = silence["evidence"]
    assert "notifications/initialized" in evidence["sent"]
    assert '"id": null' in evidence["received"][0] or '"id":null' in evidence["received"][0]
    assert "no reply" in evidence["expected"]
    assert "MUST NOT" in evidence["rule"] and evidence["fix"]
    text = mcp_lab("check", "--", sys.executable, str(server)).stdout
    assert "FAIL  notification-silence" in text and "rule:" in text and "fix:" in text


def test_readme_report_example_is_real() -> None:
    """The JSON report shown in README.md is what the checker says about that command today."""
    blocks = re.findall(r"```json\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.DOTALL)
    example = next(json.loads(b) for b in blocks if '"checks"' in b)
    bin_dir = str(Path(sys.executable).parent)  # where the mcp-lab console script lives
    command = [shutil.which(example["command"][0], path=bin_dir) or "mcp-lab", *example["command"][1:]]
    report, _, _ = check_json(command)
    assert report["counts"] == example["counts"]
    real = {c["id"]: c for c in report["checks"]}
    for shown in example["checks"]:
        check = real[shown["id"]]
        assert (check["status"], check["summary"]) == (shown["status"], shown["summary"])
        assert {k: check["evidence"][k] for k in shown["evidence"]} == shown["evidence"]


def test_sdk_server_report_is_honest() -> None:
    """The official SDK (mcp 2.x) server, checked like any other. What it reports is documented in
    the README: it skips non-JSON lines and null ids without an answer (JSON-RPC's MUST: fail), and
    answers an unknown tool with an isError result (no MUST: a warning) and bad arguments with
    isError results under every revision (which 2025-06-18 allows too: a pass, revision by revision).
    It declares resources and prompts (none of either): an unknown resource gets -32602 and an
    unknown prompt error 0, where the spec's SHOULDs say -32002 and -32602 (warnings).
    The stdout rules all hold. It speaks both eras (MCP 2026-07-28 too): in the modern one it
    skips the same unparseable lines, and every modern check that applies passes."""
    report, code, _ = check_json(SDK_SERVER)
    found = statuses(report)
    checks = {c["id"]: c for c in report["checks"]}
    assert code == 1
    for check_id in ("stdout-json-lines", "stdout-flush", "envelope", "id-echo", "notification-silence",
                     "initialize-result", "version-negotiation", "ping", "exit-on-eof", "tools-list",
                     "shop-contract", "shop-read-only", "tool-error-kind"):  # fmt: skip
        assert found[check_id] == "pass", (check_id, report)
    assert {i: s for i, s in found.items() if s != "pass" and i != "startup-time"} == {
        "parse-error": "fail",
        "invalid-request": "fail",
        "unknown-tool": "warn",
        "resources-read": "warn",
        "prompts-get": "warn",
        # No SDK tool asks for input here (the shop's tools are read-only).
        "modern-input-required": "skip",
        "modern-request-state": "skip",
    }
    # It speaks both eras; in the modern one, every check that applies passes (tests/test_checker_modern.py).
    assert all(found[i] == "pass" for i in MODERN_IDS if i not in ("modern-input-required", "modern-request-state"))
    assert checks["resources-read"]["evidence"]["keyword"] == checks["prompts-get"]["evidence"]["keyword"] == "SHOULD"
    assert checks["parse-error"]["evidence"]["keyword"] == "MUST"
    assert "JSON-RPC 2.0" in checks["parse-error"]["evidence"]["source"]
    unknown = checks["unknown-tool"]
    assert unknown["evidence"]["keyword"] == "described" and "no MUST" in unknown["summary"]
    by_revision = checks["tool-error-kind"]["evidence"]["by_revision"]
    assert {r: v["status"] for r, v in by_revision.items()} == {"2025-11-25": "pass", "2025-06-18": "pass"}
    # It publishes the reference's outputSchemas; the SDK carries structuredContent as given.
    assert found["structured-output"] == "pass", report


HOSTILE = {
    "hang": ("initialize-result", "fail", 25),
    "never_reads": ("initialize-result", "fail", 25),
    "flood": ("stdout-json-lines", "fail", 25),
    "exits_at_once": ("initialize-result", "fail", 10),
    # A 10 MiB line breaks a host's limit, not a MUST: a warning (the line is no JSON either: a fail).
    "huge_line": ("stdout-line-size", "warn", 25),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_servers_get_verdicts_in_bounded_time(name: str) -> None:
    check_id, status, bound = HOSTILE[name]
    report, code, elapsed = check_json([sys.executable, str(SERVERS / f"{name}.py")])
    assert code == 1
    assert statuses(report)[check_id] == status, report
    assert elapsed < bound, f"{name} took {elapsed:.1f} s"


def test_strange_tool_lists_get_verdicts_not_a_checker_crash() -> None:
    done = mcp_lab("check", "--json", "--", sys.executable, str(SERVERS / "wild_tools.py"))
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    found = statuses(json.loads(done.stdout))
    assert (found["tools-list"], found["tool-names"], found["tools-call-result"]) == ("fail", "pass", "pass")


def test_exits_at_once_shows_its_stderr() -> None:
    report, _, _ = check_json([sys.executable, str(SERVERS / "exits_at_once.py")])
    init = next(c for c in report["checks"] if c["id"] == "initialize-result")
    assert "exited" in init["summary"]
    assert "cannot find config.toml" in init["evidence"]["stderr_tail"]


@pytest.mark.slow
def test_forked_grandchild_and_ignored_sigterm_leave_nothing_behind(tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"
    report, code, elapsed = check_json([sys.executable, str(SERVERS / "fork_ignore_term.py"), str(pid_file)])
    assert code == 1
    exit_on_eof = next(c for c in report["checks"] if c["id"] == "exit-on-eof")
    # Exiting at EOF follows a SHOULD (MCP 2025-11-25, Lifecycle > Shutdown): a warning, that names what happened.
    assert (exit_on_eof["status"], exit_on_eof["evidence"]["keyword"]) == ("warn", "SHOULD")
    assert exit_on_eof["summary"].startswith("never exits")
    # What holds it, from /proc: both processes of its group asleep in time.sleep().
    threads = exit_on_eof["evidence"]["threads"]
    assert threads.count("waits for a timer (time.sleep)") == 2 and "the main thread (pid" in threads, threads
    assert elapsed < 30
    pids = [int(p) for p in pid_file.read_text().split()]
    assert len(pids) == 2
    assert [pid for pid in pids if not wait_dead(pid, 5)] == []


def wait_dead(pid: int, seconds: float) -> bool:
    """True once ``pid`` is gone (or a zombie: dead, waiting for init to reap it)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        stat = Path(f"/proc/{pid}/stat")
        if stat.exists() and stat.read_text().split()[2] == "Z":
            return True
        time.sleep(0.1)
    return False


def test_ctrl_c_ends_the_check_and_every_server_it_started(tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    # A long --timeout: the servers never answer, and with the default 3 s per reply the check could end
    # on its own (exit 1) between the sixth server's start and the signal, on a busy machine.
    command = [sys.executable, "-m", "grader.cli", "check", "--timeout", "120", "--"]
    command += [sys.executable, str(SERVERS / "records_pids.py")]
    # Ctrl-C as a terminal sends it: to a checker whose SIGINT is at its default. A suite started in the
    # background (`make test &`, nohup) ignores SIGINT, every child inherits that, and Python leaves an
    # ignored SIGINT ignored: the check would rightly go on (all 3 runs failed that way before this).
    checker = subprocess.Popen(
        [*command, str(pid_file)],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        # Every server started (under load the sixth may start seconds after the fifth), then Ctrl-C.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(pid_file.read_text().split() if pid_file.exists() else []) < 6:
            time.sleep(0.1)
        checker.send_signal(signal.SIGINT)
        # Bounded, with a margin for a loaded machine: the check itself ends in about a second.
        assert checker.wait(timeout=30) == 130
    finally:
        checker.kill()
        checker.communicate()
    pids = [int(p) for p in pid_file.read_text().split()]
    assert len(pids) == 6, "the checker starts six server processes (five legacy, one modern)"
    assert [pid for pid in pids if not wait_dead(pid, 5)] == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["check"], "no server command given"),
        (["check", "--"], "no server command given"),
        (["check", "--", "/no/such/command"], "cannot start /no/such/command"),
        (["check", "--timeout", "soon", "--", "true"], "expected a number of seconds"),
        (["check", "--timeout", "-1", "--", "true"], "expected seconds between 0 and 600"),
        (["check", "--call-timeout", "0", "--", "true"], "expected seconds between 0 and 600"),
        (["check", "--call-timeout", "long", "--", "true"], "expected a number of seconds"),
        (["check", "--bogus", "--", "true"], "unrecognized arguments"),
        (["check", "--era", "newest", "--", "true"], "takes modern, legacy or both, got 'newest'"),
        (["check", "--era"], "expected one argument"),
        (["check", "--url", "http://127.0.0.1:9/mcp", "--era", "modern"], "cannot reach http://127.0.0.1:9/mcp"),
        (["gallery", "show", "no-such-exhibit"], "no-such-exhibit"),
        (["gallery"], "required"),
    ],
)
def test_wrong_invocations_get_one_line_and_exit_2(args: list[str], message: str) -> None:
    done = mcp_lab(*args, timeout=30)
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert message in lines[0]
    assert "Traceback" not in done.stderr


def test_startup_is_timed_when_the_reply_arrived_not_when_the_checker_read_it() -> None:
    """A checker busy elsewhere (here: asleep) reads the initialize reply late; the server's start
    is timed by the reader's stamp of that line, so the server is not blamed for the checker's delay.
    Judged on the main thread's clock, this quick start warned (a CI run's flake: the crlf exhibit,
    pass then warn)."""
    from grader.checker.bad_input import judge_first_reply
    from grader.checker.context import CLIENT_INFO, Context
    from grader.checker.nudge import NudgingProbe
    from grader.checker.probe import Reply

    ctx = Context(REFERENCE)
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": CLIENT_INFO},
    }
    with NudgingProbe(REFERENCE, timeout=10, name="main") as probe:
        assert probe.send(request)
        time.sleep(2.0)  # the reply waits in the pipe: the checker is late, not the server
        item = probe.read(10)
        assert item is not None and item.message is not None and item.message.get("id") == 1
        late = probe.child.elapsed()
        assert late > 2.0 > item.line.at
        judge_first_reply(ctx, probe, Reply(request, item.message, late, line=item.line))
    startup = ctx.findings.results()["startup-time"]
    assert startup.status == "pass", startup.summary
    assert startup.evidence["warm_seconds"] == round(item.line.at, 3)
