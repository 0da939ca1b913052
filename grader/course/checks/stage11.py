"""The checks of stage 11 (audited writes).

Every write runs on a copy of the shop in a scratch folder of the learner's (the course's database
is never written), and what the copy holds afterwards is read here, with plain SQL and with the
course's own reader of the audit (:func:`reference.audit.read`): the learner's table is the
course's, so ``mcp-lab audit`` reads it too. An audit entry's arguments are compared with the
learner's own ``summary`` of them, so that a slip in the summary costs its own cell only.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import random
import re
import shutil
import sqlite3
import string
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from grader.checker.catalogue import CATALOGUE
from reference.audit import TABLE as AUDIT_TABLE
from reference.audit import read
from reference.writes import NOTES_TABLE

from ..calls import call, outcome
from ..drive import Server, expect_checks, initialize, notification, request
from ..expect import Failure, same_json, show
from ..remote import is_a
from ..work import Work
from . import public

LATEST = "2025-11-25"
SHORT = 40
WANT_ANNOTATIONS = {
    "cancel_order": {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True, "openWorldHint": False},
    "add_order_note": {
        "readOnlyHint": False,
        "destructiveHint": False,
        "idempotentHint": False,
        "openWorldHint": False,
    },
}
LONG_NOTE = "The customer called twice about the parcel, which the driver left at the neighbour's door."
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
WHO = {"name": "course-checks", "version": "2.0", "transport": "stdio"}


# -- the course's rule for the summary ---------------------------------------------------------------
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


# -- the cells ---------------------------------------------------------------------------------------
@public("11", "test_summary", "summary(): short values kept, long text as its length, lists and objects as their size")
def summary_cell(work: Work) -> None:
    check_summary(work.module("shop_audit").summary, VISIBLE_SUMMARIES)


@public(
    "11", "test_record", "record(): entries as the course reads them; False, never an exception, when it cannot write"
)
def record_cell(work: Work) -> None:
    check_record(work, WHO, [({"order_id": 7, "reason": "asked by phone"}, "ok", "", 2)], LONG_NOTE)


@public("11", "test_annotations", "write_tools(): both write tools with all four hints, each right")
def annotations_cell(work: Work) -> None:
    check_annotations(work.module("shop_writes").write_tools)


@public("11", "test_writable_copy", "writable_copy(): a copy only; never the course's database, however it is named")
def writable_cell(work: Work) -> None:
    check_writable(work, "shop.db", "course.db")


@public("11", "test_writes", "cancel_order() and add_order_note(): results, the copy after them, one transaction")
def writes_cell(work: Work) -> None:
    check_writes(work, random.Random(11))


@public(
    "11", "test_call_write", "call_write(): every attempt audited once, with who asked; a failed audit changes nothing"
)
def call_write_cell(work: Work) -> None:
    check_call_write(work, random.Random(11), WHO, LONG_NOTE)


@public(
    "11",
    "test_request_state",
    "binding(), seal(), open_state(): a state opens until it expires; tampered, foreign, other-request refused",
)
def request_state_cell(work: Work) -> None:
    arguments = {"order_id": 9, "reason": "the customer asked by phone"}
    other = {"order_id": 10, "reason": "the customer asked by phone"}
    check_request_state(work.module("shop_state"), (STATE_KEY, b"another-server-key".ljust(32, b"x")),
                        (arguments, other), STATE_NOW)  # fmt: skip


@public(
    "11",
    "test_ask_first",
    "cancel_order in 2026-07-28, served: asked first, -32021, a bad state refused, a no writes nothing, a yes cancels",
)
def ask_first_cell(work: Work) -> None:
    check_ask_first(work, random.Random(11), {"name": "course-session", "version": "3.1"})


@public(
    "11",
    "test_served",
    "your writes and audit in the course's server: listed, used, audited; off without --allow-writes",
)
def served_cell(work: Work) -> None:
    check_served(work, random.Random(11), {"name": "course-session", "version": "3.1"}, LONG_NOTE)


# -- helpers -----------------------------------------------------------------------------------------
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


# -- summary and record ------------------------------------------------------------------------------
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


def check_record(work: Work, who: dict[str, str], attempts: list[tuple[Any, str, str, int]], long_note: str) -> None:
    audit = work.module("shop_audit")
    tools = ["cancel_order", "add_order_note"]
    attempts = [*attempts, ({"order_id": 99999, "note": long_note}, "rejected", "no order with id 99999", 0)]
    with shop_copy(work) as (here, there):
        for number, (arguments, result, reason, rows) in enumerate(attempts):
            tool = tools[number % 2]
            shown = f"record(COPY, {tool!r}, {show(arguments)[:80]}, {show(who)}, {result!r}, {reason!r}, {rows})"
            got = call(audit.record, "audit-record", there, tool, arguments, who, result, reason, rows)
            if got is not True:
                raise Failure("audit-record", f"{shown} returned {show(got)}, not True", stderr=work.printed())
            found = entries(here)
            if len(found) != number + 1:
                raise Failure(
                    "audit-record", f"{shown}: the copy's audit_log holds {len(found)} entries, not {number + 1}"
                )
            want = call(audit.summary, "audit-redaction", arguments)
            check_entry(found[-1], tool, who, result, rows, want, shown)
            if found[-1]["reason"] != reason:
                raise Failure("audit-record", f"{shown}: the reason is kept as it was given", received=show(found[-1]))
        count = len(entries(here))
        for why, target in (("an audit_log that refuses every entry", there), ("a file that does not exist", None)):
            path = f"{there.rpartition('/')[0]}/missing.db" if target is None else target  # in the scratch folder
            before = work.printed()
            with refusing(here, "audit_log") if target is not None else contextlib.nullcontext():
                got, error = outcome(
                    audit.record, "audit-record", path, "cancel_order", {"order_id": 1}, who, "ok", "", 0
                )
            shown = f"record(...) on {why}"
            if error is not None or got is not False:
                raise Failure(
                    "audit-record",
                    f"{shown} returns False (and says so on stderr): an audit never raises into the reply",
                    received=_got(got, error),
                )
            if not _printed_since(work, before):
                raise Failure(
                    "audit-record", f"{shown} returned False, but wrote no line on stderr for whoever runs the server"
                )
        if len(entries(here)) != count:
            raise Failure("audit-record", "an entry that could not be written must not appear later")
        if (here.parent / "missing.db").exists():
            raise Failure("audit-record", "record() created a database where there was none: open it with mode=rw")


def _printed_since(work: Work, before: str, wait: float = 2.0) -> bool:
    """Whether the learner's process wrote to stderr since ``before`` (its stderr is read on a thread:
    a line written just now may take a moment to arrive)."""
    deadline = time.monotonic() + wait
    while work.printed() == before:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


# -- annotations and the copy ------------------------------------------------------------------------
def check_annotations(write_tools: Any) -> None:
    tools = call(write_tools, "write-annotations")
    if not isinstance(tools, list) or [t.get("name") if isinstance(t, dict) else None for t in tools] != list(
        WANT_ANNOTATIONS
    ):
        raise Failure("write-annotations", "write_tools() lists cancel_order and add_order_note", received=show(tools))
    for tool in tools:
        got, want = tool.get("annotations"), WANT_ANNOTATIONS[tool["name"]]
        if not same_json(got, want):
            raise Failure(
                "write-annotations",
                f"{tool['name']}: the four hints say what it does, each spelled out",
                expected=show(want),
                received=show(got),
            )


def check_writable(work: Work, copy_name: str, link_name: str) -> None:
    writable = work.module("shop_writes").writable_copy
    course = work.inside(work.db)
    folder, _, name = course.rpartition("/")
    parent = folder.rpartition("/")[2]
    with work.scratch() as (here, there):
        shutil.copyfile(work.db, here / copy_name)
        os.symlink(course, here / link_name)
        work.runner.own(here)
        cases = [
            (f"{there}/{copy_name}", True, "a copy of the shop"),
            (None, False, "no path at all (no --db)"),
            (f"{there}/missing-{copy_name}", False, "a file that does not exist"),
            (course, False, "the course's database"),
            (f"{folder}/../{parent}/{name}", False, "the course's database, spelled another way"),
            (f"{there}/{link_name}", False, "a link to the course's database"),
        ]
        for path, allowed, what in cases:
            got = call(writable, "writable-copy", path)
            if allowed and got is not None:
                raise Failure(
                    "writable-copy", f"writable_copy({path!r}): {what} may be written: return None", received=show(got)
                )
            if not allowed and not (isinstance(got, str) and got.strip()):
                raise Failure(
                    "writable-copy",
                    f"writable_copy({path!r}) returned {show(got)}: {what} is never written; say why in a sentence",
                )


# -- the writes --------------------------------------------------------------------------------------
def check_writes(work: Work, rng: random.Random) -> None:
    writes = work.module("shop_writes")
    with shop_copy(work) as (here, there):
        by_status = orders_by_status(here)
        pending, paid = rng.choice(by_status["pending"]), rng.choice(by_status["paid"])
        shipped, delivered = rng.choice(by_status["shipped"]), rng.choice(by_status["delivered"])
        reason, note = f"asked by phone, call {rng.randint(1, 999)}", f"note {rng.randint(1, 10**6)}: " + LONG_NOTE
        conn = call(writes.open_copy, "write-tools", there)

        def attempt(tool: str, args: dict[str, Any]) -> tuple[Any, Any, str]:
            got, error = outcome(getattr(writes, tool), "write-tools", conn, args)
            return got, error, f"{tool}(conn, {show(args)[:100]})"

        def committed(shown: str) -> None:
            if conn.in_transaction:
                raise Failure(
                    "write-transaction", f"after {shown} the connection is still in a transaction: COMMIT (or ROLLBACK)"
                )

        got, error, shown = attempt("cancel_order", {"order_id": pending, "reason": reason})
        want = {"order_id": pending, "status": "cancelled", "previous_status": "pending", "rows_changed": 2}
        if error is not None or not same_json(got, want):
            raise Failure("write-tools", f"{shown} cancels the order", expected=show(want), received=_got(got, error))
        committed(shown)
        if status_of(here, pending) != "cancelled" or not any(
            n[1:] == (pending, "cancellation", reason) for n in notes(here)
        ):
            raise Failure(
                "write-tools",
                f"after {shown} the copy holds the order as cancelled and a 'cancellation' note with the reason",
                received=show({"status": status_of(here, pending), "notes": notes(here)[-3:]}),
            )
        before = notes(here)
        got, error, shown = attempt("cancel_order", {"order_id": pending, "reason": "again"})
        want = {"order_id": pending, "status": "cancelled", "previous_status": "cancelled", "rows_changed": 0}
        if error is not None or not same_json(got, want) or notes(here) != before:
            raise Failure(
                "write-tools",
                f"{shown}: a cancelled order is left as it is (idempotent)",
                expected=show(want),
                received=_got(got, error),
            )
        committed(shown)
        for order_id, what in (
            (shipped, "a shipped order"),
            (rng.randint(3001, 10**6), "an order that does not exist"),
        ):
            got, error, shown = attempt("cancel_order", {"order_id": order_id, "reason": reason})
            if not is_a(error, "ToolError"):
                raise Failure(
                    "write-tools", f"{shown}: {what} cannot be cancelled: raise ToolError", received=_got(got, error)
                )
            committed(shown)
        if status_of(here, shipped) != "shipped" or notes(here) != before:
            raise Failure("write-tools", "a cancellation refused changes nothing in the copy")
        got, error, shown = attempt("add_order_note", {"order_id": delivered, "note": note})
        added = [n for n in notes(here) if n not in before]
        if error is not None or not isinstance(got, dict) or len(added) != 1:
            raise Failure("write-tools", f"{shown} adds one note", received=_got(got, error))
        want = {"order_id": delivered, "note_id": added[0][0], "rows_changed": 1}
        if not same_json(got, want) or added[0][1:] != (delivered, "note", note):
            raise Failure(
                "write-tools",
                f"{shown}: the result names the note the copy now holds",
                expected=show(want),
                received=show(got),
            )
        committed(shown)
        before = notes(here)
        got, error, shown = attempt("add_order_note", {"order_id": rng.randint(3001, 10**6), "note": note})
        if not is_a(error, "ToolError") or notes(here) != before:
            raise Failure(
                "write-tools",
                f"{shown}: an order that does not exist gets no note: raise ToolError",
                received=_got(got, error),
            )
        committed(shown)
        # One transaction: the note's INSERT refused after the order's UPDATE ran.
        with refusing(here, "order_notes"):
            got, error, shown = attempt("cancel_order", {"order_id": paid, "reason": reason})
        if error is None or is_a(error, "ToolError"):
            raise Failure(
                "write-transaction",
                f"{shown} while the copy refuses every new note: the failure must come out of cancel_order",
                received=_got(got, error),
            )
        if status_of(here, paid) != "paid":
            raise Failure(
                "write-transaction",
                f"{shown}: the note could not be written, yet the order is now {status_of(here, paid)}: the UPDATE "
                "was committed on its own",
                received=f"{type(error).__name__}: {error}",
            )
        committed(shown)
        conn.close()


# -- call_write --------------------------------------------------------------------------------------
def check_call_write(work: Work, rng: random.Random, who: dict[str, str], long_note: str) -> None:
    writes, audit = work.module("shop_writes"), work.module("shop_audit")
    with shop_copy(work) as (here, there):
        by_status = orders_by_status(here)
        pending, paid = rng.sample(by_status["pending"], 1)[0], rng.sample(by_status["paid"], 2)
        shipped, delivered = rng.choice(by_status["shipped"]), rng.choice(by_status["delivered"])
        unknown = rng.randint(3001, 10**6)
        seen = len(entries(here))

        def attempt(
            tool: str, arguments: Any, version: str = LATEST, allowed: bool = True, audited: bool = True
        ) -> tuple[Any, Any, str, dict[str, Any] | None]:
            nonlocal seen
            params = {"name": tool, "arguments": arguments}
            shown = f"call_write(COPY, {show(params)[:120]}, who, {allowed}, {version!r})"
            got, error = outcome(writes.call_write, "write-audit", there, params, who, allowed, version)
            found = entries(here)
            want = 1 if audited else 0
            if len(found) - seen != want:
                raise Failure(
                    "write-audit",
                    f"{shown} added {len(found) - seen} audit entries, not {want}"
                    + (": every attempt is audited, exactly once" if audited else ""),
                    received=_got(got, error),
                )
            seen = len(found)
            return got, error, shown, found[-1] if audited else None

        def summary_of(arguments: Any) -> Any:
            return call(audit.summary, "audit-redaction", arguments)

        def result(got: Any, error: Any, shown: str, is_error: bool, value: Any = None, version: str = LATEST) -> None:
            if error is not None or not isinstance(got, dict) or got.get("isError") is not is_error:
                kind = "a tool execution error (isError: true)" if is_error else "a result with isError: false"
                raise Failure(
                    "tool-error-kind" if is_error else "tools-call-result",
                    f"{shown} is {kind}",
                    received=_got(got, error),
                )
            content = got.get("content")
            if not (
                isinstance(content, list)
                and content
                and all(isinstance(c, dict) and c.get("type") == "text" for c in content)
            ):
                raise Failure(
                    "tools-call-result",
                    f'{shown}: a result is {{"content": [{{"type": "text", ...}}], ...}}',
                    received=show(got),
                )
            if value is not None:
                text = content[0].get("text")
                try:
                    parsed = json.loads(text) if isinstance(text, str) else None
                except ValueError:
                    parsed = None
                if not same_json(parsed, value):
                    raise Failure(
                        "tools-call-result",
                        f"{shown}: the text block holds the write's JSON",
                        expected=show(value),
                        received=show(got),
                    )
                structured = version >= "2025-06-18"
                if structured and not same_json(got.get("structuredContent"), value):
                    raise Failure(
                        "structured-output",
                        f"{shown}: under {version} the result carries structuredContent",
                        expected=show(value),
                        received=show(got),
                    )
                if not structured and "structuredContent" in got:
                    raise Failure(
                        "structured-output", f"{shown}: {version} has no structuredContent", received=show(got)
                    )

        def protocol_error(got: Any, error: Any, shown: str, check: str, what: str) -> None:
            if not (is_a(error, "RpcError") and getattr(error, "code", None) == -32602):
                raise Failure(check, f"{shown}: {what}: raise RpcError(INVALID_PARAMS, ...)", received=_got(got, error))

        # Done: a cancellation, then a note (long: kept as its length) in a 2025-03-26 session.
        arguments = {"order_id": pending, "reason": "asked by phone"}
        got, error, shown, entry = attempt("cancel_order", arguments)
        value = {"order_id": pending, "status": "cancelled", "previous_status": "pending", "rows_changed": 2}
        result(got, error, shown, False, value)
        check_entry(entry, "cancel_order", who, "ok", 2, summary_of(arguments), shown)
        arguments = {"order_id": delivered, "note": long_note}
        got, error, shown, entry = attempt("add_order_note", arguments, "2025-03-26")
        result(got, error, shown, False)
        check_entry(entry, "add_order_note", who, "ok", 1, summary_of(arguments), shown)
        # Refused by the shop, and refused before running.
        for tool, arguments in (
            ("add_order_note", {"order_id": unknown, "note": long_note}),
            ("cancel_order", {"order_id": shipped, "reason": "too late?"}),
            ("cancel_order", {"order_id": "seven", "reason": "x"}),
            ("add_order_note", {"order_id": delivered, "note": ""}),
        ):
            got, error, shown, entry = attempt(tool, arguments)
            result(got, error, shown, True)
            check_entry(entry, tool, who, "rejected", 0, summary_of(arguments), shown)
        for tool, arguments, version, what in (
            (
                "cancel_order",
                {"order_id": "seven", "reason": "x"},
                "2025-06-18",
                "before 2025-11-25, arguments that break the inputSchema are a protocol error",
            ),
            ("add_order_note", [delivered, "hi"], LATEST, "arguments that are not an object"),
        ):
            got, error, shown, entry = attempt(tool, arguments, version)
            protocol_error(got, error, shown, "tool-error-kind", what)
            check_entry(entry, tool, who, "rejected", 0, summary_of(arguments), shown)
        # Writes off: an unknown tool, audited, and nothing changed.
        arguments = {"order_id": paid[0], "reason": "asked by phone"}
        got, error, shown, entry = attempt("cancel_order", arguments, allowed=False)
        protocol_error(got, error, shown, "writes-off", "writes are off: the tool does not exist here")
        check_entry(entry, "cancel_order", who, "rejected", 0, summary_of(arguments), shown, "writes-off")
        if status_of(here, paid[0]) != "paid":
            raise Failure("writes-off", f"{shown} changed the copy: with writes off nothing runs")
        # Broken while it ran: failed, isError, audited.
        with refusing(here, "order_notes"):
            arguments = {"order_id": delivered, "note": "hello"}
            got, error, shown, entry = attempt("add_order_note", arguments)
        result(got, error, shown, True)
        check_entry(entry, "add_order_note", who, "failed", 0, summary_of(arguments), shown)
        # An audit that cannot be written: the same replies, no exception, no entry.
        with refusing(here, "audit_log"):
            arguments = {"order_id": paid[1], "reason": "asked by phone"}
            got, error, shown, _ = attempt("cancel_order", arguments, audited=False)
            value = {"order_id": paid[1], "status": "cancelled", "previous_status": "paid", "rows_changed": 2}
            result(got, error, f"{shown} (the audit refusing every entry)", False, value)
            got, error, shown, _ = attempt("add_order_note", {"order_id": unknown, "note": "x"}, audited=False)
            result(got, error, f"{shown} (the audit refusing every entry)", True)


# -- the server --------------------------------------------------------------------------------------
def check_served(work: Work, rng: random.Random, client: dict[str, str], long_note: str, checker: bool = True) -> None:
    """A session with writes allowed, its audit read back, (``checker``) mcp-lab check's tools checks;
    then a session with writes off."""
    audit = work.module("shop_audit")
    with shop_copy(work) as (here, there):
        by_status = orders_by_status(here)
        pending, unknown = rng.choice(by_status["pending"]), rng.randint(3001, 10**6)
        argv = work.host("shop_writes", "--allow-writes", "--db", there)
        who = {**client, "transport": "stdio"}
        calls = [
            ("cancel_order", {"order_id": pending, "reason": "the customer asked"}, "ok", 2),
            ("add_order_note", {"order_id": unknown, "note": long_note}, "rejected", 0),
        ]
        with Server(argv) as server:
            init = initialize()
            init["params"]["clientInfo"] = dict(client)
            server.expect(init, {"jsonrpc": "2.0", "id": init["id"]}, "initialize-result")
            server.send(notification("notifications/initialized"))
            listed = request("tools/list")
            reply = server.expect(listed, {"jsonrpc": "2.0", "id": listed["id"]}, "tools-list")
            tools = {t.get("name"): t for t in reply.get("result", {}).get("tools", []) if isinstance(t, dict)}
            for name, want in WANT_ANNOTATIONS.items():
                if name not in tools or not same_json(tools[name].get("annotations"), want):
                    raise Failure(
                        "write-annotations",
                        f"tools/list of a server started with --allow-writes: {name} with its four hints",
                        expected=show(want),
                        received=show(tools.get(name)),
                    )
            for tool, arguments, result, _rows in calls:
                sent = request("tools/call", params={"name": tool, "arguments": arguments})
                reply = server.expect(sent, {"jsonrpc": "2.0", "id": sent["id"]}, "tools-call-result")
                got = reply.get("result")
                if not isinstance(got, dict) or got.get("isError") is not (result != "ok"):
                    raise Failure("tools-call-result", f"{tool} over the wire", sent=show(sent), received=show(reply))
        found = entries(here)
        if len(found) != len(calls):
            raise Failure(
                "write-audit",
                f"a session of {len(calls)} write attempts left {len(found)} audit entries",
                received=show(found),
            )
        for entry, (tool, arguments, result, rows) in zip(found, calls, strict=True):
            summary = call(audit.summary, "audit-redaction", arguments)
            check_entry(entry, tool, who, result, rows, summary, f"{tool} in a session of client {client['name']!r}")
        served_unaudited(argv, here, client, pending)
        if checker:
            expect_checks(argv, ["tools-list", "tool-names", "capabilities-match"])
        # Without --allow-writes: not listed, an unknown tool, and still audited.
        off = work.host("shop_writes", "--db", there)
        arguments = {"order_id": pending, "note": "hello"}
        with Server(off) as server:
            init = initialize()
            init["params"]["clientInfo"] = dict(client)
            server.expect(init, {"jsonrpc": "2.0", "id": init["id"]}, "initialize-result")
            server.send(notification("notifications/initialized"))
            listed = request("tools/list")
            reply = server.expect(listed, {"jsonrpc": "2.0", "id": listed["id"]}, "tools-list")
            names = [t.get("name") for t in reply.get("result", {}).get("tools", []) if isinstance(t, dict)]
            if set(names) & set(WANT_ANNOTATIONS):
                raise Failure(
                    "writes-off", "started without --allow-writes, the server lists write tools", received=show(names)
                )
            sent = request("tools/call", params={"name": "add_order_note", "arguments": arguments})
            server.expect(sent, {"jsonrpc": "2.0", "id": sent["id"], "error": {"code": -32602}}, "writes-off")
        found = entries(here)
        if len(found) != len(calls) + 1:
            raise Failure(
                "writes-off",
                "a call made while writes are off is audited too (as rejected)",
                received=show(found[len(calls) :]),
            )
        summary = call(audit.summary, "audit-redaction", arguments)
        check_entry(found[-1], "add_order_note", who, "rejected", 0, summary, "a call with writes off", "writes-off")


def served_unaudited(argv: list[str], here: Path, client: dict[str, str], order_id: int) -> None:
    """A write whose audit cannot be written (the copy refuses every entry), over the wire: the client is
    told what happened, as if the audit had worked, and stdout carries that reply only (the audit's
    failure is a line on stderr, for whoever runs the server)."""
    count = len(entries(here))
    with refusing(here, "audit_log"), Server(argv) as server:
        init = initialize()
        init["params"]["clientInfo"] = dict(client)
        server.expect(init, {"jsonrpc": "2.0", "id": init["id"]}, "initialize-result")
        server.send(notification("notifications/initialized"))
        note = {"order_id": order_id, "note": "added while the audit refuses every entry"}
        sent = request("tools/call", params={"name": "add_order_note", "arguments": note})
        reply = server.expect(sent, {"jsonrpc": "2.0", "id": sent["id"]}, "audit-record")  # stdout: a reply only
        got = reply.get("result")
        value = got.get("structuredContent") if isinstance(got, dict) else None
        if not (isinstance(got, dict) and got.get("isError") is False and isinstance(value, dict)):
            raise Failure(
                "audit-record",
                "with an audit that cannot be written, the note is still added and the client told so: a failed "
                "audit never changes the reply",
                sent=show(sent),
                received=show(reply),
                stderr=server.probe.stderr_tail(),
            )
    if len(entries(here)) != count:
        raise Failure("audit-record", "an audit that refused the entry must not hold it afterwards")


# -- requestState, sealed (MCP 2026-07-28, basic/patterns/mrtr) --------------------------------------
STATE_TTL_S = 300  # what the lesson gives as TTL_S
STATE_KEY = b"course-public-key-".ljust(32, b"k")
STATE_NOW = 1_800_000_000


def _flip(text: str, at: int) -> str:
    """``text`` with the character at ``at`` changed for another base64 character."""
    return text[:at] + ("A" if text[at] != "A" else "B") + text[at + 1 :]


def check_request_state(
    module: Any, keys: tuple[bytes, bytes], calls: tuple[dict[str, Any], dict[str, Any]], now: float
) -> None:
    """binding(), seal() and open_state() of ``module``: a good state opens until it expires; a changed
    MAC, a changed payload, another key, another request, an expired state and text that is no state
    are refused with a reason, and open_state never raises. ``calls``: two cancel_order argument sets
    (the second another request); ``now``: the clock the checks pass in."""
    key, other_key = keys
    arguments, other = calls
    rule = "modern-request-state"
    bound = call(module.binding, rule, "cancel_order", arguments)
    if not isinstance(bound, str) or not bound:
        raise Failure(rule, "binding() must return a non-empty string (canonical JSON)", received=show(bound))
    reordered = dict(reversed(list(arguments.items())))
    if call(module.binding, rule, "cancel_order", reordered) != bound:
        raise Failure(
            rule,
            "binding() gave another text for the same arguments with their keys in another order: sort the keys",
            sent=show(reordered),
        )
    distinct = [
        ("add_order_note", arguments),
        ("cancel_order", other),
        ("cancel_order", {**arguments, "order_id": str(arguments["order_id"])}),
    ]
    for name, args in distinct:
        if call(module.binding, rule, name, args) == bound:
            raise Failure(
                rule,
                f"binding({name!r}, {show(args)}) is the same text as for {show(arguments)}: a state bound to one "
                "request would open on the other",
            )
    other_bound = call(module.binding, rule, "cancel_order", other)

    state = call(module.seal, rule, key, bound, now)
    if not isinstance(state, str) or state.count(".") != 1:
        raise Failure(rule, "seal() must return the text PAYLOAD.MAC (one dot)", received=show(state))
    payload, mac = state.split(".")

    def opened(candidate: Any, bound_to: str, at: float, why: str) -> Any:
        got = call(module.open_state, rule, key, candidate, bound_to, at)
        if got is not None and not (isinstance(got, str) and got.strip()):
            raise Failure(
                rule,
                f"open_state() must return None or a sentence saying why not; for {why} it returned {show(got)}",
            )
        return got

    for late, when in ((0, "just sealed"), (60, "a minute later"), (STATE_TTL_S - 2, "just before it expires")):
        got = opened(state, bound, now + late, when)
        if got is not None:
            raise Failure(
                rule,
                f"open_state() refused a state it sealed itself, {when} (now + {late} s): {got}",
                sent=state,
            )
    refusals = [
        (_flip(state, len(payload) + 1 + len(mac) // 2), bound, now + 1, "a state whose MAC was changed"),
        (_flip(state, len(payload) // 2), bound, now + 1, "a state whose payload was changed"),
        (call(module.seal, rule, other_key, bound, now), bound, now + 1, "a state sealed with another key"),
        (state, other_bound, now + 1, f"the state of {show(arguments)} sent with {show(other)}"),
        (state, bound, now + STATE_TTL_S + 2, f"a state {STATE_TTL_S + 2} s old (it lasts {STATE_TTL_S} s)"),
        (state, bound, now + 30 * 86400, "a state a month old"),
        (payload, bound, now + 1, "the payload without its MAC"),
        ("", bound, now + 1, "an empty string"),
        (f"{state}.{mac}", bound, now + 1, "a state with a second MAC"),
        ("not base64 é.and no mac", bound, now + 1, "text that is no state"),
        (None, bound, now + 1, "null"),
        (7, bound, now + 1, "a number"),
    ]
    # A payload rewritten by the client, its MAC kept: a longer life, then another request.
    forged = {"for": bound, "exp": now + 10 * 86400}
    encoded = base64.urlsafe_b64encode(json.dumps(forged).encode()).rstrip(b"=").decode()
    refusals.append((f"{encoded}.{mac}", bound, now + STATE_TTL_S + 2, "a payload rewritten for a later expiry"))
    forged = {"for": other_bound, "exp": now + STATE_TTL_S}
    encoded = base64.urlsafe_b64encode(json.dumps(forged).encode()).rstrip(b"=").decode()
    refusals.append((f"{encoded}.{mac}", other_bound, now + 1, "a payload rewritten for another request"))
    for candidate, bound_to, at, why in refusals:
        if opened(candidate, bound_to, at, why) is None:
            raise Failure(
                rule,
                f"open_state() accepted {why}: a state must be refused unless its MAC matches (hmac.compare_digest), "
                "it was sealed for this request and it has not expired",
                sent=show(candidate),
            )


def _modern(name: str, arguments: Any, client: dict[str, str], capabilities: Any, **more: Any) -> dict[str, Any]:
    """A 2026-07-28 tools/call: its revision, capabilities and client in ``_meta``, ``more`` beside them."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": dict(client),
    }
    return request("tools/call", params={"name": name, "arguments": arguments, **more, "_meta": meta})


