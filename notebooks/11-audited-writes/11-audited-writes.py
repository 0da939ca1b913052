# ---
# jupyter:
#   jupytext:
#     comment_magics: false
#     notebook_metadata_filter: language_info,-language_info.codemirror_mode,-language_info.file_extension,-language_info.mimetype,-language_info.nbconvert_exporter,-language_info.pygments_lexer,-language_info.version,-jupytext.text_representation.jupytext_version
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
#   language_info:
#     name: python
# ---

# %% [markdown] id="title"
# # Stage 11: audited writes
#
# Until now nothing a model did could change the shop: the database was opened read-only, and
# stage 05 proved it. Now the server gets two tools that do change it: `cancel_order(order_id,
# reason)` and `add_order_note(order_id, note)`. A model calls them on a user's word, and a
# model can be wrong, or be talked into something.
#
# So every write in this stage has five guards around it:
#
# 1. the tool says what it does, in its annotations, so that a host can ask its user first;
# 2. it runs only when the server was started with `--allow-writes`, and only on a *copy* of
#    the shop, never on the course's database;
# 3. it is one transaction: all of it happens, or none of it;
# 4. every attempt is written down, the refused ones too: when, which tool, which client, what
#    came of it, and what it changed, without keeping what users wrote;
# 5. in MCP 2026-07-28, the current revision, the server asks the user itself before it cancels,
#    and trusts nothing the client brings back unless the server sealed it.

# %% id="setup" nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false, "task": false}
from grader.course import lab

lab.setup("11")

# %% [markdown] id="annotations"
# ## 1. What a write tool says about itself
#
# Stage 04's tools all said `readOnlyHint: true`. A write tool says what kind of change it makes.
# The schema of MCP 2026-07-28 (`schema.ts`, `ToolAnnotations`; the same words in 2025-11-25):
#
# > `destructiveHint`: If true, the tool may perform destructive updates to its environment. If
# > false, the tool performs only additive updates. (This property is meaningful only when
# > `readOnlyHint == false`) Default: true
#
# > `idempotentHint`: If true, calling the tool repeatedly with the same arguments will have no
# > additional effect on its environment. (This property is meaningful only when
# > `readOnlyHint == false`) Default: false
#
# `cancel_order` is destructive (the order's status is lost) and idempotent (cancelling a
# cancelled order changes nothing). `add_order_note` only adds: not destructive, and not
# idempotent (two calls, two notes). Neither talks to the world outside the shop
# (`openWorldHint: false`). The defaults (`readOnlyHint` false, `destructiveHint` true,
# `idempotentHint` false, `openWorldHint` true) assume the worst, and a host that reads a missing
# hint may not know them: the course's tools spell out all four.
#
# A host uses them to decide what to ask its user. The spec (MCP 2026-07-28, Tools):
#
# > For trust & safety and security, there **SHOULD** always be a human in the loop with the
# > ability to deny tool invocations.
#
# and they are hints, not guarantees:
#
# > For trust & safety and security, clients **MUST** consider tool annotations to be untrusted
# > unless they come from trusted servers.
#
# So the server itself must still refuse what it should. The rest of this stage is about that.
#
# ```text
# $ mcp-lab serve --allow-writes --db COPY
# -> {"jsonrpc":"2.0","id":1,"method":"tools/list"}
# <- {"jsonrpc":"2.0","id":1,"result":{"tools":[...,{"name":"cancel_order",...,"annotations":{"readOnlyHint":false,"destructiveHint":true,"idempotentHint":true,"openWorldHint":false}},{"name":"add_order_note",...,"annotations":{"readOnlyHint":false,"destructiveHint":false,"idempotentHint":false,"openWorldHint":false}}]}}
# ```

# %% [markdown] id="allowed"
# ## 2. Off unless allowed, and never on the course's database
#
# The write tools exist only when the server is started with `--allow-writes` and a copy of the
# shop (`--db COPY`). Without `--allow-writes` they are not in `tools/list`, and a call to one is
# answered like any unknown tool:
#
# ```text
# $ mcp-lab serve --db COPY
# -> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"cancel_order","arguments":{"order_id":9,"reason":"asked by phone"}}}
# <- {"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: unknown tool 'cancel_order'; tools/list shows count_orders, list_orders, get_order, search_products"}}
# ```
#
# The course's own database is never written, whatever the options say. Which file is the
# course's database? `reference.database.default_path()` says where it is. But one file has many
# names: `data/build/shop.db`, `data/build/../build/shop.db`, a symbolic link to it in your folder.
# Comparing the text of two paths misses all of those; `os.path.samefile(a, b)` asks the file
# system whether they are the same file.

# %% [markdown] id="transaction"
# ## 3. One transaction
#
# Cancelling an order is two statements: the order's status becomes `cancelled`, and a note
# records why. If the second fails (a full disk, a constraint, a bug), the first must not stay:
# a cancelled order with no reason is a lie in the data.
#
# SQLite has transactions for that. The write connection is opened in *autocommit* mode
# (`isolation_level=None`): then every statement is committed the moment it runs, unless you
# start a transaction yourself:
#
# ```sql
# BEGIN IMMEDIATE;   -- take the write lock now, not halfway through
# UPDATE orders SET status = 'cancelled' WHERE id = 9;
# INSERT INTO order_notes (order_id, created_at, kind, text) VALUES (9, ..., 'cancellation', ...);
# COMMIT;            -- or, on any error: ROLLBACK, and nothing happened
# ```
#
# Beware of `with conn:` in autocommit mode. It commits or rolls back a transaction that is
# open, and begins none: each statement inside it has already committed on its own.
#
# A write that is refused before it changes anything (an order that does not exist, an order
# already shipped) is a *tool execution error* (stage 05): `ToolError` with a text the model can
# act on, and `isError: true` on the wire.
#
# ```text
# $ mcp-lab serve --allow-writes --db COPY
# -> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"lesson","version":"1.0"}}}
# <- {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25",...}}
# -> {"jsonrpc":"2.0","method":"notifications/initialized"}
# -> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"cancel_order","arguments":{"order_id":9,"reason":"the customer asked by phone"}}}
# <- {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{\"order_id\": 9, \"status\": \"cancelled\", \"previous_status\": \"paid\", \"rows_changed\": 2}"}],"structuredContent":{"order_id":9,"status":"cancelled","previous_status":"paid","rows_changed":2},"isError":false}}
# -> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"cancel_order","arguments":{"order_id":9,"reason":"asked again"}}}
# <- {"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"{\"order_id\": 9, \"status\": \"cancelled\", \"previous_status\": \"cancelled\", \"rows_changed\": 0}"}],"structuredContent":{"order_id":9,"status":"cancelled","previous_status":"cancelled","rows_changed":0},"isError":false}}
# -> {"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"cancel_order","arguments":{"order_id":7,"reason":"too late?"}}}
# <- {"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"order 7 is delivered: only a pending or paid order can be cancelled. Nothing was changed."}],"isError":true}}
# -> {"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"add_order_note","arguments":{"order_id":99999,"note":"The parcel was left at the neighbour's door, as the customer asked on the phone."}}}
# <- {"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"no order with id 99999. Order ids run from 1 to 3000."}],"isError":true}}
# ```
#
# `rows_changed` counts what the write did: 2 for a cancellation (the order and its note), 0 for
# an order that was already cancelled (idempotent), 1 for a note.

