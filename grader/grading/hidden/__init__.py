"""The hidden checks of every stage, registered by graded cell: grading runs them after the public ones.

They call the same check functions as the public cells (:mod:`grader.course.checks`), with inputs
the learner has not seen, drawn from the course secret (:class:`~grader.grading.secret.Keys`):

    @hidden("02", "test_branches")
    def branches(work: Work, rng: random.Random) -> None:
        check_branches(work, [fresh_id(rng) for _ in range(4)])

A cell without hidden checks is graded on its public checks alone.
"""

from __future__ import annotations

import importlib
import random
from collections.abc import Callable

from grader.course.work import Work

Hidden = Callable[[Work, random.Random], None]
HIDDEN: dict[tuple[str, str], Hidden] = {}


def hidden(stage: str, grade_id: str) -> Callable[[Hidden], Hidden]:
    def register(run: Hidden) -> Hidden:
        if (stage, grade_id) in HIDDEN:
            raise ValueError(f"stage {stage}: hidden checks of {grade_id} registered twice")
        HIDDEN[(stage, grade_id)] = run
        return run

    return register


def for_stage(stage: str) -> dict[str, Hidden]:
    try:
        importlib.import_module(f"{__name__}.stage{stage}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.stage{stage}":
            raise
    return {grade_id: run for (s, grade_id), run in HIDDEN.items() if s == stage}


def fresh_id(rng: random.Random) -> object:
    """An id the learner cannot have hard-coded: a random integer or a random digit string."""
    n = rng.randrange(2, 10**6)
    return n if rng.random() < 0.5 else f"req-{n}"
