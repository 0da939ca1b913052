"""Stage 11's ``record()`` (cell ``test_record``): each attempt one entry, as the course's reader reads
it; ``False`` and a line on stderr, never an exception, when the audit cannot be written.
"""

from __future__ import annotations

import contextlib
import time
from typing import Any

from ...calls import call, outcome
from ...expect import Failure, show
from ...work import Work
from .. import public
from .copies import LONG_NOTE, WHO, _got, check_entry, entries, refusing, shop_copy


@public(
    "11", "test_record", "record(): entries as the course reads them; False, never an exception, when it cannot write"
)
def record_cell(work: Work) -> None:
    check_record(work, WHO, [({"order_id": 7, "reason": "asked by phone"}, "ok", "", 2)], LONG_NOTE)


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
