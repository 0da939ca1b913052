"""Write tools: changes to a copy of the shop, off unless asked for, one transaction each, all audited.

The shop's own tools only read. The write tools exist only when the server is started with
``--allow-writes`` and a database copy (``--db FILE``); the course's embedded database is never
opened for writing. Without ``--allow-writes`` they are not listed at all, and a call to one is
answered like any unknown tool (and audited as rejected, when there is a copy to audit in).

- ``cancel_order(order_id, reason)`` cancels a pending or paid order and records the reason. It is
  *destructive* (the order's status is lost) and *idempotent* (cancelling a cancelled order changes
  nothing). ``add_order_note(order_id, note)`` appends a note: not destructive, not idempotent (two
  calls, two notes). The annotations say so; a host may ask its user before calling either.
- Each write is one transaction (``BEGIN IMMEDIATE`` ... ``COMMIT``): a refusal or a failure in the
  middle rolls everything back, so the copy never holds half a change. The notes table
  (``order_notes``) is made in the copy on first use.
- Every attempt is audited (:mod:`reference.audit`): done (``ok``), refused before it ran
  (``rejected``: bad arguments, an order that does not exist, writes not allowed, the user said no)
  or broken while it ran (``failed``), with the client that asked.
- Asking the user first. In the 2026-07-28 era ``cancel_order`` asks the user to confirm, through
  the client, before it writes (:mod:`reference.confirm`, a multi round-trip request); a decline,
  or a retry whose ``requestState`` is refused, is audited here as ``rejected`` (:meth:`Writes.reject`).
  In the legacy era the tool keeps its behaviour and asks nothing, even of a client that declared
  ``elicitation``: a legacy ``elicitation/create`` is a request from the server, and this server
  answers one line with one reply and sends no requests of its own. The tool's annotations
  (destructive) and its description tell a legacy host to ask its user itself.

    >>> import pathlib, tempfile
    >>> from reference import database
    >>> from reference.audit import Provenance, read
    >>> copy = database.build(pathlib.Path(tempfile.mkdtemp()) / "copy.db")
    >>> writes = Writes(copy, allowed=True)
    >>> who = Provenance("demo", "1.0")
    >>> writes.call({"name": "cancel_order", "arguments": {"order_id": 9, "reason": "asked by phone"}},
    ...             who)["structuredContent"]
    {'order_id': 9, 'status': 'cancelled', 'previous_status': 'paid', 'rows_changed': 2}
    >>> writes.call({"name": "add_order_note", "arguments": {"order_id": 99999, "note": "hi"}}, who)["isError"]
    True
    >>> [(e["tool"], e["outcome"], e["rows_changed"]) for e in read(copy)]
    [('cancel_order', 'ok', 2), ('add_order_note', 'rejected', 0)]
    >>> "the course's embedded database, never written" in why_not_writable(database.default_path())
    True
"""

from __future__ import annotations

import os
import sqlite3
import sys
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from . import database
from .audit import AuditLog, Provenance, now
from .catalog import MAX_ID, STATUSES
from .errors import INVALID_PARAMS, RpcError
from .schema import problems
from .tools import Tool, ToolError, json_type, structured_result, text_result

CANCELLABLE = ("pending", "paid")
NOTES_TABLE = """CREATE TABLE IF NOT EXISTS order_notes (
    id         INTEGER PRIMARY KEY,
    order_id   INTEGER NOT NULL REFERENCES orders (id),
    created_at TEXT NOT NULL,   -- UTC ISO 8601
    kind       TEXT NOT NULL CHECK (kind IN ('note', 'cancellation')),
    text       TEXT NOT NULL
)"""

