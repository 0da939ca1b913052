"""Stage 03's hidden checks: revisions drawn at random, known and unknown; other operations for complete()."""

import random

from grader.course.checks import stage03 as s
from grader.course.work import Work

from . import hidden


@hidden("03", "test_negotiate")
def negotiate(work: Work, rng: random.Random) -> None:
    s.check_negotiate(work.module("server").negotiate, s.random_versions(rng, 6))


@hidden("03", "test_initialize")
def initialize(work: Work, rng: random.Random) -> None:
    server = work.module("server")
    s.check_initialize(server.initialize, server.Session, s.random_versions(rng, 1)[0])


@hidden("03", "test_handshake")
def handshake(work: Work, rng: random.Random) -> None:
    for version in s.random_versions(rng, 3):
        s.check_handshake(work.program("server"), version)


def unserved_versions(rng: random.Random, n: int) -> list[str]:
    """Versions a 2026-07-28 request may name that the learner's server does not serve."""
    pool = [
        f"{rng.randrange(2027, 2100)}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}",
        rng.choice(["2025-11-25", "2025-06-18", "2024-11-05"]),
        rng.choice(["2026-07-29", "2026-07-28-rc", "2026-7-28", " 2026-07-28"]),
    ]
    rng.shuffle(pool)
    return pool[:n]


@hidden("03", "test_read_meta")
def read_meta(work: Work, rng: random.Random) -> None:
    s.check_read_meta(work.module("modern_server").read_meta, unserved_versions(rng, 3))


@hidden("03", "test_complete")
def complete(work: Work, rng: random.Random) -> None:
    s.check_complete(work.module("modern_server").complete, rng.sample(s.CACHEABLE, 3), rng.sample(s.NOT_CACHEABLE, 1))


@hidden("03", "test_modern_server")
def modern_server(work: Work, rng: random.Random) -> None:
    s.check_modern_server(work.program("modern_server"), unserved_versions(rng, 1)[0])


@hidden("03", "test_exit")
def exit_(work: Work, rng: random.Random) -> None:
    s.check_exit(work.program("server"), legacy=True)  # the dual-era server ends at end of input too


@hidden("03", "test_eras")
def eras(work: Work, rng: random.Random) -> None:
    s.check_eras(work.program("server"), unserved_versions(rng, 1)[0])
