"""The checks of stage 03 (eras): part A, MCP 2026-07-28 (``modern_server.py``); part B, the legacy
handshake and the dual-era server (``server.py``, which imports ``modern_server``).

The learner's pure pieces are called in the learner's own process (the harness), the programs run as
child processes, and the official MCP SDK's client connects to them: in its default mode (2026-07-28
on the wire) to ``modern_server.py``, in its legacy mode to ``server.py``.
"""

from __future__ import annotations

import inspect
import random
import warnings
from collections.abc import Callable
from typing import Any

from grader.checker.catalogue import CATALOGUE
from reference.dispatch import Dispatcher
from reference.lifecycle import LATEST, SUPPORTED

from ..calls import call, outcome
from ..drive import Server, initialize, modern, notification, request, sdk_client
from ..expect import Failure, show
from ..remote import Remote, is_a
from ..work import Work
from . import public

VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "1999-01-01"]
MODERN = "2026-07-28"
PREFIX = "io.modelcontextprotocol/"
UNSERVED = ["2099-01-01", "2025-11-25"]  # versions a 2026-07-28 request may name that the server does not serve
# The operations whose complete results carry caching hints (2026-07-28, server/utilities/caching).
CACHEABLE = [
    "server/discover",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
]
NOT_CACHEABLE = ["tools/call", "prompts/get", "completion/complete"]
# What the course asks beyond the spec's words, said beside the rule a failure quotes.
COURSE_LOCKS = (
    "the spec lets a dual-era server serve both eras on one stdio process (MAY); the course's server, like "
    "the official SDKs, locks the process to the era its first request chooses: the 2026-07-28 _meta chooses "
    "modern, initialize chooses legacy, and nothing else chooses (a plain ping locks nothing)"
)


# -- part A: MCP 2026-07-28 (modern_server.py) ---------------------------------------------------
@public(
    "03", "test_read_meta", "read_meta: a whole envelope, each required key missing or mistyped, an unserved version"
)
def read_meta_cell(work: Work) -> None:
    check_read_meta(work.module("modern_server").read_meta, UNSERVED)


@public("03", "test_complete", "complete(method, result): resultType, the result kept, serverInfo, caching hints")
def complete_cell(work: Work) -> None:
    check_complete(work.module("modern_server").complete, ["tools/list", "server/discover"], ["tools/call"])


@public("03", "test_discover", "discover(): resultType, supportedVersions, capabilities, ttlMs, cacheScope, serverInfo")
def discover_cell(work: Work) -> None:
    check_discover(call(work.module("modern_server").discover, "discover-result"))


@public("03", "test_modern_server", "your modern_server.py: discover, a removed method, the envelope, initialize")
def modern_server_cell(work: Work) -> None:
    server = work.module("modern_server")
    check_wiring(call(server.make_dispatcher, "dispatcher-wiring"), "modern_server.make_dispatcher()", ("route",))
    check_modern_server(work.program("modern_server"), "2099-01-01")


@public("03", "test_exit", "stdin closed: your server exits by itself, status 0, with nothing more on stdout")
def exit_cell(work: Work) -> None:
    check_exit(work.program("modern_server"))


@public("03", "test_sdk_client", "the official MCP SDK's client in its default mode: discover, then 2026-07-28")
def sdk_client_cell(work: Work) -> None:
    server = work.module("modern_server")
    check_wiring(call(server.make_dispatcher, "dispatcher-wiring"), "modern_server.make_dispatcher()", ("route",))
    check_sdk_client(work.program("modern_server"))


# -- part B: the handshake, and one server for both eras (server.py) ------------------------------
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
    server = work.module("server")
    dispatcher = call(server.make_dispatcher, "dispatcher-wiring", server.Session())
    check_wiring(dispatcher, "server.make_dispatcher(session)", ("batches_allowed", "no_batch"))
    check_batches(work.program("server"))


@public(
    "03", "test_eras", "your server: a ping chooses no era; 2026-07-28, then initialize; initialize, then 2026-07-28"
)
def eras_cell(work: Work) -> None:
    server = work.module("server")
    dispatcher = call(server.make_dispatcher, "dispatcher-wiring", server.Session())
    check_wiring(dispatcher, "server.make_dispatcher(session)", ("route",))
    check_eras(work.program("server"), "2099-01-01")


@public("03", "test_sdk_legacy", "the official MCP SDK's client in its legacy mode: initialize and ping")
def sdk_legacy_cell(work: Work) -> None:
    check_sdk_legacy(work.program("server"))


# -- the wiring: a Dispatcher built with its arguments in their places ----------------------------
def _looks(value: Any) -> tuple[bool, str, str]:
    """(callable, type name, repr) of a value of the learner's process (a proxy) or of this one."""
    if isinstance(value, Remote):
        return bool(value._callable), str(value._type).rpartition(".")[2], str(value._repr)
    return callable(value), type(value).__name__, repr(value)


