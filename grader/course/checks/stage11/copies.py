"""What every stage-11 check stands on: a copy of the shop to write on, what it holds afterwards
(read with plain SQL and with the course's reader of the audit), and one audit entry judged.

The learner's writes never touch the course's database: each check copies the shop into a scratch
folder of the learner's (:func:`shop_copy`), and reads the copy back here. The arguments of an
entry are judged against the learner's own ``summary`` of them, so a slip in ``summary`` costs its
own cell only.

    >>> WHO["transport"]
    'stdio'
"""

from __future__ import annotations

import contextlib
import re
import shutil
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from reference.audit import TABLE as AUDIT_TABLE
from reference.audit import read
from reference.writes import NOTES_TABLE

from ...expect import Failure, same_json, show
from ...work import Work

LONG_NOTE = "The customer called twice about the parcel, which the driver left at the neighbour's door."


WHO = {"name": "course-checks", "version": "2.0", "transport": "stdio"}


@contextlib.contextmanager
def shop_copy(work: Work) -> Iterator[tuple[Path, str]]:
    """A copy of the shop in a scratch folder of the learner's: (its path here, as the learner sees it)."""
    with work.scratch() as (here, there):
        shutil.copyfile(work.db, here / "shop.db")
        work.runner.own(here)
        yield here / "shop.db", f"{there}/shop.db"


def orders_by_status(path: Path) -> dict[str, list[int]]:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        found: dict[str, list[int]] = {}
        for order_id, status in conn.execute("SELECT id, status FROM orders ORDER BY id"):
            found.setdefault(status, []).append(order_id)
        return found


def status_of(path: Path, order_id: int) -> str | None:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        row = conn.execute("SELECT status FROM orders WHERE id = ?", (order_id,)).fetchone()
        return None if row is None else row[0]


def notes(path: Path) -> list[tuple[Any, ...]]:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        if not conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'order_notes'").fetchone()[0]:
            return []
        return conn.execute("SELECT id, order_id, kind, text FROM order_notes ORDER BY id").fetchall()


def entries(path: Path) -> list[dict[str, Any]]:
    try:
        return list(read(path))
    except (sqlite3.Error, ValueError) as exc:
        raise Failure(
            "audit-record", f"the audit_log of the copy cannot be read as the course reads it: {exc}"
        ) from None


@contextlib.contextmanager
def refusing(path: Path, table: str) -> Iterator[None]:
    """A trigger in the copy that refuses every INSERT into ``table`` (the table made first, as the course makes it)."""
    with contextlib.closing(sqlite3.connect(path)) as conn:
        conn.execute(NOTES_TABLE if table == "order_notes" else AUDIT_TABLE)
        conn.execute(
            f"CREATE TRIGGER refuse_{table} BEFORE INSERT ON {table} BEGIN SELECT RAISE(ABORT, 'refused'); END"
        )
        conn.commit()
    try:
        yield
    finally:
        with contextlib.closing(sqlite3.connect(path)) as conn:
            conn.execute(f"DROP TRIGGER IF EXISTS refuse_{table}")
            conn.commit()


def _got(value: Any, error: Any) -> str:
    return show(value) if error is None else f"{type(error).__name__}: {error}"


_AT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


def check_entry(
    entry: dict[str, Any],
    tool: str,
    who: dict[str, str],
    outcome: str,
    rows: int,
    arguments: Any,
    what: str,
    check: str = "write-audit",
) -> None:
    """One audit entry as the course reads it: the tool, who asked, the outcome, the rows, the arguments."""
    problems = []
    if not isinstance(entry.get("at"), str) or not _AT.fullmatch(entry["at"]):
        problems.append(f'"at" is {entry.get("at")!r}, not UTC ISO 8601 with milliseconds (now())')
    else:
        at = datetime.strptime(entry["at"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
        if abs((datetime.now(UTC) - at).total_seconds()) > 600:
            problems.append(f'"at" is {entry["at"]}, not the time of the attempt (UTC)')
    for key, want in (
        ("tool", tool),
        ("client", {"name": who["name"], "version": who["version"]}),
        ("transport", who.get("transport", "stdio")),
        ("outcome", outcome),
        ("rows_changed", rows),
        ("arguments", arguments),
    ):
        if not same_json(entry.get(key), want):
            problems.append(f"{key} is {show(entry.get(key))}, not {show(want)}")
    if outcome != "ok" and not (isinstance(entry.get("reason"), str) and entry["reason"].strip()):
        problems.append("a refused or failed attempt says why, in reason")
    if outcome == "ok" and entry.get("reason") != "":
        problems.append('an attempt that worked has the reason ""')
    if problems:
        raise Failure(check, f"{what}: the audit entry is wrong: {'; '.join(problems)}", received=show(entry))
