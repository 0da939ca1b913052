"""The checks of stage 02 (messages and ids).

``handle_line`` is checked twice: called with a table of lines and handlers made for the test
(every branch, exactly; the handlers live in the learner's process, :mod:`lab_runtime.fixtures`),
and inside the course's server as a real process (what ``mcp-lab check`` would see), whose loop
hands every line to the learner's ``handle_line``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

from grader.checker.catalogue import CATALOGUE

from ..calls import call
from ..drive import Server, mismatch, notification, request
from ..expect import Failure, describe_id, same_json, show
from ..work import Work
from . import public

Reply = dict[str, Any] | None


@public("02", "test_replies", 'result_reply and error_reply for ids 0, "7" and 42; valid_id on ten values')
def replies_cell(work: Work) -> None:
    messages = work.module("messages")
    check_replies(messages.result_reply, messages.error_reply)
    check_valid_id(messages.valid_id)


@public("02", "test_branches", 'every branch of handle_line, for ids 1, "7" and 0')
def branches_cell(work: Work) -> None:
    check_branches(work, [1, "7", 0])


@public("02", "test_id_echo", 'your handle_line in the course\'s server: pings with ids 0, 42, "abc" and "7"')
def id_echo_cell(work: Work) -> None:
    check_id_echo(work.host("messages"), [0, 42, "abc", "7"])


@public("02", "test_silence", "no reply to three notifications (legacy, 2026-07-28, unknown) or to a response")
def silence_cell(work: Work) -> None:
    check_silence(work.host("messages"))


@public("02", "test_error_table", "-32700, -32600 (twice), -32601 and -32602 with id 1, each followed by a ping")
def error_table_cell(work: Work) -> None:
    check_error_table(work.host("messages"))


def random_ids(rng: random.Random, n: int) -> list[Any]:
    pool: list[Any] = [
        rng.randrange(1, 10**9),
        -rng.randrange(1, 10**6),
        2**53 + rng.randrange(100),
        str(rng.randrange(10**6)),
        f"réq-{rng.randrange(10**6)}-☕",
        "",
        f"{rng.randrange(10)}",
        rng.randrange(10),
    ]
    rng.shuffle(pool)
    return pool[:n]


def check_replies(result_reply: Callable[..., Any], error_reply: Callable[..., Any]) -> None:
    for id in (0, "7", 42):
        got = call(result_reply, "envelope", id, {"n": 1})
        want = {"jsonrpc": "2.0", "id": id, "result": {"n": 1}}
        if not same_json(got, want):
            raise Failure("envelope", "result_reply built the wrong response", expected=show(want), received=show(got))
        got = call(error_reply, "envelope", id, -32601, "Method not found: x")
        want = {"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found: x"}}
        if not same_json(got, want):
            raise Failure("envelope", "error_reply built the wrong response", expected=show(want), received=show(got))
    got = call(error_reply, "envelope", None, -32700, "Parse error")
    if not isinstance(got, dict) or "id" not in got or got["id"] is not None:
        raise Failure("envelope", 'an error whose id could not be read carries "id": null', received=show(got))


def check_valid_id(valid_id: Callable[[Any], Any]) -> None:
    for value, want in ((0, True), (42, True), ("7", True), ("", True), (None, False), (1.5, False),
                        (True, False), (False, False), ([1], False), ({"a": 1}, False)):  # fmt: skip
        got = call(valid_id, "invalid-request", value)
        if bool(got) is not want:
            raise Failure(
                "invalid-request",
                f"valid_id({json.dumps(value)}) returned {got!r}; {describe_id(value)} is "
                + ("a valid id" if want else "not a valid id: ids are strings or integers, and a bool is neither"),
            )


def _line(message: Any) -> bytes:
    return json.dumps(message, ensure_ascii=False).encode("utf-8")


def _cases(id: Any) -> list[tuple[str, bytes, Reply, str]]:
    """(what it is, the line, the reply expected or None, the check id)."""

    def ok(result: Any) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": id, "result": result}

    def err(code: int) -> dict[str, Any]:
        return _error(code, id)

    req = {"jsonrpc": "2.0", "id": id}
    return [
        ("a ping", _line({**req, "method": "ping"}), ok({}), "id-echo"),
        (
            "a request with params",
            _line({**req, "method": "echo", "params": {"a": [1, "☕"]}}),
            ok({"got": {"a": [1, "☕"]}}),
            "id-echo",
        ),
        ("a request without params", _line({**req, "method": "echo"}), ok({"got": {}}), "id-echo"),
        (
            "a handler raising RpcError(-32602)",
            _line({**req, "method": "refuse", "params": {}}),
            err(-32602),
            "unknown-tool",
        ),
        ("a handler that crashes", _line({**req, "method": "crash"}), err(-32603), "envelope"),
        ("an unknown method", _line({**req, "method": "tools/lisst"}), err(-32601), "method-not-found"),
        ("params that are an array", _line({**req, "method": "ping", "params": [1]}), err(-32602), "invalid-request"),
        ("no method", _line({**req}), err(-32600), "invalid-request"),
        ('"jsonrpc": "1.0"', _line({"jsonrpc": "1.0", "id": id, "method": "ping"}), err(-32600), "invalid-request"),
        ("a response from the client", _line({**req, "result": {}}), None, "notification-silence"),
        (
            "an error response from the client",
            _line({**req, "error": {"code": -1, "message": "no"}}),
            None,
            "notification-silence",
        ),
    ]


def quoted(check: str, name: str) -> dict[str, str]:
    """The ``rule`` and ``fix`` details of ``check``'s other rule ``name``: a failure quotes the rule
    its evidence shows (no reply at all breaks the reply rule, not the id rule)."""
    rule = CATALOGUE[check].rule_named(name)
    return {"rule": f"{rule.source} ({rule.keyword}): {rule.text}", "fix": CATALOGUE[check].fix_for("python", rule)}


def _other_rule(check: str, line: bytes, expected: Reply) -> dict[str, str]:
    """The rule a wrong reply to ``line`` breaks where it is not ``check``'s main one."""
    also = CATALOGUE[check].also if check in CATALOGUE else {}
    if expected is None and _is_response(line) and "response" in also:
        return quoted(check, "response")
    if expected is not None and "no-reply" in also:
        return quoted(check, "no-reply")
    if expected is not None and expected.get("error", {}).get("code") == -32602 and "params" in also:
        return quoted(check, "params")  # the course's choice for params that are not an object
    return {}