def _retry_rule() -> dict[str, str]:
    """The rule a retry that lacks its answer breaks (the checker's words), and the lesson's fix."""
    rule = CATALOGUE["modern-input-required"].rule_named("retry")
    return {
        "rule": f"{rule.source} ({rule.keyword}): {rule.text}",
        "fix": 'in ask_first, a retry whose inputResponses has no answer under "confirm" (none at all, {}, or only '
        "other keys) returns the question again, as a first call does: never None",
    }


_RETRY_RULE = _retry_rule()


def _asked_again(answer: Any, sent: dict[str, Any]) -> None:
    """A retry with a good requestState but no answer to the question: it is asked again, and nothing is
    written (MRTR > Error Handling: the missing information is requested again, rather than an error)."""
    got = answer(sent, "modern-input-required").get("result")
    asked = got.get("inputRequests") if isinstance(got, dict) else None
    question = asked.get("confirm") if isinstance(asked, dict) else None
    if not (
        isinstance(got, dict)
        and got.get("resultType") == "input_required"
        and isinstance(question, dict)
        and question.get("method") == "elicitation/create"
        and isinstance(got.get("requestState"), str)
    ):
        raise Failure(
            "modern-input-required",
            'a retry with a good requestState but no answer under "confirm" is asked again (input_required, the '
            "question and a requestState), not served as a yes or refused",
            sent=show(sent),
            received=show(got),
            **_RETRY_RULE,
        )


