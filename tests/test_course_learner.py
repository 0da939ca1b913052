"""The learner's path from the README: `mcp-lab lab` makes the workspace, `mcp-lab progress` reads it.

The workspace holds nbgrader's release of every stage; running `mcp-lab lab` again never touches
a stage folder the learner has, and brings back one that is missing. `mcp-lab progress` runs each
stage's public checks on a copy and reports points and the first failure.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT
from course_support import notebook_text, python_env

from grader.course import build

pytestmark = pytest.mark.timeout(400)
STAGES = build.stages()


def mcp_lab(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "grader.cli", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=python_env())


def test_the_workspace_is_made_kept_and_completed(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    done = mcp_lab("lab", "--setup-only", "--workspace", str(workspace))
    assert done.returncode == 0, done.stdout + done.stderr
    for stage in STAGES:
        notebook = json.loads((workspace / stage.name / stage.notebook).read_text(encoding="utf-8"))
        text = json.dumps(notebook)
        assert "BEGIN SOLUTION" not in text and "HIDDEN TESTS" not in text
        assert "raise NotImplementedError()" in text
    assert (workspace / "nbgrader_config.py").is_file()

    # The learner writes in stage 01 and deletes stage 02 by mistake.
    mine = workspace / STAGES[1].name / STAGES[1].notebook
    mine.write_text(mine.read_text(encoding="utf-8").replace("raise NotImplementedError()", "return 42", 1))
    (workspace / STAGES[1].name / "notes.txt").write_text("my notes")
    lost = workspace / STAGES[2].name
    for path in sorted(lost.rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    lost.rmdir()

    again = mcp_lab("lab", "--setup-only", "--workspace", str(workspace))
    assert again.returncode == 0, again.stdout + again.stderr
    assert "return 42" in mine.read_text(encoding="utf-8"), "the learner's work was overwritten"
    assert (workspace / STAGES[1].name / "notes.txt").read_text() == "my notes"
    assert (lost / STAGES[2].notebook).is_file(), "a missing stage is added again"
    assert f"{STAGES[1].name:<22} kept as you left it" in again.stdout
    assert f"{STAGES[2].name:<22} added" in again.stdout


def test_progress_reports_points_and_the_first_failure(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    assert mcp_lab("lab", "--setup-only", "--workspace", str(workspace)).returncode == 0
    solved = STAGES[0]
    (workspace / solved.name / solved.notebook).write_text(notebook_text(solved), encoding="utf-8")

    def files() -> dict[Path, bytes]:
        return {p: p.read_bytes() for p in workspace.rglob("*") if p.is_file() and ".mcp-lab" not in p.parts}

    before = files()
    done = mcp_lab("progress", "--workspace", str(workspace))
    assert done.returncode == 0 and done.stderr == "", done.stdout + done.stderr
    lines = {line.split()[0]: line for line in done.stdout.splitlines()}
    assert f"{solved.points()}/{solved.points()}" in lines[solved.name]
    assert "public checks passed" in lines[solved.name]
    # The clinic's untouched stages have nothing to call: their first failure says what is missing.
    untouched = {
        "08-clinic-diagnosis": "there is no diagnosis yet",
        "09-clinic-repair": "as it was handed out",
    }
    for stage in STAGES[1:]:
        assert f"0/{stage.points()}" in lines[stage.name]
        want = untouched.get(stage.name, "is not written yet (it raises NotImplementedError)")
        assert want in lines[stage.name], lines[stage.name]
    total = sum(s.points() for s in STAGES)
    assert lines["total"].split()[1] == f"{solved.points()}/{total}"
    record = json.loads((workspace / ".mcp-lab" / "progress.json").read_text())
    assert record["stages"][solved.name] == {"earned": solved.points(), "possible": solved.points()}
    assert files() == before, "progress must not change the learner's files"