# %% [markdown] id="audit"
# ## 4. Every attempt, written down
#
# A write changes data a user cares about, on the word of a model. Afterwards someone will ask:
# who cancelled order 9, and when? So every *attempt* is written down in an `audit_log` table of
# the same copy: the ones that worked, and the ones refused before they ran (writes not allowed,
# bad arguments, an order that does not exist), because a refused attempt says most about a
# model that misbehaves. The spec asks the same of clients (MCP 2026-07-28, Tools > Security
# Considerations):
#
# > Clients **SHOULD**: [...]
# > - Log tool usage for audit purposes
#
# Of servers the spec asks no audit log: writing one is the course's choice.
#
# Each entry says **who asked**. A server knows of its client what the client says about itself,
# its `clientInfo` (a name and a version), and where the client says it depends on the era:
#
# - **MCP 2026-07-28**: on each request, in its `_meta`, under the key
#   `io.modelcontextprotocol/clientInfo`. It is optional there (Base Protocol > General fields >
#   `_meta`, Per-request protocol fields: "Required: No"), and
#
#   > Clients **SHOULD** include `io.modelcontextprotocol/clientInfo` on every request unless
#   > specifically configured not to do so.
#
#   A request without it names no client, and its entry has no name.
# - **Before 2026-07-28** (2025-11-25, Lifecycle > Initialization): once, in `initialize`, for the
#   whole session:
#
# ```json
# {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "ExampleClient", "version": "1.0.0"}}
# ```
#
# The course's server reads it where the request's era puts it (the request's own `_meta`, or the
# session's `initialize`) and hands it to your code as `who`, with the transport it came by. That
# is the entry's *provenance*. It is a claim, not a proof (any client can call itself anything).
# The spec says so (MCP 2026-07-28, Base Protocol > General fields > `_meta`):
#
# > `io.modelcontextprotocol/clientInfo` and `io.modelcontextprotocol/serverInfo`
# > are self-reported by the sender and are not verified by the protocol. They are
# > intended for display, logging, and debugging. Implementations **SHOULD NOT**
# > use them to change the behavior of the client or server, and **SHOULD NOT**
# > rely on them for security decisions.
#
# Logging is what the audit does with it: it keeps the claim as a claim, and decides nothing by it.
#
# Each entry keeps the arguments, but **not all of them**. An order id says which order; a note
# says what a customer told the shop, and an audit log is read by more people, and kept longer,
# than the notes. So a text longer than 40 characters is kept as its length only:
# `"<text, 80 chars>"`. Lists and objects are kept as their size. The copy holds the note; the log
# holds the fact that there was one.
#
# And an audit that cannot be written (a full disk, a locked file) **never changes the reply**:
# the write happened, or was refused, either way, and the client must hear the truth about it
# (the course's rule). The failure goes to stderr, one line for whoever runs the server: on stdio,
# stdout is the protocol's channel, and the spec (MCP 2026-07-28, Transports > stdio) says the
# server **MUST NOT** write anything to its stdout that is not a valid MCP message. A `print()`
# there breaks the client's stream, in the middle of a write.
#
# Here is what the course's audit writes down for a session like the one in section 3 (`mcp-lab
# audit --db COPY` prints the same lines). The cell below runs the session on a fresh copy and
# prints the real entries:

# %% id="real-audit"
import json
import subprocess
import tempfile
from pathlib import Path

from reference import database
from reference.audit import read

copy = database.build(Path(tempfile.mkdtemp()) / "shop.db")
session = [
    lab.initialize(id=1),
    lab.notification("notifications/initialized"),
    lab.request("tools/call", id=2, params={"name": "cancel_order",
                                            "arguments": {"order_id": 9, "reason": "the customer asked by phone"}}),
    lab.request("tools/call", id=3, params={"name": "cancel_order", "arguments": {"order_id": 7, "reason": "too late?"}}),
    lab.request("tools/call", id=4, params={"name": "add_order_note", "arguments": {
        "order_id": 99999, "note": "The parcel was left at the neighbour's door, as the customer asked on the phone."}}),
]
subprocess.run([*lab.reference(), "--allow-writes", "--db", str(copy)], capture_output=True, timeout=30,
               input=b"".join(lab.frame_bytes(frame) for frame in session))
for entry in read(copy):
    print(json.dumps(entry, ensure_ascii=False))

# %% [markdown] id="real-audit-expected"
# Three entries: one `ok` with `rows_changed: 2`, two `rejected` with the reason the client was
# told; each with `"client": {"name": "course", "version": "1.0"}` (the name `lab.initialize`
# sends), and the long note as `"<text, 80 chars>"`.

# %% [markdown] id="task-audit"
# ### Your turn: `shop_audit.py` (3 points)
#
# The table and `now()` are given. Write:
#
# - `summary(arguments)`: what the log keeps of a call's arguments. For an object, each member
#   by the rule of `kept(value)`; anything else (arguments that are not an object) as
#   `kept(arguments)`. `kept(value)`: a string of at most `SHORT` (40) characters as it is, a
#   longer one as `f"<text, {len(value)} chars>"`; a list as `f"<array, {len(value)} items>"`; an
#   object as `f"<object, {len(value)} members>"`; a number, a boolean or `None` as it is.
# - `record(path, tool, arguments, who, outcome, reason, rows_changed)`: write one entry into the
#   `audit_log` of the database at `path`, with the time (`now()`), the client's name, version and
#   transport from `who` (a dict: `{"name": ..., "version": ..., "transport": "stdio"}`), and the
#   summary of the arguments as JSON (`json.dumps(summary(arguments), ensure_ascii=False)`). Open
#   a connection of its own with `mode=rw` (never create a file) and `isolation_level=None`, make
#   the table if it is missing (`TABLE`), insert (`INSERT`), close. Return `True`; on any
#   `sqlite3.Error`, write one line to stderr and return `False`. It never raises.

