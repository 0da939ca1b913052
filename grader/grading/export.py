"""``mcp-lab course export STAGE|--all``: grades.csv with a status and the flags, one row per student.

nbgrader's own ``export`` writes a 0.0 for a missing submission, for a grading that failed and for an
honest zero alike, and no row for a grading that crashed. This export reads what ``mcp-lab course
grade`` left (the verdicts of each submission, its summary) beside nbgrader's gradebook (the roster,
the stored scores) and says which is which:

| status | means |
|---|---|
| ``graded`` | graded: the score is the learner's |
| ``not submitted`` | on the roster (or in ``submitted/``) with no notebook handed in |
| ``grading failed`` | the grader crashed or ran out of time on it: not a verdict, grade it again |
| ``unreadable`` | a notebook was handed in that cannot be read as one |
| ``not graded`` | handed in, but ``mcp-lab course grade`` has not been run on it yet |
| ``tampered`` | the gradebook's automatic scores or the verdict file changed after grading: no score |

A verdict file carries a seal (an HMAC keyed by the course secret) that an edit breaks; the automatic
scores nbgrader stored must add up to the verdicts' (the instructor's manual scores and extra credit,
set in the formgrader, are the instructor's and count as nbgrader counts them).

    >>> status_of(None, None, submitted=False)
    'not submitted'
    >>> status_of({"kinds": ["unreadable"], "errors": 0}, None, submitted=True)
    'unreadable'
    >>> status_of({"kinds": [], "errors": 1}, "graded", submitted=True)
    'grading failed'
    >>> status_of({"kinds": ["unreadable"], "errors": 0}, "grading failed", submitted=True)
    'unreadable'
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import secret
from .grade import Verdicts, graded_cells
from .nbhook import verdicts_path

COLUMNS = ("student", "stage", "status", "score", "max_score", "flags")
STATUSES = ("graded", "not submitted", "grading failed", "unreadable", "not graded", "tampered")


@dataclass
class ExportRow:
    student: str
    stage: str
    status: str
    score: float | None  # None where there is no score to give (not submitted, grading failed, ...)
    max_score: float
    flags: str  # "kind: why; kind: why"

    def cells(self) -> list[str]:
        score = "" if self.score is None else f"{self.score:g}"
        return [self.student, self.stage, self.status, score, f"{self.max_score:g}", self.flags]


def status_of(found: dict[str, Any] | None, summary_status: str | None, submitted: bool) -> str:
    """The status of one student's stage, from the verdicts' flag kinds and error cells (``found``), the
    status ``mcp-lab course grade`` printed (``summary_status``), and whether a folder was handed in."""
    # A file that is no notebook fails nbgrader's own step too: what the submission is comes first.
    if found is not None and "unreadable" in found["kinds"]:
        return "unreadable"
    if summary_status == "grading failed" or (found is not None and found["errors"]):
        return "grading failed"
    if not submitted or (found is not None and "not-submitted" in found["kinds"]):
        return "not submitted"
    if found is None:
        return "not graded"
    return "graded"


def roster(course: Path) -> list[str]:
    """The students of nbgrader's gradebook (none when there is no gradebook yet)."""
    if not (course / "gradebook.db").is_file():
        return []
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        return sorted(s.id for s in gradebook.students)


def stored_scores(course: Path, stage: str) -> dict[str, tuple[float, float]]:
    """nbgrader's stored score of each student's submission of ``stage``, and the automatic part of it
    (what grading stored: the cells' ``auto_score``)."""
    if not (course / "gradebook.db").is_file():
        return {}
    from nbgrader.api import Gradebook, MissingEntry

    scores: dict[str, tuple[float, float]] = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        try:
            assignment = gradebook.find_assignment(stage)
        except MissingEntry:
            return {}
        for submission in assignment.submissions:
            auto = sum(g.auto_score or 0.0 for n in submission.notebooks for g in n.grades)
            scores[submission.student.id] = (float(submission.score), float(auto))
    return scores


