"""The official Python SDK's 1.x client validates the reference's structured tool output.

The project's environment holds the SDK 2.x (tests/test_sdk_interop.py); hosts in the field still
run 1.x, whose client validates ``structuredContent`` against each tool's ``outputSchema`` too. It
lives in its own environment, build/sdk1 (bench/install_corpus.sh, which .ci/run calls), and runs
tests/clients/sdk1_session.py as a real child that drives a real server child.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from grader import gallery
from reference.child import child_environment

ROOT = Path(__file__).resolve().parents[1]
SDK1 = ROOT / "build" / "sdk1" / "bin" / "python"
SESSION = ROOT / "tests" / "clients" / "sdk1_session.py"

pytestmark = pytest.mark.skipif(
    not SDK1.exists(), reason="the SDK 1.x client is not installed: run bench/install_corpus.sh (.ci/run does)"
)


def sdk1_session(argv: list[str], *options: str) -> dict:
    done = subprocess.run(
        [str(SDK1), str(SESSION), *options, "--", *argv],
        capture_output=True,
        text=True,
        timeout=90,
        env=child_environment(),
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def test_the_sdk1_client_is_1x() -> None:
    version = subprocess.run(
        [str(SDK1), "-c", "import importlib.metadata as m; print(m.version('mcp'))"],
        capture_output=True,
        text=True,
        timeout=30,
    ).stdout.strip()
    assert version.startswith("1."), version


def test_the_sdk1_client_validates_the_references_structured_results(shop_db: Path) -> None:
    seen = sdk1_session([sys.executable, "-m", "reference.server", "--db", str(shop_db)])
    assert seen["protocolVersion"] == "2025-11-25"
    assert all(seen["outputSchemas"].values()), seen["outputSchemas"]
    for call in seen["calls"]:
        assert "refused" not in call, call
        assert call["isError"] is False and isinstance(call["structured"], dict), call
    count = next(c for c in seen["calls"] if c["tool"] == "count_orders")
    assert count["structured"]["status"] == "shipped" and isinstance(count["structured"]["count"], int)


def test_the_sdk1_client_refuses_structured_content_that_breaks_the_schema() -> None:
    """Its validation is live: the exhibit whose count is a string is refused, its other tools are not."""
    seen = sdk1_session(gallery.command("structured_content_wrong_type"))
    refused = {c["tool"]: c.get("refused", "") for c in seen["calls"]}
    assert "Invalid structured content returned by tool count_orders" in refused["count_orders"]
    assert [t for t, why in refused.items() if why] == ["count_orders"]


def course_server(stage: str, folder: Path) -> list[str]:
    """The command of a stage's answer-key server as the course runs it: stage 03's ``server`` (the
    course's server around the learner's modules), stage 05's capstone ``my_server.py`` (a file alone)."""
    from grader.course import build
    from grader.course.notebook import modules, parse
    from grader.course.work import Work

    found = next(s for s in build.stages() if s.name.startswith(stage))
    written = modules(parse(found.text.read_text(encoding="utf-8"), found.name))
    folder.mkdir(parents=True)
    for name, text in written.items():
        (folder / f"{name}.py").write_text(text, encoding="utf-8")
    with Work(folder, stage) as work:
        # The SDK 1.x client passes only a few variables to the server: the command sets its own.
        return work.program("my_server" if stage == "05" else "server")


def test_the_sdk1_client_shakes_hands_with_stage_03s_server(tmp_path: Path) -> None:
    """An old host (SDK 1.x) meets the learner's dual-era server of stage 03 (the answer key): the handshake."""
    seen = sdk1_session(course_server("03", tmp_path / "03"), "--ping")
    assert seen["protocolVersion"] == "2025-11-25" and seen["ping"] == {"meta": None}, seen


def test_the_sdk1_client_calls_the_capstones_tools(tmp_path: Path) -> None:
    """... and the capstone (stage 05's my_server.py): the handshake, then tools with structured results."""
    seen = sdk1_session(course_server("05", tmp_path / "05"))
    assert seen["protocolVersion"] == "2025-11-25", seen
    assert all(seen["outputSchemas"].values()), seen["outputSchemas"]
    for call in seen["calls"]:
        assert "refused" not in call and call["isError"] is False, call
    count = next(c for c in seen["calls"] if c["tool"] == "count_orders")
    assert count["structured"] == {"status": "shipped", "count": count["structured"]["count"]}