# %% id="shop_audit" nbgrader={"grade": false, "grade_id": "shop_audit", "locked": false, "schema_version": 3, "solution": true, "task": false}
%%module shop_audit
import json
import sqlite3
import sys
from datetime import datetime, timezone
from pathlib import Path

SHORT = 40  # a text this long or shorter is kept; a longer one only as its length
TABLE = """CREATE TABLE IF NOT EXISTS audit_log (
    id             INTEGER PRIMARY KEY,
    at             TEXT NOT NULL,   -- when, UTC ISO 8601
    tool           TEXT NOT NULL,
    client_name    TEXT,            -- clientInfo (_meta, or initialize): who asked, as the client says
    client_version TEXT,
    transport      TEXT NOT NULL,   -- stdio or http
    outcome        TEXT NOT NULL CHECK (outcome IN ('ok', 'rejected', 'failed')),
    reason         TEXT NOT NULL,   -- why it was rejected or failed ('' when ok)
    arguments      TEXT NOT NULL,   -- JSON: the summary, never the whole text
    rows_changed   INTEGER NOT NULL
)"""
INSERT = (
    "INSERT INTO audit_log (at, tool, client_name, client_version, transport, outcome, reason, arguments, "
    "rows_changed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def log(text):
    """One line on stderr, for whoever runs the server: stdout carries protocol messages only."""
    sys.stderr.write(f"[shop_audit] {text}\n")
    sys.stderr.flush()


def now():
    """The time in UTC, ISO 8601 with milliseconds: 2026-01-31T12:00:00.000Z."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def kept(value):
    """What the log keeps of one value: short text, numbers, booleans and null; the size of the rest."""
    ### BEGIN SOLUTION
    if isinstance(value, str):
        return value if len(value) <= SHORT else f"<text, {len(value)} chars>"
    if isinstance(value, list):
        return f"<array, {len(value)} items>"
    if isinstance(value, dict):
        return f"<object, {len(value)} members>"
    return value
    ### END SOLUTION


def summary(arguments):
    """What the log keeps of a call's arguments."""
    ### BEGIN SOLUTION
    if not isinstance(arguments, dict):
        return kept(arguments)
    return {name: kept(value) for name, value in arguments.items()}
    ### END SOLUTION


def record(path, tool, arguments, who, outcome, reason, rows_changed):
    """Write one attempt into the audit_log of the database at path: True when it is written,
    False (and one line on stderr) when not. It never raises."""
    ### BEGIN SOLUTION
    row = (
        now(),
        tool,
        who.get("name") or None,
        who.get("version") or None,
        who.get("transport") or "stdio",
        outcome,
        reason,
        json.dumps(summary(arguments), ensure_ascii=False),
        rows_changed,
    )
    try:
        # mode=rw: the copy must exist (an audit never creates a database); one statement at a time.
        conn = sqlite3.connect(Path(path).resolve().as_uri() + "?mode=rw", uri=True)
        conn.isolation_level = None
        try:
            conn.execute(TABLE)
            conn.execute(INSERT, row)
        finally:
            conn.close()
    except sqlite3.Error as exc:
        log(f"audit failed ({type(exc).__name__}: {exc}); the reply to the client is unchanged")
        return False
    return True
    ### END SOLUTION


# %% id="try-audit"
from reference.audit import read

mine = database.build(Path(tempfile.mkdtemp()) / "shop.db")
print(summary({"order_id": 7, "note": "x" * 812, "tags": ["a", "b"]}))
print(record(mine, "add_order_note", {"order_id": 7, "note": "x" * 812},
             {"name": "notebook", "version": "1.0", "transport": "stdio"}, "ok", "", 1))
print(record(Path(mine).with_name("missing.db"), "add_order_note", {}, {"name": "notebook"}, "ok", "", 1))
print(list(read(mine)))

# %% [markdown] id="try-audit-expected"
# The cell prints `{'order_id': 7, 'note': '<text, 812 chars>', 'tags': '<array, 2 items>'}`,
# then `True`, then `False` (after one line on stderr: there is no database at that path, and
# `mode=rw` makes none), then the one entry, read back by the course's `reference.audit.read`.

# %% id="test_summary" nbgrader={"grade": true, "grade_id": "test_summary", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 1}
# Summary() on ten argument sets: short values kept, long text as its length, lists and objects as
# their size.
# Hidden when graded: the same checks on other values.
lab.check("test_summary")

# %% id="test_record" nbgrader={"grade": true, "grade_id": "test_record", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# Record(): entries read back as the course reads them, with the time, who asked and the summary;
# False (a line on stderr, no exception) where the audit cannot be written.
# Hidden when graded: the same checks on other values.
lab.check("test_record")

# %% [markdown] id="task-writes"
# ### Your turn: `shop_writes.py` (7 points)
#
# The declarations (stage 04's work, given, with your annotations in them), `open_copy(path)` (the
# write connection, autocommit), `order_status(conn, order_id)` (the status, or `ToolError`) and
# `text_result` are given. Write, one section at a time:
#
# - **1.** `annotations(name)`: the four hints of `cancel_order` and of `add_order_note`.
# - **2.** `writable_copy(path)`: `None` when the write tools may write the file at `path`; else
#   a sentence saying why not: no path given (`None`), no file there, or the course's database
#   (`default_path()`, compared as files).
# - **3.** `transaction(conn)`: a context manager: `BEGIN IMMEDIATE`, then the block, then
#   `COMMIT`; on any exception `ROLLBACK` and raise it again. Then `cancel_order(conn, args)` and
#   `add_order_note(conn, args)`, each in one transaction, each returning what the frames above
#   show (count `conn.total_changes` before and after); `ToolError` for an order that cannot be
#   cancelled, with nothing changed.
# - **4.** `call_write(path, params, who, allowed, version)`: the `tools/call` handler of a write
#   tool on the copy at `path`. Audit every attempt with your `shop_audit.record`, exactly once:
#   - `allowed` false: `rejected` ("writes are not allowed ..."), then raise
#     `RpcError(INVALID_PARAMS, f"unknown tool {name!r}")`: the tool does not exist here;
#   - `arguments` that are not an object: `rejected`, then -32602; arguments that break the
#     `inputSchema` (`problems(schema, arguments)`, as in stage 05): `rejected`, then `isError`
#     from 2025-11-25 on and -32602 before it;
#   - otherwise open the copy and run the tool: `ToolError` is `rejected` and `isError`; any other
#     exception is `failed` and `isError` (the traceback to stderr); success is `ok` with its
#     `rows_changed`, and the result carries `structuredContent` from 2025-06-18 on.

# %% id="shop_writes" nbgrader={"grade": false, "grade_id": "shop_writes", "locked": false, "schema_version": 3, "solution": true, "task": false}
%%module shop_writes
import json
import os
import sqlite3
import sys
import traceback
from contextlib import contextmanager
from pathlib import Path

from reference.database import default_path
from reference.errors import INVALID_PARAMS, RpcError
from reference.schema import problems

import shop_audit

CANCELLABLE = ("pending", "paid")
NOTES_TABLE = """CREATE TABLE IF NOT EXISTS order_notes (
    id         INTEGER PRIMARY KEY,
    order_id   INTEGER NOT NULL REFERENCES orders (id),
    created_at TEXT NOT NULL,   -- UTC ISO 8601
    kind       TEXT NOT NULL CHECK (kind IN ('note', 'cancellation')),
    text       TEXT NOT NULL
)"""


class ToolError(Exception):
    """The tool ran and refused: the model reads this text (isError: true)."""


ORDER_ID = {"type": "integer", "minimum": 1, "maximum": 2**31 - 1, "description": "The order's id."}


def write_tools():
    """The two write tools as tools/list shows them."""
    return [
        {
            "name": "cancel_order",
            "title": "Cancel an order",
            "description": "Cancel one order that is still pending or paid, and record why. This changes the "
            "shop's data: ask the user first. An order already cancelled is left as it is (rows_changed 0). "
            'Returns {"order_id", "status", "previous_status", "rows_changed"}. Every attempt is audited.',
            "inputSchema": {
                "type": "object",
                "properties": {
                    "order_id": ORDER_ID,
                    "reason": {"type": "string", "minLength": 1, "maxLength": 500,
                               "description": "Why the order is cancelled, e.g. 'the customer asked by phone'."},
                },
                "required": ["order_id", "reason"],
                "additionalProperties": False,
            },
            "outputSchema": {
                "type": "object",
                "properties": {
                    "order_id": {"type": "integer"},
                    "status": {"type": "string", "enum": ["cancelled"]},
                    "previous_status": {"type": "string"},
                    "rows_changed": {"type": "integer", "minimum": 0},
                },
                "required": ["order_id", "status", "previous_status", "rows_changed"],
            },
            "annotations": annotations("cancel_order"),
        },
        {
            "name": "add_order_note",
            "title": "Add a note to an order",
            "description": "Add a note to one order, e.g. what the customer said on the phone. Notes are only "
            'ever added. Returns {"order_id", "note_id", "rows_changed"}. Every attempt is audited (a long '
            "note as its length only).",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "order_id": ORDER_ID,
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
            },
            "annotations": annotations("add_order_note"),
        },
    ]


