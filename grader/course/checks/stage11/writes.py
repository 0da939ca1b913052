"""Stage 11's ``shop_writes.py`` parts (cells ``test_annotations``, ``test_writable_copy``,
``test_writes``): the write tools declared with their four hints, a writable copy that is never the
course's database, and ``cancel_order``/``add_order_note`` on a copy, each in one transaction.

    >>> sorted(WANT_ANNOTATIONS["cancel_order"].items())[:2]
    [('destructiveHint', True), ('idempotentHint', True)]
"""

from __future__ import annotations

import os
import random
import shutil
from typing import Any

from ...calls import call, outcome
from ...expect import Failure, same_json, show
from ...remote import is_a
from ...work import Work
from .. import public
from .copies import LONG_NOTE, _got, notes, orders_by_status, refusing, shop_copy, status_of

WANT_ANNOTATIONS = {
    "cancel_order": {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True, "openWorldHint": False},
    "add_order_note": {
        "readOnlyHint": False,
        "destructiveHint": False,
        "idempotentHint": False,
        "openWorldHint": False,
    },
}


@public("11", "test_annotations", "write_tools(): both write tools with all four hints, each right")
def annotations_cell(work: Work) -> None:
    check_annotations(work.module("shop_writes").write_tools)


@public("11", "test_writable_copy", "writable_copy(): a copy only; never the course's database, however it is named")
def writable_cell(work: Work) -> None:
    check_writable(work, "shop.db", "course.db")


@public("11", "test_writes", "cancel_order() and add_order_note(): results, the copy after them, one transaction")
def writes_cell(work: Work) -> None:
    check_writes(work, random.Random(11))


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
