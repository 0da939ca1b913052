"""What the instructor's records can be trusted for, after `mcp-lab course grade` and nbgrader's own steps.

The README's instructor example runs with three hand-ins: ada's solutions, eve's solutions with a copy of
the course secret beside them (refused before anything runs), and bob's untouched release. Then:

- nothing of eve's refused submission reaches ``autograded/`` or ``feedback/`` (nbgrader would copy it
  there, secret included), and her row says why she has 0;
- ``mcp-lab course export`` reports a score only where the gradebook and the sealed verdict file agree:
  the gradebook's automatic scores raised by hand, or a verdict file edited after grading, is
  ``tampered``, never ``graded``.
"""

from __future__ import annotations

import csv
import json
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT
from course_support import notebook_text, python_env
from test_course_instructor import STAGE, instructor_block, run_script

from grader.course import build
from grader.grading import secret

pytestmark = pytest.mark.timeout(400)


def export(course: Path) -> dict[str, dict[str, str]]:
    done = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "mcp-lab"), "course", "export", STAGE, "--to", "grades.csv"],
        capture_output=True,
        text=True,
        cwd=course,
        env=python_env(),
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    with open(course / "grades.csv", encoding="utf-8") as handle:
        return {row["student"]: row for row in csv.DictReader(handle) if row["stage"] == STAGE}


def with_note(notebook: str, note: str) -> str:
    """The notebook (JSON text) with ``note`` added to its first markdown cell."""
    data = json.loads(notebook)
    cell = next(c for c in data["cells"] if c["cell_type"] == "markdown")
    cell["source"] = "".join(cell["source"]) + "\n\n" + note
    return json.dumps(data)


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    lines = instructor_block()
    cut = next(i for i, line in enumerate(lines) if line.startswith("# collect"))
    course = tmp_path_factory.mktemp("trust") / "mcp-course"
    done = run_script(lines[:cut], course)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    stage = next(s for s in build.stages() if s.name == STAGE)
    released = course / "release" / STAGE / stage.notebook
    key = secret.path(course).read_text().strip()
    handed = {
        "ada": notebook_text(stage),
        "eve": notebook_text(stage),
        "bob": released.read_text(),
        "mallory": with_note(notebook_text(stage), key),  # the secret inside the notebook itself
    }
    for student, text in handed.items():
        folder = course / "submitted" / student / STAGE
        folder.mkdir(parents=True)
        (folder / stage.notebook).write_text(text, encoding="utf-8")
    shutil.copyfile(secret.path(course), course / "submitted" / "eve" / STAGE / "notes.txt")
    done = run_script([f"cd {course}", f"export OLDPWD={ROOT}", *lines[cut + 1 :]], course)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return course


def test_a_refused_submission_goes_nowhere(graded: Path) -> None:
    course = graded
    key = secret.path(course).read_text().strip()
    for folder in ("autograded", "feedback"):
        for student in ("eve", "mallory"):
            found = sorted(p.name for p in (course / folder / student).rglob("*"))
            assert not (course / folder / student).exists(), found
        assert (course / folder / "ada" / STAGE).is_dir()  # the honest one's are there
    for path in course.rglob("*"):
        if path.is_file() and "submitted" not in path.parts and path != secret.path(course):
            assert key not in path.read_text(encoding="utf-8", errors="replace"), path
    rows = export(course)
    for student in ("eve", "mallory"):
        assert rows[student]["score"] in ("0", "") and "course-files" in rows[student]["flags"], rows[student]
    assert rows["ada"]["status"] == "graded" and float(rows["ada"]["score"]) > 0


def test_a_score_raised_in_the_gradebook_is_tampered(graded: Path, tmp_path: Path) -> None:
    course = tmp_path / "course"
    shutil.copytree(graded, course, symlinks=True)
    with sqlite3.connect(course / "gradebook.db") as db:  # what a process that reached the gradebook could do
        changed = db.execute(
            "UPDATE grade SET auto_score = 1 WHERE notebook_id IN (SELECT n.id FROM submitted_notebook n "
            "JOIN submitted_assignment a ON n.assignment_id = a.id WHERE a.student_id = 'bob')"
        ).rowcount
    assert changed
    rows = export(course)
    assert rows["bob"]["status"] == "tampered" and rows["bob"]["score"] == "", rows["bob"]
    assert "the verdicts 0" in rows["bob"]["flags"], rows["bob"]["flags"]
    assert rows["ada"]["status"] == "graded"


def test_a_verdict_file_edited_after_grading_is_tampered(graded: Path, tmp_path: Path) -> None:
    course = tmp_path / "course"
    shutil.copytree(graded, course, symlinks=True)
    path = course / "grading" / STAGE / "verdicts" / "bob.json"
    data = json.loads(path.read_text())
    assert data["seal"]
    for cell in data["cells"].values():
        cell["status"], cell["text"] = "passed", ""
    path.write_text(json.dumps(data))
    rows = export(course)
    assert rows["bob"]["status"] == "tampered" and "seal" in rows["bob"]["flags"], rows["bob"]