def _summary(course: Path, stage: str) -> dict[str, dict[str, Any]]:
    path = course / "grading" / stage / "summary.json"
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {r["student"]: r for r in rows if isinstance(r, dict) and isinstance(r.get("student"), str)}


def _verdicts(course: Path, stage: str, student: str) -> Verdicts | None:
    try:
        return Verdicts.from_json(verdicts_path(course, stage, student).read_text(encoding="utf-8"))
    except (OSError, ValueError, TypeError, KeyError):
        return None


def tampering(verdicts: Verdicts, key: bytes, stored: float, earned: float) -> str:
    """Why the score cannot be trusted ("" where it can): the verdict file no longer holds its seal, or
    the gradebook's automatic scores add up to another score than the verdicts give."""
    if not verdicts.seal_holds(key):
        return "the verdict file was changed after grading (its seal does not hold): grade it again"
    if abs(stored - earned) > 1e-9:
        return f"the gradebook's automatic scores give {stored:g} points; the verdicts {earned:g}: grade it again"
    return ""


def stage_rows(course: Path, stage: str, students: Iterable[str]) -> list[ExportRow]:
    """One row per student of ``students`` and per student who handed ``stage`` in."""
    maximum = sum(graded_cells(course, stage).values())
    key = secret.load(course)
    summary = _summary(course, stage)
    scores = stored_scores(course, stage)
    submitted_dir = course / "submitted"
    handed = {p.name for p in submitted_dir.iterdir() if (p / stage).is_dir()} if submitted_dir.is_dir() else set()
    rows = []
    for student in sorted({*students, *handed, *summary}):
        verdicts = _verdicts(course, stage, student)
        flags: list[dict[str, str]] = list(verdicts.flags) if verdicts else []
        for flag in summary.get(student, {}).get("flags", []):
            if isinstance(flag, dict) and flag not in flags:
                flags.append(flag)
        found = None
        if verdicts is not None:
            errors = sum(c.status == "error" for c in verdicts.cells.values())
            found = {"kinds": [f.get("kind") for f in flags], "errors": errors}
        status = status_of(found, summary.get(student, {}).get("status"), student in handed)
        score: float | None = None
        if status == "graded" and verdicts is not None:
            earned = sum(c.points for c in verdicts.cells.values() if c.status == "passed")
            score, auto = scores.get(student, (earned, earned))
            why = tampering(verdicts, key, auto, earned)
            if why:
                status, score = "tampered", None
                flags.append({"kind": "tampered", "why": why})
        elif status == "unreadable":
            score = 0.0
        shown = "; ".join(f"{f.get('kind')}: {f.get('why')}" for f in flags)
        rows.append(ExportRow(student, stage, status, score, maximum, shown))
    return rows


def graded_stages(course: Path) -> list[str]:
    """The released stages of the course, in order."""
    release = course / "release"
    return sorted(p.name for p in release.iterdir() if p.is_dir()) if release.is_dir() else []


def export(course: Path, stages: list[str], out: Path) -> list[ExportRow]:
    """Write ``out`` (CSV, :data:`COLUMNS`) for ``stages``; every student on the roster has a row per stage."""
    students = roster(course)
    rows = [row for stage in stages for row in stage_rows(course, stage, students)]
    with out.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        writer.writerows(row.cells() for row in rows)
    return rows


class ExportError(Exception):
    """A problem with the course folder or the stage: one line for the instructor."""


def run(course: Path, stage: str | None, out: Path) -> int:
    """The command: check the folder and the stage, write ``out``, say what it holds."""
    if not (course / "nbgrader_config.py").is_file() or not (course / "source").is_dir():
        raise ExportError(f"{course} is not a course folder (make one with: mcp-lab course init DIR)")
    released = graded_stages(course)
    if stage is not None and stage not in released:
        known = ", ".join(released) or "none yet"
        raise ExportError(f"{stage} is not a released stage of {course} (released: {known})")
    rows = export(course, released if stage is None else [stage], out)
    counts = {s: sum(r.status == s for r in rows) for s in STATUSES}
    said = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
    print(f"wrote {out}: {len(rows)} row(s) ({said or 'no students yet'})")
    return 0
