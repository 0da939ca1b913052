"""Stage 05's hidden checks: the learner's tools against the reference's on arguments drawn at random,
and the capstone (my_server.py) called on such arguments over the wire, through the SDK client and
through the MCP Inspector."""

import random

from grader.course.checks import stage05 as s
from grader.course.work import Work

from . import fresh_id, hidden


def _tool(name: str) -> None:
    @hidden("05", f"test_{name}")
    def run(work: Work, rng: random.Random) -> None:
        s.check_tool(work, name, s.hidden_arguments(rng, name))


for _name in ("count_orders", "list_orders", "get_order", "search_products"):
    _tool(_name)


def _calls(rng: random.Random, count: int) -> list[s.Call]:
    """``count`` calls of different tools, each on arguments drawn as check_tool's hidden ones are."""
    return [(tool, rng.choice(s.hidden_arguments(rng, tool))) for tool in rng.sample(s.SHOP_TOOLS, count)]


@hidden("05", "test_own_server_check")
def own_server_calls(work: Work, rng: random.Random) -> None:
    """A session per revision with a structured result and without, and with either kind of bad arguments:
    2026-07-28 (the envelope on every call, resultType on every result) and three legacy revisions."""
    with s.own_server(work) as argv:
        for version in (s.MODERN, "2025-11-25", "2025-06-18", "2025-03-26"):
            calls = _calls(rng, 3)
            s.check_own_calls(argv, version, calls, [fresh_id(rng) for _ in range(len(calls) + 1)])


@hidden("05", "test_own_server_sdk")
def own_server_sdk(work: Work, rng: random.Random) -> None:
    with s.own_server(work) as argv:
        s.check_own_sdk(argv, _calls(rng, 2))


@hidden("05", "test_own_server_inspector")
def own_server_inspector(work: Work, rng: random.Random) -> None:
    with s.own_server(work) as argv:
        s.check_inspector(work, argv, _calls(rng, 1), list_tools=False)  # the public check listed them
