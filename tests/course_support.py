"""Helpers for the course tests: a temporary nbgrader course, submissions, grading, scores.

Everything runs through the instructor's grading command (``mcp-lab course grade``, in this
process) and nbgrader's own API, in a course folder under pytest's temporary directory, never in
the source tree.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
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


def notebook_text(
    stage: build.Stage, replace: tuple[str, str] | None = None, course: Path | None = None, student: str = ""
) -> str:
    """The stage's solution notebook as JSON text, with one text replacement (a learner's bug).

    Stage 08's answer is data written for one learner's draw: with ``course`` and ``student``, its
    solution cell becomes that learner's right answer as a literal (as a learner writes it). Stage
    09's solution cell is the instructor's machinery (it writes the repaired files): a learner's
    notebook holds nothing there, and their files carry the answer (:func:`solved_files`)."""
    text = stage.text.read_text(encoding="utf-8")
    if course is not None and stage.name.startswith("09"):
        start, end = text.index("### BEGIN SOLUTION"), text.index("### END SOLUTION") + len("### END SOLUTION")
        text = text[:start] + "pass" + text[end:]
    if course is not None and stage.name.startswith("08"):
        from grader.course import clinic
        from grader.grading.clinic_key import solution

        start, end = text.index("### BEGIN SOLUTION"), text.index("### END SOLUTION") + len("### END SOLUTION")
        text = text[:start] + solution(clinic.salt(course / "source" / stage.name), student) + text[end:]
    if replace is not None:
        old, new = replace
        assert text.count(old) == 1, f"{stage.name}: the bug's text {old!r} must occur exactly once"
        text = text.replace(old, new)
    return json.dumps(parse(text, stage.name), indent=1, ensure_ascii=False)


def submit(
    course: Path, student: str, stage: build.Stage, notebook_json: str, files: dict[str, str] | None = None
) -> Path:
    """A submission as nbgrader collects it: the notebook, the files handed in beside it, a timestamp."""
    folder = course / "submitted" / student / stage.name
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    (folder / stage.notebook).write_text(notebook_json, encoding="utf-8")
    (folder / "timestamp.txt").write_text(TIMESTAMP, encoding="utf-8")
    for name, text in (files or {}).items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def handed_in(stage: build.Stage, course: Path) -> dict[str, str]:
    """The files a learner hands in beside a stage's notebook, as the release gives them."""
    from grader.course.checks import HANDED_IN

    release = course / "release" / stage.name
    return {p.name: p.read_text(encoding="utf-8") for g in HANDED_IN.get(stage.name[:2], ()) for p in release.glob(g)}


def solved_files(stage: build.Stage, course: Path) -> dict[str, str]:
    """The handed-in files as the instructor's solution makes them (stage 09's repairs)."""
    files = handed_in(stage, course)
    if files:
        import tempfile

        from grader.grading.repairs import apply_solution

        with tempfile.TemporaryDirectory() as tmp:
            for name, text in files.items():
                (Path(tmp) / name).write_text(text, encoding="utf-8")
            apply_solution(Path(tmp))
            files = {name: (Path(tmp) / name).read_text(encoding="utf-8") for name in files}
    return files


@dataclass
class Grades:
    seconds: float
    cells: dict[str, tuple[float, float]] = field(default_factory=dict)  # grade_id -> (score, max)
    flags: list[dict[str, str]] = field(default_factory=list)  # what mcp-lab course grade flagged

    def flag_kinds(self) -> set[str]:
        return {f["kind"] for f in self.flags}

    @property
    def score(self) -> float:
        return sum(s for s, _ in self.cells.values())

    @property
    def max_score(self) -> float:
        return sum(m for _, m in self.cells.values())

    def lost(self) -> set[str]:
        return {name for name, (score, most) in self.cells.items() if score < most}


def grade(course: Path, student: str, stage: build.Stage, jobs: int = 1) -> Grades:
    """``mcp-lab course grade STAGE --student STUDENT``, in this process; the gradebook's grades after it."""
    from grader.grading.command import grade_stage

    started = time.monotonic()
    rows = grade_stage(course, stage.name, jobs, only=[student])
    seconds = time.monotonic() - started
    assert [r.status for r in rows] == ["graded"], [(r.status, r.flags) for r in rows]
    return gradebook_grades(course, student, stage, seconds, rows[0].flags)


def gradebook_grades(
    course: Path, student: str, stage: build.Stage, seconds: float = 0.0, flags: list | None = None
) -> Grades:
    from nbgrader.api import Gradebook

    grades = Grades(seconds, flags=flags or [])
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


def run_nbval(notebook: Path, timeout: float = 540) -> Any:
    """nbval on ``notebook`` (``--nbval-lax``, in its folder, in this environment's kernel): the finished process.

    ``-p nbval_ipc`` puts the kernel on ipc sockets, not TCP ports another process can take first
    (tests/nbval_ipc.py)."""
    command = [PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "nbval_ipc", "--nbval-lax",
               "--nbval-cell-timeout=120", "--nbval-current-env", "-o", "addopts=", "-o", "testpaths=",
               str(notebook)]  # fmt: skip
    env = python_env()
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(__file__).resolve().parent), env.get("PYTHONPATH")]))
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=notebook.parent, env=env)


# A ping, an id null, an unknown method, a 2026-07-28 request without its version, one asking for 2027,
# a page at offset 100, the paid orders counted: something for every rule, evidence of none.
KITCHEN_META = '"io.modelcontextprotocol/clientCapabilities":{}'
KITCHEN_SINK = [
    '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    '{"jsonrpc":"2.0","id":null,"method":"ping"}',
    '{"jsonrpc":"2.0","id":3,"method":"no/such/method"}',
    '{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":{' + KITCHEN_META + "}}}",
    '{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_meta":{'
    '"io.modelcontextprotocol/protocolVersion":"2027-01-01",' + KITCHEN_META + "}}}",
    '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"list_orders","arguments":{"offset":100}}}',
    '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"count_orders","arguments":{"status":"paid"}}}',
]
