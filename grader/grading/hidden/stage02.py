"""Stage 02's hidden checks: every branch and the server again, with ids the learner has not seen."""

import random

from grader.course.checks import stage02 as s
from grader.course.work import Work

from . import fresh_id, hidden


@hidden("02", "test_branches")
def branches(work: Work, rng: random.Random) -> None:
    s.check_branches(work, [fresh_id(rng) for _ in range(4)])


@hidden("02", "test_id_echo")
def id_echo(work: Work, rng: random.Random) -> None:
    s.check_id_echo(work.host("messages"), s.random_ids(rng, 8))


@hidden("02", "test_error_table")
def error_table(work: Work, rng: random.Random) -> None:
    s.check_error_table(work.host("messages"), fresh_id(rng))
