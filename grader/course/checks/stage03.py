"""The checks of stage 03 (eras: the 2026-07-28 envelope and discover, the legacy handshake).

The learner's ``server.py`` is a whole program: its pure pieces are called in the learner's own
process (the harness), the program runs as a child process, and at the end the official MCP
SDK's client connects to it in its default mode (2026-07-28 on the wire) and in its legacy mode.
"""

from __future__ import annotations

import random
import warnings
from collections.abc import Callable
from typing import Any

from reference.lifecycle import LATEST, SUPPORTED

from ..drive import Server, initialize, modern, notification, request, sdk_client
from ..expect import Failure, call, outcome, show
from ..remote import is_a
from ..work import Work
from . import public

VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "1999-01-01"]
MODERN = "2026-07-28"
PREFIX = "io.modelcontextprotocol/"
UNSERVED = ["2099-01-01", "2025-11-25"]  # versions a 2026-07-28 request may name that the server does not serve


@public(
    "03", "test_read_meta", "read_meta: a whole envelope, each required key missing or mistyped, an unserved version"
)
def read_meta_cell(work: Work) -> None:
    check_read_meta(work.module("server").read_meta, UNSERVED)


@public("03", "test_discover", "discover(): resultType, supportedVersions, capabilities, ttlMs, cacheScope, serverInfo")
def discover_cell(work: Work) -> None:
    check_discover(call(work.module("server").discover, "discover-result"))


@public("03", "test_eras", "your server in 2026-07-28, and a modern request after initialize")
def eras_cell(work: Work) -> None:
    check_eras(work.program("server"), "2099-01-01")


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


@public("03", "test_sdk_client", "the official MCP SDK's client in its default mode: discover, then 2026-07-28")
def sdk_client_cell(work: Work) -> None:
    check_sdk_client(work.program("server"))


@public("03", "test_sdk_legacy", "the official MCP SDK's client in its legacy mode: initialize and ping")
def sdk_legacy_cell(work: Work) -> None:
    check_sdk_legacy(work.program("server"))


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


def _meta(**changes: Any) -> dict[str, Any]:
    """Request params with the 2026-07-28 envelope; ``changes`` by key name, ``None`` drops a key."""
    meta: dict[str, Any] = {
        PREFIX + "protocolVersion": MODERN,
        PREFIX + "clientCapabilities": {},
        PREFIX + "clientInfo": {"name": "course", "version": "1.0"},
    }
    for name, value in changes.items():
        if value is None:
            meta.pop(PREFIX + name)
        else:
            meta[PREFIX + name] = value
    return {"_meta": meta}


def _refused(read_meta: Callable[[Any], Any], params: Any, code: int, check: str, what: str) -> BaseException:
    """Call read_meta(params), which must raise RpcError ``code``; returns the error."""
    result, error = outcome(read_meta, check, params)
    if error is None:
        raise Failure(
            check, f"read_meta accepted {what}: returned {result!r}; expected RpcError {code}", sent=show(params)
        )
    if not is_a(error, "RpcError") or getattr(error, "code", None) != code:
        raise Failure(
            check, f"read_meta raised {_described(error)} for {what}; expected RpcError {code}", sent=show(params)
        )
    return error


def check_read_meta(read_meta: Callable[[Any], Any], unserved: list[str]) -> None:
    whole = _meta()
    got = call(read_meta, "modern-envelope-errors", whole)
    if got != MODERN:
        raise Failure("modern-envelope-errors", f"read_meta returned {got!r} for a whole envelope; expected {MODERN!r}")
    malformed = [
        ({}, "params without _meta"),
        ({"_meta": []}, "a _meta that is an array"),
        (_meta(protocolVersion=None), "a _meta without the protocol version"),
        (_meta(protocolVersion=20260728), "a numeric protocol version"),
        (_meta(clientCapabilities=None), "a _meta without the client capabilities"),
        (_meta(clientCapabilities=["tools"]), "client capabilities that are an array"),
    ]
    for params, what in malformed:
        _refused(read_meta, params, -32602, "modern-envelope-errors", what)
    for version in unserved:
        error = _refused(read_meta, _meta(protocolVersion=version), -32022, "modern-unsupported-version", version)
        data = getattr(error, "data", None)
        supported = data.get("supported") if isinstance(data, dict) else None
        if not isinstance(supported, list) or MODERN not in supported or data.get("requested") != version:
            raise Failure(
                "modern-unsupported-version",
                f"the -32022 for {version} needs data {{'supported': [... {MODERN!r} ...], 'requested': {version!r}}}",
                received=show(data),
            )


