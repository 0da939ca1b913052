"""Grading time of a whole ten-stage submission (the answer key), stage by stage, beside nbgrader's floor.

    .venv/bin/python bench/course_autograde.py

It makes a temporary course with ``mcp-lab course init``'s code, releases every stage, submits the
answer key of each for one student and times ``mcp-lab course grade STAGE --student ...`` (the
checks outside the kernel, then nbgrader's own autograde storing the verdicts). Beside it, in the
same run, nbgrader's *floor*: plain ``nbgrader autograde`` (its own Execute, a kernel per
submission) of a one-cell notebook, the fixed cost every submission pays in nbgrader itself.
Printed, not asserted: the machine is shared and noisy. Targets (issue 16): the ten stages in at
most 30 s, or at most twice nbgrader's fixed cost per stage.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from course_support import api, grade, notebook_text, solved_files, submit  # noqa: E402  (tests/ is no package)

from grader.course import build  # noqa: E402
from grader.grading import secret  # noqa: E402

FLOOR_RUNS = 3


def nbgrader_floor(tmp: Path) -> float:
    """nbgrader's own autograde (with its Execute) of a one-cell graded notebook: the median of a few runs."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config import Config

    course = tmp / "floor"
    (course / "source" / "ps1").mkdir(parents=True)
    cell = {
        "cell_type": "code",
        "execution_count": None,
        "id": "t",
        "metadata": {"nbgrader": {"grade": True, "grade_id": "t", "locked": True, "points": 1, "schema_version": 3,
                                  "solution": False, "task": False}},  # fmt: skip
        "outputs": [],
        "source": "assert 1 + 1 == 2",
    }
    notebook = {"cells": [cell], "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                "language": "python"}}, "nbformat": 4, "nbformat_minor": 5}  # fmt: skip
    (course / "source" / "ps1" / "ps1.ipynb").write_text(json.dumps(notebook))
    config = Config()
    config.CourseDirectory.root = str(course)
    config.Execute.kernel_name = "python3"
    nbgrader = NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)
    assert nbgrader.generate_assignment("ps1", force=True, create=True)["success"]
    times = []
    for run in range(FLOOR_RUNS):
        folder = course / "submitted" / f"s{run}" / "ps1"
        folder.mkdir(parents=True)
        (folder / "ps1.ipynb").write_text(json.dumps(notebook))
        started = time.monotonic()
        assert nbgrader.autograde("ps1", f"s{run}", force=True, create=True)["success"]
        times.append(time.monotonic() - started)
    return statistics.median(times)


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="course-autograde-") as tmp:
        course = Path(tmp) / "course"
        build.init_course(course)
        secret.create(course)
        nbgrader = api(course)
        stages = build.stages()
        for stage in stages:
            result = nbgrader.generate_assignment(stage.name, force=True, create=True)
            if not result["success"]:
                print(result.get("log", "")[-2000:], file=sys.stderr)
                return 1
        floor = nbgrader_floor(Path(tmp))
        total = 0.0
        print(f"{'stage':<22} {'seconds':>7}  {'x floor':>7}  score")
        for stage in stages:
            submit(course, "learner", stage, notebook_text(stage, course=course, student="learner"),
                   solved_files(stage, course))  # fmt: skip
            grades = grade(course, "learner", stage, jobs=1)
            total += grades.seconds
            ratio = grades.seconds / floor
            print(f"{stage.name:<22} {grades.seconds:7.1f}  {ratio:7.2f}  {grades.score:g}/{grades.max_score:g}")
        print(f"{'all ten stages':<22} {total:7.1f}  {total / floor / len(stages):7.2f}  (mean ratio per stage)")
        print(f"nbgrader's floor: plain autograde of a one-cell notebook, median of {FLOOR_RUNS}: {floor:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