def dispatcher_signature() -> str:
    """The course's Dispatcher as it really is: ``Dispatcher(methods, notifications, batches_allowed, ...)``."""
    return f"Dispatcher({', '.join(inspect.signature(Dispatcher).parameters)})"


def check_wiring(dispatcher: Any, made_by: str, names: tuple[str, ...]) -> None:
    """The learner's Dispatcher has in ``names`` what each parameter takes (a positional mix-up says so).

    A Dispatcher without the learner's ``route`` serves every request from ``methods`` alone, so a
    2026-07-28 ``server/discover`` gets -32601: the failure quotes the rule that breaks (Discovery's
    MUST) and names the wiring that broke it. A misplaced batch setting breaks no rule of the spec's
    by itself: the failure quotes the Dispatcher's real signature."""
    wrong = []
    for name in names:
        is_callable, kind, text = _looks(getattr(dispatcher, name))
        if name == "no_batch" and (is_callable or kind not in ("frozenset", "set", "tuple", "list")):
            wrong.append(f"no_batch (a set of method names) got {text}")
        elif name == "batches_allowed" and not is_callable:
            wrong.append(f"batches_allowed (a function of no arguments) got {text}")
        elif name == "route" and (not is_callable or "Dispatcher.__init__" in text):
            wrong.append("route= was never given, so server/discover is never routed (the Dispatcher answers -32601)")
    if not wrong:
        return
    summary = f"{made_by} built its Dispatcher with arguments in the wrong places: {'; '.join(wrong)}"
    signature = (
        f"the course's {dispatcher_signature()} (reference/dispatch.py): an argument given by position lands "
        "in the parameter of that position"
    )
    keywords = (
        "pass all but the first two by keyword: Dispatcher(methods, notifications, batches_allowed=lambda: ..., "
        "route=lambda request: ...)"
    )
    if any(w.startswith("route=") for w in wrong):
        raise Failure("discover-result", summary, fix=f"{signature}; {keywords}")
    raise Failure("dispatcher-wiring", summary, rule=signature, fix=keywords)


# -- part B's pure pieces and handshake ---------------------------------------------------------
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


def check_exit(argv: list[str], legacy: bool = False) -> None:
    """A session (a 2026-07-28 discover, or the handshake), then stdin closed: the server exits, status 0."""
    with Server(argv) as server:
        if legacy:
            _open(server, LATEST)
        else:
            probe = modern("server/discover")
            server.expect(probe, {"jsonrpc": "2.0", "id": probe["id"]}, "discover-result")
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
            rule=_rule("discover-result", "server-info"),
        )


def check_complete(complete: Callable[[str, Any], Any], cacheable: list[str], other: list[str]) -> None:
    """complete(method, result): resultType first-class, the result kept, serverInfo; hints on the six."""
    for method in [*cacheable, *other]:
        given = {"items": [1, "two"], "nextCursor": None} if method in cacheable else {"content": [], "isError": False}
        got = call(complete, "modern-result-type", method, dict(given))
        where = f"complete({method!r}, {show(given)})"
        if not isinstance(got, dict):
            raise Failure("modern-result-type", f"{where} returned {type(got).__name__}, not an object")
        if got.get("resultType") != "complete":
            raise Failure("modern-result-type", f'{where} needs "resultType": "complete"', received=show(got))
        lost = [key for key, value in given.items() if key not in got or got[key] != value]
        if lost:
            raise Failure("modern-result-type", f"{where} lost the result's own {lost}", received=show(got))
        meta = got.get("_meta")
        info = meta.get(PREFIX + "serverInfo") if isinstance(meta, dict) else None
        if not isinstance(info, dict) or not all(isinstance(info.get(k), str) for k in ("name", "version")):
            raise Failure(
                "discover-result",
                f'{where} needs _meta["{PREFIX}serverInfo"] with a string "name" and "version"',
                received=show(got),
                rule=_rule("discover-result", "server-info"),
            )
        if method in cacheable:
            _check_hints(got, f"{where}: {method} is one of the six cacheable operations, and")


def _check_hints(result: Any, where: str) -> None:
    ttl = result.get("ttlMs")
    if not isinstance(ttl, int) or isinstance(ttl, bool) or ttl < 0:
        raise Failure(
            "modern-cacheable", f'{where} "ttlMs" must be an integer of milliseconds, 0 or more', received=show(result)
        )
    if result.get("cacheScope") not in ("public", "private"):
        raise Failure("modern-cacheable", f'{where} "cacheScope" must be "public" or "private"', received=show(result))


