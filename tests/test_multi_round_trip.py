"""cancel_order asks its user first in the 2026-07-28 era: a multi round-trip request, over real pipes.

The first call answers ``input_required`` (one form elicitation under ``confirm``, a sealed
``requestState``) and writes nothing; the retry (a new id, the same params, ``inputResponses`` and
the state) cancels only when the user accepted and ticked the box. A changed, foreign, stale or
other-process state is -32602; a client without ``elicitation`` gets -32021; a missing answer
asks again; every malformed answer is -32602 naming what was wrong. Every attempt is audited; a
refused one writes nothing. The legacy era cancels at once, as before. The official SDK 2.3
client, in its default mode, answers the question with its elicitation callback.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, Wire, run_cli

from reference import stateless
from reference.mrtr import Sealer

ASKING = {"elicitation": {}}
META = {
    stateless.PROTOCOL_VERSION: "2026-07-28",
    stateless.CLIENT_CAPABILITIES: ASKING,
    stateless.CLIENT_INFO: {"name": "pytest-mrtr", "version": "1"},
}
YES = {"confirm": {"action": "accept", "content": {"confirm": True}}}


def modern(params: dict[str, Any], capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    meta = dict(META) if capabilities is None else {**META, stateless.CLIENT_CAPABILITIES: capabilities}
    return {**params, "_meta": meta}


def cancel(order_id: int, reason: str = "the customer asked") -> dict[str, Any]:
    return {"name": "cancel_order", "arguments": {"order_id": order_id, "reason": reason}}


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    path = tmp_path / "shop.db"
    built = run_cli(["db", "build", str(path)])
    assert built.returncode == 0, built.stderr
    return path


@pytest.fixture
def writer(start_server: Callable[..., Wire], copy: Path) -> Wire:
    return start_server([sys.executable, "-m", "reference.server", "--db", str(copy), "--allow-writes"])


def status_of(path: Path, order_id: int) -> str:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT status FROM orders WHERE id = ?", (order_id,)).fetchone()[0]


def first_with(path: Path, status: str) -> int:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT min(id) FROM orders WHERE status = ?", (status,)).fetchone()[0]


def audit(path: Path) -> list[dict[str, Any]]:
    printed = run_cli(["audit", "--db", str(path)])
    assert printed.returncode == 0, printed.stderr
    return [json.loads(line) for line in printed.stdout.decode().splitlines()]


def ask(wire: Wire, params: dict[str, Any]) -> dict[str, Any]:
    result = wire.result("tools/call", modern(params))
    assert result["resultType"] == "input_required", result
    return result


# -- the round trip --------------------------------------------------------------------------------
def test_the_first_call_asks_and_writes_nothing_then_a_confirmed_retry_cancels(writer: Wire, copy: Path) -> None:
    paid = first_with(copy, "paid")
    asked = ask(writer, cancel(paid))
    assert set(asked) == {"resultType", "inputRequests", "requestState", "_meta"}  # no ttlMs, no cacheScope
    assert asked["_meta"][stateless.SERVER_INFO]["name"] == "mcp-wire-lab-shop"
    (key,) = asked["inputRequests"]
    request = asked["inputRequests"][key]
    assert key == "confirm" and request["method"] == "elicitation/create"
    params = request["params"]
    assert params["mode"] == "form" and f"order {paid}" in params["message"] and "paid" in params["message"]
    schema = params["requestedSchema"]
    assert schema["type"] == "object" and schema["required"] == ["confirm"]
    assert [(name, field["type"]) for name, field in schema["properties"].items()] == [("confirm", "boolean")]
    assert isinstance(asked["requestState"], str) and asked["requestState"]
    assert status_of(copy, paid) == "paid" and audit(copy) == []  # asking writes and decides nothing

    retry = {**cancel(paid), "inputResponses": YES, "requestState": asked["requestState"]}
    reply = writer.request("tools/call", modern(retry))  # a new id: Wire numbers its requests
    assert reply["id"] != 1 and reply["result"]["resultType"] == "complete"
    done = reply["result"]
    assert done["structuredContent"] == {
        "order_id": paid,
        "status": "cancelled",
        "previous_status": "paid",
        "rows_changed": 2,
    }
    assert "ttlMs" not in done
    assert status_of(copy, paid) == "cancelled"
    (entry,) = audit(copy)
    assert (entry["tool"], entry["outcome"], entry["rows_changed"]) == ("cancel_order", "ok", 2)
    assert entry["client"] == {"name": "pytest-mrtr", "version": "1"}


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        ({"action": "decline"}, "declined"),
        ({"action": "cancel"}, "dismissed"),
        ({"action": "accept", "content": {"confirm": False}}, "did not confirm"),
    ],
)
def test_no_from_the_user_writes_nothing_and_is_audited(writer: Wire, copy: Path, answer: dict, says: str) -> None:
    pending = first_with(copy, "pending")
    asked = ask(writer, cancel(pending))
    retry = {**cancel(pending), "inputResponses": {"confirm": answer}, "requestState": asked["requestState"]}
    result = writer.result("tools/call", modern(retry))
    assert result["resultType"] == "complete" and result["isError"] is True
    assert says in result["content"][0]["text"] and "not cancelled" in result["content"][0]["text"]
    assert status_of(copy, pending) == "pending"
    (entry,) = audit(copy)
    assert (entry["outcome"], entry["rows_changed"]) == ("rejected", 0) and says in entry["reason"]


def test_a_missing_answer_asks_again(writer: Wire, copy: Path) -> None:
    paid = first_with(copy, "paid")
    asked = ask(writer, cancel(paid))
    for responses in (None, {}, {"something_else": {"action": "accept"}}):
        retry = {**cancel(paid), "requestState": asked["requestState"]}
        if responses is not None:
            retry["inputResponses"] = responses
        again = writer.result("tools/call", modern(retry))
        assert again["resultType"] == "input_required" and "confirm" in again["inputRequests"], again
    final = {**cancel(paid), "inputResponses": YES, "requestState": again["requestState"]}
    assert writer.result("tools/call", modern(final))["structuredContent"]["status"] == "cancelled"
    assert [entry["outcome"] for entry in audit(copy)] == ["ok"]


# -- requestState: sealed, bound, fresh -----------------------------------------------------------------
def _tampered(state: str) -> str:
    payload, mac = state.split(".")
    flipped = payload[:-2] + ("A" if payload[-2] != "A" else "B") + payload[-1]
    return f"{flipped}.{mac}"


def test_a_changed_foreign_or_other_process_state_is_refused(
    start_server: Callable[..., Wire], writer: Wire, copy: Path
) -> None:
    paid = first_with(copy, "paid")
    secret = "call me on 555-0100 about order"
    asked = ask(writer, cancel(paid, secret))
    state = asked["requestState"]
    other = start_server([sys.executable, "-m", "reference.server", "--db", str(copy), "--allow-writes"])
    cases = [
        (writer, cancel(paid, secret), _tampered(state), "failed verification"),
        (writer, cancel(paid, secret), state + "x", "failed verification"),
        (writer, cancel(paid, secret), "no-dot-at-all", "failed verification"),
        (writer, cancel(paid, "another reason"), state, "another request"),
        (writer, cancel(first_with(copy, "pending"), secret), state, "another request"),
        (other, cancel(paid, secret), state, "another server process"),  # each process has its own key
    ]
    for wire, params, sent, says in cases:
        error = wire.error("tools/call", modern({**params, "inputResponses": YES, "requestState": sent}))
        assert error["code"] == -32602 and says in error["message"], (says, error)
        assert secret not in json.dumps(error)  # nothing of another request leaks into an error
    assert status_of(copy, paid) == "paid"
    entries = audit(copy)
    assert [(e["outcome"], e["rows_changed"]) for e in entries] == [("rejected", 0)] * len(cases)
    assert all("requestState" in e["reason"] for e in entries)
    # Both servers keep serving, and the genuine state still works.
    assert other.result("tools/list", modern({}))["resultType"] == "complete"
    retry = {**cancel(paid, secret), "inputResponses": YES, "requestState": state}
    assert writer.result("tools/call", modern(retry))["structuredContent"]["status"] == "cancelled"


def test_a_stale_state_is_refused(copy: Path) -> None:
    """Expiry, in process through the real dispatcher: the sealer's clock is moved past the TTL."""
    from reference.server import open_shop

    now = [1_000_000.0]
    server = open_shop(copy, allow_writes=True).server()
    server.sealer = Sealer(clock=lambda: now[0])

    def call(request_id: int, params: dict[str, Any]) -> dict[str, Any]:
        line = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": modern(params)})
        return server.handle_line(line.encode())

    paid = first_with(copy, "paid")
    state = call(1, cancel(paid))["result"]["requestState"]
    now[0] += server.sealer.ttl_s + 30
    error = call(2, {**cancel(paid), "inputResponses": YES, "requestState": state})["error"]
    assert error["code"] == -32602 and "expired 30 s ago" in error["message"] and "afresh" in error["message"]
    assert status_of(copy, paid) == "paid"
    assert call(3, cancel(paid))["result"]["resultType"] == "input_required"  # asked afresh
    server.writes.close()


