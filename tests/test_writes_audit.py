"""Write tools and their audit: in process on fresh database copies, then the real server and CLI.

- Off by default: not listed, a call answered like an unknown tool, and audited as rejected when
  there is a copy to audit in (never the embedded database, which is never opened for writing).
- ``--allow-writes`` needs ``--db FILE``, a writable copy that is not the embedded database.
- Each write is one transaction: a failure halfway (a trigger that refuses) leaves nothing behind.
- Every attempt is audited: ok, rejected (bad arguments, unknown order, not cancellable, writes
  off) and failed, with the client's name and version from initialize, the transport, the reason,
  the rows changed and a summary of the arguments in which a long text is only its length.
- An audit that cannot be written changes nothing the client is told (stderr says so).
- ``mcp-lab audit --db FILE`` prints the log, one JSON object a line.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import MCP_LAB, Wire, file_hash, run_cli

from reference import database
from reference.audit import AuditLog, Provenance, read, summary
from reference.errors import RpcError
from reference.server import INSTRUCTIONS, WRITE_INSTRUCTIONS, make_server, open_shop
from reference.writes import NAMES, Writes, why_not_writable

WHO = Provenance("pytest-client", "9.9", "stdio")
LONG_NOTE = "The customer called twice about the parcel; " * 20


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    return database.build(tmp_path / "copy.db")


def status_of(path: Path, order_id: int) -> str:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT status FROM orders WHERE id = ?", (order_id,)).fetchone()[0]


def notes(path: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(path) as conn:
        if not conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'order_notes'").fetchone()[0]:
            return []
        return conn.execute("SELECT order_id, kind, text FROM order_notes ORDER BY id").fetchall()


def first_with(path: Path, status: str) -> int:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT min(id) FROM orders WHERE status = ?", (status,)).fetchone()[0]


def call(writes: Writes, name: str, arguments: Any, who: Provenance = WHO, **flags: bool) -> dict[str, Any]:
    return writes.call({"name": name, "arguments": arguments}, who, **flags)


# -- the argument summary ----------------------------------------------------------------------------
def test_the_summary_keeps_ids_and_short_values_only() -> None:
    assert summary({"order_id": 7, "reason": "asked by phone"}) == {"order_id": 7, "reason": "asked by phone"}
    assert summary({"note": "x" * 812}) == {"note": "<text, 812 chars>"}
    assert summary({"note": "x" * 40, "n": "x" * 41}) == {"note": "x" * 40, "n": "<text, 41 chars>"}
    assert summary({"a": [1, 2], "b": {"c": "secret"}, "d": None, "e": True, "f": 1.5}) == {
        "a": "<array, 2 items>",
        "b": "<object, 1 members>",
        "d": None,
        "e": True,
        "f": 1.5,
    }
    assert summary({"big": 10**100}) == {"big": "<number, 101 digits>"}
    assert summary("x" * 100) == "<text, 100 chars>" and summary([1]) == "<array, 1 items>"
    many = summary({f"k{i}": i for i in range(30)})
    assert len(many) == 21 and many["..."] == "<10 more members>"
    assert summary({"y" * 100: 1}) == {"y" * 40 + "...": 1}


# -- who may write what ---------------------------------------------------------------------------
def test_only_a_writable_copy_may_be_written(copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert why_not_writable(copy) is None
    assert "needs --db FILE" in (why_not_writable(None) or "")
    assert "no database at" in (why_not_writable(tmp_path / "missing.db") or "")
    monkeypatch.setenv(database.ENV_VAR, str(copy))  # now the copy *is* the embedded database
    assert "the course's embedded database, never written" in (why_not_writable(copy) or "")
    assert "embedded" in (why_not_writable(database.DATA_DIR / "build" / "shop.db") or "")
    with pytest.raises(ValueError, match="embedded"):
        open_shop(copy, allow_writes=True)


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write any file")
def test_a_read_only_file_is_not_writable(copy: Path) -> None:
    copy.chmod(0o444)
    assert "not writable" in (why_not_writable(copy) or "")


def test_write_tools_are_listed_only_when_allowed(copy: Path) -> None:
    def listed(server: Any) -> dict[str, Any]:
        server.initialize({"protocolVersion": "2025-11-25"})
        return {tool["name"]: tool for tool in server.list_tools({})["tools"]}

    off = make_server(copy)
    assert not set(NAMES) & set(listed(off))
    on = make_server(copy, allow_writes=True)
    tools = listed(on)
    assert list(tools)[-2:] == ["cancel_order", "add_order_note"]
    assert tools["cancel_order"]["annotations"] == {
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": True,
        "openWorldHint": False,
    }
    assert tools["add_order_note"]["annotations"]["destructiveHint"] is False
    assert tools["add_order_note"]["annotations"]["idempotentHint"] is False
    assert make_server(copy, allow_writes=True).initialize({"protocolVersion": "2025-11-25"})["instructions"] == (
        WRITE_INSTRUCTIONS
    )
    assert make_server(copy).initialize({"protocolVersion": "2025-11-25"})["instructions"] == INSTRUCTIONS


# -- the writes ------------------------------------------------------------------------------------
def test_cancel_order_is_one_audited_transaction_and_idempotent(copy: Path) -> None:
    order_id = first_with(copy, "pending")
    writes = Writes(copy, allowed=True)
    result = call(writes, "cancel_order", {"order_id": order_id, "reason": "asked by phone"})
    assert result["isError"] is False
    expected = {"order_id": order_id, "status": "cancelled", "previous_status": "pending", "rows_changed": 2}
    assert result["structuredContent"] == expected
    assert json.loads(result["content"][0]["text"]) == expected
    assert status_of(copy, order_id) == "cancelled"
    assert notes(copy) == [(order_id, "cancellation", "asked by phone")]
    again = call(writes, "cancel_order", {"order_id": order_id, "reason": "once more"})
    assert again["structuredContent"] == {**expected, "previous_status": "cancelled", "rows_changed": 0}
    assert notes(copy) == [(order_id, "cancellation", "asked by phone")], "idempotent: nothing added"
    log = list(read(copy))
    assert [(e["tool"], e["outcome"], e["reason"], e["rows_changed"]) for e in log] == [
        ("cancel_order", "ok", "", 2),
        ("cancel_order", "ok", "", 0),
    ]
    first = log[0]
    assert first["client"] == {"name": "pytest-client", "version": "9.9"} and first["transport"] == "stdio"
    assert first["arguments"] == {"order_id": order_id, "reason": "asked by phone"}
    assert first["at"].endswith("Z") and first["at"][:2] == "20" and "T" in first["at"]


@pytest.mark.parametrize("status", ["shipped", "delivered", "refunded"])
def test_an_order_past_cancelling_is_rejected_and_unchanged(copy: Path, status: str) -> None:
    order_id = first_with(copy, status)
    result = call(Writes(copy, allowed=True), "cancel_order", {"order_id": order_id, "reason": "late"})
    assert result["isError"] is True
    assert result["content"][0]["text"].startswith(f"order {order_id} is {status}: only a pending or paid")
    assert status_of(copy, order_id) == status and notes(copy) == []
    (entry,) = read(copy)
    assert (entry["outcome"], entry["rows_changed"]) == ("rejected", 0) and status in entry["reason"]


def test_add_order_note_keeps_the_note_and_audits_its_length(copy: Path) -> None:
    writes = Writes(copy, allowed=True)
    first = call(writes, "add_order_note", {"order_id": 7, "note": LONG_NOTE})
    second = call(writes, "add_order_note", {"order_id": 7, "note": "call back"})
    assert first["structuredContent"] == {"order_id": 7, "note_id": 1, "rows_changed": 1}
    assert second["structuredContent"]["note_id"] == 2, "not idempotent: two calls, two notes"
    assert notes(copy) == [(7, "note", LONG_NOTE), (7, "note", "call back")]
    log = list(read(copy))
    assert log[0]["arguments"] == {"order_id": 7, "note": f"<text, {len(LONG_NOTE)} chars>"}
    assert log[1]["arguments"] == {"order_id": 7, "note": "call back"}
    with sqlite3.connect(copy) as conn:
        stored = " ".join(str(v) for row in conn.execute("SELECT * FROM audit_log") for v in row)
    assert "customer called" not in stored, "a long text never reaches the audit"


REJECTED = [
    ("cancel_order", {"order_id": 99999, "reason": "x"}, "no order with id 99999. Order ids run from 1 to 3000."),
    ("add_order_note", {"order_id": 99999, "note": "x"}, "no order with id 99999"),
    ("cancel_order", {"order_id": 9}, "invalid arguments for cancel_order: missing required argument reason"),
    ("cancel_order", {"order_id": "9", "reason": "x"}, "order_id must be an integer"),
    ("add_order_note", {"order_id": 7, "note": ""}, "note must have at least 1 characters"),
    ("add_order_note", {"order_id": 7, "note": "x" * 4001}, "note must have at most 4000 characters"),
    ("add_order_note", {"order_id": 7, "note": "x", "by": "me"}, "unexpected argument by"),
]


@pytest.mark.parametrize(("name", "arguments", "why"), REJECTED)
def test_refusals_are_tool_errors_and_audited_as_rejected(
    copy: Path, name: str, arguments: dict[str, Any], why: str
) -> None:
    before = status_of(copy, 9)
    result = call(Writes(copy, allowed=True), name, arguments)
    assert result["isError"] is True and why in result["content"][0]["text"]
    assert status_of(copy, 9) == before and notes(copy) == []
    (entry,) = read(copy)
    assert entry["outcome"] == "rejected" and why in entry["reason"] and entry["rows_changed"] == 0
    assert entry["client"]["name"] == "pytest-client"


def test_bad_arguments_are_protocol_errors_before_2025_11_25_and_still_audited(copy: Path) -> None:
    writes = Writes(copy, allowed=True)
    with pytest.raises(RpcError) as caught:
        call(writes, "cancel_order", {"order_id": 9}, bad_arguments_are_tool_errors=False)
    assert caught.value.code == -32602
    with pytest.raises(RpcError) as caught:
        call(writes, "add_order_note", ["not", "an", "object"])
    assert caught.value.code == -32602
    assert [(e["outcome"], e["arguments"]) for e in read(copy)] == [
        ("rejected", {"order_id": 9}),
        ("rejected", "<array, 3 items>"),
    ]
    older = call(writes, "cancel_order", {"order_id": 9, "reason": "x"}, structured_output=False)
    assert "structuredContent" not in older and json.loads(older["content"][0]["text"])["rows_changed"] == 2


def refuse_with_a_trigger(path: Path, table: str, event: str = "INSERT") -> None:
    with sqlite3.connect(path) as conn:
        if table == "order_notes":
            conn.execute(
                "CREATE TABLE order_notes (id INTEGER PRIMARY KEY, order_id INTEGER, created_at TEXT, "
                "kind TEXT, text TEXT)"
            )
        if table == "audit_log":
            from reference.audit import TABLE

            conn.execute(TABLE)
        conn.execute(f"CREATE TRIGGER refuse BEFORE {event} ON {table} BEGIN SELECT RAISE(ABORT, 'refused'); END")


def test_a_failure_halfway_rolls_the_whole_write_back(copy: Path) -> None:
    refuse_with_a_trigger(copy, "order_notes")  # the UPDATE succeeds, then the note's INSERT fails
    order_id = first_with(copy, "paid")
    result = call(Writes(copy, allowed=True), "cancel_order", {"order_id": order_id, "reason": "x"})
    assert result["isError"] is True
    assert result["content"][0]["text"] == "cancel_order failed (IntegrityError); nothing was changed"
    assert status_of(copy, order_id) == "paid", "one transaction: the UPDATE was rolled back too"
    (entry,) = read(copy)
    assert (entry["outcome"], entry["reason"], entry["rows_changed"]) == ("failed", "IntegrityError: refused", 0)


def test_an_audit_that_cannot_be_written_changes_no_reply(copy: Path) -> None:
    refuse_with_a_trigger(copy, "audit_log")
    lines: list[str] = []
    writes = Writes(copy, allowed=True, log=lines.append)
    order_id = first_with(copy, "pending")
    result = call(writes, "cancel_order", {"order_id": order_id, "reason": "x"})
    assert result["isError"] is False and result["structuredContent"]["rows_changed"] == 2
    assert status_of(copy, order_id) == "cancelled", "the write stands"
    assert call(writes, "cancel_order", {"order_id": 99999, "reason": "x"})["isError"] is True
    assert len(lines) == 2 and all(line.startswith("audit failed (IntegrityError: refused)") for line in lines)
    assert list(read(copy)) == []


def test_an_audit_in_a_missing_file_is_a_line_on_stderr(tmp_path: Path) -> None:
    lines: list[str] = []
    log = AuditLog(tmp_path / "gone.db", lines.append)
    assert log.record("cancel_order", {}, WHO, "rejected", "x", 0) is False
    assert len(lines) == 1 and "audit failed" in lines[0]


def test_writes_off_a_call_is_an_unknown_tool_and_audited(copy: Path) -> None:
    server = make_server(copy)
    server.initialize({"protocolVersion": "2025-11-25", "clientInfo": {"name": "curious", "version": "0.1"}})
    with pytest.raises(RpcError) as caught:
        server.call_tool({"name": "cancel_order", "arguments": {"order_id": 9, "reason": "x"}})
    assert caught.value.code == -32602 and "unknown tool 'cancel_order'" in caught.value.message
    assert status_of(copy, 9) == "paid"
    (entry,) = read(copy)
    assert entry["outcome"] == "rejected" and "--allow-writes" in entry["reason"]
    assert entry["client"] == {"name": "curious", "version": "0.1"}


def test_the_embedded_database_is_never_opened_for_writing(copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(database.ENV_VAR, str(copy))
    before = file_hash(copy)
    server = make_server()  # the embedded database: no writes object at all
    assert server.writes is None
    with pytest.raises(RpcError):
        server.call_tool({"name": "cancel_order", "arguments": {"order_id": 9, "reason": "x"}})
    assert file_hash(copy) == before


# -- the real server and the CLI -------------------------------------------------------------------
def test_a_stdio_session_writes_and_mcp_lab_audit_prints_it(copy: Path, start_server: Callable[..., Wire]) -> None:
    wire = start_server([MCP_LAB, "serve", "--allow-writes", "--db", str(copy)])
    wire.initialize(client="wire-client")
    assert "writes allowed on" in wire.stderr_with("writes allowed on")
    done = wire.call_tool("cancel_order", {"order_id": 11, "reason": "duplicate order"})
    assert done["structuredContent"]["rows_changed"] == 2
    refused = wire.call_tool("add_order_note", {"order_id": 0, "note": LONG_NOTE})
    assert refused["isError"] is True
    assert wire.close() == 0
    printed = run_cli(["audit", "--db", str(copy)])
    assert printed.returncode == 0 and printed.stderr == b""
    entries = [json.loads(line) for line in printed.stdout.decode().splitlines()]
    assert [(e["id"], e["tool"], e["outcome"], e["client"]["name"], e["transport"]) for e in entries] == [
        (1, "cancel_order", "ok", "wire-client", "stdio"),
        (2, "add_order_note", "rejected", "wire-client", "stdio"),
    ]
    assert entries[1]["arguments"] == {"order_id": 0, "note": f"<text, {len(LONG_NOTE)} chars>"}
    assert "order_id must be at least 1" in entries[1]["reason"]


def test_without_allow_writes_the_server_audits_the_rejection(copy: Path, start_server: Callable[..., Wire]) -> None:
    wire = start_server([MCP_LAB, "serve", "--db", str(copy)])
    wire.initialize(client="wire-client")
    assert {t["name"] for t in wire.result("tools/list")["tools"]}.isdisjoint(NAMES)
    error = wire.error("tools/call", {"name": "add_order_note", "arguments": {"order_id": 7, "note": "hi"}})
    assert error["code"] == -32602
    assert wire.close() == 0
    (entry,) = [json.loads(line) for line in run_cli(["audit", "--db", str(copy)]).stdout.splitlines()]
    assert entry["outcome"] == "rejected" and entry["reason"].startswith("writes are not allowed")


def test_a_failed_audit_leaves_the_reply_alone_and_says_so_on_stderr(
    copy: Path, start_server: Callable[..., Wire]
) -> None:
    refuse_with_a_trigger(copy, "audit_log")
    wire = start_server([MCP_LAB, "serve", "--allow-writes", "--db", str(copy)])
    wire.initialize()
    done = wire.call_tool("cancel_order", {"order_id": 9, "reason": "x"})
    assert done["isError"] is False and done["structuredContent"]["rows_changed"] == 2
    assert wire.result("ping") == {}
    assert wire.close() == 0
    said = "audit failed (IntegrityError: refused); the reply to the client is unchanged"
    assert said in wire.stderr_with(said)


def test_mcp_lab_audit_edge_cases(copy: Path, tmp_path: Path) -> None:
    empty = run_cli(["audit", "--db", str(copy)])  # nothing audited yet: nothing printed
    assert (empty.returncode, empty.stdout, empty.stderr) == (0, b"", b"")
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not a database at all" * 100)
    for path in (junk, tmp_path / "missing.db"):
        done = run_cli(["audit", "--db", str(path)])
        stderr = done.stderr.decode()
        assert done.returncode == 2 and done.stdout == b"" and len(stderr.splitlines()) == 1, stderr
        assert stderr.startswith("mcp-lab audit: ")


def test_serve_refuses_to_write_the_embedded_database(copy: Path) -> None:
    for args, env in (
        (["serve", "--allow-writes"], None),
        (["serve", "--allow-writes", "--db", str(copy)], {database.ENV_VAR: str(copy)}),
    ):
        done = run_cli(args, env=env)
        stderr = done.stderr.decode()
        assert done.returncode == 2 and len(stderr.splitlines()) == 1, stderr
        assert stderr.startswith("mcp-lab serve: ")
