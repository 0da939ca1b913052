"""The checks of stage 00 (the shop and the pipe), called from its graded cells.

Each check takes the learner's function and raises :class:`~grader.course.expect.Failure` with
the rule and the fix when it breaks a rule. Hidden cells call the same checks with values the
learner has not seen (``None`` means: choose them at random).
"""

from __future__ import annotations

import random
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from grader.gallery import command as exhibit
from reference.catalog import STATUSES

from .expect import Failure, call, describe_id, outcome, show


def check_open_shop(open_shop: Callable[[Any], Any], db: Path) -> None:
    conn = call(open_shop, "read-only-uri", str(db), limit=None)
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
    with tempfile.TemporaryDirectory() as tmp:
        missing = Path(tmp) / "no-such-shop.db"
        _, error = outcome(open_shop, "read-only-uri", missing, limit=None)
        if not isinstance(error, sqlite3.OperationalError):
            raise Failure(
                "read-only-uri",
                "opening a file that does not exist succeeded (it made an empty database)"
                if error is None
                else f"opening a file that does not exist raised {type(error).__name__}, not sqlite3.OperationalError",
            )
        if missing.exists():
            raise Failure("read-only-uri", f"open_shop created {missing.name}: a read-only open never creates a file")


def check_open_shop_odd_paths(open_shop: Callable[[Any], Any], db: Path) -> None:
    """Paths with characters that mean something in a URI: a space, '#', '?', '%'."""
    with tempfile.TemporaryDirectory() as tmp:
        for folder in ("my shop", "shop #2", "what?", "100% shop"):
            copy = Path(tmp) / folder / "shop.db"
            copy.parent.mkdir()
            shutil.copyfile(db, copy)
            conn = call(open_shop, "read-only-uri", copy, limit=None)
            try:
                _readable(conn, f"open_shop({str(copy)!r})")
            finally:
                conn.close()


def _readable(conn: Any, call: str) -> None:
    if not isinstance(conn, sqlite3.Connection):
        raise Failure("read-only-uri", f"{call} returned {type(conn).__name__}, not a sqlite3.Connection")
    try:
        (count,) = conn.execute("SELECT count(*) FROM orders").fetchone()
    except sqlite3.Error as exc:
        raise Failure("read-only-uri", f"{call}: reading the orders table failed: {exc}") from None
    if count == 0:
        raise Failure("read-only-uri", f"{call} opened an empty database: is the path in the URI the right one?")


def check_count_orders(count_orders: Callable[[Any, str], Any], db: Path, statuses: list[str] | None) -> None:
    if statuses is None:
        rng = random.Random()
        statuses = [*rng.sample(STATUSES, 3), "o'brien", "' OR 1=1 --", "paid; DROP TABLE orders", "PAID"]
    truth = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    # The learner's function runs on a thread of its own (bounded in time): let it use this connection.
    conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False)
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
        conn.close()


# -- the pipe ---------------------------------------------------------------------------------
def check_talk(talk: Callable[..., Any], argv: list[str], ids: list[Any] | None) -> None:
    if ids is None:
        rng = random.Random()
        ids = [rng.randrange(2, 10**6), f"q{rng.randrange(10**6)}", 0]
    lines = [f'{{"jsonrpc":"2.0","id":{_json(i)},"method":"ping"}}\n'.encode() for i in ids]
    lines.insert(1, b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    replies = _run_talk(talk, argv, lines, 10.0)
    expected = [{"jsonrpc": "2.0", "id": i, "result": {}} for i in ids]
    if not isinstance(replies, list):
        raise Failure("stdio-pipes", f"talk returned {type(replies).__name__}, not a list of JSON values")
    for item in replies:
        if isinstance(item, str) or not isinstance(item, dict):
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


def check_talk_timeout(talk: Callable[..., Any]) -> None:
    """A server that ignores the end of its input: talk must give up, not hang the notebook."""
    argv = [sys.executable, *exhibit("no_exit_on_eof")[1:]]
    started = time.monotonic()
    try:
        _run_talk(talk, argv, [b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'], 8.0, timeout=1.0)
    except Failure as failure:
        if isinstance(failure.cause, TimeoutError):
            return
        if failure.cause is None or isinstance(failure.cause, NotImplementedError):
            raise
        raise Failure(
            "stdio-pipes",
            f"talk raised {type(failure.cause).__name__} for a server that never exits; expected TimeoutError",
            hint="catch subprocess.TimeoutExpired, kill the process, and raise TimeoutError",
        ) from None
    raise Failure(
        "stdio-pipes",
        f"talk returned after {time.monotonic() - started:.1f} s although the server was still running",
        expected="TimeoutError once timeout seconds have passed",
    )


def _run_talk(talk: Callable[..., Any], argv: list[str], lines: list[bytes], limit: float, **kw: Any) -> Any:
    """Call ``talk``; one that never returns fails the test instead of hanging it."""
    return call(talk, "stdio-pipes", argv, lines, limit=limit, **kw)


def _json(value: Any) -> str:
    import json

    return json.dumps(value)
