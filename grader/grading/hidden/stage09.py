"""Stage 09's hidden checks: each repair against the instructor's copy of the file handed out, and the
replay aimed at its defect with values drawn from the course secret.

The public cell already ran ``mcp-lab check`` on the same file; here the diff budget is counted
against the course's own copy (never one from the submission), and the replays use ids, tools,
bad lines and orders the learner has not seen.
"""

from __future__ import annotations

import random
from typing import Any

from grader.course.checks import stage09 as s
from grader.course.drive import request
from grader.course.work import Work

from . import fresh_id, hidden

BAD_LINES: list[tuple[bytes, int]] = [
    (b"this is not json", -32700),
    (b"{not json either}", -32700),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "ping"', -32700),
    (b'{"jsonrpc": "2.0", "id": null, "method": "ping"}', -32600),
    (b'{"jsonrpc": "2.0", "id": 2.5, "method": "ping"}', -32600),
    (b'{"jsonrpc": "1.0", "id": null, "method": "ping"}', -32600),
]
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("count_orders", {}),
    ("count_orders", {"status": "shipped"}),
    ("count_orders", {"status": "lost"}),
    ("list_orders", {"status": "paid", "limit": 5}),
    ("get_order", {"order_id": 1}),
    ("get_order", {"order_id": 999999}),
    ("search_products", {"query": "桜"}),
    ("search_products", {"query": "kit", "limit": 3}),
]


def unique_ids(rng: random.Random, count: int) -> list[Any]:
    """``count`` different ids of every JSON type a client may use: numbers, digit strings, words."""
    found: list[Any] = []
    while len(found) < count:
        n = rng.randrange(0, 10**9)
        candidate = rng.choice([n, -n, str(n), f"req-{n}", 0, "0", 2**53 + n, fresh_id(rng)])
        if all(candidate != f or type(candidate) is not type(f) for f in found):
            found.append(candidate)
    return found


def bursts(rng: random.Random) -> list[s.Burst]:
    made = []
    for _ in range(2):
        ids = unique_ids(rng, 40)
        calls = [s.big_call(i, rng.randrange(0, 2900), rng.choice(["list_orders", "search_products"])) for i in ids]
        made.append(s.Burst(calls, [rng.choice(BAD_LINES) for _ in ids], pause=rng.choice([0.0005, 0.001])))
    return made


def one_by_one(rng: random.Random) -> list[s.Alone]:
    ids = iter(unique_ids(rng, 8))
    word = f"x{rng.randrange(10**6)}"
    items = [
        s.Alone(request("ping", id=next(ids)), None, "ping"),
        s.Alone(
            request(rng.choice(["prompts/list", "resources/list", f"shop/{word}"]), id=next(ids)),
            -32601,
            "method-not-found",
        ),
        s.Alone(request("tools/call", id=next(ids), params={"name": word, "arguments": {}}), -32602, "unknown-tool"),
        s.Alone(
            request("tools/call", id=next(ids), params={"name": "get_order", "arguments": []}),
            -32602,
            "tool-error-kind",
        ),
        s.Alone({"jsonrpc": "2.0", "id": next(ids), "method": "ping", "params": "x"}, -32602, "invalid-request"),
        s.Alone(
            request("tools/call", id=next(ids), params={"name": rng.choice(CALLS)[0], "arguments": {}}),
            None,
            "tools-call-result",
        ),
    ]
    items += [
        s.Alone(line, code, "parse-error" if code == -32700 else "invalid-request")
        for line, code in rng.sample(BAD_LINES, 4)
    ]
    rng.shuffle(items)
    return items


def modern_steps(rng: random.Random) -> list[s.Step]:
    """2026-07-28 requests, each alone: good ones (the first of them sets nothing up) and bad ones after them,
    in an order of their own, with ids of every type."""
    ids = iter(unique_ids(rng, 10))
    name, arguments = rng.choice(CALLS)
    call = {"name": name, "arguments": arguments}
    method = rng.choice(["tools/list", "tools/call", "server/discover"])
    params = call if method == "tools/call" else {}
    version = rng.choice(["2027-01-01", "2025-11-25", "1999-01-01", "2026-07-29"])
    good = [
        s.Step(s.modern_step(next(ids), "server/discover", {}, s.modern_meta()), None, "discover-result"),
        s.Step(s.modern_step(next(ids), "tools/call", call, s.modern_meta()), None, "tools-call-result"),
        s.Step(s.modern_step(next(ids), "tools/list", {}, s.modern_meta()), None, "tools-list"),
    ]
    bad = [
        s.Step(
            s.modern_step(next(ids), method, params, s.modern_meta(drop=s.VERSION_KEY)),
            -32602,
            "modern-envelope-errors",
        ),
        s.Step(
            s.modern_step(
                next(ids), rng.choice(["tools/call", "tools/list"]), call, s.modern_meta(drop=s.CAPABILITIES_KEY)
            ),
            -32602,
            "modern-envelope-errors",
        ),
        s.Step(s.modern_step(next(ids), method, params, None), -32602, "modern-envelope-errors"),
        s.Step(
            s.modern_step(next(ids), method, params, s.modern_meta(capabilities=rng.choice([[], "all"]))),
            -32602,
            "modern-envelope-errors",
        ),
        s.Step(s.modern_step(next(ids), method, params, s.modern_meta(version)), -32022, "modern-unsupported-version"),
    ]
    rng.shuffle(bad)
    # A good request first: the server must not trust what it read there for the requests after it.
    rest = good[1:] + bad
    rng.shuffle(rest)
    return [good[0], *rest]


def values(number: int, rng: random.Random) -> Any:
    if number == 1:
        return bursts(rng)
    if number == 2:
        return one_by_one(rng)
    if number == 3:
        ids = unique_ids(rng, 12)
        return ids[:8], ids[8:]
    if number == 4:
        return rng.sample(CALLS, rng.randint(4, 6))
    return modern_steps(rng)


def _cell(number: int) -> None:
    @hidden("09", f"test_repair_{number}")
    def run(work: Work, rng: random.Random) -> None:
        # The instructor's copy of the file handed out: a pristine copy from the submission could be anything.
        s.check_repair(work, number, s.handed_out(number), values(number, rng), checker=False)


for _number in range(1, s.SERVERS + 1):
    _cell(_number)