# -- capabilities and bad input -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("capabilities", "required"),
    [
        ({}, {"elicitation": {}}),
        ({"elicitation": {"url": {}}}, {"elicitation": {"form": {}}}),
        ({"sampling": {}}, {"elicitation": {}}),
    ],
)
def test_a_client_that_cannot_be_asked_gets_32021(writer: Wire, copy: Path, capabilities: dict, required: dict) -> None:
    paid = first_with(copy, "paid")
    error = writer.error("tools/call", modern(cancel(paid), capabilities))
    assert error["code"] == -32021 and error["data"] == {"requiredCapabilities": required}
    assert "elicitation" in error["message"] and "mrtr" in error["message"]
    assert status_of(copy, paid) == "paid"
    (entry,) = audit(copy)
    assert entry["outcome"] == "rejected" and "elicitation" in entry["reason"]


def test_form_mode_declared_with_url_is_asked(writer: Wire, copy: Path) -> None:
    both = {"elicitation": {"form": {}, "url": {}}}
    result = writer.result("tools/call", modern(cancel(first_with(copy, "paid")), both))
    assert result["resultType"] == "input_required"


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"inputResponses": []}, '"inputResponses" must be an object'),
        ({"inputResponses": "yes"}, '"inputResponses" must be an object'),
        ({"requestState": 5}, '"requestState" must be the string'),
        ({"requestState": None, "inputResponses": YES}, 'without "requestState"'),
        ({"inputResponses": {"confirm": "yes"}}, 'inputResponses["confirm"] must be an ElicitResult object'),
        ({"inputResponses": {"confirm": {"action": "maybe"}}}, '.action must be "accept", "decline" or "cancel"'),
        ({"inputResponses": {"confirm": {"content": {"confirm": True}}}}, ".action must be"),
        ({"inputResponses": {"confirm": {"action": "accept"}}}, 'carries the form\'s answers in "content"'),
        ({"inputResponses": {"confirm": {"action": "accept", "content": {}}}}, "content.confirm must be a boolean"),
        ({"inputResponses": {"confirm": {"action": "accept", "content": {"confirm": "yes"}}}}, "must be a boolean"),
    ],
)
def test_malformed_answers_are_invalid_params_that_say_what_is_wrong(
    writer: Wire, copy: Path, change: dict, says: str
) -> None:
    paid = first_with(copy, "paid")
    asked = ask(writer, cancel(paid))
    retry = {**cancel(paid), "requestState": asked["requestState"], "inputResponses": YES, **change}
    retry = {key: value for key, value in retry.items() if value is not None}
    error = writer.error("tools/call", modern(retry))
    assert error["code"] == -32602 and says in error["message"], error
    assert status_of(copy, paid) == "paid"
    assert [e["outcome"] for e in audit(copy)] == ["rejected"]
    assert writer.result("tools/list", modern({}))["resultType"] == "complete"  # and it keeps serving


