"""``mcp-lab course grade STAGE [--jobs N]``: grade every submission of a stage, outside the learners' kernels.

Run in a course folder made by ``mcp-lab course init``, after ``nbgrader generate_assignment STAGE``
and with the submissions in ``submitted/STUDENT/STAGE/``:

1. every submission is graded by :mod:`grader.grading.grade` in a process of its own, ``--jobs`` at
   a time, each learner's code in its sandbox (or on a Dask cluster, ``--scheduler ADDRESS``:
   :mod:`.cluster`; this machine still reads the submissions and writes every verdict); a grading
   that crashes or runs out of time is reported as such, never as a plain 0. A submission whose
   verdict file already judges these very files, with this course's secret and these checks, is not
   graded again (a run cut short resumes), unless ``--student`` names it;
2. nbgrader's own ``autograde`` then stores those verdicts in the gradebook (the learner's
   notebook is never run: see :mod:`grader.grading.nbhook`), so ``generate_feedback`` and
   ``export`` work as before;
3. a table per student: score, maximum, and flags (:mod:`grader.grading.flags`); the same as JSON
   in ``grading/STAGE/summary.json``. A student on the gradebook's roster who handed nothing in
   has a row too: "not submitted", distinct from a 0 and from "grading failed".
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from . import flags, likeness, sandbox, secret
from .forked import grade_forked, start_workers
from .grade import Stage, Verdicts, finish, graded_cells, handed_texts, prepare, submission_texts
from .job import Job
from .nbhook import verdicts_path
from .progress_line import Progress
from .submission import Submission
from .sweep import sweep_stale
from .text import printable

if TYPE_CHECKING:
    from .cluster import Scheduler


@dataclass
class Row:
    student: str
    score: float = 0.0
    max_score: float = 0.0
    flags: list[dict[str, str]] = field(default_factory=list)
    seconds: float = 0.0
    status: str = "graded"  # "graded", "grading failed", "not submitted"


class GradeError(Exception):
    """A problem with the course folder or the stage: one line for the instructor."""


def _submissions(course: Path, stage: str) -> list[str]:
    folder = course / "submitted"
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if (p / stage).is_dir())


def check_course(course: Path, stage: str) -> None:
    if not (course / "nbgrader_config.py").is_file() or not (course / "source").is_dir():
        raise GradeError(f"{course} is not a course folder (make one with: mcp-lab course init DIR)")
    if not (course / "source" / stage).is_dir():
        known = ", ".join(sorted(p.name for p in (course / "source").iterdir() if p.is_dir()))
        raise GradeError(f"no stage {stage!r} in {course / 'source'} (there are: {known})")
    if not (course / "release" / stage).is_dir():
        raise GradeError(f"{stage} is not released yet: run nbgrader generate_assignment {stage} first")


def grade_stage(
    course: Path,
    stage: str,
    jobs: int,
    only: list[str] | None = None,
    scheduler: Scheduler | None = None,
    again: bool | None = None,
) -> list[Row]:
    """Grade every submission of ``stage`` (or those of ``only``), here or on the Dask cluster of
    ``scheduler``; store the grades with nbgrader; return a row per student. ``again``: grade even the
    submissions whose verdict files still hold (the default when ``only`` names students)."""
    from grader.course.build import nbgrader_api

    check_course(course, stage)
    starting = start_workers() if scheduler is None else None
    sweep_stale()  # what an earlier grading, killed with its workers, left behind
    students = _submissions(course, stage)
    if only is not None:
        unknown = sorted(set(only) - set(students))
        if unknown:
            raise GradeError(f"no submission of {stage} from {', '.join(unknown)} in {course / 'submitted'}")
        students = [s for s in students if s in only]
    again = only is not None if again is None else again
    rows = {s: Row(s) for s in students}
    key = secret.load(course)  # seals each verdict file: export tells an edited one (``tampered``)
    shared = Stage.read(course, stage)
    stored = set() if again else _stored(course, stage)
    verdicts: dict[str, Verdicts] = {}
    slots = list(range(1, jobs + 1))
    alone = scheduler is None and (jobs == 1 or len(students) == 1)  # each submission has the machine to itself
    # nbgrader's own noise on every autograde (SQLAlchemy's "not in session"): not the instructor's business.
    warnings.filterwarnings("ignore", message=".*not in session.*")
    api = nbgrader_api(course)
    if starting is not None:
        starting.join()  # started or failed: the first submission's start says which, as before
    progress = Progress(len(students))

    def store(student: str) -> None:
        """nbgrader's autograde stores one submission's verdicts (one at a time: one gradebook)."""
        try:
            result = api.autograde(stage, student, force=True, create=True)
        except Exception as exc:  # its own thread: a crash here must still reach the table
            result = {"success": False, "log": f"{type(exc).__name__}: {exc}"}
        if not result.get("success"):
            rows[student].status = "grading failed"
            log = (result.get("log") or "").strip().splitlines()
            rows[student].flags.append(flags.Flag("grading-failed", f"nbgrader: {log[-1] if log else '?'}").as_dict())

    def store_refused(student: str) -> None:
        from nbgrader.api import Gradebook, MissingEntry

        try:
            with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
                gradebook.update_or_create_student(student)
                with contextlib.suppress(MissingEntry):  # an earlier grading's score is not this one's
                    gradebook.remove_submission(stage, student)
                made = gradebook.add_submission(stage, student)
                for notebook in made.notebooks:
                    for grade in notebook.grades:
                        grade.auto_score = 0.0
                gradebook.db.commit()
        except Exception as exc:  # its own thread: a crash here must still reach the table
            rows[student].status = "grading failed"
            rows[student].flags.append(
                flags.Flag("grading-failed", f"gradebook: {type(exc).__name__}: {exc}").as_dict()
            )

    # A submission's verdicts are stored while the next ones are graded: nbgrader's part (about half
    # a second each, on one core) runs beside the grading instead of after all of it.
    with ThreadPoolExecutor(max_workers=1) as storing:

        def record(student: str, found: Verdicts | None, problem: str) -> None:
            """What came back for one submission: sealed, written, stored (this machine only)."""
            if found is None:
                rows[student].status = "grading failed"
                rows[student].flags.append(flags.Flag("grading-failed", problem).as_dict())
                progress.done(failed=True)
                return
            if found.student != student or found.stage != stage:  # a worker's answer for another job
                record(student, None, f"the verdicts that came back are {found.student}'s of {found.stage}")
                return
            verdicts[student] = finish(found, key)
            path = verdicts_path(course, stage, student)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(found.sealed(key).as_json(), encoding="utf-8")
            # nbgrader's autograde would copy what the links point at (into the feedback, too): a refused
            # submission goes into the gradebook directly, a 0 in every cell, so export has its row.
            storing.submit(store_refused if found.refused else store, student)
            progress.done(failed=any(c.status == "error" for c in found.cells.values()))

        def take(student: str) -> Job | None:
            """The student's job, or None when the verdict file already judges these files (kept)."""
            job = prepare(course, stage, student, shared, key)
            kept = None if again else _kept(course, stage, job, key)
            if kept is None:
                return job
            verdicts[student] = kept
            if student not in stored:  # written, but the run ended before nbgrader stored it
                storing.submit(store_refused if kept.refused else store, student)
            progress.done(kept=True)
            return None

        try:
            if scheduler is None:

                def work(student: str) -> None:
                    job = take(student)
                    if job is None:
                        return
                    slot = slots.pop()
                    try:
                        found, problem = grade_forked(job, slot, alone)
                    finally:
                        slots.append(slot)
                    record(student, found, problem)

                with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
                    list(pool.map(work, students))
            else:
                from .cluster import grade_jobs, say_on_stderr

                def say(line: str) -> None:
                    progress.close()
                    say_on_stderr(line)

                taken = (job for job in map(take, students) if job is not None)
                grade_jobs(scheduler, taken, record, say)
        finally:
            progress.close()
    _read_gradebook(course, stage, rows, verdicts)
    if only is None:
        _absent(course, stage, rows)
    release = Submission.read("", stage[:2], course / "release" / stage, f"{stage}.ipynb")
    blank = likeness.fingerprints(submission_texts(release), release.values, handed_texts(course, stage))
    _copies(course, stage, rows, blank)
    summary = course / "grading" / stage / "summary.json"
    summary.parent.mkdir(parents=True, exist_ok=True)
    summary.write_text(json.dumps([r.__dict__ for r in rows.values()], indent=1), encoding="utf-8")
    return list(rows.values())


