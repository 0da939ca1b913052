"""Stage 04's hidden checks: names and argument sets drawn at random, with a known verdict."""

import random

from grader.course.checks import stage04 as s
from grader.course.work import Work

from . import hidden


@hidden("04", "test_names")
def names(work: Work, rng: random.Random) -> None:
    s.check_names(work.module("tool_list").valid_tool_name, s.random_names(rng, 30))


def _tool(name: str) -> None:
    @hidden("04", f"test_{name}")
    def run(work: Work, rng: random.Random) -> None:
        describe = getattr(work.module("tool_list"), f"{name}_tool")
        s.check_tool(describe, name, s.hidden_arguments(rng, name), rng)


for _name in ("count_orders", "list_orders", "get_order", "search_products"):
    _tool(_name)
