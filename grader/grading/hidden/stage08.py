"""Stage 08's hidden checks: each case's rule, shown by the learner's own evidence."""

import random

from grader.course.checks import stage08 as s
from grader.course.work import Work

from . import hidden


def _cell(number: int) -> None:
    @hidden("08", f"test_case_{number:02d}")
    def run(work: Work, rng: random.Random) -> None:
        s.check_rule(work, f"case-{number:02d}")


for _number in range(1, s.CASES + 1):
    _cell(_number)