def open_copy(path):
    """A connection that may write the copy at path: mode=rw never creates a file; isolation_level=None
    (autocommit) leaves every transaction to you."""
    conn = sqlite3.connect(Path(path).resolve().as_uri() + "?mode=rw", uri=True, isolation_level=None)
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


def order_status(conn, order_id):
    """The order's status; ToolError (saying which ids exist) when there is no such order."""
    row = conn.execute("SELECT status FROM orders WHERE id = ?", (order_id,)).fetchone()
    if row is None:
        low, high = conn.execute("SELECT min(id), max(id) FROM orders").fetchone()
        raise ToolError(f"no order with id {order_id}. Order ids run from {low} to {high}.")
    return row[0]


def text_result(text, is_error):
    return {"content": [{"type": "text", "text": text}], "isError": is_error}


# -- 1. What each tool says about itself ----------------------------------------------------------
def annotations(name):
    """The four hints of the write tool `name`."""
    ### BEGIN SOLUTION
    if name == "cancel_order":
        return {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True, "openWorldHint": False}
    return {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False, "openWorldHint": False}
    ### END SOLUTION


# -- 2. Only a copy -----------------------------------------------------------------------------------
def writable_copy(path):
    """None when the write tools may write the file at path; else why not, in a sentence."""
    ### BEGIN SOLUTION
    if path is None:
        return "writes need a copy of the shop, given with --db FILE"
    if not os.path.isfile(path):
        return f"no database at {path}"
    course = default_path()
    if os.path.exists(course) and os.path.samefile(path, course):
        return f"{path} is the course's database, which is never written: make a copy and pass --db COPY"
    return None
    ### END SOLUTION


# -- 3. One transaction each -------------------------------------------------------------------------
@contextmanager
def transaction(conn):
    """One write: all of it is committed, or (on any exception) none of it."""
    ### BEGIN SOLUTION
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    ### END SOLUTION


def cancel_order(conn, args):
    """Cancel a pending or paid order and record why; ToolError (and nothing changed) when it cannot be."""
    ### BEGIN SOLUTION
    order_id = args["order_id"]
    with transaction(conn):
        before = conn.total_changes
        status = order_status(conn, order_id)
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
                (order_id, shop_audit.now(), args["reason"]),
            )
        changed = conn.total_changes - before
    return {"order_id": order_id, "status": "cancelled", "previous_status": status, "rows_changed": changed}
    ### END SOLUTION


