"""The audit log: every write attempt, done or refused, with who asked for it and what it changed.

A write tool changes data a user cares about, on the word of a model. So every attempt is written
down, in a table of the same database copy (``audit_log``), also those refused before they ran
(bad arguments, writes not allowed, an order that does not exist): when it was (UTC), which tool,
which client (``clientInfo`` from ``initialize``: the provenance, as the client states it), over
which transport, the outcome (``ok``, ``rejected`` or ``failed``) and why, the arguments and the
rows changed.

The arguments are *summarised*, never stored whole: ids, numbers and short strings are kept; a
longer text (a note, a reason) is stored as its length only, so the log never becomes a second copy
of what users wrote. An audit that cannot be written never changes what the client is told: the
failure goes to stderr, and the reply stands.

    >>> summary({"order_id": 7, "reason": "asked by phone", "note": "x" * 812})
    {'order_id': 7, 'reason': 'asked by phone', 'note': '<text, 812 chars>'}
    >>> summary(["a", "b"]), summary({"tags": {"a": 1}})
    ('<array, 2 items>', {'tags': '<object, 1 members>'})
    >>> import sqlite3, tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "copy.db"
    >>> sqlite3.connect(path).close()  # an empty database is enough for the log
    >>> log = AuditLog(path)
    >>> log.record("add_order_note", {"order_id": 7, "note": "x" * 812}, Provenance("demo", "1.0"), "ok", "", 1)
    True
    >>> [(e["tool"], e["client"], e["outcome"], e["arguments"], e["rows_changed"]) for e in read(path)]
    [('add_order_note', {'name': 'demo', 'version': '1.0'}, 'ok', {'order_id': 7, 'note': '<text, 812 chars>'}, 1)]
"""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

OUTCOMES = ("ok", "rejected", "failed")
SHORT = 40  # a string this long or shorter is kept; a longer one is stored as its length
MAX_MEMBERS = 20  # members of an arguments object kept (an object with more says how many more)
MAX_REASON = 500

TABLE = """CREATE TABLE IF NOT EXISTS audit_log (
    id             INTEGER PRIMARY KEY,
    at             TEXT NOT NULL,   -- when, UTC ISO 8601
    tool           TEXT NOT NULL,
    client_name    TEXT,            -- clientInfo from initialize: who asked, as the client says
    client_version TEXT,
    transport      TEXT NOT NULL,   -- stdio or http
    outcome        TEXT NOT NULL CHECK (outcome IN ('ok', 'rejected', 'failed')),
    reason         TEXT NOT NULL,   -- why it was rejected or failed ('' when ok)
    arguments      TEXT NOT NULL,   -- JSON: the summary, never the whole text
    rows_changed   INTEGER NOT NULL
)"""
COLUMNS = "id, at, tool, client_name, client_version, transport, outcome, reason, arguments, rows_changed"


@dataclass(frozen=True)
class Provenance:
    """Who asked: the client's own name and version from ``initialize``, and the transport."""

    client_name: str = ""
    client_version: str = ""
    transport: str = "stdio"


def _stderr_line(message: str) -> None:
    sys.stderr.write(f"[mcp-lab serve] {message}\n")
    sys.stderr.flush()


def now() -> str:
    """The time in UTC, ISO 8601 with milliseconds: ``2026-01-31T12:00:00.000Z``."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _value(value: Any) -> Any:
    if value is None or isinstance(value, bool | float):
        return value
    if isinstance(value, int):
        return value if abs(value) < 2**63 else f"<number, {len(str(abs(value)))} digits>"
    if isinstance(value, str):
        return value if len(value) <= SHORT else f"<text, {len(value)} chars>"
    if isinstance(value, list):
        return f"<array, {len(value)} items>"
    return f"<object, {len(value)} members>"


def summary(arguments: Any) -> Any:
    """What the log keeps of a call's arguments: ids and short values; long text as its length only."""
    if not isinstance(arguments, dict):
        return _value(arguments)
    kept: dict[str, Any] = {}
    for name, value in list(arguments.items())[:MAX_MEMBERS]:
        kept[name if len(name) <= SHORT else name[:SHORT] + "..."] = _value(value)
    if len(arguments) > MAX_MEMBERS:
        kept["..."] = f"<{len(arguments) - MAX_MEMBERS} more members>"
    return kept


class AuditLog:
    """The ``audit_log`` table of one database copy, opened on first use."""

    def __init__(self, path: Path, log: Callable[[str], None] = _stderr_line) -> None:
        self.path = Path(path)
        self.log = log
        self.conn: sqlite3.Connection | None = None

    def _connection(self) -> sqlite3.Connection:
        if self.conn is None:
            # mode=rw: never create a file. Autocommit: the transaction below is spelled out.
            uri = self.path.resolve().as_uri() + "?mode=rw"
            conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
            try:
                conn.execute("PRAGMA busy_timeout = 2000")
                conn.execute(TABLE)
            except BaseException:
                conn.close()
                raise
            self.conn = conn
        return self.conn

    def record(self, tool: str, arguments: Any, who: Provenance, outcome: str, reason: str, rows_changed: int) -> bool:
        """Write one attempt down; ``False`` (and a line on stderr) when that failed. Never raises."""
        assert outcome in OUTCOMES, outcome
        row = (
            now(),
            tool,
            who.client_name or None,
            who.client_version or None,
            who.transport,
            outcome,
            reason[:MAX_REASON],
            json.dumps(summary(arguments), ensure_ascii=False),
            rows_changed,
        )
        try:
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute(
                    "INSERT INTO audit_log (at, tool, client_name, client_version, transport, outcome, reason, "
                    "arguments, rows_changed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    row,
                )
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        except (sqlite3.Error, OSError) as exc:
            self.log(f"audit failed ({type(exc).__name__}: {exc}); the reply to the client is unchanged")
            return False
        return True

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def read(path: Path | str) -> Iterator[dict[str, Any]]:
    """Every entry of the log in ``path``, oldest first (none when nothing was ever audited)."""
    from .database import open_readonly

    conn = open_readonly(path, immutable=False)
    try:
        found = conn.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'audit_log'")
        if found.fetchone()[0] == 0:
            return
        for row in conn.execute(f"SELECT {COLUMNS} FROM audit_log ORDER BY id"):  # noqa: S608 (a constant)
            entry_id, at, tool, name, version, transport, outcome, reason, arguments, rows = row
            yield {
                "id": entry_id,
                "at": at,
                "tool": tool,
                "client": {"name": name, "version": version},
                "transport": transport,
                "outcome": outcome,
                "reason": reason,
                "arguments": json.loads(arguments),
                "rows_changed": rows,
            }
    finally:
        conn.close()
