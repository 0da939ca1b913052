"""Stage 06's client on MCP 2026-07-28, beyond what the course pipeline proves.

- The lesson's ``input_required`` retry is real: its first call is replayed by test_doc_examples
  (the block that starts ``$ mcp-lab serve --allow-writes --db COPY``); the retry cannot be, its
  ``requestState`` being sealed anew by each server process. Here the two are sent to one
  server, the retry with the state that server gave, and the replies compared with the lesson's.
- The answer key's ``Client`` (the notebook's solution of ``mcp_client``) against real servers:
  the reference in the modern era, cancelling an order through a real elicitation round trip on a
  copy of the shop; and the legacy-only adversary, where it falls back to ``initialize``.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from conftest import Wire
from test_doc_examples import elided, exchanges, fenced_blocks, matches, serve_options, solution_module

from grader.course import runtime
from grader.course.build import stages
from grader.course.notebook import parse
from reference import database
from reference.child import child_environment

STAGE = next(s.name for s in stages() if s.name.startswith("06"))


def lesson() -> str:
    stage = next(s for s in stages() if s.name == STAGE)
    cells = parse(stage.text.read_text(encoding="utf-8"), stage.name)["cells"]
    return "\n\n".join(c["source"] for c in cells if c["cell_type"] == "markdown")


def test_the_lessons_retry_is_what_the_reference_answers(
    start_server: Callable[..., Wire], tmp_path: Path, shop_db: Path
) -> None:
    blocks = [b for b in fenced_blocks(lesson()) if "input_required" in b.text or "inputResponses" in b.text]
    first = next(b for b in blocks if serve_options(b.text) is not None)
    retry = next(b for b in blocks if "inputResponses" in b.text)
    (ask,) = exchanges(first.text)
    (again,) = exchanges(retry.text)
    assert "input_required" in ask.replies[0] and elided(again.request)
    copy = database.build(tmp_path / "copy.db")
    options = [str(copy) if w == "COPY" else w for w in serve_options(first.text) or []]
    wire = start_server([sys.executable, "-m", "reference.server", *options])
    try:
        wire.send_raw(ask.request.encode("utf-8") + b"\n")
        wire.recv()
        matches(ask.replies[0], wire.lines[-1])
        state = json.loads(wire.lines[-1])["result"]["requestState"]
        # The lesson shortens the state to "..."; everything else in the retry is sent as shown.
        line = again.request.replace('"requestState":"..."', f'"requestState":{json.dumps(state)}')
        assert "..." not in line, "the retry elides only its requestState"
        wire.send_raw(line.encode("utf-8") + b"\n")
        wire.recv()
        matches(again.replies[0], wire.lines[-1])
    finally:
        assert wire.close() == 0


def answer_key(tmp_path: Path) -> ModuleType:
    path = tmp_path / "mcp_client.py"
    path.write_text(solution_module(STAGE, "mcp_client"), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("mcp_client_answer_key", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_answer_key_cancels_an_order_through_a_real_elicitation(tmp_path: Path) -> None:
    client_module = answer_key(tmp_path)
    copy = database.build(tmp_path / "copy.db")
    asked: list[tuple[str, Any]] = []

    def agree(key: str, request: Any) -> dict[str, Any]:
        asked.append((key, request))
        return {"action": "accept", "content": {"confirm": True}}

    argv = [sys.executable, "-m", "reference.server", "--allow-writes", "--db", str(copy)]
    client = client_module.Client(argv, timeout=10.0, on_input=agree)
    try:
        discovered = client.connect(probe_timeout=10.0)
        assert discovered["supportedVersions"] == ["2026-07-28"] and client.era == "modern"
        params = {"name": "cancel_order", "arguments": {"order_id": 9, "reason": "asked by phone"}}
        result = client.round_trip("tools/call", params)
        assert result["resultType"] == "complete" and result["structuredContent"]["status"] == "cancelled"
        assert [key for key, _ in asked] == ["confirm"]
        assert asked[0][1]["method"] == "elicitation/create"
        assert params == {"name": "cancel_order", "arguments": {"order_id": 9, "reason": "asked by phone"}}
    finally:
        assert client.close() == 0


@pytest.mark.parametrize("how", ["-32601", "-32602", "silent"])
def test_the_answer_key_falls_back_for_a_legacy_server(
    tmp_path: Path, shop_db: Path, how: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    client_module = answer_key(tmp_path)
    root = runtime.cached("06")
    # The adversary runs as the course runs it: the stage's runtime its only import path.
    monkeypatch.setenv("PYTHONPATH", str(root))
    monkeypatch.setenv(database.ENV_VAR, str(shop_db))
    argv = [sys.executable, "-S", str(root / "lab_runtime" / "peers" / "adversaries.py"), f"legacy:{how}"]
    client = client_module.Client(argv, timeout=10.0)
    try:
        result = client.connect(probe_timeout=3.0)
        assert result["protocolVersion"] == "2025-11-25" and client.era == "legacy"
        counted = client.request("tools/call", {"name": "count_orders", "arguments": {"status": "paid"}})
        assert counted["structuredContent"] == {"status": "paid", "count": 341} and "resultType" not in counted
    finally:
        assert client.close() == 0


def test_an_adversary_says_it_is_ready_in_a_file_the_client_never_sees(tmp_path: Path, shop_db: Path) -> None:
    """The checks wait for an adversary's start before a probe may time out: through a file, so a client
    that never reads stderr (a bug of its own, with its own check) costs no extra wait elsewhere."""
    root = runtime.cached("06")
    script = str(root / "lab_runtime" / "peers" / "adversaries.py")
    env = {**child_environment(), "PYTHONPATH": str(root), database.ENV_VAR: str(shop_db)}
    ready = tmp_path / "ready"
    child = subprocess.Popen(
        [sys.executable, "-S", script, "legacy:silent", "--ready", str(ready)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not ready.exists() and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert ready.exists(), "no ready file although the adversary runs"
    finally:
        child.kill()
        child.communicate(timeout=10)
    for wrong in (["legacy:silent", "--ready"], ["legacy:silent", "--later", "x"], ["nobody"]):
        argv = [sys.executable, "-S", script, *wrong]
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=30)
        assert done.returncode == 2 and done.stderr.startswith("usage: "), (wrong, done.stderr)
        assert len(done.stderr.splitlines()) == 1, done.stderr


@pytest.mark.parametrize("name", ["era_probe", "client", "child", "thread_state"])
def test_the_reference_client_is_out_of_reach_in_stage_06(tmp_path: Path, name: str) -> None:
    """The stage teaches the dual-era client: its answer key is not in the runtime, and importing it fails."""
    from grader.course.expect import Failure
    from grader.course.work import Work

    assert not list((runtime.cached("06") / "reference").glob(f"{name}.*"))
    (tmp_path / "mcp_client.py").write_text(f"from reference import {name}\n", encoding="utf-8")
    with Work(tmp_path, "06") as work, pytest.raises(Failure):
        work.module("mcp_client")


# A determined student's client: its timeout fires 2.2 s late, and it starts CPU-bound processes of
# its own, pinned to one core, where they wait for a CPU most of the time.
LATE = (
    '                raise ClientError(f"no message from the server within {timeout:.1f} s") from None\n',
    "                time.sleep(2.2)\n"
    '                raise ClientError(f"no message from the server within {timeout:.1f} s") from None\n',
)
HOGS = (
    "        self.process = launch(argv)\n",
    "        self.process = launch(argv)\n"
    "        import subprocess, sys\n"
    "        spin = 'import os\\nos.sched_setaffinity(0, {0})\\nwhile 1:\\n    pass\\n'\n"
    "        self.hogs = [subprocess.Popen([sys.executable, '-c', spin]) for _ in range(4)]\n",
)


def test_a_late_timeout_buys_no_time_with_cpu_work_of_its_own(tmp_path: Path) -> None:
    """Stage 06 judges a timeout on the time the client could run: it forgives what the harness process
    (the client's request, its clock, its pump threads) and the course's servers waited for a CPU,
    never what processes of the learner's own making waited."""
    from grader.course.checks import cells
    from grader.course.expect import Failure
    from grader.course.work import Work

    source = solution_module(STAGE, "mcp_client")
    for old, new in (LATE, HOGS):
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    (tmp_path / "mcp_client.py").write_text(source, encoding="utf-8")
    with Work(tmp_path, "06") as work, pytest.raises(Failure) as caught:
        cells("06")["test_timeouts"].run(work)
    assert caught.value.check == "client-timeouts" and "gave up after" in caught.value.summary, caught.value