def add_order_note(conn, args):
    """Add a note to an order; ToolError (and nothing changed) when there is no such order."""
    ### BEGIN SOLUTION
    order_id = args["order_id"]
    with transaction(conn):
        before = conn.total_changes
        order_status(conn, order_id)  # ToolError when there is no such order: nothing is added
        conn.execute(NOTES_TABLE)
        cursor = conn.execute(
            "INSERT INTO order_notes (order_id, created_at, kind, text) VALUES (?, ?, 'note', ?)",
            (order_id, shop_audit.now(), args["note"]),
        )
        changed = conn.total_changes - before
    return {"order_id": order_id, "note_id": cursor.lastrowid, "rows_changed": changed}
    ### END SOLUTION


WRITES = {"cancel_order": cancel_order, "add_order_note": add_order_note}


# -- 4. Every attempt audited ------------------------------------------------------------------------
def call_write(path, params, who, allowed, version):
    """The tools/call handler of a write tool, on the copy at path: every attempt audited once."""
    ### BEGIN SOLUTION
    name = params.get("name")
    arguments = params.get("arguments")
    if arguments is None:  # absent or null: no arguments
        arguments = {}

    def audit(outcome, reason="", rows=0):
        shop_audit.record(path, name, arguments, who, outcome, reason, rows)

    if not allowed:
        audit("rejected", "writes are not allowed: the server was started without --allow-writes")
        raise RpcError(INVALID_PARAMS, f"unknown tool {name!r}")
    if not isinstance(arguments, dict):
        message = f'"arguments" for {name} must be an object'
        audit("rejected", message)
        raise RpcError(INVALID_PARAMS, message)
    schema = next(tool["inputSchema"] for tool in write_tools() if tool["name"] == name)
    found = problems(schema, arguments)
    if found:
        message = f"invalid arguments for {name}: {'; '.join(found)}"
        audit("rejected", message)
        if version >= "2025-11-25":
            return text_result(message + ". Check the tool's inputSchema and call again.", True)
        raise RpcError(INVALID_PARAMS, message)
    conn = open_copy(path)
    try:
        value = WRITES[name](conn, arguments)
    except ToolError as exc:
        audit("rejected", str(exc))
        return text_result(str(exc), True)
    except Exception as exc:
        traceback.print_exc(file=sys.stderr)
        audit("failed", f"{type(exc).__name__}: {exc}")
        return text_result(f"{name} failed ({type(exc).__name__}); nothing was changed", True)
    finally:
        conn.close()
    audit("ok", "", value["rows_changed"])
    result = text_result(json.dumps(value, ensure_ascii=False), False)
    if version >= "2025-06-18":
        result["structuredContent"] = value
    return result
    ### END SOLUTION


# %% id="try-writes"
mine = database.build(Path(tempfile.mkdtemp()) / "shop.db")
notebook = {"name": "notebook", "version": "1.0", "transport": "stdio"}
print(writable_copy(str(mine)), "|", writable_copy(str(lab.shop_db())))
print(call_write(mine, {"name": "cancel_order", "arguments": {"order_id": 25, "reason": "asked by phone"}},
                 notebook, True, "2025-11-25"))
print(call_write(mine, {"name": "add_order_note", "arguments": {"order_id": 1, "note": "x" * 90}},
                 notebook, True, "2025-11-25")["isError"])
for entry in read(mine):
    print(entry["tool"], entry["outcome"], entry["client"], entry["arguments"], entry["rows_changed"])

# %% [markdown] id="try-writes-expected"
# The cell prints `None | ...the course's database...`, then order 25 cancelled (`rows_changed:
# 2`), then `False` (the note is added), then the two entries: both `ok`, the note as `<text, 90
# chars>`.

# %% id="test_annotations" nbgrader={"grade": true, "grade_id": "test_annotations", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 1}
# Write_tools(): cancel_order and add_order_note with all four hints, each right.
lab.check("test_annotations")

# %% id="test_writable_copy" nbgrader={"grade": true, "grade_id": "test_writable_copy", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 1}
# Writable_copy(): a copy is writable; no path, a missing file and the course's database (by
# its own path, another spelling of it, a link to it) are not.
# Hidden when graded: the same checks on other values.
lab.check("test_writable_copy")

# %% id="test_writes" nbgrader={"grade": true, "grade_id": "test_writes", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# Cancel_order() and add_order_note() on a copy: the results, what the copy holds after them,
# refusals that change nothing, and one transaction (a note that cannot be written leaves the
# order as it was).
# Hidden when graded: the same checks on other orders.
lab.check("test_writes")

# %% id="test_call_write" nbgrader={"grade": true, "grade_id": "test_call_write", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 3}
# Call_write(): every attempt audited once (ok, rejected before it runs, rejected by the shop,
# failed, writes off) with who asked; the replies by revision; a failed audit changes no reply.
# Hidden when graded: the same checks on other orders, clients and notes.
lab.check("test_call_write")

