"""What `make lab` prints and where JupyterLab opens (grader/course/launch.py).

The first notebook to open is read from the workspace's ``.mcp-lab/progress.json`` (missing or
broken: stage 00). A real `mcp-lab lab` prints a few lines, the last one the URL of that notebook;
JupyterLab answers there, `/` leads there too; SIGTERM (what make passes on) or Ctrl-C stops it in
order, and JupyterLab does not outlive `mcp-lab lab` even when that is killed outright.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from conftest import ROOT
from course_support import python_env

from grader.course import build, launch

STAGES = build.stages()


def workspace_with_notebooks(tmp_path: Path) -> Path:
    workspace = tmp_path / "workspace"
    for stage in STAGES:
        (workspace / stage.name).mkdir(parents=True)
        (workspace / stage.name / stage.notebook).write_text("{}")
    return workspace


def record(workspace: Path, text: str) -> None:
    (workspace / launch.PROGRESS).parent.mkdir(parents=True, exist_ok=True)
    (workspace / launch.PROGRESS).write_text(text)


def notebook(stage: build.Stage) -> str:
    return f"{stage.name}/{stage.notebook}"


def scores(*full: build.Stage, **others: dict[str, object]) -> str:
    stages: dict[str, object] = {s.name: {"earned": s.points(), "possible": s.points()} for s in full}
    return json.dumps({"stages": stages | others})


def test_stage_00_first_when_nothing_is_recorded_or_the_record_is_broken(tmp_path: Path) -> None:
    workspace = workspace_with_notebooks(tmp_path)
    assert launch.first_notebook(workspace) == notebook(STAGES[0])
    for broken in ("", "{", "[]", '{"stages": []}', '{"stages": {"00-shop-and-pipe": 10}}', "null"):
        record(workspace, broken)
        assert launch.first_notebook(workspace) == notebook(STAGES[0]), broken


def test_the_first_stage_not_passed(tmp_path: Path) -> None:
    workspace = workspace_with_notebooks(tmp_path)
    record(workspace, scores(STAGES[0]))
    assert launch.first_notebook(workspace) == notebook(STAGES[1])
    # A stage with points missing, or scores that are not numbers, is not passed.
    odd = {STAGES[2].name: {"earned": True, "possible": True}, STAGES[3].name: {"earned": "9", "possible": 9}}
    record(workspace, scores(STAGES[0], STAGES[1], **{STAGES[4].name: {"earned": 3, "possible": 14}}))
    assert launch.first_notebook(workspace) == notebook(STAGES[2])
    record(workspace, scores(STAGES[0], STAGES[1], **odd))
    assert launch.first_notebook(workspace) == notebook(STAGES[2])
    record(workspace, scores(*STAGES[:3], *STAGES[4:]))
    assert launch.first_notebook(workspace) == notebook(STAGES[3]), "in course order, not the record's"
    record(workspace, scores(*STAGES))
    assert launch.first_notebook(workspace) == "", "all passed: the file browser"
    # A notebook the learner deleted: its stage's folder. A folder not there yet: it comes with its notebook.
    record(workspace, scores(STAGES[0]))
    (workspace / notebook(STAGES[1])).unlink()
    assert launch.first_notebook(workspace) == STAGES[1].name
    (workspace / STAGES[1].name).rmdir()
    assert launch.first_notebook(workspace) == notebook(STAGES[1])
    assert launch.first_notebook(tmp_path / "new") == notebook(STAGES[0])


def test_the_url_and_the_command() -> None:
    info = {"url": "http://localhost:8890/", "token": "abc"}
    assert launch.lab_url(info, "00-a/00 b.ipynb") == "http://localhost:8890/lab/tree/00-a/00%20b.ipynb?token=abc"
    assert launch.lab_url({"url": "http://127.0.0.1:8888/base/"}, "") == "http://127.0.0.1:8888/base/lab"
    command = launch.lab_command(Path("/w"), ["--no-browser"], "00-a/00-a.ipynb")
    assert "--LabApp.default_url=/lab/tree/00-a/00-a.ipynb" in command
    assert command[-1] == "--no-browser", "the learner's own options come last and win"


def get(url: str) -> tuple[int, str]:
    """Status and redirect target, without following redirects or any proxy."""

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: object, **kwargs: object) -> None:
            return None

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), NoRedirect)
    try:
        with opener.open(url, timeout=30) as response:
            return response.status, ""
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get("Location", "")


def children(pid: int) -> list[int]:
    with contextlib.suppress(OSError):
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    return []


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(") ")[-1].startswith("Z"))


def start_lab(tmp_path: Path) -> tuple[subprocess.Popen[str], list[str], int]:
    """`mcp-lab lab` on a new workspace whose record says stage 00 is passed: (process, lines, JupyterLab's pid)."""
    workspace = tmp_path / "workspace"
    record(workspace, scores(STAGES[0]))
    # Port 0: JupyterLab picks a free one as it binds, so no other process can take it first.
    command = [sys.executable, "-m", "grader.cli", "lab", "--workspace", str(workspace), "--", "--no-browser",
               "--ServerApp.ip=127.0.0.1", "--ServerApp.port=0"]  # fmt: skip
    env = python_env() | {"JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "lab-settings")}
    lab = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []
    assert lab.stdout is not None
    for line in lab.stdout:  # until the URL line, or the end of output if it fails
        lines.append(line.rstrip("\n"))
        if line.startswith("JupyterLab is running: "):
            break
    assert lines and lines[-1].startswith("JupyterLab is running: "), "\n".join(lines) + lab.stderr.read()
    jupyter = children(lab.pid)
    assert len(jupyter) == 1, jupyter
    return lab, lines, jupyter[0]


@pytest.mark.timeout(300)
def test_make_lab_prints_a_few_lines_and_the_url_of_the_first_notebook_to_do(tmp_path: Path) -> None:
    lab, lines, jupyter = start_lab(tmp_path)
    try:
        assert lines[0].startswith("shop database: ")
        assert lines[1].startswith("workspace: ") and f"{len(STAGES)} stages added in " in lines[1]
        assert lines[2].startswith("JupyterLab: starting... ready in ") and "log: " in lines[2]
        assert len(lines) == 4, lines
        url = lines[3].removeprefix("JupyterLab is running: ").removesuffix(" (Ctrl-C to stop)")
        assert lines[3].endswith(" (Ctrl-C to stop)")
        assert f"/lab/tree/{notebook(STAGES[1])}?token=" in url, "stage 00 is passed: stage 01 is next"
        assert get(url)[0] == 200
        base, _, query = url.partition("/lab/tree/")
        status, location = get(f"{base}/?{query.partition('?')[2]}")
        assert status == 302 and location.startswith(f"/lab/tree/{notebook(STAGES[1])}"), (status, location)
        log = (tmp_path / "workspace" / launch.LOG).read_text()
        assert "Jupyter Server" in log and "is running at" in log, "JupyterLab's own log is kept aside"
    finally:
        lab.send_signal(signal.SIGTERM)
        out, err = lab.communicate(timeout=60)
    assert lab.returncode == 0, err
    assert out.strip().endswith("JupyterLab stopped."), out
    assert not alive(jupyter)
    assert "received signal 15, stopping" in (tmp_path / "workspace" / launch.LOG).read_text()


@pytest.mark.timeout(300)
def test_jupyterlab_ends_when_mcp_lab_is_killed(tmp_path: Path) -> None:
    lab, _, jupyter = start_lab(tmp_path)
    lab.kill()
    lab.wait()
    deadline = time.monotonic() + 60
    while alive(jupyter) and time.monotonic() < deadline:
        time.sleep(0.2)
    if alive(jupyter):
        os.kill(jupyter, signal.SIGKILL)
        pytest.fail("JupyterLab outlived mcp-lab lab")
