"""Stage 11's hidden checks: arguments, clients, orders and notes drawn at random (a note of a random
length, so that a summary keyed to the public one fails)."""

import random
import string

from grader.course.checks import stage11 as s
from grader.course.work import Work

from . import hidden


def _client(rng: random.Random) -> dict[str, str]:
    name = "".join(rng.choices(string.ascii_lowercase + "-", k=rng.randint(4, 16))).strip("-") or "client"
    return {"name": name, "version": f"{rng.randint(0, 9)}.{rng.randint(0, 99)}"}


def _note(rng: random.Random) -> str:
    words = ["parcel", "door", "refund", "called", "twice", "桜", "café", "tomorrow", "driver", "address"]
    text = ""
    length = rng.randint(s.SHORT + 1, 3000)
    while len(text) < length:
        text += rng.choice(words) + " "
    return text[:length]


@hidden("11", "test_summary")
def summaries(work: Work, rng: random.Random) -> None:
    s.check_summary(work.module("shop_audit").summary, s.hidden_summaries(rng))


@hidden("11", "test_record")
def records(work: Work, rng: random.Random) -> None:
    who = {**_client(rng), "transport": rng.choice(["stdio", "http"])}
    attempts = [
        (
            {"order_id": rng.randint(1, 3000), "reason": _note(rng)[: rng.randint(1, s.SHORT)]},
            "ok",
            "",
            rng.randint(0, 2),
        ),
        ({"order_id": rng.randint(1, 3000), "note": "x"}, "failed", "IntegrityError: refused", 0),
        ({"order_id": rng.randint(1, 3000), "tags": ["a"] * rng.randint(0, 5)}, "rejected", "order_id is wrong", 0),
    ]
    s.check_record(work, who, attempts, _note(rng))


@hidden("11", "test_writable_copy")
def writable(work: Work, rng: random.Random) -> None:
    def name() -> str:
        return "".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 10))) + ".db"

    s.check_writable(work, rng.choice(["shop.db", name()]), name())


@hidden("11", "test_writes")
def writes(work: Work, rng: random.Random) -> None:
    s.check_writes(work, rng)


@hidden("11", "test_call_write")
def call_write(work: Work, rng: random.Random) -> None:
    s.check_call_write(work, rng, {**_client(rng), "transport": "stdio"}, _note(rng))


@hidden("11", "test_served")
def served(work: Work, rng: random.Random) -> None:
    s.check_served(work, rng, _client(rng), _note(rng), checker=False)


@hidden("11", "test_request_state")
def request_state(work: Work, rng: random.Random) -> None:
    keys = (rng.randbytes(32), rng.randbytes(rng.choice([16, 32, 64])))
    order_id = rng.randint(1, 3000)
    reason = _note(rng)[: rng.randint(1, 200)]
    arguments = {"order_id": order_id, "reason": reason}
    other = rng.choice(
        [{"order_id": order_id + rng.randint(1, 50), "reason": reason}, {**arguments, "reason": reason + "!"}]
    )
    s.check_request_state(work.module("shop_state"), keys, (arguments, other), rng.uniform(1.7e9, 2.1e9))


@hidden("11", "test_ask_first")
def ask_first(work: Work, rng: random.Random) -> None:
    s.check_ask_first(work, rng, _client(rng))