# %% [markdown] id="confirm"
# ## 5. Asking the user first (MCP 2026-07-28)
#
# The annotations ask a host to check with its user. In MCP 2026-07-28 the server can ask the user
# itself, before a destructive write, and the course's server does: a `cancel_order` call does not
# cancel at once, it answers with a question. The spec (MCP 2026-07-28, Multi Round-Trip Requests)
# has a server answer a request with an `InputRequiredResult`: `resultType: "input_required"`, the
# questions in `inputRequests` (here one `elicitation/create`, a form with one box to tick) and an
# opaque `requestState`:
#
# ```text
# $ mcp-lab serve --allow-writes --db COPY
# -> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"cancel_order","arguments":{"order_id":9,"reason":"the customer asked by phone"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},"io.modelcontextprotocol/clientInfo":{"name":"lesson","version":"1.0"}}}}
# <- {"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"confirm":{"method":"elicitation/create","params":{"mode":"form","message":"Cancel order 9 (paid, 4 items, 1730.88 in total, for Priya Rossi)? Reason given: the customer asked by phone. The order cannot be un-cancelled.","requestedSchema":{"type":"object","properties":{"confirm":{"type":"boolean",...}},"required":["confirm"]}}}},"requestState":"eyJhc2siOiJjb25maXJtIiwiZXhwIjox...
# ```
#
# The client shows the form, then sends the *same* request again under a new id, with the user's
# answer in `inputResponses` (under the same key) and the `requestState` back as it came:
#
# ```text
# -> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"cancel_order","arguments":{"order_id":9,"reason":"the customer asked by phone"},"inputResponses":{"confirm":{"action":"accept","content":{"confirm":true}}},"requestState":"eyJhc2siOiJjb25maXJtIiwiZXhwIjox...","_meta":{...}}}
# <- {"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","content":[...],"structuredContent":{"order_id":9,"status":"cancelled","previous_status":"paid","rows_changed":2},"isError":false,...}}
# ```
#
# A decline (`"action": "decline"`), a dismissal (`"cancel"`) or an unticked box leaves the order as
# it is, with a tool error that says so (the course's choice; the spec, Elicitation, asks servers
# to handle a decline or a cancel, and leaves what a tool then answers to the tool).
#
# And a retry that brings the state back but no answer under `confirm` (a client that lost it, or
# never showed the form) is asked again. The spec (same page, Error Handling):
#
# > If the client fails to send all the information requested in a previous `InputRequests`, and
# > the missing information is necessary for the server to process the request,
# > the server **SHOULD** respond with a new `InputRequiredResult` requesting the missing
# > information again, rather than returning an error.
#
# A server that took a missing answer for a yes would cancel an order nobody confirmed; the course
# holds you to this SHOULD.
#
# The server may ask only what the client can show. The spec (same page):
#
# > Servers **MUST NOT** send an `inputRequests` that the client has not declared support for in its
# > capabilities.
#
# A request whose `_meta` declares no `elicitation` cannot be asked. The spec (MCP 2026-07-28, Base
# Protocol > General fields > `_meta`):
#
# > If processing a request requires a capability the client did not include in
# > `io.modelcontextprotocol/clientCapabilities`, the server **MUST** return a
# > `MissingRequiredClientCapabilityError` (`-32021`) whose `data.requiredCapabilities` lists the
# > missing capabilities.
#
# The course's server requires the confirmation, so such a request gets -32021 and
# `data.requiredCapabilities` says what to declare:
#
# ```text
# $ mcp-lab serve --allow-writes --db COPY
# -> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"cancel_order","arguments":{"order_id":9,"reason":"the customer asked by phone"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"lesson","version":"1.0"}}}}
# <- {"jsonrpc":"2.0","id":3,"error":{"code":-32021,"message":"Missing required client capability: cancel_order asks the user to confirm the cancel of order 9, ...","data":{"requiredCapabilities":{"elicitation":{}}}}}
# ```
#
# **Before 2026-07-28.** A server asked through a request of its own (`elicitation/create` sent to
# the client in the middle of the session, after `initialize` had declared the capability). The
# course's server asks nothing of a legacy client: in a session that began with `initialize`,
# `cancel_order` cancels at once, as in section 3.

# %% [markdown] id="state"
# ## 6. A state the client carries, sealed
#
# The server keeps nothing between the question and the retry: what it needs comes back in
# `requestState`. But the client holds it in between, and could change it. The spec (MCP
# 2026-07-28, Multi Round-Trip Requests):
#
# > servers **MUST** treat `requestState` as an attacker-controlled input. If `requestState`
# > influences authorization, resource access, or business logic, servers **MUST** protect its
# > integrity (e.g. HMAC or AEAD) and **MUST** reject state that fails verification.
#
# Here the state decides whether an order is cancelled, so it is sealed. And a sealed state could
# still be replayed: kept for a week, or sent with another order's cancel. So the spec goes on:
# to prevent replay, servers **SHOULD** include inside the integrity-protected payload, and verify
# on receipt, "the authenticated principal, rejecting state presented by a different principal",
# "a short expiry (TTL), rejecting state presented after it lapses" and "an identifier for the
# originating request, e.g. the method name and a digest of its salient parameters, rejecting
# state presented on a request that does not match". A server on stdio has no authenticated
# principal (the client's name is a claim, not an identity), so the course's state holds the last
# two: the expiry and the request. The spec adds that these "do not by themselves guarantee
# single-use"; a cancel is idempotent, so a second use of one state changes nothing here.
#
# An HMAC does it with the standard library. The server holds a secret key (32 random bytes,
# `secrets.token_bytes(32)`); the *payload* is the request's binding and the expiry, as JSON, then
# base64; the *MAC* is `hmac.new(key, payload, hashlib.sha256)`, also in base64; the state is
# `PAYLOAD.MAC`. Only the key's holder can make a MAC that matches a payload, so a client that
# changes one character, or makes up a state, or brings one from another server, is found out. Two
# details matter:
#
# - compare MACs with `hmac.compare_digest(a, b)`, never `==`: `==` stops at the first byte that
#   differs, and how long it took tells an attacker how much of a forged MAC was right;
# - check the MAC *before* you trust anything in the payload: until then it is the client's text.
#
# The spec says to reject a state that fails, not with which code. The course's server treats it
# as a bad parameter of the retried request: -32602 (Invalid params), with a message that says
# what to do (here: send the request again without `inputResponses` and `requestState`, and be
# asked afresh):
#
# ```text
# $ mcp-lab serve --allow-writes --db COPY
# -> {"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"cancel_order","arguments":{"order_id":9,"reason":"the customer asked by phone"},"inputResponses":{"confirm":{"action":"accept","content":{"confirm":true}}},"requestState":"eyJhc2siOiJjb25maXJtIn0.forged","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},"io.modelcontextprotocol/clientInfo":{"name":"lesson","version":"1.0"}}}}
# <- {"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"Invalid params: requestState failed verification: ..."}}
# ```