def check_discover(result: Any, sent: str = "") -> None:
    where = {"sent": sent} if sent else {}
    if not isinstance(result, dict):
        raise Failure("discover-result", f"the result is {type(result).__name__}, not an object", **where)
    if result.get("resultType") != "complete":
        raise Failure("modern-result-type", 'a finished result needs "resultType": "complete"', received=show(result))
    versions = result.get("supportedVersions")
    if not isinstance(versions, list) or MODERN not in versions or not all(isinstance(v, str) for v in versions):
        raise Failure(
            "discover-result", f'"supportedVersions" must be a list of strings with {MODERN!r}', received=show(result)
        )
    if not isinstance(result.get("capabilities"), dict):
        raise Failure("discover-result", '"capabilities" must be an object ({} is fine)', received=show(result))
    ttl = result.get("ttlMs")
    if not isinstance(ttl, int) or isinstance(ttl, bool) or ttl < 0:
        raise Failure(
            "modern-cacheable", '"ttlMs" must be an integer of milliseconds, 0 or more', received=show(result)
        )
    if result.get("cacheScope") not in ("public", "private"):
        raise Failure("modern-cacheable", '"cacheScope" must be "public" or "private"', received=show(result))
    meta = result.get("_meta")
    info = meta.get(PREFIX + "serverInfo") if isinstance(meta, dict) else None
    if not isinstance(info, dict) or not all(isinstance(info.get(k), str) for k in ("name", "version")):
        raise Failure(
            "discover-result",
            f'_meta["{PREFIX}serverInfo"] needs a string "name" and "version"',
            received=show(result),
        )


def check_eras(argv: list[str], unserved: str) -> None:
    with Server(argv) as server:
        probe = modern("server/discover")
        reply = server.expect(probe, {"jsonrpc": "2.0", "id": probe["id"]}, "discover-result")
        if "error" in reply:
            raise Failure(
                "discover-result", "server/discover was answered with an error", sent=show(probe), received=show(reply)
            )
        check_discover(reply["result"], show(probe))
        ping = modern("ping")
        server.expect(ping, {"jsonrpc": "2.0", "id": ping["id"], "error": {"code": -32601}}, "modern-removed-methods")
        bare = modern("server/discover", clientCapabilities=None)
        server.expect(bare, {"jsonrpc": "2.0", "id": bare["id"], "error": {"code": -32602}}, "modern-envelope-errors")
        later = modern("server/discover", protocolVersion=unserved)
        reply = server.expect(
            later, {"jsonrpc": "2.0", "id": later["id"], "error": {"code": -32022}}, "modern-unsupported-version"
        )
        data = reply["error"].get("data")
        if (
            not isinstance(data, dict)
            or MODERN not in (data.get("supported") or [])
            or data.get("requested") != unserved
        ):
            raise Failure(
                "modern-unsupported-version",
                f'a -32022 needs data with the versions served in "supported" and {unserved!r} as "requested"',
                sent=show(later),
                received=show(reply),
            )
        plain = request("ping")
        server.expect(plain, {"jsonrpc": "2.0", "id": plain["id"], "error": {"code": -32602}}, "era-mixing")
    with Server(argv) as server:
        _open(server, LATEST)
        late = modern("server/discover")
        server.expect(late, {"jsonrpc": "2.0", "id": late["id"], "error": {"code": -32600}}, "era-mixing")
        ping = request("ping")
        server.expect(ping, {"jsonrpc": "2.0", "id": ping["id"], "result": {}}, "ping")


def check_sdk_client(argv: list[str]) -> None:
    """The official SDK's client in its default mode: it probes, and must stay on 2026-07-28."""

    async def steps(client: Any) -> dict[str, Any]:
        return {"version": client.protocol_version}

    got = sdk_client(argv, steps, "discover-result", "connect", mode="auto")
    if got.get("version") != MODERN:
        raise Failure(
            "discover-result",
            f"the SDK's client, in its default mode, fell back to the handshake ({got.get('version')}): its "
            "server/discover probe did not get a DiscoverResult",
        )


def check_sdk_legacy(argv: list[str]) -> None:
    """The official SDK's client in its legacy mode: initialize, ping, close."""

    async def steps(client: Any) -> dict[str, Any]:
        # ping exists in the legacy era only: the SDK warns about it on every call, whatever the mode.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return {"ping": await client.send_ping()}

    sdk_client(argv, steps, "initialize-result", "initialize and ping", mode="legacy")
