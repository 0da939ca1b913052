"""Grading time of a whole submission (the answer key), stage by stage, beside nbgrader's floor and stock autograde.

    .venv/bin/python bench/course_autograde.py
    .venv/bin/python bench/course_autograde.py --cells    # and where each stage's time went
    .venv/bin/python bench/course_autograde.py --only 05 09 --no-stock

It makes a temporary course with ``mcp-lab course init``'s code, releases every stage, submits the
answer key of each for one student and times ``mcp-lab course grade STAGE --student ...`` (the
checks outside the kernel, then nbgrader's own autograde storing the verdicts). Beside it, in the
same run, nbgrader's *floor*: plain ``nbgrader autograde`` (its own Execute, a kernel per
submission) of a one-cell notebook, the fixed cost every submission pays in nbgrader itself; and
stock ``nbgrader autograde`` of the same submission in a course with nbgrader's defaults (the
learner's notebook run in a kernel, as grading was before it left the kernel).
With ``--cells``, each stage's line is followed by where its time went: the grading process's own
seconds (the checks, cells side by side), the rest (the fork server's start on the first stage, and
nbgrader storing the verdicts) and its slowest cells. ``--only`` grades the stages named (by number),
``--no-stock`` skips stock nbgrader. Printed, not asserted: the machine is shared and noisy.
Targets (issue 16): the ten stages in at most 30 s, or at most twice nbgrader's fixed cost per stage.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from course_support import api, grade, notebook_text, solved_files, submit  # noqa: E402  (tests/ is no package)

from grader.course import build  # noqa: E402
from grader.grading import secret  # noqa: E402

FLOOR_RUNS = 3
CORE_END = "10"  # stages before this one are the core course (00 to 09); the targets are for those


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
        "metadata": {
            "nbgrader": {
                "grade": True,
                "grade_id": "t",
                "locked": True,
                "points": 1,
                "schema_version": 3,
                "solution": False,
                "task": False,
            }
        },
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


def stock_course(course: Path, target: Path) -> object:
    """The same course under nbgrader's stock autograde (its Execute runs each notebook in a kernel):
    the source copied, nbgrader's defaults, the same cell time-out."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config import Config

    shutil.copytree(course / "source", target / "source")
    config = Config()
    config.CourseDirectory.root = str(target)
    config.CourseDirectory.ignore = build.ignored_files()
    config.Execute.timeout = build.CELL_TIMEOUT
    return NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)


def stock_autograde(
    stock: Any, target: Path, stage: build.Stage, text: str, files: dict[str, str]
) -> tuple[float, str]:
    """Plain ``nbgrader autograde`` of one submission: its seconds and its score."""
    from nbgrader.api import Gradebook

    assert stock.generate_assignment(stage.name, force=True, create=True)["success"]
    submit(target, "learner", stage, text, files)
    started = time.monotonic()
    done = stock.autograde(stage.name, "learner", force=True, create=True)
    seconds = time.monotonic() - started
    if not done["success"]:
        return seconds, "failed"
    with Gradebook(f"sqlite:///{target / 'gradebook.db'}") as gradebook:
        submission = gradebook.find_submission(stage.name, "learner")
        return seconds, f"{submission.score:g}/{submission.max_score:g}"


def busy_seconds() -> float:
    """The whole machine's CPU seconds so far (``/proc/stat``): what grading used, on a quiet machine."""
    with open("/proc/stat", encoding="ascii") as stat:
        fields = [int(n) for n in stat.readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle, iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def time_spent(course: Path, stage: build.Stage, seconds: float, cpu: float, shown: int = 3) -> str:
    """Where a stage's grading went: the grading process, the rest, the machine's CPU, its slowest cells."""
    from grader.grading.grade import Verdicts
    from grader.grading.nbhook import verdicts_path

    found = Verdicts.from_json(verdicts_path(course, stage.name, "learner").read_text(encoding="utf-8"))
    slowest = sorted(found.cells.values(), key=lambda cell: -cell.seconds)[:shown]
    cells = ", ".join(f"{cell.grade_id} {cell.seconds:.1f}" for cell in slowest)
    rest = seconds - found.seconds
    return f"    grading {found.seconds:.1f} s, the rest {rest:.1f} s, CPU {cpu:.1f} s; slowest cells: {cells}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Grading time of the answer key, stage by stage.")
    parser.add_argument("--cells", action="store_true", help="where each stage's time went")
    parser.add_argument("--only", nargs="+", metavar="NN", help="only these stages (by number)")
    parser.add_argument("--no-stock", action="store_true", help="skip stock nbgrader's autograde")
    args = parser.parse_args(argv)
    # Stock nbgrader's API warns of its own session handling (SQLAlchemy SAWarning): not ours to fix.
    warnings.simplefilter("ignore")
    with tempfile.TemporaryDirectory(prefix="course-autograde-") as tmp:
        course = Path(tmp) / "course"
        build.init_course(course)
        secret.create(course)
        nbgrader = api(course)
        stages = [s for s in build.stages() if not args.only or s.name[:2] in args.only]
        for stage in stages:
            result = nbgrader.generate_assignment(stage.name, force=True, create=True)
            if not result["success"]:
                print(result.get("log", "")[-2000:], file=sys.stderr)
                return 1
        floor = nbgrader_floor(Path(tmp))
        stock_root = Path(tmp) / "stock"
        stock = stock_course(course, stock_root)
        total = plain_total = core = core_plain = 0.0
        print(f"{'stage':<22} {'seconds':>7}  {'x floor':>7}  {'score':>7}  {'stock':>7}  {'score':>7}")
        for stage in stages:
            text = notebook_text(stage, course=course, student="learner")
            files = solved_files(stage, course)
            submit(course, "learner", stage, text, files)
            cpu = busy_seconds()
            grades = grade(course, "learner", stage, jobs=1)
            cpu = busy_seconds() - cpu
            plain, plain_score = (0.0, "-") if args.no_stock else stock_autograde(stock, stock_root, stage, text, files)
            total += grades.seconds
            plain_total += plain
            if stage.name < CORE_END:
                core, core_plain = core + grades.seconds, core_plain + plain
            ratio = grades.seconds / floor
            score = f"{grades.score:g}/{grades.max_score:g}"
            print(f"{stage.name:<22} {grades.seconds:7.1f}  {ratio:7.2f}  {score:>7}  {plain:7.1f}  {plain_score:>7}")
            if args.cells:
                print(time_spent(course, stage, grades.seconds, cpu))
        mean = total / floor / len(stages)
        ten = sum(stage.name < CORE_END for stage in stages)
        if ten:
            print(f"{'the ten core stages':<22} {core:7.1f}  {core / floor / ten:7.2f}  {'':>7}  {core_plain:7.1f}")
        print(f"{'all stages':<22} {total:7.1f}  {mean:7.2f}  {'':>7}  {plain_total:7.1f}  (sums; mean ratio)")
        print(f"nbgrader's floor: plain autograde of a one-cell notebook, median of {FLOOR_RUNS}: {floor:.2f} s")
        print(
            "stock: plain nbgrader autograde (its Execute, in a kernel) of the same submission, the same cell "
            "time-out: what grading cost before it left the kernel, and what it trusted"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