# %% [markdown] id="task-state"
# ### Your turn: `shop_state.py` (4 points)
#
# `TTL_S` (300 seconds), `b64(data)` and `unb64(text)` (URL-safe base64 without `=` padding) are
# given. The clock is a parameter (`now`, seconds since the epoch, as `time.time()` gives them), so
# that the checks can move it. Write:
#
# - `binding(name, arguments)`: what a state is bound to, as *canonical* JSON: the same name and
#   arguments always give the same text, whatever the order of their keys
#   (`json.dumps([name, arguments], sort_keys=True, separators=(",", ":"), ensure_ascii=False)`);
#   another tool or other arguments give another text.
# - `seal(key, bound, now)`: the state `PAYLOAD.MAC`. The payload is
#   `b64(json.dumps({"for": bound, "exp": now + TTL_S}).encode())`; the MAC is
#   `b64(hmac.new(key, payload.encode("ascii"), hashlib.sha256).digest())`, over the payload's text.
# - `open_state(key, state, bound, now)`: `None` when `state` is a state sealed with `key`, for the
#   request `bound` names, and `now` is not past its expiry; otherwise a sentence saying why not:
#   not a string or not `PAYLOAD.MAC`, a MAC that does not match (compared with
#   `hmac.compare_digest`: a changed payload, a changed MAC, another server's key), another request
#   (`"for"` is not `bound`), expired. Check the MAC first. It never raises.
# - `ask_first(key, params, capabilities, now)`: what the course's server calls before a 2026-07-28
#   `cancel_order` writes (`params` the request's, `capabilities` its `_meta` clientCapabilities).
#   `question(arguments)` and `not_cancelled(order_id, why)` are given. Return `None` to go ahead, or
#   the result to answer instead:
#   - a first call (neither `inputResponses` nor `requestState`): if `capabilities` declares no form
#     elicitation (`elicitation` missing, not an object, or listing modes without `form`), raise
#     `RpcError(MISSING_CAPABILITY, why, {"requiredCapabilities": {"elicitation": {}}})`; else
#     answer `{"resultType": "input_required", "inputRequests": {"confirm": question(arguments)},
#     "requestState": seal(key, binding(name, arguments), now)}`;
#   - a retry: a state that `open_state` refuses is `RpcError(INVALID_PARAMS, why)`, before anything
#     else; no answer under `"confirm"` (no `inputResponses`, `{}`, or only other keys) asks again,
#     as a first call does (the SHOULD of section 6); `None` only for
#     `{"action": "accept", "content": {"confirm": true}}`; any other answer (a decline, a
#     dismissal, an unticked box) is `not_cancelled(...)`, and nothing is written.

# %% id="shop_state" nbgrader={"grade": false, "grade_id": "shop_state", "locked": false, "schema_version": 3, "solution": true, "task": false}
%%module shop_state
import base64
import hashlib
import hmac
import json

from reference.errors import INVALID_PARAMS, MISSING_CAPABILITY, RpcError

TTL_S = 300  # seconds a state lasts: long enough for a person to answer, short enough to bound a replay
KEY = "confirm"  # the inputRequests key, and the name of the form's one boolean