def _rule(check: str, name: str) -> str:
    """One of a check's other rules, quoted as a failure quotes it."""
    rule = CATALOGUE[check].also[name]
    return f"{rule.source} ({rule.keyword}): {rule.text}"


def _modern_requests(server: Server, unserved: str) -> None:
    """On a 2026-07-28 connection: discover, a removed method, the envelope's errors."""
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
    if not isinstance(data, dict) or MODERN not in (data.get("supported") or []) or data.get("requested") != unserved:
        raise Failure(
            "modern-unsupported-version",
            f'a -32022 needs data with the versions served in "supported" and {unserved!r} as "requested"',
            sent=show(later),
            received=show(reply),
        )


def _initialize_refused(server: Server, where: str, **notes: str) -> None:
    """An initialize where 2026-07-28 is spoken: -32022 naming the versions served, and the one asked for."""
    init = initialize(LATEST)
    server.send(init)
    reply = server.next_line(init, "modern-removed-methods")
    error = reply.get("error") if isinstance(reply, dict) else None
    data = error.get("data") if isinstance(error, dict) else None
    supported = data.get("supported") if isinstance(data, dict) else None
    if (
        isinstance(error, dict)
        and error.get("code") == -32022
        and isinstance(supported, list)
        and MODERN in supported
        and data.get("requested") == LATEST
        and reply.get("id") == init["id"]
    ):
        return
    raise Failure(
        "modern-removed-methods",
        f"{where}, an initialize must be refused with an error that names the versions you serve: the course "
        "asks -32022 with data.supported and data.requested, as your modern_server.route answers it",
        sent=show(init),
        expected=show(
            {
                "jsonrpc": "2.0",
                "id": init["id"],
                "error": {"code": -32022, "message": "...", "data": {"supported": [MODERN], "requested": LATEST}},
            }
        ),
        received=show(reply),
        rule=_rule("modern-removed-methods", "initialize"),
        fix=CATALOGUE["modern-removed-methods"].also["initialize"].fix,
        **notes,
    )


def check_modern_server(argv: list[str], unserved: str) -> None:
    """A server of 2026-07-28 only, over its pipes."""
    with Server(argv) as server:
        _modern_requests(server, unserved)
        plain = request("tools/list")
        server.expect(plain, {"jsonrpc": "2.0", "id": plain["id"], "error": {"code": -32602}}, "modern-envelope-errors")
        _initialize_refused(server, "on a server of 2026-07-28 only")
        server.expect_silence(notification("notifications/cancelled", {"requestId": "gone"}))


def _course_lock(server: Server, sent: dict[str, Any], expected: dict[str, Any]) -> dict[str, Any]:
    """``server.expect`` for an answer only the course's era lock fixes: a failure quotes that choice."""
    try:
        return server.expect(sent, expected, "era-mixing")
    except Failure as failure:
        if failure.check != "era-mixing":
            raise
        rule = CATALOGUE["era-mixing"].also["course-lock"]
        raise Failure(
            "era-mixing",
            failure.summary,
            **{**failure.details, "rule": _rule("era-mixing", "course-lock"), "fix": rule.fix},
        ) from None


def check_eras(argv: list[str], unserved: str) -> None:
    """The dual-era server: which traffic chooses the era, and what the other era's traffic gets."""
    with Server(argv) as server:
        ping = request("ping")
        server.expect(ping, {"jsonrpc": "2.0", "id": ping["id"], "result": {}}, "ping")
        probe = modern("server/discover")
        reply = server.expect(probe, {"jsonrpc": "2.0", "id": probe["id"]}, "era-mixing")
        if "error" in reply:
            rule = CATALOGUE["era-mixing"].also["course-lock"]
            raise Failure(
                "era-mixing",
                "after a plain ping, a 2026-07-28 request was refused: the ping chose the legacy era",
                sent=[show(ping), show(probe)],
                received=show(reply),
                rule=_rule("era-mixing", "course-lock"),
                fix=rule.fix,
            )
        _modern_requests(server, unserved)
        plain = request("ping")
        _course_lock(server, plain, {"jsonrpc": "2.0", "id": plain["id"], "error": {"code": -32602}})
        _initialize_refused(server, "on a connection whose first 2026-07-28 request chose modern", course=COURSE_LOCKS)
    with Server(argv) as server:
        _open(server, LATEST)
        late = modern("server/discover")
        _course_lock(server, late, {"jsonrpc": "2.0", "id": late["id"], "error": {"code": -32600}})
        ping = request("ping")
        server.expect(ping, {"jsonrpc": "2.0", "id": ping["id"], "result": {}}, "ping")
        bare = request("server/discover")
        _course_lock(server, bare, {"jsonrpc": "2.0", "id": bare["id"], "error": {"code": -32601}})


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
