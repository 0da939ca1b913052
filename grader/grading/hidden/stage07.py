"""Stage 07's hidden checks: sixty transcripts made dirty at random."""

import random

from grader.course.checks import stage07 as s
from grader.course.work import Work

from . import hidden


@hidden("07", "test_hygiene_random")
def hygiene_random(work: Work, rng: random.Random) -> None:
    s.check_hygiene_random(work.module("hygiene_check").hygiene, rng, rounds=60)
