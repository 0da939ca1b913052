"""Stage 05's hidden checks: the learner's tools against the reference's on arguments drawn at random."""

import random

from grader.course.checks import stage05 as s
from grader.course.work import Work

from . import hidden


def _tool(name: str) -> None:
    @hidden("05", f"test_{name}")
    def run(work: Work, rng: random.Random) -> None:
        s.check_tool(work, name, s.hidden_arguments(rng, name))


for _name in ("count_orders", "list_orders", "get_order", "search_products"):
    _tool(_name)
