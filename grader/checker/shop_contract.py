"""The shop contract: a shop server's answers must match the course database, and stay read-only.

The expected answers come from the database itself (plain SQL here), not from the reference
server, so a learner's server and the reference are held to the same independent truth.

    >>> truth = ShopTruth.load()
    >>> sum(truth.counts.values())
    3000
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reference.catalog import STATUSES
from reference.database import ensure_default, open_readonly

from .tool_calls import result_text
from .verdicts import Findings

# A search string that would delete orders if a server pasted it into its SQL.
INJECTION = "x%'; DELETE FROM orders; --"


@dataclass
class ShopTruth:
    path: Path
    counts: dict[str, int]
    order_one_customer: str
    mug_names: list[str]

    @classmethod
    def load(cls, path: Path | None = None) -> ShopTruth:
        path = path or ensure_default()
        conn = open_readonly(path)
        try:
            counts = dict(conn.execute("SELECT status, count(*) FROM orders GROUP BY status").fetchall())
            (customer,) = conn.execute(
                "SELECT c.name FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.id = 1"
            ).fetchone()
            mugs = [n for (n,) in conn.execute("SELECT name FROM products WHERE name LIKE '%mug%' ORDER BY id")]
        finally:
            conn.close()
        return cls(path, {s: counts.get(s, 0) for s in STATUSES}, customer, mugs)

    def digest(self) -> str:
        return hashlib.sha256(self.path.read_bytes()).hexdigest()


def has_number(text: str, number: int) -> bool:
    # Not inside a longer number: no digit or decimal point before it, no digit or decimal
    # fraction after it (a full stop ending a sentence is fine).
    return re.search(rf"(?<![\d.]){number}(?!\d|\.\d)", text) is not None


Call = Callable[[str, dict[str, Any]], Any]  # (tool name, arguments) -> result or None


def judge_contract(call: Call, truth: ShopTruth, found: Findings) -> None:
    """Call the shop tools with known answers; report shop-contract."""
    wrong: list[str] = []
    for status, count in truth.counts.items():
        result = call("count_orders", {"status": status})
        text = result_text(result)
        if result is None or result.get("isError") or not has_number(text, count):
            wrong.append(f"count_orders {status!r}: expected {count}, got {text[:120]!r}")
    result = call("count_orders", {"status": "lost"})
    if result is None or result.get("isError") is not True:
        wrong.append("count_orders 'lost': an unknown status must be a tool execution error (isError: true)")
    elif not all(s in result_text(result) for s in STATUSES):
        wrong.append("count_orders 'lost': the error text should list the valid statuses")
    result = call("get_order", {"order_id": 1})
    if result is None or result.get("isError") or truth.order_one_customer not in result_text(result):
        wrong.append(f"get_order 1: expected the customer {truth.order_one_customer!r}")
    result = call("get_order", {"order_id": 999999})
    if result is None or result.get("isError") is not True:
        wrong.append("get_order 999999: a missing order must be a tool execution error (isError: true)")
    result = call("search_products", {"query": "mug"})
    if result is None or result.get("isError") or truth.mug_names[0] not in result_text(result):
        wrong.append(f"search_products 'mug': expected {truth.mug_names[0]!r} among the results")
    if wrong:
        found.failed(
            "shop-contract",
            f"{len(wrong)} answer(s) differ from the course database: " + "; ".join(wrong),
            {"differences": wrong, "database": str(truth.path)},
        )
    else:
        found.passed("shop-contract", "every answer matches the course database")


def judge_injection(call: Call, truth: ShopTruth, found: Findings) -> None:
    """A hostile search string must not change the data (shop-read-only, first half)."""
    status, count = STATUSES[0], truth.counts[STATUSES[0]]
    before = result_text(call("count_orders", {"status": status}))
    call("search_products", {"query": INJECTION})
    after = result_text(call("count_orders", {"status": status}))
    if has_number(before, count) and not has_number(after, count):
        found.failed(
            "shop-read-only",
            "a search for a string with SQL in it changed the orders",
            {
                "sent": f"search_products {{'query': {INJECTION!r}}}",
                "rule": "use ? placeholders, open with mode=ro",
            },
        )


def judge_digest(truth: ShopTruth, before: str, found: Findings) -> None:
    """The database file is byte-identical after every probe (shop-read-only, second half)."""
    if truth.digest() != before:
        found.failed(
            "shop-read-only",
            f"the course database {truth.path} changed during the check",
            {"expected": "open it with sqlite3.connect('file:...?mode=ro', uri=True)"},
        )
    elif found.status("shop-read-only") != "fail":
        found.passed("shop-read-only", "the database is unchanged after every call")
