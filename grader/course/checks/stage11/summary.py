"""Stage 11's ``summary()`` (cell ``test_summary``): what the audit keeps of a call's arguments, by
the course's rule: short values kept, long text as its length, lists and objects as their size.

    >>> expected_summary({"order_id": 7, "note": "x" * 812, "tags": [1, 2]})
    {'order_id': 7, 'note': '<text, 812 chars>', 'tags': '<array, 2 items>'}
"""

from __future__ import annotations

import random
import string
from typing import Any

from ...calls import call
from ...expect import Failure, same_json, show
from ...work import Work
from .. import public

SHORT = 40


VISIBLE_SUMMARIES: list[Any] = [
    {"order_id": 7, "reason": "asked by phone"},
    {"order_id": 7, "note": "x" * 812},
    {"note": "x" * 40, "other": "y" * 41},
    {"a": [1, 2], "b": {"c": "secret"}, "d": None, "e": True, "f": 1.5},
    {"note": "桜" * 41, "reason": ""},
    {},
    {"order_id": -3, "tags": []},
    "x" * 100,
    [1],
    7,
]


def kept(value: Any) -> Any:
    if isinstance(value, str):
        return value if len(value) <= SHORT else f"<text, {len(value)} chars>"
    if isinstance(value, list):
        return f"<array, {len(value)} items>"
    if isinstance(value, dict):
        return f"<object, {len(value)} members>"
    return value


def expected_summary(arguments: Any) -> Any:
    if not isinstance(arguments, dict):
        return kept(arguments)
    return {name: kept(value) for name, value in arguments.items()}


@public("11", "test_summary", "summary(): short values kept, long text as its length, lists and objects as their size")
def summary_cell(work: Work) -> None:
    check_summary(work.module("shop_audit").summary, VISIBLE_SUMMARIES)


def check_summary(summary: Any, cases: list[Any]) -> None:
    for arguments in cases:
        want = expected_summary(arguments)
        got = call(summary, "audit-redaction", arguments)
        if not same_json(got, want):
            raise Failure(
                "audit-redaction",
                f"summary({show(arguments)[:120]}) is not what the audit keeps",
                expected=show(want),
                received=show(got),
            )


def hidden_summaries(rng: random.Random) -> list[Any]:
    def text(n: int) -> str:
        return "".join(rng.choices(string.ascii_letters + " éü桜.,", k=n))

    cases: list[Any] = []
    for _ in range(6):
        arguments: dict[str, Any] = {}
        for _ in range(rng.randint(1, 5)):
            key = rng.choice(["order_id", "note", "reason", "tags", "meta", "limit", "flag", "x"]) + str(
                rng.randint(0, 9)
            )
            arguments[key] = rng.choice(
                [
                    rng.randint(-10, 10**9),
                    text(rng.randint(0, SHORT)),
                    text(rng.randint(SHORT + 1, 5000)),
                    [rng.randint(0, 9) for _ in range(rng.randint(0, 4))],
                    {text(3): 1 for _ in range(rng.randint(0, 3))},
                    None,
                    rng.random() < 0.5,
                    rng.random() * 100,
                ]
            )
        cases.append(arguments)
    cases.append(text(rng.randint(SHORT + 1, 300)))
    cases.append([text(5)] * rng.randint(1, 6))
    return cases
