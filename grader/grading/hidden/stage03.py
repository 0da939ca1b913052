"""Stage 03's hidden checks: revisions drawn at random, known and unknown."""

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
