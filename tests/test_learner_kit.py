"""The learner kit of a graded class (``mcp-lab course kit``): what it leaves out, and that it works.

The kit runs here as a class's machine would run it: a Python that sees the course's dependencies
but not this repository (its editable install is left out), the kit first on the import path.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import ROOT
from course_support import notebook_text

from grader.course import build

STAGES = {s.name: s for s in build.stages()}
SOLVED = ("02-messages", "07-stdout-hygiene")  # a stage on the runtime's framing, one on the reference server


@dataclass(frozen=True)
class Kit:
    folder: Path
    env: dict[str, str]

    def mcp_lab(self, *args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
        launcher = str(self.folder / "bin" / "mcp-lab")
        return subprocess.run(
            [launcher, *args], capture_output=True, text=True, env=self.env, timeout=timeout, cwd=self.folder.parent
        )

    def python(self, code: str) -> subprocess.CompletedProcess[str]:
        env = {**self.env, "PYTHONPATH": str(self.folder)}
        return subprocess.run(
            ["python3", "-c", code], capture_output=True, text=True, env=env, timeout=60, cwd=self.folder.parent
        )


@pytest.fixture(scope="module")
def kit(tmp_path_factory: pytest.TempPathFactory) -> Kit:
    home = tmp_path_factory.mktemp("class")
    made = subprocess.run(
        [sys.executable, "-m", "grader.cli", "course", "kit", str(home / "kit")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert made.returncode == 0, made.stderr
    # A Python with the course's dependencies and without this repository: a venv whose one .pth
    # line is the test venv's site-packages (a path line: the editable finder there is never run).
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(home / "python")], check=True, timeout=120)
    site = Path(sysconfig.get_path("purelib", vars={"base": str(home / "python")}))
    (site / "course.pth").write_text(sysconfig.get_path("purelib") + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONUNBUFFERED", "VIRTUAL_ENV")}
    env["PATH"] = f"{home / 'python' / 'bin'}{os.pathsep}{env['PATH']}"
    env["MCP_LAB_STUDENT"] = "kit-learner"
    return Kit(home / "kit", env)


def test_the_kit_holds_no_key_no_hidden_check_and_no_source_of_the_reference(kit: Kit) -> None:
    files = [p for p in kit.folder.rglob("*") if p.is_file()]
    names = {str(p.relative_to(kit.folder)) for p in files}
    assert not any(n.startswith("grader/grading/") for n in names)
    assert sorted(n for n in names if n.startswith("reference/") and n.endswith(".py")) == ["reference/__init__.py"]
    assert {f"reference/{m}.pyc" for m in ("server", "dispatch", "shop", "writes")} <= names
    notebook_texts = {f"notebooks/{s}/{s}.py" for s in STAGES}
    assert not names & notebook_texts, "a stage's notebook text holds its solutions"
    assert "notebooks/09-clinic-repair/repair_1.py" in names, "stage 09's handed-out servers are the learner's"
    secrets = re.compile(rb"### BEGIN (SOLUTION|HIDDEN TESTS)|clinic_key|apply_solution|grading\.secret")
    found = [str(p.relative_to(kit.folder)) for p in files if secrets.search(p.read_bytes())]
    assert found == [], f"the kit names or holds a key: {found}"
    requirements = (kit.folder / "requirements.txt").read_text().split()
    assert any(r.startswith("nbgrader") for r in requirements) and any(r.startswith("jupyterlab") for r in requirements)


def test_grading_is_not_importable_and_the_reference_has_no_text_to_read(kit: Kit) -> None:
    grading = kit.python("import grader.grading")
    assert grading.returncode == 1 and "ModuleNotFoundError: No module named 'grader.grading'" in grading.stderr
    source = kit.python("import inspect, reference.dispatch as d; print(d.__file__); inspect.getsource(d)")
    assert source.stdout.strip() == str(kit.folder / "reference" / "dispatch.pyc")
    assert "OSError: could not get source code" in source.stderr


def test_the_kit_checks_the_reference_and_refuses_what_only_the_repository_does(kit: Kit) -> None:
    assert kit.mcp_lab("db", "build").returncode == 0
    checked = kit.mcp_lab("check", "--", "python3", "-m", "reference.server")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert re.search(r"checks: \d+ pass, 0 fail", checked.stdout), checked.stdout
    for args, says in [
        (("clinic", "key"), "mcp-lab clinic key: not in a graded class's kit (your instructor holds the key)"),
        (("course", "grade", "02-messages"), "mcp-lab course grade: not in a learner kit"),
        (("course", "kit", "again"), "mcp-lab course kit: not in a learner kit"),
    ]:
        refused = kit.mcp_lab(*args)
        assert refused.returncode == 2 and refused.stdout == "", refused.stderr
        assert refused.stderr.startswith(says) and len(refused.stderr.splitlines()) == 1, refused.stderr


def test_progress_in_the_kit_runs_the_stages_the_workspace_holds(kit: Kit, tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    for name in SOLVED:
        stage = STAGES[name]
        (workspace / name).mkdir(parents=True)
        (workspace / name / stage.notebook).write_text(notebook_text(stage), encoding="utf-8")
    done = kit.mcp_lab("progress", "--workspace", str(workspace))
    assert done.returncode == 0 and done.stderr == "", done.stdout + done.stderr
    lines = {line.split()[0]: line for line in done.stdout.splitlines()}
    assert sorted(lines) == [*SOLVED, "total"]
    for name in SOLVED:
        points = STAGES[name].points()
        assert f"{points}/{points}" in lines[name] and "public checks passed" in lines[name], lines[name]


SOLVER = """
import json
from grader.course import clinic
from grader.course.clinic import draw_for
cases = draw_for("a-class-salt", "kit-learner")
print(json.dumps({
    "rules": sorted({c.defect.rule for c in cases} | {r for c in cases for r in c.defect.also}),
    "key": sorted({entry["rule"] for entry in clinic.key(None, "kit-learner").values()}),
    "families": len({c.defect.family for c in cases}),
}))
"""


def test_a_script_over_the_kits_clinic_reads_no_rule(kit: Kit) -> None:
    """Stage 08 is not solved by calling the kit's clinic: each case's defect is there (its server
    runs on the learner's machine), the rule it breaks is not."""
    solved = kit.python(SOLVER)
    assert solved.returncode == 0, solved.stderr
    found = json.loads(solved.stdout)
    assert found["rules"] == [""] and found["key"] == [""], found
    assert found["families"] > 1  # the cases themselves are drawn as before
    modules = sorted((kit.folder / "grader" / "course" / "clinic" / "defects").glob("*.py"))
    assert len(modules) > 2, "the defects package: its table and the family modules"
    text = "\n".join(module.read_text(encoding="utf-8") for module in modules)
    assert not [rule for rule in ("id-echo", "stdout-flush", "stdout-json-lines", "survives-bad-input") if rule in text]
    served = subprocess.run(
        ["python3", "-m", "grader.course.clinic.server", "a-class-salt", "kit-learner", "case-01"],
        input='{"jsonrpc":"2.0","id":1,"method":"ping"}\n',
        capture_output=True,
        text=True,
        env={**kit.env, "PYTHONPATH": str(kit.folder)},
        timeout=60,
        cwd=kit.folder.parent,
    )
    assert served.stdout or served.stderr, "the kit's case server still runs"
