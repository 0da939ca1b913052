"""Stage 06's hidden checks: another revision, requests waited for in a random order, other timeouts, other
legacy error codes and probe timeouts, other input_required keys and states."""

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


@hidden("06", "test_probe")
def probe(work: Work, rng: random.Random) -> None:
    codes = rng.sample(["-32601", "-32602", "-32600", "-32000", "-32603"], 2)
    s.check_probe(work, codes, rng.choice([0.8, 1.0, 1.5]))


@hidden("06", "test_envelope")
def envelope(work: Work, rng: random.Random) -> None:
    s.check_envelope(work, rng.choice(["pending", "shipped", "refunded"]), f"progress-{rng.randint(2, 999)}")


@hidden("06", "test_input_required")
def input_required(work: Work, rng: random.Random) -> None:
    s.check_input_required(work, str(rng.randint(1, 10_000)), rng.choice([25, 31, 44]))
