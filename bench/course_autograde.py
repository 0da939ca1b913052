"""Autograde time of a whole ten-stage submission (the solutions), stage by stage and in total.

    .venv/bin/python bench/course_autograde.py

It makes a temporary nbgrader course with ``mcp-lab course init``'s code, releases every stage,
submits the solution notebook of each for one student, and times nbgrader's own autograde on
each. Printed, not asserted: the machine is shared and noisy (issue 9's target: 60 s in all on
two cores). Run it on a quiet machine.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from course_support import api, autograde, notebook_text, submit  # noqa: E402  (tests/ is not a package)

from grader.course import build  # noqa: E402


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="course-autograde-") as tmp:
        course = Path(tmp)
        build.init_course(course)
        nbgrader = api(course)
        stages = build.stages()
        for stage in stages:
            result = nbgrader.generate_assignment(stage.name, force=True, create=True)
            if not result["success"]:
                print(result.get("log", "")[-2000:], file=sys.stderr)
                return 1
        total = 0.0
        started = time.monotonic()
        print(f"{'stage':<22} {'seconds':>7}  score")
        for stage in stages:
            submit(course, "learner", stage, notebook_text(stage))
            grades = autograde(course, "learner", stage)
            total += grades.seconds
            print(f"{stage.name:<22} {grades.seconds:7.1f}  {grades.score:g}/{grades.max_score:g}")
        print(f"{'all ten stages':<22} {total:7.1f}  (wall {time.monotonic() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