def check_ask_first(work: Work, rng: random.Random, client: dict[str, str]) -> None:
    """The course's server with the learner's ask_first, over stdio in MCP 2026-07-28: the question,
    -32021 for a client that cannot be asked, a state refused on another request and when changed,
    a retry without an answer asked again, a decline that writes nothing, an accepted retry that
    cancels; every refusal audited, the questions not."""
    with shop_copy(work) as (here, there):
        by_status = orders_by_status(here)
        order, other = rng.sample([*by_status["pending"], *by_status["paid"]], 2)
        reason = rng.choice(["the customer asked by phone", "a duplicate order", "paid twice, said the customer"])
        arguments = {"order_id": order, "reason": reason}
        elicits = {"elicitation": rng.choice([{}, {"form": {}}])}
        before = status_of(here, order)
        with Server(work.host("shop_writes", "--allow-writes", "--db", there)) as server:

            def answer(sent: dict[str, Any], check: str) -> dict[str, Any]:
                server.send(sent)
                reply = server.next_line(sent, check)
                if not isinstance(reply, dict) or reply.get("id") != sent["id"]:
                    raise Failure(check, "the reply to this request", sent=show(sent), received=show(reply))
                return reply

            def refused(sent: dict[str, Any], code: int, check: str, why: str) -> dict[str, Any]:
                reply = answer(sent, check)
                error = reply.get("error")
                if not isinstance(error, dict) or error.get("code") != code:
                    raise Failure(check, f"{why}: a JSON-RPC error {code}", sent=show(sent), received=show(reply))
                if status_of(here, order) != before:
                    raise Failure(check, f"{why}: the order must be left as it was", sent=show(sent))
                return error

            first = _modern("cancel_order", arguments, client, elicits)
            got = answer(first, "modern-input-required").get("result")
            asked = got.get("inputRequests") if isinstance(got, dict) else None
            question = asked.get("confirm") if isinstance(asked, dict) else None
            state = got.get("requestState") if isinstance(got, dict) else None
            if (
                not isinstance(got, dict)
                or got.get("resultType") != "input_required"
                or not isinstance(question, dict)
                or question.get("method") != "elicitation/create"
                or not isinstance(state, str)
            ):
                raise Failure(
                    "modern-input-required",
                    "a first 2026-07-28 cancel_order asks before it writes: resultType input_required, the "
                    'question under inputRequests["confirm"] (an elicitation/create request) and a requestState',
                    sent=show(first),
                    received=show(got),
                )
            if status_of(here, order) != before:
                raise Failure("modern-input-required", "the question must change nothing", sent=show(first))
            error = refused(
                _modern("cancel_order", arguments, client, {}),
                -32021,
                "modern-input-required",
                "a client whose _meta declares no elicitation cannot be asked",
            )
            data = error.get("data")
            if not isinstance(data, dict) or not isinstance(data.get("requiredCapabilities"), dict):
                raise Failure(
                    "modern-input-required",
                    "-32021 says what to declare: data.requiredCapabilities",
                    expected=show({"requiredCapabilities": {"elicitation": {}}}),
                    received=show(error),
                )
            yes = {"confirm": {"action": "accept", "content": {"confirm": True}}}
            moved = {**arguments, "order_id": other}
            refused(
                _modern("cancel_order", moved, client, elicits, inputResponses=yes, requestState=state),
                -32602,
                "modern-request-state",
                f"the requestState of order {order}'s question sent with a cancel of order {other}",
            )
            if status_of(here, other) == "cancelled":
                raise Failure("modern-request-state", f"order {other} was cancelled with another order's state")
            payload, _, mac = state.rpartition(".")
            changed = f"{payload}.{_flip(mac, len(mac) // 2)}" if payload else _flip(state, len(state) // 2)
            refused(
                _modern("cancel_order", arguments, client, elicits, inputResponses=yes, requestState=changed),
                -32602,
                "modern-request-state",
                "a requestState with one character changed",
            )
            for missing in ({}, {"inputResponses": {}}, {"inputResponses": {"other": yes["confirm"]}}):
                _asked_again(answer, _modern("cancel_order", arguments, client, elicits, requestState=state, **missing))
                if status_of(here, order) != before:
                    raise Failure(
                        "modern-input-required",
                        'a retry with no answer under "confirm" must not cancel: ask again',
                        **_RETRY_RULE,
                    )
            no = rng.choice(
                [{"action": "decline"}, {"action": "cancel"}, {"action": "accept", "content": {"confirm": False}}]
            )
            sent = _modern(
                "cancel_order", arguments, client, elicits, inputResponses={"confirm": no}, requestState=state
            )
            got = answer(sent, "modern-input-required").get("result")
            if not isinstance(got, dict) or got.get("isError") is not True or status_of(here, order) != before:
                raise Failure(
                    "modern-input-required",
                    "a retry whose answer is not a ticked box cancels nothing: a tool error (isError: true)",
                    sent=show(sent),
                    received=show(got),
                )
            sent = _modern("cancel_order", arguments, client, elicits, inputResponses=yes, requestState=state)
            got = answer(sent, "modern-input-required").get("result")
            if not isinstance(got, dict) or got.get("isError") is not False or status_of(here, order) != "cancelled":
                raise Failure(
                    "modern-input-required",
                    "the retry with the user's yes and the requestState unchanged cancels the order",
                    sent=show(sent),
                    received=show(got),
                )
        outcomes = [entry["outcome"] for entry in entries(here)]
        want = ["rejected"] * 4 + ["ok"]
        if outcomes != want:
            raise Failure(
                "write-audit",
                "a question (the first, and each one asked again) writes and audits nothing; each refusal after it "
                "(-32021, two bad states, the user's no) is audited as rejected, the cancel as ok",
                expected=show(want),
                received=show(outcomes),
            )
