"""Stage 11's writes and audit in the course's server (cell ``test_served``): listed with their hints,
used and audited over the wire, refused (and still audited) without ``--allow-writes``.
"""

from __future__ import annotations

import random
from pathlib import Path

from ...calls import call
from ...drive import Server, expect_checks, initialize, notification, request
from ...expect import Failure, same_json, show
from ...work import Work
from .. import public
from .copies import LONG_NOTE, check_entry, entries, orders_by_status, refusing, shop_copy
from .writes import WANT_ANNOTATIONS


@public(
    "11",
    "test_served",
    "your writes and audit in the course's server: listed, used, audited; off without --allow-writes",
)
def served_cell(work: Work) -> None:
    check_served(work, random.Random(11), {"name": "course-session", "version": "3.1"}, LONG_NOTE)


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