def test_what_would_change_nothing_is_not_asked_about(writer: Wire, copy: Path) -> None:
    shipped, cancelled = first_with(copy, "shipped"), first_with(copy, "cancelled")
    refused = writer.result("tools/call", modern(cancel(shipped)))
    assert refused["resultType"] == "complete" and refused["isError"] is True and "shipped" in json.dumps(refused)
    unknown = writer.result("tools/call", modern(cancel(99999)))
    assert unknown["isError"] is True and "no order with id 99999" in json.dumps(unknown)
    bad = writer.result("tools/call", modern({"name": "cancel_order", "arguments": {"order_id": "seven"}}))
    assert bad["isError"] is True
    again = writer.result("tools/call", modern(cancel(cancelled)))
    assert again["structuredContent"]["rows_changed"] == 0  # idempotent: nothing to confirm
    outcomes = [(e["outcome"], e["rows_changed"]) for e in audit(copy)]
    assert outcomes == [("rejected", 0), ("rejected", 0), ("rejected", 0), ("ok", 0)]


def test_add_order_note_is_not_asked_about(writer: Wire, copy: Path) -> None:
    note = {"name": "add_order_note", "arguments": {"order_id": 1, "note": "called"}}
    assert writer.result("tools/call", modern(note, {}))["structuredContent"]["rows_changed"] == 1