_ORDER_ID = {"type": "integer", "minimum": 1, "maximum": MAX_ID, "description": "The order's id."}
DESTRUCTIVE = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True, "openWorldHint": False}
ADDITIVE = {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False, "openWorldHint": False}
WRITE_TOOLS: list[dict[str, Any]] = [
    {
        "name": "cancel_order",
        "title": "Cancel an order",
        "description": "Cancel one order that is still pending or paid, and record why. This changes the "
        "shop's data: ask the user first. An order that is already cancelled is left as it is "
        "(rows_changed 0); a shipped, delivered or refunded order cannot be cancelled, and the error says "
        'so. Returns JSON {"order_id": N, "status": "cancelled", "previous_status": ..., "rows_changed": N}. '
        "Every attempt is audited with your client's name.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "order_id": _ORDER_ID,
                "reason": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 500,
                    "description": "Why the order is cancelled, e.g. 'the customer asked by phone'.",
                },
            },
            "required": ["order_id", "reason"],
            "additionalProperties": False,
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "order_id": {"type": "integer"},
                "status": {"type": "string", "enum": ["cancelled"]},
                "previous_status": {"type": "string", "enum": list(STATUSES)},
                "rows_changed": {"type": "integer", "minimum": 0},
            },
            "required": ["order_id", "status", "previous_status", "rows_changed"],
            "additionalProperties": False,
        },
        "annotations": DESTRUCTIVE,
    },
    {
        "name": "add_order_note",
        "title": "Add a note to an order",
        "description": "Add a note to one order, e.g. what the customer said on the phone. Notes are only "
        'ever added, never changed. Returns JSON {"order_id": N, "note_id": N, "rows_changed": 1}. Every '
        "attempt is audited with your client's name (a long note is audited as its length only).",
        "inputSchema": {
            "type": "object",
            "properties": {
                "order_id": _ORDER_ID,
                "note": {"type": "string", "minLength": 1, "maxLength": 4000, "description": "The note's text."},
            },
            "required": ["order_id", "note"],
            "additionalProperties": False,
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "order_id": {"type": "integer"},
                "note_id": {"type": "integer"},
                "rows_changed": {"type": "integer", "minimum": 0},
            },
            "required": ["order_id", "note_id", "rows_changed"],
            "additionalProperties": False,
        },
        "annotations": ADDITIVE,
    },
]
NAMES = tuple(tool["name"] for tool in WRITE_TOOLS)


def _stderr_line(message: str) -> None:
    sys.stderr.write(f"[mcp-lab serve] {message}\n")
    sys.stderr.flush()


def is_embedded(path: Path) -> bool:
    """Whether ``path`` is the course's own database (the default one, or the one in ``data/build``)."""
    for embedded in {database.default_path(), database.DATA_DIR / "build" / "shop.db"}:
        try:
            if path.resolve() == embedded.resolve() or (embedded.exists() and os.path.samefile(path, embedded)):
                return True
        except OSError:
            continue
    return False


def why_not_writable(path: Path | str | None) -> str | None:
    """Why the write tools may not write ``path`` (``None``: it is a writable copy)."""
    if path is None:
        return "--allow-writes needs --db FILE, a copy of the shop to write (make one with: mcp-lab db build FILE)"
    path = Path(path)
    if not path.is_file():
        return f"no database at {path} (build one with: mcp-lab db build {path})"
    if is_embedded(path):
        return (
            f"{path} is the course's embedded database, never written: make a copy with "
            "mcp-lab db build FILE and pass --db FILE"
        )
    if not (os.access(path, os.W_OK) and os.access(path.resolve().parent, os.W_OK)):
        return f"{path} is not writable (the file and its folder must be)"
    return None


def _refused_by_design(args: dict[str, Any]) -> Any:
    raise RuntimeError("a write tool runs through Writes.call, which audits it")


