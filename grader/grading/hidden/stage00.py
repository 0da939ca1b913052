"""Stage 00's hidden checks: paths that mean something in a URI, statuses a model might send, other ids."""

import random

from grader.course.checks import stage00 as s
from grader.course.work import Work

from . import hidden


@hidden("00", "test_open_shop")
def open_shop(work: Work, rng: random.Random) -> None:
    s.check_open_shop_odd_paths(work, ["my shop", "shop #2", "what?", "100% shop"])


@hidden("00", "test_count_orders")
def count_orders(work: Work, rng: random.Random) -> None:
    s.check_count_orders(work, s.hostile_statuses(rng))


@hidden("00", "test_talk")
def talk(work: Work, rng: random.Random) -> None:
    s.check_talk(work, s.random_ids(rng))