def _is_response(line: bytes) -> bool:
    message = json.loads(line) if line.startswith(b"{") else None
    return isinstance(message, dict) and "method" not in message and ("result" in message or "error" in message)


def _error(code: int, id: Any = None) -> dict[str, Any]:
    """An expected error reply (matched on its code; the message is free text)."""
    return {"jsonrpc": "2.0", "id": id, "error": {"code": code}}


def _note(method: str, params: Any = None) -> bytes:
    return _line(notification(method, params))


SILENT = "notification-silence"
_FIXED: list[tuple[str, bytes, Reply, str]] = [
    ("a notification", _note("notifications/seen", {"k": 1}), None, SILENT),
    ("a notification whose handler fails", _note("notifications/boom"), None, SILENT),
    ("an unknown notification", _note("notifications/mcp-lab/unknown"), None, SILENT),
    ("a line that is not JSON", b"hello?", _error(-32700), "parse-error"),
    ("a line with NaN", b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":NaN}}', _error(-32700), "parse-error"),
    ('"id": null', b'{"jsonrpc":"2.0","id":null,"method":"ping"}', _error(-32600), "invalid-request"),
    ('"id": 1.5', b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', _error(-32600), "invalid-request"),
    ('"id": true', b'{"jsonrpc":"2.0","id":true,"method":"ping"}', _error(-32600), "invalid-request"),
    ("a JSON array (a batch)", b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]', _error(-32600), "invalid-request"),
    ("a JSON number", b"5", _error(-32600), "invalid-request"),
]


def check_branches(work: Work, ids: list[Any]) -> None:
    handle_line = work.module("messages").handle_line
    cases = [case for id in ids for case in _cases(id)] + _FIXED
    for what, line, expected, check in cases:
        handlers = work.fixture("handlers")  # in the learner's process: it records what it is given
        reply = call(handle_line, check, line, handlers.methods)
        seen = handlers.seen
        if expected is None:
            if reply is not None:
                raise Failure(
                    check,
                    f"{what} must get no reply at all (return None)",
                    sent=line.decode("utf-8", "replace"),
                    received=show(reply),
                    **_other_rule(check, line, expected),
                )
            if b"notifications/seen" in line and seen != [{"k": 1}]:
                raise Failure(
                    check,
                    "the notification's handler was not called with its params",
                    sent=line.decode(),
                    received=f"handler calls: {seen!r}",
                )
            continue
        if reply is None:
            raise Failure(
                check,
                f"{what}: no reply (None), but a request gets one" + (" (0 is an id)" if b'"id": 0' in line else ""),
                sent=line.decode("utf-8", "replace"),
                expected=show(expected),
                received="None",
                **_other_rule(check, line, expected),
            )
        problem = mismatch(line, reply, expected)
        if problem:
            raise Failure(
                check,
                f"{what}: {problem}",
                sent=line.decode("utf-8", "replace"),
                expected=show(expected),
                received=show(reply),
                **_other_rule(check, line, expected),
            )
        if isinstance(reply, dict) and "error" in reply and "error" in expected:
            continue
        if isinstance(reply, dict) and not same_json(reply, expected):
            raise Failure(
                check,
                f"{what}: the reply has extra or wrong members",
                sent=line.decode(),
                expected=show(expected),
                received=show(reply),
            )


# -- as a process -------------------------------------------------------------------------------
def check_id_echo(argv: list[str], ids: list[Any]) -> None:
    """Pings (the legacy era's request with a fixed reply; stage 02's server is a legacy one) echo their ids."""
    with Server(argv) as server:
        for id in ids:
            try:
                server.expect(request("ping", id), {"jsonrpc": "2.0", "id": id, "result": {}}, "id-echo")
            except Failure as failure:
                if failure.check != "id-echo" or not failure.summary.startswith("no reply"):
                    raise
                # No reply at all: the reply rule is broken (a request taken for a notification?);
                # the fix says so, in place of the hint about flushing.
                details = {k: v for k, v in failure.details.items() if k != "hint"}
                raise Failure(
                    "id-echo",
                    f"the request with id {describe_id(id)} got {failure.summary}",
                    **details,
                    **quoted("id-echo", "no-reply"),
                ) from None


# A response, as a client of the legacy era sends one to a request of the server's (a ping, say).
RESPONSE = {"jsonrpc": "2.0", "id": "srv-1", "result": {}}


def check_silence(argv: list[str]) -> None:
    """No reply to a notification of either era, an unknown one, or a response."""
    with Server(argv) as server:
        server.expect_silence(notification("notifications/initialized"))  # legacy (2025-11-25 and before)
        server.expect_silence(notification("notifications/cancelled", {"requestId": 7, "reason": "user"}))
        server.expect_silence(notification("notifications/mcp-lab/unknown"))
        try:
            server.expect_silence(RESPONSE)
        except Failure as failure:
            if failure.check != "notification-silence":
                raise
            raise Failure(
                failure.check,
                "the server answered a response: a response is not a request, nothing answers it",
                **{**failure.details, **quoted("notification-silence", "response")},
            ) from None


def check_error_table(argv: list[str], id: Any = 1) -> None:
    tool_call = request("tools/call", id, {"name": "refund_order", "arguments": {}})
    probes: list[tuple[Any, dict[str, Any], str]] = [
        (b"hello?\n", _error(-32700), "parse-error"),
        ({"jsonrpc": "2.0", "id": id}, _error(-32600, id), "invalid-request"),
        ({"jsonrpc": "2.0", "id": None, "method": "ping"}, _error(-32600), "invalid-request"),
        (request("tools/lisst", id), _error(-32601, id), "method-not-found"),
        (tool_call, _error(-32602, id), "unknown-tool"),
    ]
    with Server(argv) as server:
        for sent, expected, check in probes:
            server.expect(sent, expected, check)
            ping = request("ping")
            server.expect(ping, {"jsonrpc": "2.0", "id": ping["id"], "result": {}}, "survives-bad-input")