class Writes:
    """The write tools over one database copy, and the audit of every attempt."""

    def __init__(
        self, path: Path | str, allowed: bool, audit: AuditLog | None = None, log: Callable[[str], None] = _stderr_line
    ) -> None:
        self.path = Path(path)
        self.allowed = allowed
        self.audit = audit if audit is not None else AuditLog(self.path, log)
        self.log = log
        self.declared = {tool["name"]: tool for tool in WRITE_TOOLS}
        self.run = {"cancel_order": self.cancel_order, "add_order_note": self.add_order_note}
        self.conn: sqlite3.Connection | None = None

    @property
    def names(self) -> tuple[str, ...]:
        return NAMES

    def tools(self) -> list[Tool]:
        """The write tools as tools/list shows them (their calls go through :meth:`call`)."""
        return [Tool.declared(tool, _refused_by_design) for tool in WRITE_TOOLS]

    # -- calls -----------------------------------------------------------------------------------
    def refuse(self, params: dict[str, Any], who: Provenance) -> None:
        """Audit a call made while writes are off; the caller answers it like an unknown tool."""
        self.reject(params, who, "writes are not allowed: the server was started without --allow-writes")

    def reject(self, params: dict[str, Any], who: Provenance, reason: str) -> None:
        """Audit a call refused before it ran, for ``reason`` (nothing was written)."""
        self.audit.record(params["name"], params.get("arguments"), who, "rejected", reason, 0)

    def call(
        self,
        params: dict[str, Any],
        who: Provenance,
        bad_arguments_are_tool_errors: bool = True,
        structured_output: bool = True,
    ) -> dict[str, Any]:
        """The tools/call result of a write tool, the attempt audited whatever happens."""
        name = params["name"]
        arguments = params.get("arguments")
        if arguments is None:  # absent, or null: the same as no arguments
            arguments = {}

        def audit(outcome: str, reason: str = "", rows: int = 0) -> None:
            self.audit.record(name, arguments, who, outcome, reason, rows)

        if not self.allowed:  # never listed; a caller that routes here anyway is still refused
            self.refuse(params, who)
            raise RpcError(INVALID_PARAMS, f"unknown tool {name!r}")
        if not isinstance(arguments, dict):
            message = f'"arguments" for {name} must be an object, got {json_type(arguments)}'
            audit("rejected", message)
            raise RpcError(INVALID_PARAMS, message)
        found = problems(self.declared[name]["inputSchema"], arguments)
        if found:
            message = f"invalid arguments for {name}: {'; '.join(found)}"
            audit("rejected", message)
            if bad_arguments_are_tool_errors:
                return text_result(message + ". Check the tool's inputSchema and call again.", is_error=True)
            raise RpcError(INVALID_PARAMS, message)
        try:
            value = self.run[name](arguments)
        except ToolError as exc:  # the shop's rules refused it: nothing was changed
            audit("rejected", str(exc))
            return text_result(str(exc), is_error=True)
        except Exception as exc:  # rolled back: nothing was changed either
            traceback.print_exc(file=sys.stderr)
            audit("failed", f"{type(exc).__name__}: {exc}")
            return text_result(f"{name} failed ({type(exc).__name__}); nothing was changed", is_error=True)
        audit("ok", "", value["rows_changed"])
        return structured_result(value) if structured_output else text_result(value)

    # -- the writes ------------------------------------------------------------------------------
    def _connection(self) -> sqlite3.Connection:
        if self.conn is None:
            # mode=rw: the copy must exist (never create an empty shop). Autocommit mode, so that
            # each transaction below is spelled out, BEGIN to COMMIT.
            uri = self.path.resolve().as_uri() + "?mode=rw"
            conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("PRAGMA busy_timeout = 2000")
            self.conn = conn
        return self.conn

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write: all of it is committed, or (on any exception) none of it."""
        conn = self._connection()
        conn.execute("BEGIN IMMEDIATE")  # take the write lock now, not halfway through
        try:
            yield conn
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def _status(self, conn: sqlite3.Connection, order_id: int) -> str:
        row = conn.execute("SELECT status FROM orders WHERE id = ?", (order_id,)).fetchone()
        if row is None:
            (low, high) = conn.execute("SELECT min(id), max(id) FROM orders").fetchone()
            raise ToolError(f"no order with id {order_id}. Order ids run from {low} to {high}.")
        return row[0]

    def cancel_order(self, args: dict[str, Any]) -> dict[str, Any]:
        order_id = int(args["order_id"])
        with self.transaction() as conn:
            before = conn.total_changes
            status = self._status(conn, order_id)
            if status != "cancelled":
                if status not in CANCELLABLE:
                    raise ToolError(
                        f"order {order_id} is {status}: only a pending or paid order can be cancelled. "
                        "Nothing was changed."
                    )
                conn.execute("UPDATE orders SET status = 'cancelled' WHERE id = ?", (order_id,))
                conn.execute(NOTES_TABLE)
                conn.execute(
                    "INSERT INTO order_notes (order_id, created_at, kind, text) VALUES (?, ?, 'cancellation', ?)",
                    (order_id, now(), args["reason"]),
                )
            changed = conn.total_changes - before
        return {"order_id": order_id, "status": "cancelled", "previous_status": status, "rows_changed": changed}

    def add_order_note(self, args: dict[str, Any]) -> dict[str, Any]:
        order_id = int(args["order_id"])
        with self.transaction() as conn:
            before = conn.total_changes
            self._status(conn, order_id)
            conn.execute(NOTES_TABLE)
            cursor = conn.execute(
                "INSERT INTO order_notes (order_id, created_at, kind, text) VALUES (?, ?, 'note', ?)",
                (order_id, now(), args["note"]),
            )
            changed = conn.total_changes - before
        return {"order_id": order_id, "note_id": cursor.lastrowid, "rows_changed": changed}

    def close(self) -> None:
        self.audit.close()
        if self.conn is not None:
            self.conn.close()
            self.conn = None