def b64(data):
    """URL-safe base64 without padding: a state travels as plain text."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64(text):
    """The bytes b64() encoded (binascii.Error, a ValueError, on text that is not base64)."""
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def binding(name, arguments):
    """What a state is bound to: the tool and its arguments as canonical JSON."""
    ### BEGIN SOLUTION
    return json.dumps([name, arguments], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    ### END SOLUTION


def seal(key, bound, now):
    """The state PAYLOAD.MAC for the request `bound` names, lasting TTL_S seconds from now."""
    ### BEGIN SOLUTION
    payload = b64(json.dumps({"for": bound, "exp": now + TTL_S}).encode("utf-8"))
    mac = b64(hmac.new(key, payload.encode("ascii"), hashlib.sha256).digest())
    return f"{payload}.{mac}"
    ### END SOLUTION


def open_state(key, state, bound, now):
    """None when state was sealed with key, for bound, and has not expired; else why not. Never raises."""
    ### BEGIN SOLUTION
    if not isinstance(state, str) or state.count(".") != 1:
        return "requestState is not a state this server issued (PAYLOAD.MAC)"
    payload, mac = state.split(".")
    try:
        expected = b64(hmac.new(key, payload.encode("ascii"), hashlib.sha256).digest())
    except UnicodeEncodeError:
        return "requestState is not a state this server issued (not ASCII)"
    if not hmac.compare_digest(expected.encode("ascii"), mac.encode("utf-8")):
        return "requestState failed verification: it was changed, or another server issued it"
    body = json.loads(unb64(payload))  # ours: the MAC matched, so it is the JSON seal() wrote
    if body.get("for") != bound:
        return "requestState was issued for another request (another tool or other arguments)"
    if now > body.get("exp", 0):
        return f"requestState expired {now - body['exp']:.0f} s ago"
    return None
    ### END SOLUTION


def question(arguments):
    """The elicitation/create request that asks the user: a form with one boolean, `confirm`."""
    field = {"type": "boolean", "title": f"Cancel order {arguments['order_id']}", "default": False,
             "description": "Tick to cancel the order; leave it to keep the order as it is."}
    message = (f"Cancel order {arguments['order_id']}? Reason given: {arguments['reason']}. "
               "The order cannot be un-cancelled.")
    schema = {"type": "object", "properties": {KEY: field}, "required": [KEY]}
    return {"method": "elicitation/create", "params": {"mode": "form", "message": message, "requestedSchema": schema}}


def not_cancelled(order_id, why):
    """The tool error for a cancel the user did not confirm: nothing was changed."""
    text = f"{why}: order {order_id} was not cancelled, nothing was changed. Ask the user before calling again."
    return {"content": [{"type": "text", "text": text}], "isError": True}


def ask_first(key, params, capabilities, now):
    """A 2026-07-28 cancel_order call, before it writes: None to go ahead; else the result to answer
    instead (input_required, or a tool error). RpcError for a client that cannot be asked or a bad state."""
    ### BEGIN SOLUTION
    arguments = params.get("arguments")
    bound = binding(params.get("name"), arguments)
    responses, state = params.get("inputResponses"), params.get("requestState")
    if responses is None and state is None:
        return ask(key, arguments, bound, capabilities, now)
    why = open_state(key, state, bound, now)
    if why is not None:
        raise RpcError(INVALID_PARAMS, f"{why}: send the request again without inputResponses and requestState "
                       "to be asked afresh")
    answer = responses.get(KEY) if isinstance(responses, dict) else None
    if not isinstance(answer, dict):  # no answer to the question: ask it again
        return ask(key, arguments, bound, capabilities, now)
    content = answer.get("content")
    if answer.get("action") == "accept" and isinstance(content, dict) and content.get(KEY) is True:
        return None
    return not_cancelled(arguments["order_id"], f"the user did not confirm the cancel of order {arguments['order_id']}")


def ask(key, arguments, bound, capabilities, now):
    declared, needed = capabilities.get("elicitation"), {"elicitation": {}}
    if not isinstance(declared, dict) or (declared and "form" not in declared):
        raise RpcError(MISSING_CAPABILITY, "cancel_order asks the user to confirm first, and this request's _meta "
                       "clientCapabilities declares no form elicitation: declare it to be asked",
                       {"requiredCapabilities": needed})
    return {"resultType": "input_required", "inputRequests": {KEY: question(arguments)},
            "requestState": seal(key, bound, now)}
    ### END SOLUTION


# %% id="try-state"
key = b"k" * 32
bound = binding("cancel_order", {"reason": "asked by phone", "order_id": 9})
state = seal(key, bound, 1_800_000_000)
print(bound)
print(open_state(key, state, bound, 1_800_000_060))
print(open_state(key, state[:-1] + ("A" if state[-2] != "A" else "B") + state[-1], bound, 1_800_000_060))
print(open_state(b"x" * 32, state, bound, 1_800_000_060))
print(open_state(key, state, binding("cancel_order", {"order_id": 10, "reason": "asked by phone"}), 1_800_000_060))
print(open_state(key, state, bound, 1_800_000_000 + TTL_S + 60))
params = {"name": "cancel_order", "arguments": {"order_id": 9, "reason": "asked by phone"}}
asked = ask_first(key, params, {"elicitation": {}}, 1_800_000_000)
print(asked["resultType"], asked["inputRequests"]["confirm"]["params"]["message"])
yes = {"confirm": {"action": "accept", "content": {"confirm": True}}}
print(ask_first(key, {**params, "inputResponses": yes, "requestState": asked["requestState"]}, {}, 1_800_000_060))

# %% [markdown] id="try-state-expected"
# The cell prints the binding (`["cancel_order",{"order_id":9,"reason":"asked by phone"}]`: the
# keys sorted), then `None` (a good state, a minute later), then four reasons: a changed MAC, another
# key, another order, and a state that expired a minute ago. Then `ask_first` asks
# (`input_required Cancel order 9? ...`), and goes ahead (`None`) on the retry with a yes.

# %% id="test_request_state" nbgrader={"grade": true, "grade_id": "test_request_state", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# Binding(), seal() and open_state(): a good state opens until it expires; a changed MAC, a changed
# payload, another key, another request, an expired state and text that is no state are refused.
# Hidden when graded: the same checks with other keys, clocks and orders.
lab.check("test_request_state")

# %% id="test_ask_first" nbgrader={"grade": true, "grade_id": "test_ask_first", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# Ask_first() in the course's server, over stdio in MCP 2026-07-28: the first cancel_order asks
# (input_required), a client that declares no elicitation gets -32021, a state sent with another
# order or changed gets -32602, a retry with no answer is asked again, a "no" cancels nothing, the
# retry with a "yes" cancels; every refusal audited, the questions not.
# Hidden when graded: another client, other orders and answers.
lab.check("test_ask_first")

# %% [markdown] id="served"
# ## 7. Served, and the audit read back
#
# The course's server now runs your write tools and your audit (and, for a 2026-07-28 client,
# your `ask_first` before `cancel_order`: the test above). The test below starts it on a
# copy with `--allow-writes`, initialises as a client with a name of its own, cancels an order,
# tries a note for an order that does not exist, and reads the audit back; then it adds a note
# while the copy refuses every audit entry (the client must get the same reply, and stdout
# nothing else: your failure line goes to stderr); last it starts the server without
# `--allow-writes` and tries again. From a terminal, with the course's server:
#
# ```sh
# .venv/bin/mcp-lab db build /tmp/shop-copy.db
# .venv/bin/mcp-lab serve --allow-writes --db /tmp/shop-copy.db
# .venv/bin/mcp-lab audit --db /tmp/shop-copy.db
# ```

# %% id="test_served" nbgrader={"grade": true, "grade_id": "test_served", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# The course's server with your writes and audit: the tools listed with their hints, a session's
# attempts audited with the client's name; an audit that cannot be written changes no reply and
# writes nothing to stdout; without --allow-writes, a call refused and audited.
# Hidden when graded: another client, other orders.
lab.check("test_served")

# %% [markdown] id="recall"
# ## Recall
#
# 1. `cancel_order` is destructive and idempotent. What does each hint tell a host, and what does
#    neither guarantee?
# 2. Why does `with conn:` not make the cancellation one transaction on an autocommit connection?
# 3. A model calls `cancel_order` on a server started without `--allow-writes`. What does the
#    client get, and what does the audit get?
# 4. What does the audit keep of an 800-character note, and why not the note itself?
# 5. The audit's disk is full. What does the client that asked for the write hear?
# 6. A 2026-07-28 client that declared no elicitation calls `cancel_order`. What does it get, and
#    why may the server not simply ask?
# 7. A client keeps a `requestState` and sends it again tomorrow, with another order's id. Which
#    checks of `open_state` refuse it, and why must the MAC be checked before the rest?

# %% [markdown] id="end"
# ## What you have now
#
# A server that can change the shop, and can be trusted with it: it says which tools change what,
# it writes only a copy and only when told to, it never leaves half a change, and it keeps an
# account of every attempt, with who asked and without what users wrote; in MCP 2026-07-28 it asks
# the user before it cancels, and trusts no state it did not seal. Stage 12 puts the same
# server on HTTP.

# %% [markdown] id="read-next"
# ## Read next in the spec
#
# The pages this stage relies on, in the spec repository (`docs/specification/...`):
#
# - `2026-07-28/server/tools.mdx`: the trust & safety warning (a human in the loop), Tool
#   annotations (untrusted unless from trusted servers), Security Considerations (log tool usage).
# - `schema/2026-07-28/schema.ts`: `ToolAnnotations` (the four hints and their defaults),
#   `InputRequiredResult`, `MissingRequiredClientCapabilityError`, `ElicitRequest`.
# - `2026-07-28/basic/patterns/mrtr.mdx`: Server Requirements (inputRequests only for declared
#   capabilities; `requestState` attacker-controlled, integrity-protected, replay bounded), Client
#   Requirements, Error Handling (missing answers asked again).
# - `2026-07-28/client/elicitation.mdx`: form mode, `requestedSchema`, the three response actions
#   (accept, decline, cancel).
# - `2026-07-28/basic/index.mdx`: General fields > `_meta`: per-request `clientInfo` (SHOULD,
#   self-reported), `clientCapabilities` and -32021.
# - `2026-07-28/basic/transports/stdio.mdx`: nothing on stdout but MCP messages; logs on stderr.
# - `2025-11-25/basic/lifecycle.mdx`: Initialization (`clientInfo` in `initialize`, for the
#   legacy era).
