"""The checks of stage 00 (the shop and the pipe).

The learner writes three modules: ``shop.py`` (``open_shop``), ``queries.py`` (``count_orders``) and
``pipe.py`` (``talk``). Each check runs them in the learner's own process (a connection they open
stays there; the checks read it through its proxy) and raises :class:`~grader.course.expect.Failure`
with the rule and the fix when a rule is broken. Hidden checks call the same functions with values
the learner has not seen.
"""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
import time
from typing import Any

from reference.catalog import STATUSES

from ..calls import call, outcome
from ..expect import Failure, describe_id, show
from ..remote import type_name
from ..work import Work
from . import public


@public("00", "test_open_shop", "a read-only connection to the shop; a missing file is an error, never created")
def open_shop_cell(work: Work) -> None:
    check_open_shop(work)


@public("00", "test_count_orders", "counts for 'paid' and for \"x' OR '1'='1\" (a value, never SQL)")
def count_orders_cell(work: Work) -> None:
    check_count_orders(work, ["paid", "x' OR '1'='1"])


@public("00", "test_talk", 'two pings (ids 1 and "abc") and a notification through the pipe')
def talk_cell(work: Work) -> None:
    check_talk(work, [1, "abc"])


@public("00", "test_talk_timeout", "a server that never exits: talk raises TimeoutError, it does not hang")
def talk_timeout_cell(work: Work) -> None:
    check_talk_timeout(work)


def check_open_shop(work: Work) -> None:
    open_shop = work.module("shop").open_shop
    conn = call(open_shop, "read-only-uri", work.inside(work.db))
    _readable(conn, "open_shop(path)")
    try:
        conn.execute("INSERT INTO customers (name, email, city, country, joined) VALUES ('x', 'x@x', 'x', 'x', 'x')")
    except sqlite3.OperationalError:
        pass
    else:
        conn.rollback()
        raise Failure("read-only-uri", "the connection accepted an INSERT: it is not read-only")
    finally:
        conn.close()
    with work.scratch() as (here, there):
        missing = f"{there}/no-such-shop.db"
        _, error = outcome(open_shop, "read-only-uri", missing)
        if not isinstance(error, sqlite3.OperationalError):
            raise Failure(
                "read-only-uri",
                "opening a file that does not exist succeeded (it made an empty database)"
                if error is None
                else f"opening a file that does not exist raised {type(error).__name__}, not sqlite3.OperationalError",
            )
        if (here / "no-such-shop.db").exists():
            raise Failure("read-only-uri", "open_shop created no-such-shop.db: a read-only open never creates a file")


def check_open_shop_odd_paths(work: Work, folders: list[str]) -> None:
    """Paths with characters that mean something in a URI: a space, '#', '?', '%'."""
    open_shop = work.module("shop").open_shop
    with work.scratch() as (here, there):
        for folder in folders:
            (here / folder).mkdir()
            shutil.copyfile(work.db, here / folder / "shop.db")
            work.runner.own(here / folder)
            conn = call(open_shop, "read-only-uri", f"{there}/{folder}/shop.db")
            try:
                _readable(conn, f"open_shop({folder + '/shop.db'!r})")
            finally:
                conn.close()


def _readable(conn: Any, what: str) -> None:
    if type_name(conn) != "sqlite3.Connection":
        raise Failure("read-only-uri", f"{what} returned {type_name(conn)}, not a sqlite3.Connection")
    try:
        (count,) = conn.execute("SELECT count(*) FROM orders").fetchone()
    except sqlite3.Error as exc:
        raise Failure("read-only-uri", f"{what}: reading the orders table failed: {exc}") from None
    if count == 0:
        raise Failure("read-only-uri", f"{what} opened an empty database: is the path in the URI the right one?")


def check_count_orders(work: Work, statuses: list[str]) -> None:
    count_orders = work.module("queries").count_orders
    truth = sqlite3.connect(f"{work.db.as_uri()}?mode=ro", uri=True)
    conn = work.stdlib("sqlite3.connect")(f"file:{work.inside(work.db)}?mode=ro", uri=True)
    try:
        for status in statuses:
            (want,) = truth.execute("SELECT count(*) FROM orders WHERE status = ?", (status,)).fetchone()
            got, error = outcome(count_orders, "parameterised-sql", conn, status)
            if error is not None:
                raise Failure(
                    "parameterised-sql",
                    f"count_orders(conn, {status!r}) raised {type(error).__name__}: {error}",
                    hint="the status became part of the SQL text; pass it as a parameter",
                ) from None
            if type(got) is not int or got != want:
                raise Failure(
                    "parameterised-sql",
                    f"count_orders(conn, {status!r}) returned {got!r}; the shop has {want} such orders",
                )
    finally:
        truth.close()


def hostile_statuses(rng: random.Random) -> list[str]:
    return [*rng.sample(STATUSES, 3), "o'brien", "' OR 1=1 --", "paid; DROP TABLE orders", "PAID"]


# -- the pipe ---------------------------------------------------------------------------------
def check_talk(work: Work, ids: list[Any]) -> None:
    talk = work.module("pipe").talk
    lines = [f'{{"jsonrpc":"2.0","id":{json.dumps(i)},"method":"ping"}}\n'.encode() for i in ids]
    lines.insert(1, b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    replies = call(talk, "stdio-pipes", work.peer("pinger"), lines, limit=10.0)
    expected = [{"jsonrpc": "2.0", "id": i, "result": {}} for i in ids]
    if not isinstance(replies, list):
        raise Failure("stdio-pipes", f"talk returned {type(replies).__name__}, not a list of JSON values")
    for item in replies:
        if not isinstance(item, dict):
            raise Failure(
                "stdio-pipes",
                "talk returned something that is not a JSON object: parse each stdout line with json.loads",
                received=show(item),
            )
    if replies != expected:
        hint = ""
        if any(isinstance(r, dict) and "method" not in r and "id" not in r for r in replies):
            hint = "a value without an id: is stderr mixed into stdout?"
        raise Failure(
            "stdio-pipes",
            f"sent {len(ids)} pings (ids {', '.join(describe_id(i) for i in ids)}) and a notification: "
            "expected one reply per ping, in order",
            sent=[line.decode().rstrip() for line in lines],
            expected=[show(e) for e in expected],
            received=[show(r) for r in replies],
            **({"hint": hint} if hint else {}),
        )


def random_ids(rng: random.Random) -> list[Any]:
    return [rng.randrange(2, 10**6), f"q{rng.randrange(10**6)}", 0]


def check_talk_timeout(work: Work) -> None:
    """A server that ignores the end of its input: talk must give up, not hang the notebook."""
    talk = work.module("pipe").talk
    started = time.monotonic()
    lines = [b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n']
    _, error = outcome(talk, "talk-timeout", work.peer("pinger", "--ignore-eof"), lines, limit=8.0, timeout=1.0)
    if isinstance(error, TimeoutError):
        return
    if error is not None:
        raise Failure(
            "talk-timeout",
            f"talk raised {type(error).__name__} for a server that never exits; expected TimeoutError",
            hint="catch subprocess.TimeoutExpired, kill the process, and raise TimeoutError",
        )
    raise Failure(
        "talk-timeout",
        f"talk returned after {time.monotonic() - started:.1f} s although the server was still running",
        expected="TimeoutError once timeout seconds have passed",
    )
