"""Stage 01's hidden checks: random messages and lines (every kind of JSON value), other ids."""

import random

from grader.course.checks import stage01 as s
from grader.course.work import Work

from . import fresh_id, hidden


@hidden("01", "test_encode")
def encode(work: Work, rng: random.Random) -> None:
    s.check_encode(work.module("framing").encode, s.random_messages(rng, 12))


@hidden("01", "test_decode")
def decode(work: Work, rng: random.Random) -> None:
    s.check_decode(work.module("framing").decode, s.random_messages(rng, 12))


@hidden("01", "test_read_frame")
def read_frame(work: Work, rng: random.Random) -> None:
    s.check_read_frame(work, s.random_lines(rng, 20))


@hidden("01", "test_flush")
def flush(work: Work, rng: random.Random) -> None:
    s.check_replies(work.host("framing"), [fresh_id(rng) for _ in range(5)])
