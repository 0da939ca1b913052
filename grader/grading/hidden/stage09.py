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
from grader.course.drive import initialize, notification, request
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


def sessions(rng: random.Random) -> list[list[Any]]:
    made: list[list[Any]] = [[]]
    for _ in range(2):
        ids = unique_ids(rng, 6)
        frames: list[Any] = [initialize(id=ids[0]), notification("notifications/initialized")]
        for i in ids[1 : rng.randint(2, 6)]:
            name, arguments = rng.choice(CALLS)
            frames.append(request("tools/call", id=i, params={"name": name, "arguments": arguments}))
        if rng.random() < 0.5:
            frames.append(rng.choice(BAD_LINES)[0])
        made.append(frames)
    return made


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
    return sessions(rng)


def _cell(number: int) -> None:
    @hidden("09", f"test_repair_{number}")
    def run(work: Work, rng: random.Random) -> None:
        # The instructor's copy of the file handed out: a pristine copy from the submission could be anything.
        s.check_repair(work, number, s.handed_out(number), values(number, rng), checker=False)


for _number in range(1, s.SERVERS + 1):
    _cell(_number)
