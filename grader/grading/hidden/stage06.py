"""Stage 06's hidden checks: another revision, requests waited for in a random order, other timeouts."""

import random

from grader.course.checks import stage06 as s
from grader.course.work import Work

from . import hidden


@hidden("06", "test_handshake")
def handshake(work: Work, rng: random.Random) -> None:
    s.check_handshake(work, "2025-06-18")


@hidden("06", "test_ids")
def ids(work: Work, rng: random.Random) -> None:
    methods = rng.sample(["ping", "tools/list", "ping", "ping"], 4)
    s.check_ids(work, methods, rng.sample(range(4), 4))


@hidden("06", "test_timeouts")
def timeouts(work: Work, rng: random.Random) -> None:
    s.check_timeouts(work, rng.choice([0.6, 0.8, 1.2]))
