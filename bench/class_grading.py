"""A class graded by ``mcp-lab course grade --jobs N``: the measured rate, and the projection for 200 x 10.

    .venv/bin/python bench/class_grading.py [--students 8] [--jobs 4]

It fakes a class from the answer key: for every stage, ``--students`` submissions that cycle
through the answer key, the course's typical bugs (the pipeline's bug rows), a submission whose
server hangs, and the untouched release; then grades each stage with ``--jobs`` at a time and
prints the submissions per minute, and what 200 learners x 10 stages would take at that rate.
Printed, not asserted (the machine is shared). Target (issue 16): at most an hour on two cores.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from course_support import api, handed_in, notebook_text, solved_files, submit  # noqa: E402
from test_course_pipeline import BUGS, HANGS  # noqa: E402

from grader.course import build  # noqa: E402
from grader.grading import secret  # noqa: E402
from grader.grading.command import grade_stage  # noqa: E402

CLASS = 200
CORE_END = "10"  # stages before this one are the core course (00 to 09); 10 to 12 are the advanced track


def fake_class(course: Path, stage: build.Stage, students: int) -> None:
    kinds = ["key", *(b[2] for b in BUGS if b[0] == stage.name)]
    if stage.name in HANGS:
        kinds.append(HANGS[stage.name])
    kinds.append("untouched")
    release = (course / "release" / stage.name / stage.notebook).read_text(encoding="utf-8")
    for n in range(students):
        student = f"learner-{n:03d}"
        kind = kinds[n % len(kinds)]
        if kind == "untouched":
            submit(course, student, stage, release, handed_in(stage, course))
        else:
            replace = None if kind == "key" else kind
            text = notebook_text(stage, replace, course=course, student=student)
            submit(course, student, stage, text, solved_files(stage, course))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=8, help="submissions per stage (default 8)")
    parser.add_argument("--jobs", type=int, default=4, help="mcp-lab course grade --jobs (default 4)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="class-grading-") as tmp:
        course = Path(tmp) / "course"
        build.init_course(course)
        secret.create(course)
        nbgrader = api(course)
        stages = build.stages()
        for stage in stages:
            assert nbgrader.generate_assignment(stage.name, force=True, create=True)["success"]
            fake_class(course, stage, args.students)
        print(f"{'stage':<22} {'submissions':>11} {'seconds':>8} {'per minute':>10}")
        total = core = 0.0
        for stage in stages:
            started = time.monotonic()
            rows = grade_stage(course, stage.name, args.jobs)
            took = time.monotonic() - started
            total += took
            core += took if stage.name < CORE_END else 0.0
            failed = sum(r.status != "graded" for r in rows)
            note = f"  ({failed} grading failed)" if failed else ""
            print(f"{stage.name:<22} {len(rows):>11} {took:8.1f} {60 * len(rows) / took:10.1f}{note}")
        count = args.students * len(stages)
        rate = count / total
        projection = CLASS * len(stages) / rate
        print(f"{'all':<22} {count:>11} {total:8.1f} {60 * rate:10.1f}")
        print(
            f"projection for {CLASS} learners x {len(stages)} stages at --jobs {args.jobs}: "
            f"{projection / 60:.0f} min ({projection / 3600:.2f} h)"
        )
        ten = [s for s in stages if s.name < CORE_END]
        if ten:  # the class: the ten stages of the core course (00 to 09)
            per = core / (args.students * len(ten))
            minutes = CLASS * len(ten) * per / 60
            print(f"projection for {CLASS} learners x the {len(ten)} core stages (00-09): {minutes:.0f} min")
    return 0


if __name__ == "__main__":
    sys.exit(main())
