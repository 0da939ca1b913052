"""Stage 10's hidden checks: templates, URIs, orders, products and prompt arguments drawn at random,
each answered as the reference answers it."""

import random

from grader.course.checks import stage10 as s
from grader.course.work import Work

from . import hidden


@hidden("10", "test_match")
def matches(work: Work, rng: random.Random) -> None:
    s.check_match(work.module("shop_resources").match, s.hidden_matches(rng))


@hidden("10", "test_read_resource")
def reads(work: Work, rng: random.Random) -> None:
    s.check_read(work, s.hidden_uris(rng))


@hidden("10", "test_get_prompt")
def prompts(work: Work, rng: random.Random) -> None:
    s.check_prompts(work, s.hidden_prompts(rng))


@hidden("10", "test_served")
def served(work: Work, rng: random.Random) -> None:
    uri = rng.choice([f"shop://orders/{rng.randint(3001, 10**6)}", f"shop://products/{rng.randint(101, 10**6)}"])
    s.check_served(work.host("shop_resources"), uri, "summarise_order", checker=False)


@hidden("10", "test_sdk_client")
def sdk(work: Work, rng: random.Random) -> None:
    s.check_sdk_client(work.host("shop_resources"), rng.randint(1, 3000), rng.choice(s.STATUSES))