def _kept(course: Path, stage: str, job: Job, key: bytes) -> Verdicts | None:
    """The verdicts already written for this job, if they still hold: the same files, sealed with this
    course's secret, by this grading code, and nothing in them a failure of grading."""
    path = verdicts_path(course, stage, job.student)
    try:
        found = Verdicts.from_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, TypeError, KeyError):
        return None
    holds = found.digest == job.submission.digest() and found.code == job.code
    if not holds or not found.seal_holds(key) or any(c.status == "error" for c in found.cells.values()):
        return None
    return found


def _stored(course: Path, stage: str) -> set[str]:
    """The students whose submission of ``stage`` the gradebook holds."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        try:
            return {s.student.id for s in gradebook.find_assignment(stage).submissions}
        except MissingEntry:
            return set()


def _read_gradebook(course: Path, stage: str, rows: dict[str, Row], verdicts: dict[str, Verdicts]) -> None:
    from nbgrader.api import Gradebook, MissingEntry

    maximum = sum(graded_cells(course, stage).values())
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        for student, row in rows.items():
            row.max_score = maximum
            found = verdicts.get(student)
            if found is not None:
                row.flags = [*found.flags, *row.flags]
                row.seconds = found.seconds
                if found.refused:
                    continue  # 0 in the gradebook too (store_refused): nothing of it was graded
            try:
                submission = gradebook.find_submission(stage, student)
            except MissingEntry:
                continue
            row.score = submission.score
            extra = sum(g.extra_credit or 0 for n in submission.notebooks for g in n.grades)
            if found is not None:
                earned = sum(c.points for c in found.cells.values() if c.status == "passed")
                if abs(earned - submission.score) > 1e-9 and not extra:
                    # The gradebook must say what the verdicts say: anything else is a broken set-up.
                    why = f"nbgrader stored {submission.score:g} points; the verdicts give {earned:g}"
                    row.flags.append(flags.Flag("grading-failed", why).as_dict())
                    row.status = "grading failed"
            if submission.score > maximum:
                row.flags.append(flags.Flag("over-maximum", f"{submission.score:g} > {maximum:g}").as_dict())
            if extra:
                row.flags.append(flags.Flag("extra-credit", f"{extra:g} points").as_dict())
            errors = [c for c in (found.cells.values() if found else []) if c.status == "error"]
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    if any(c.grade_id == grade.name for c in errors):
                        grade.needs_manual_grade = True  # the formgrader lists it: grading, not the learner, failed
            gradebook.db.commit()
            if errors:
                row.status = "grading failed"


def _absent(course: Path, stage: str, rows: dict[str, Row]) -> None:
    """A row for each student on the gradebook's roster who handed nothing in: "not submitted", never a
    silent gap or a plain 0 that looks graded."""
    from nbgrader.api import Gradebook

    maximum = sum(graded_cells(course, stage).values())
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        roster = sorted(s.id for s in gradebook.students)
    for student in roster:
        if student not in rows:
            why = flags.Flag("not-submitted", f"nothing in submitted/{student}/{stage}/").as_dict()
            rows[student] = Row(student, max_score=maximum, flags=[why], status="not submitted")


def _copies(course: Path, stage: str, rows: dict[str, Row], blank: dict[str, str]) -> None:
    """Flag submissions whose normalised answers are another student's (``copied``: the same syntax
    trees and sorted data; ``similar``: the same but for the names chosen), across every verdict file
    of the stage, not only this run's; the release's own answers aside."""
    every: dict[str, dict[str, str]] = {}
    for path in sorted((course / "grading" / stage / "verdicts").glob("*.json")):
        try:
            every[path.stem] = Verdicts.from_json(path.read_text(encoding="utf-8")).likeness
        except (OSError, ValueError, TypeError, KeyError):
            continue
    for kind in ("copied", "similar"):
        groups: dict[str, list[str]] = {}
        for student, prints in every.items():
            value = prints.get(kind)
            if value and value != blank.get(kind):
                groups.setdefault(value, []).append(student)
        for students in groups.values():
            for student in students if len(students) > 1 else []:
                row = rows.get(student)
                if row is None or (kind == "similar" and any(f["kind"] == "copied" for f in row.flags)):
                    continue
                others = ", ".join(s for s in students if s != student)
                what = "the same answers as" if kind == "copied" else "the same code as, but for its names,"
                row.flags.append(flags.Flag(kind, f"{what} {others}").as_dict())


def table(rows: list[Row], stage: str, isolation: str) -> str:
    width = max([len(r.student) for r in rows] + [7])
    lines = [f"{stage}: {len(rows)} submission(s); the learners' code ran in: {isolation}"]
    lines.append(f"{'student':<{width}}  {'score':>7}  {'max':>5}  {'secs':>6}  flags")
    for row in rows:
        shown = printable("; ".join(f"{f['kind']}: {f['why']}" for f in row.flags) or "-")
        score = f"{row.score:g}"
        if row.status != "graded" and not row.score:
            score = "FAILED" if row.status == "grading failed" else "-"
        lines.append(
            f"{printable(row.student):<{width}}  {score:>7}  {row.max_score:>5g}  {row.seconds:>6.1f}  {shown}"
        )
    kinds = sorted({f["kind"] for r in rows for f in r.flags})
    if kinds:
        lines.append("")
        lines.extend(f"  {printable(kind)}: {flags.KINDS.get(kind, '')}" for kind in kinds)
    return "\n".join(lines)


def run(course: Path, stage: str, jobs: int, only: list[str] | None = None, scheduler: Scheduler | None = None) -> int:
    started = time.monotonic()
    if scheduler is None:
        try:
            isolation = sandbox.detect(1).isolation  # before anything is graded: no sandbox, no grading
        except sandbox.NoIsolation as exc:
            raise GradeError(str(exc)) from None
        rows = grade_stage(course, stage, jobs, only)
        where = f"with {jobs} job(s)"
    else:
        from .cluster import ClusterError

        try:
            rows = grade_stage(course, stage, jobs, only, scheduler)
        except ClusterError as exc:
            raise GradeError(str(exc)) from None
        isolation = _isolation(course, stage) or "the Dask workers' sandbox"
        where = f"on the Dask cluster at {scheduler.where()}"
    print(table(rows, stage, isolation))
    print(f"\ngraded {len(rows)} submission(s) in {time.monotonic() - started:.1f} s {where}")
    print(f"next: nbgrader generate_feedback {stage}; nbgrader export")
    sys.stdout.flush()
    return 0


def _isolation(course: Path, stage: str) -> str:
    """The sandbox the verdict files of ``stage`` say the learners' code ran in (a cluster's workers')."""
    for path in sorted((course / "grading" / stage / "verdicts").glob("*.json")):
        with contextlib.suppress(OSError, ValueError, TypeError, KeyError):
            return Verdicts.from_json(path.read_text(encoding="utf-8")).isolation.split(";")[0]
    return ""
