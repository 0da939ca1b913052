"""The checks of stage 03 (the lifecycle).

The learner's ``server.py`` is a whole program: its pure pieces are called in the learner's own
process (the harness), the program runs as a child process, and at the end the official MCP
SDK's client connects to it.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from reference.lifecycle import LATEST, SUPPORTED

from ..drive import Server, initialize, notification, request, sdk_session
from ..expect import Failure, call, outcome, show
from ..remote import is_a
from ..work import Work
from . import public

VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "1999-01-01"]


@public("03", "test_negotiate", "negotiate for the four supported revisions and one unknown (1999-01-01)")
def negotiate_cell(work: Work) -> None:
    check_negotiate(work.module("server").negotiate, VERSIONS)


@public("03", "test_initialize", "initialize(session, params) for 2025-06-18; a second initialize; a numeric version")
def initialize_cell(work: Work) -> None:
    server = work.module("server")
    check_initialize(server.initialize, server.Session, "2025-06-18")


@public("03", "test_handshake", "your server: ping, initialize (2025-11-25), initialized, ping, a second initialize")
def handshake_cell(work: Work) -> None:
    check_handshake(work.program("server"), "2025-11-25")


@public("03", "test_batches", "a batch of two pings under 2025-03-26; a batch refused under 2025-11-25")
def batches_cell(work: Work) -> None:
    check_batches(work.program("server"))


@public("03", "test_exit", "stdin closed: your server exits by itself, status 0, with nothing more on stdout")
def exit_cell(work: Work) -> None:
    check_exit(work.program("server"))


@public("03", "test_sdk_client", "the official MCP SDK's client: initialize and ping")
def sdk_client_cell(work: Work) -> None:
    check_sdk_client(work.program("server"))


def random_versions(rng: random.Random, n: int) -> list[str]:
    unknown = [
        f"{rng.randrange(2000, 2024)}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}",
        "2026-07-28",
        "2025-11-25-draft",
        "2025-06-19",
    ]
    pool = [*SUPPORTED, *rng.sample(unknown, 2)]
    rng.shuffle(pool)
    return pool[:n]


def expected_version(requested: str) -> str:
    return requested if requested in SUPPORTED else LATEST


def check_negotiate(negotiate: Callable[[str], Any], versions: list[str]) -> None:
    for version in versions:
        got = call(negotiate, "version-negotiation", version)
        want = expected_version(version)
        if got != want:
            why = "a supported revision is echoed" if version in SUPPORTED else "an unknown revision gets the latest"
            raise Failure("version-negotiation", f"negotiate({version!r}) returned {got!r}, expected {want!r}: {why}")


def _params(version: Any) -> dict[str, Any]:
    return {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "course", "version": "1.0"}}


def check_initialize(initialize_: Callable[[Any, Any], Any], session_class: type, version: str) -> None:
    session = session_class()
    result = call(initialize_, "initialize-result", session, _params(version))
    _check_result(result, version, show(_params(version)))
    if getattr(session, "version", None) != expected_version(version):
        raise Failure("version-negotiation", "initialize did not record the negotiated revision in session.version")
    _, error = outcome(initialize_, "initialize-result", session, _params(LATEST))
    if error is None:
        raise Failure(
            "version-negotiation",
            "a second initialize on the same session was accepted: the negotiated revision MUST hold",
            hint="remember in the session that initialize was answered, and raise RpcError(INVALID_REQUEST, ...)",
        )
    if not is_a(error, "RpcError") or getattr(error, "code", None) != -32600:
        raise Failure("initialize-result", f"a second initialize raised {_described(error)}; expected RpcError -32600")
    _, error = outcome(initialize_, "initialize-result", session_class(), _params(20251125))
    if error is None:
        raise Failure("initialize-result", "a numeric protocolVersion (20251125) was accepted; expected -32602")
    if not is_a(error, "RpcError") or getattr(error, "code", None) != -32602:
        raise Failure("initialize-result", f"a numeric protocolVersion raised {_described(error)}; expected -32602")


def _described(error: BaseException) -> str:
    return f"RpcError {getattr(error, 'code', '?')}" if is_a(error, "RpcError") else type(error).__name__


def _check_result(result: Any, version: str, sent: str) -> None:
    if not isinstance(result, dict):
        raise Failure("initialize-result", f"the result is {type(result).__name__}, not an object", sent=sent)
    want = expected_version(version)
    if result.get("protocolVersion") != want:
        raise Failure(
            "version-negotiation",
            f"asked for {version}, answered {result.get('protocolVersion')!r}; expected {want}",
            sent=sent,
            received=show(result),
        )
    if not isinstance(result.get("capabilities"), dict):
        raise Failure("initialize-result", '"capabilities" must be an object ({} is fine)', received=show(result))
    info = result.get("serverInfo")
    if not isinstance(info, dict) or not all(isinstance(info.get(k), str) for k in ("name", "version")):
        raise Failure("initialize-result", '"serverInfo" needs a string "name" and "version"', received=show(result))


def check_handshake(argv: list[str], version: str) -> None:
    with Server(argv) as server:
        ping = request("ping")
        server.expect(ping, {"jsonrpc": "2.0", "id": ping["id"], "result": {}}, "ping")
        init = initialize(version)
        reply = server.expect(init, {"jsonrpc": "2.0", "id": init["id"]}, "initialize-result")
        if "error" in reply:
            raise Failure(
                "initialize-result", "initialize was answered with an error", sent=show(init), received=show(reply)
            )
        _check_result(reply["result"], version, show(init))
        server.expect_silence(notification("notifications/initialized"))
        ping = request("ping")
        server.expect(ping, {"jsonrpc": "2.0", "id": ping["id"], "result": {}}, "ping")
        again = initialize(LATEST)
        server.expect(again, {"jsonrpc": "2.0", "id": again["id"], "error": {"code": -32600}}, "version-negotiation")


def _open(server: Server, version: str) -> None:
    init = initialize(version)
    server.expect(init, {"jsonrpc": "2.0", "id": init["id"]}, "initialize-result")
    server.send(notification("notifications/initialized"))


def check_batches(argv: list[str]) -> None:
    with Server(argv) as server:
        _open(server, "2025-03-26")
        a, b = request("ping"), request("ping")
        server.send([a, b])
        replies = server.next_line([a, b], "invalid-request")
        want = [{"jsonrpc": "2.0", "id": a["id"], "result": {}}, {"jsonrpc": "2.0", "id": b["id"], "result": {}}]
        key = str  # replies may come in any order
        if not isinstance(replies, list) or sorted(map(key, replies)) != sorted(map(key, want)):
            raise Failure(
                "invalid-request",
                "under 2025-03-26 a batch of two pings gets an array of two replies",
                sent=show([a, b]),
                expected=show(want),
                received=show(replies),
            )
        server.expect_silence([notification("notifications/mcp-lab/one"), notification("notifications/mcp-lab/two")])
    with Server(argv) as server:
        _open(server, "2025-11-25")
        ping = request("ping")
        server.expect([ping], {"jsonrpc": "2.0", "id": None, "error": {"code": -32600}}, "invalid-request")


def check_exit(argv: list[str]) -> None:
    with Server(argv) as server:
        _open(server, LATEST)
        server.expect_exit()


def check_sdk_client(argv: list[str]) -> None:
    """The official SDK's stdio client: initialize, ping, close."""

    async def steps(client: Any) -> dict[str, Any]:
        return {"ping": await client.send_ping()}

    sdk_session(argv, steps, "initialize-result", "initialize and ping")
