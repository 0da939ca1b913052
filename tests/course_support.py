"""Helpers for the course tests: a temporary nbgrader course, submissions, autograding, scores.

Everything runs through nbgrader's own API (the same code as its command line) in a course folder
under pytest's temporary directory, never in the source tree.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grader.course import build
from grader.course.notebook import parse

TIMESTAMP = "2026-12-02 12:00:00.000000 UTC"


def nbgrader_config(course: Path) -> Any:
    return build.config(course)


def api(course: Path) -> Any:
    return build.nbgrader_api(course)


def notebook_text(stage: build.Stage, replace: tuple[str, str] | None = None) -> str:
    """The stage's solution notebook as JSON text, with one text replacement (a learner's bug)."""
    text = stage.text.read_text(encoding="utf-8")
    if replace is not None:
        old, new = replace
        assert text.count(old) == 1, f"{stage.name}: the bug's text {old!r} must occur exactly once"
        text = text.replace(old, new)
    return json.dumps(parse(text, stage.name), indent=1, ensure_ascii=False)


def submit(course: Path, student: str, stage: build.Stage, notebook_json: str) -> None:
    folder = course / "submitted" / student / stage.name
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    (folder / stage.notebook).write_text(notebook_json, encoding="utf-8")
    (folder / "timestamp.txt").write_text(TIMESTAMP, encoding="utf-8")


@dataclass
class Grades:
    seconds: float
    cells: dict[str, tuple[float, float]] = field(default_factory=dict)  # grade_id -> (score, max)

    @property
    def score(self) -> float:
        return sum(s for s, _ in self.cells.values())

    @property
    def max_score(self) -> float:
        return sum(m for _, m in self.cells.values())

    def lost(self) -> set[str]:
        return {name for name, (score, most) in self.cells.items() if score < most}


def autograde(course: Path, student: str, stage: build.Stage) -> Grades:
    started = time.monotonic()
    result = api(course).autograde(stage.name, student, force=True, create=True)
    seconds = time.monotonic() - started
    assert result["success"], result.get("log", "")[-4000:]
    from nbgrader.api import Gradebook

    grades = Grades(seconds)
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        submission = gradebook.find_submission(stage.name, student)
        for notebook in submission.notebooks:
            for grade in notebook.grades:
                grades.cells[grade.name] = (grade.score, grade.max_score)
    return grades


def autograded_notebook(course: Path, student: str, stage: build.Stage) -> dict[str, Any]:
    path = course / "autograded" / student / stage.name / stage.notebook
    return json.loads(path.read_text(encoding="utf-8"))


def error_texts(notebook: dict[str, Any], grade_id: str) -> list[str]:
    """The error outputs of one cell, as the learner reads them (ANSI colours removed)."""
    import re

    for cell in notebook["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id:
            texts = []
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error":
                    texts.append(re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(output.get("traceback", []))))
            return texts
    raise KeyError(grade_id)


def python_env() -> dict[str, str]:
    env = build.nbgrader_env()
    env.pop("PYTHONUNBUFFERED", None)
    return env


PYTHON = sys.executable
