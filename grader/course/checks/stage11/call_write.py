"""Stage 11's ``call_write()`` (cell ``test_call_write``): every attempt audited once, with who
asked; an audit that cannot be written changes nothing the client is told.

    >>> LATEST
    '2025-11-25'
"""

from __future__ import annotations

import json
import random
from typing import Any

from ...calls import call, outcome
from ...expect import Failure, same_json, show
from ...remote import is_a
from ...work import Work
from .. import public
from .copies import LONG_NOTE, WHO, _got, check_entry, entries, orders_by_status, refusing, shop_copy, status_of

LATEST = "2025-11-25"


@public(
    "11", "test_call_write", "call_write(): every attempt audited once, with who asked; a failed audit changes nothing"
)
def call_write_cell(work: Work) -> None:
    check_call_write(work, random.Random(11), WHO, LONG_NOTE)


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
