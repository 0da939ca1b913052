"""The nbgrader preprocessor that grades outside the learner's kernel: it takes the place of ``Execute``.

nbgrader's own autograde runs the learner's notebook and scores each graded cell by whether its
output holds an error: whatever the notebook does decides its grade. A course made by
``mcp-lab course init`` replaces that step (``Autograde.autograde_preprocessors`` in its
``nbgrader_config.py``) with :class:`GradeOutside`: the notebook is never run; each graded cell's
output is the verdict of :mod:`grader.grading.grade` (computed by ``mcp-lab course grade`` in
parallel beforehand, or here, in order, under plain ``nbgrader autograde``). nbgrader's next
steps (``SaveAutoGrades``, late penalties) then store the grades as they always do, so
``generate_feedback`` and ``export`` work unchanged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nbconvert.preprocessors import Preprocessor
from nbformat import NotebookNode
from nbformat.v4 import new_output
from traitlets import Bool

from . import secret
from .grade import CellVerdict, Verdicts, grade, read_submission

VERDICTS = "verdicts"  # grading/STAGE/verdicts/STUDENT.json in the course folder


def verdicts_path(course: Path, stage_name: str, student: str) -> Path:
    return course / "grading" / stage_name / VERDICTS / f"{student}.json"


def load_or_grade(course: Path, stage_name: str, student: str) -> Verdicts:
    """The verdicts ``mcp-lab course grade`` left for this submission, if they are for these very files."""
    path = verdicts_path(course, stage_name, student)
    digest = read_submission(course, stage_name, student)[0].digest()
    key = secret.load(course)
    if path.is_file():
        found = Verdicts.from_json(path.read_text(encoding="utf-8"))
        if found.digest == digest and found.seal_holds(key):  # a file edited since is graded again
            return found
    result = grade(course, stage_name, student).sealed(key)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(result.as_json(), encoding="utf-8")
    return result


def outputs(verdict: CellVerdict | None) -> list[NotebookNode]:
    """What the graded cell shows: a pass line, or the failure as an error (nbgrader's sign of 0 points)."""
    if verdict is None:
        text = "this cell has no checks: it was not graded"
        return [new_output("error", ename="NotGraded", evalue=text, traceback=[text])]
    if verdict.status == "passed":
        return [new_output("stream", name="stdout", text="passed: public and hidden checks\n")]
    lines = verdict.text.splitlines() or ["failed"]
    if verdict.status == "error":
        return [new_output("error", ename="GradingFailed", evalue=lines[0], traceback=lines)]
    first, *rest = lines
    return [new_output("error", ename="Failure", evalue=first, traceback=[f"\x1b[31mFailure\x1b[0m  {first}", *rest])]


class DropForeignCells(Preprocessor):
    """Before nbgrader's own checks: a cell that claims to be graded but is not one of the course's
    (an nbgrader id the source does not have, or a second cell with one it has) becomes a plain cell.

    nbgrader would fail the whole submission on it; grading flags it instead (see
    :func:`grader.grading.flags.scan_notebook`) and grades the real cells.
    """

    enabled = Bool(True).tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict[str, Any]) -> tuple[NotebookNode, dict[str, Any]]:
        from nbgrader.coursedir import CourseDirectory

        from .grade import graded_cells

        course = Path(CourseDirectory(config=self.config).root).resolve()
        known = set(graded_cells(course, resources["nbgrader"]["assignment"], every=True))
        seen: set[str] = set()
        for cell in nb.cells:
            if not isinstance(cell.get("metadata"), dict):
                cell["metadata"] = NotebookNode()  # a notebook's cells have metadata, a dict
            meta = cell.metadata.get("nbgrader")
            if meta is not None and not isinstance(meta, dict):
                del cell.metadata["nbgrader"]  # not nbgrader's: flagged by grading (Submission.plain)
                continue
            if not meta:
                continue
            grade_id = meta.get("grade_id")
            if grade_id not in known or grade_id in seen:
                del cell.metadata["nbgrader"]
            else:
                seen.add(grade_id)
        return nb, resources


class GradeOutside(Preprocessor):
    """Every graded cell's output from the verdicts; no other cell is run or changed."""

    # nbconvert registers a preprocessor disabled unless it says otherwise; disabled, every graded
    # cell would keep an empty output, which nbgrader scores as full marks.
    enabled = Bool(True).tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict[str, Any]) -> tuple[NotebookNode, dict[str, Any]]:
        info = resources["nbgrader"]
        from nbgrader.coursedir import CourseDirectory

        course = Path(CourseDirectory(config=self.config).root).resolve()
        verdicts = load_or_grade(course, info["assignment"], info["student"])
        for cell in nb.cells:
            meta = cell.get("metadata", {}).get("nbgrader", {})
            if cell.cell_type == "code" and meta.get("grade"):
                cell.outputs = outputs(verdicts.cells.get(meta.get("grade_id")))
        return nb, resources