def test_the_legacy_era_cancels_at_once_even_for_a_client_that_declared_elicitation(writer: Wire, copy: Path) -> None:
    writer.result(
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "old", "version": "1"},
        },
    )
    writer.notify("notifications/initialized")
    paid = first_with(copy, "paid")
    result = writer.call_tool("cancel_order", {"order_id": paid, "reason": "legacy"})
    assert "resultType" not in result and result["structuredContent"]["status"] == "cancelled"
    assert writer.sync() == []  # no elicitation/create request from the server, nothing else either
    assert [e["outcome"] for e in audit(copy)] == ["ok"]


def test_writes_off_answers_as_before_without_a_question(start_server: Callable[..., Wire], copy: Path) -> None:
    wire = start_server([sys.executable, "-m", "reference.server", "--db", str(copy)])
    error = wire.error("tools/call", modern(cancel(first_with(copy, "paid"))))
    assert error["code"] == -32602 and "unknown tool" in error["message"]
    assert [e["outcome"] for e in audit(copy)] == ["rejected"]


# -- the official SDK 2.3 client: its elicitation callback answers ------------------------------------
async def _sdk_cancel(copy: Path, order_id: int, answer: str, asked: list[str]) -> Any:
    import mcp_types
    from mcp import Client, StdioServerParameters

    async def on_elicit(context: Any, params: Any) -> Any:
        asked.append(params.message)
        if answer == "accept":
            return mcp_types.ElicitResult(action="accept", content={"confirm": True})
        return mcp_types.ElicitResult(action=answer)

    argv = ["-m", "reference.server", "--db", str(copy), "--allow-writes"]
    server = StdioServerParameters(command=sys.executable, args=argv, cwd=str(ROOT))
    info = mcp_types.Implementation(name="sdk-mrtr", version="2.3-test")
    async with Client(server, read_timeout_seconds=30, elicitation_callback=on_elicit, client_info=info) as client:
        assert client.session.protocol_version == "2026-07-28"  # auto mode went modern
        return await client.call_tool("cancel_order", {"order_id": order_id, "reason": "sdk asked"})


def test_the_official_sdk_client_confirms_and_declines(copy: Path) -> None:
    paid, pending = first_with(copy, "paid"), first_with(copy, "pending")
    asked: list[str] = []
    done = asyncio.run(asyncio.wait_for(_sdk_cancel(copy, paid, "accept", asked), 120))
    assert done.is_error is False and done.structured_content["status"] == "cancelled"
    assert status_of(copy, paid) == "cancelled"
    refused = asyncio.run(asyncio.wait_for(_sdk_cancel(copy, pending, "decline", asked), 120))
    assert refused.is_error is True and status_of(copy, pending) == "pending"
    assert [f"order {paid}" in asked[0], f"order {pending}" in asked[1]] == [True, True]
    entries = audit(copy)
    assert [(e["outcome"], e["rows_changed"]) for e in entries] == [("ok", 2), ("rejected", 0)]
    assert all(e["client"] == {"name": "sdk-mrtr", "version": "2.3-test"} for e in entries)


def test_the_gate_in_process_asks_only_about_an_order_it_can_name() -> None:
    """Confirmation without a server: an order it cannot read is asked about by its id; arguments
    without an integer order_id (no inputSchema known) go straight to the write tool."""
    from reference.confirm import Confirmation

    gate = Confirmation(Sealer(key=b"x" * 32), lambda order_id: {"id": order_id})
    asked = gate.decide(cancel(3, "dup."), ASKING, {}).result
    assert asked is not None
    assert asked["inputRequests"]["confirm"]["params"]["message"] == (
        "Cancel order 3? Reason given: dup. The order cannot be un-cancelled."
    )
    for arguments in ({"reason": "x"}, {"order_id": True, "reason": "x"}, {"order_id": "3"}, None, []):
        assert gate.decide({"name": "cancel_order", "arguments": arguments}, ASKING, {}).proceed, arguments
    gone = Confirmation(Sealer(key=b"x" * 32), lambda order_id: None)
    assert gone.decide(cancel(3), ASKING, {}).proceed  # no such order: the write tool says so
