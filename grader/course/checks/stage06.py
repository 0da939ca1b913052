"""The checks of stage 06 (the client).

The learner's ``Client`` (in their own process, through the harness) drives real processes: the
adversaries of :mod:`lab_runtime.peers.adversaries` (the shop server as it should be, replies out
of order, a server that talks first, one that never answers, one that floods stderr, one that
ignores the end of its input; and for MCP 2026-07-28's eras: the dual-era shop server, legacy-only
servers that refuse the ``server/discover`` probe with one code or another or ignore it, a modern
server of a later revision, and one that asks for input three times before it completes). Every
call into the learner's code is bounded (:func:`calls.call`), and whatever process their client
started is killed when the check ends, so a broken client costs seconds, never a hung kernel.
"""

from __future__ import annotations

import contextlib
import io
import json
import random
import time
from collections.abc import Iterator
from typing import Any

from reference.lifecycle import LATEST
from reference.server import make_server

from ..calls import call, outcome
from ..expect import Failure, equal, show
from ..lab_runtime.fixtures import answer
from ..lab_runtime.peers.adversaries import asker_round, draw_asker, question
from ..work import Work
from . import public

LIMIT = 4.0  # seconds any one call into the learner's client may take (the slowest legitimate: ~1.5 s)
GRACE = 0.5  # the grace the tests pass to close() for servers that must be signalled (default 2 s)
CLOSE_LIMIT = 8.0  # close() on a server that ignores SIGTERM: grace, SIGTERM, a wait, SIGKILL
SHOP_TOOLS = ["count_orders", "list_orders", "get_order", "search_products"]


@public("06", "test_launch", "launch: a list of arguments (no shell), three pipes, no PYTHONUNBUFFERED for the child")
def launch_cell(work: Work) -> None:
    check_launch(work)


@public("06", "test_handshake", "initialize (2025-11-25), initialized, tools/list, tools/call; notify() never waits")
def handshake_cell(work: Work) -> None:
    check_handshake(work, LATEST)
    check_notify(work)


@public("06", "test_ids", "replies out of order and forged string ids, waited for in order; a request of id 0")
def ids_cell(work: Work) -> None:
    check_ids(work, ["ping", "tools/list", "ping"], [0, 1, 2])


@public("06", "test_server_messages", "a server that sends a log, a ping and a sampling request before its reply")
def server_messages_cell(work: Work) -> None:
    check_server_messages(work)


@public("06", "test_timeouts", "a server that never answers (timeout 1 s) and one that exits: ClientError, soon")
def timeouts_cell(work: Work) -> None:
    check_timeouts(work, 1.0)


@public("06", "test_stderr", "a server that writes 1 MiB to stderr before it answers")
def stderr_cell(work: Work) -> None:
    check_stderr(work)


@public("06", "test_close", "close(): stdin first (status 0), then SIGTERM, then SIGKILL for servers that stay")
def close_cell(work: Work) -> None:
    check_close(work)


@public(
    "06",
    "test_probe",
    "connect(): the server/discover probe; modern on a DiscoverResult; initialize after -32601, -32602 or "
    "silence; no fallback after -32022",
)
def probe_cell(work: Work) -> None:
    check_probe(work, ["-32601", "-32602"], 1.0)


@public("06", "test_envelope", "modern era: the three _meta keys on every request (the caller's kept); legacy: none")
def envelope_cell(work: Work) -> None:
    check_envelope(work, "paid", "progress-1")


@public("06", "test_input_required", "round_trip(): three input_required results in a row, each retry as asked")
def input_required_cell(work: Work) -> None:
    check_input_required(work, "0", 9)


def command(work: Work, name: str, *args: str) -> list[str]:
    """The command that runs the adversary ``name``, as the learner's client sees it."""
    return work.peer("adversaries", name, *args)


@contextlib.contextmanager
def running(work: Work, argv: list[str], check: str, **kwargs: Any) -> Iterator[Any]:
    """The learner's client on ``argv``; its process is killed afterwards whatever happened."""
    client = call(work.module("mcp_client").Client, "client-launch", argv, limit=LIMIT, **kwargs)
    try:
        yield client
    finally:
        # The learner's process may be stopped already (a call that hung): then it took the server with it.
        with contextlib.suppress(Exception):
            process = getattr(client, "process", None)
            if process is not None and getattr(process, "poll", lambda: 0)() is None:
                process.kill()
                process.wait(2)


def _reference_answer(method: str, params: dict[str, Any]) -> Any:
    """What the reference server answers, computed in this process (after a handshake)."""
    server = make_server()
    with contextlib.redirect_stderr(io.StringIO()):  # its log lines are not the learner's business
        return _answer(server, method, params)


def _answer(server: Any, method: str, params: dict[str, Any]) -> Any:
    server.handle_line(
        json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": _init(LATEST)}).encode()
    )
    reply = server.handle_line(json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode())
    return reply.get("result")


def _init(version: str) -> dict[str, Any]:
    return {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "course", "version": "1"}}


# -- 1. launching --------------------------------------------------------------------------------
_ECHO_ENV = (
    "import json, os, sys; "
    "print(json.dumps({'argv': sys.argv[1:], 'unbuffered': 'PYTHONUNBUFFERED' in os.environ}), flush=True); "
    "print('a line for stderr', file=sys.stderr)"
)


def check_launch(work: Work) -> None:
    tricky = ["two words", "$HOME", "a; echo injected", "'quoted'"]
    # The learner's process runs with PYTHONUNBUFFERED=1, as in many notebook and container environments.
    launch = work.module("mcp_client").launch
    process = call(launch, "client-launch", [*work.python(), "-c", _ECHO_ENV, *tricky], limit=LIMIT)
    try:
        for stream in ("stdin", "stdout", "stderr"):
            if getattr(process, stream, None) is None:
                raise Failure(
                    "client-launch", f"the child's {stream} is not a pipe", hint=f"pass {stream}=subprocess.PIPE"
                )
        out, _ = process.communicate(timeout=5)
    except Exception:
        with contextlib.suppress(Exception):
            process.kill()
        raise
    lines = out.decode("utf-8", "replace").splitlines()
    seen = json.loads(lines[0]) if lines and lines[0].startswith("{") else None
    if seen is None:
        raise Failure("client-launch", "the child did not run as given", received=out.decode("utf-8", "replace")[:300])
    if seen["argv"] != tricky:
        raise Failure(
            "client-launch",
            "the child got other arguments than the list you were given: was a shell involved?",
            expected=show(tricky),
            received=show(seen["argv"]),
        )
    if seen["unbuffered"]:
        raise Failure(
            "client-launch",
            "PYTHONUNBUFFERED reached the child: it would hide a server's missing flush",
            hint="pass env= a copy of os.environ without PYTHONUNBUFFERED",
        )
    if b"a line for stderr" in out:
        raise Failure("client-launch", "the child's stderr went into its stdout: keep the two pipes apart")


# -- 2. the handshake, list, call -------------------------------------------------------------------
def check_handshake(work: Work, version: str) -> None:
    with running(work, command(work, "polite"), "client-handshake") as client:
        result = call(client.initialize, "client-handshake", version, limit=LIMIT)
        if not isinstance(result, dict) or result.get("protocolVersion") != version:
            raise Failure(
                "client-handshake",
                "initialize() must return the server's initialize result",
                expected=f'an object with "protocolVersion": "{version}" (the reference echoes a supported revision)',
                received=show(result),
            )
        sent = call(client.request, "client-notify", "lab/received", limit=LIMIT)
        _check_sent(sent, version)
        tools = call(client.request, "client-request", "tools/list", limit=LIMIT)
        names = [t.get("name") for t in tools.get("tools", [])] if isinstance(tools, dict) else None
        if names != SHOP_TOOLS:
            raise Failure("client-request", "request('tools/list') must return the result", received=show(tools))
        status = random.Random(version).choice(["paid", "shipped", "pending"])
        params = {"name": "count_orders", "arguments": {"status": status}}
        got = call(client.request, "client-request", "tools/call", params, limit=LIMIT)
        want = _reference_answer("tools/call", params)
        equal(got, want, "client-request", "request('tools/call', ...) must return the result")


def _check_sent(sent: Any, version: str) -> None:
    """What the reference read, as the adversaries' ``lab/received`` reports it."""
    messages = sent.get("messages") if isinstance(sent, dict) else None
    if not isinstance(messages, list) or len(messages) < 2:
        raise Failure("client-handshake", "the server did not get the handshake", received=show(messages))
    first, second = messages[0], messages[1]
    if not (isinstance(first, dict) and first.get("method") == "initialize" and "id" in first):
        raise Failure("client-handshake", "the first message must be the initialize request", received=show(first))
    if first.get("jsonrpc") != "2.0" or first.get("params", {}).get("protocolVersion") != version:
        raise Failure(
            "client-handshake",
            "initialize must say jsonrpc 2.0 and propose the revision asked for",
            received=show(first),
        )
    if not isinstance(second, dict) or second.get("method") != "notifications/initialized" or "id" in second:
        raise Failure(
            "client-notify",
            "after the initialize result the client sends notifications/initialized, a notification (no id)",
            received=show(second),
        )
    ids = [m.get("id") for m in messages if isinstance(m, dict) and "id" in m]
    if len(ids) != len({json.dumps(i) for i in ids}):
        raise Failure("client-ids", "every request needs an id of its own", received=show(ids))


def check_notify(work: Work) -> None:
    with running(work, command(work, "mute"), "client-notify") as client:
        clock = Stopwatch(work)
        call(client.notify, "client-notify", "notifications/initialized", limit=LIMIT)
        call(client.notify, "client-notify", "notifications/cancelled", {"requestId": 1}, limit=LIMIT)
        if clock.stop() > 1.0:
            raise Failure(
                "client-notify",
                f"notify() took {clock} against a server that never answers: it waited for a reply",
                hint="a notification has no id and no reply: send it and return",
            )


# -- 3. ids, not order ----------------------------------------------------------------------------
def check_ids(work: Work, methods: list[str], order: list[int]) -> None:
    """Send ``methods`` to the adversary that answers out of order, then wait for them in ``order``."""
    with running(work, command(work, "reverse"), "client-ids") as client:
        call(client.initialize, "client-ids", LATEST, limit=LIMIT)
        ids = [call(client.send_request, "client-ids", m, limit=LIMIT) for m in methods]
        if len({json.dumps(i) for i in ids}) != len(ids):
            raise Failure("client-ids", "send_request gave two requests the same id", received=show(ids))
        for i in order:
            reply = call(client.wait_for, "client-ids", ids[i], limit=LIMIT)
            _check_reply(reply, ids[i], methods[i])
        check_id_zero(client)
        result = call(
            client.request, "client-ids", "tools/call", {"name": "get_order", "arguments": {"order_id": 7}}, limit=LIMIT
        )
        if not isinstance(result, dict) or result.get("structuredContent", {}).get("id") != 7:
            raise Failure("client-ids", "request() returned another request's reply", received=show(result))


def check_id_zero(client: Any) -> None:
    """A request with id 0 (sent with the given send(): ids are the client's to choose), waited for: 0 is an id
    like any other, and the reverse server's forged "0" (a string) comes first."""
    zero = {"jsonrpc": "2.0", "id": 0, "method": "ping"}
    call(client.send, "client-ids", zero, limit=LIMIT)
    reply, error = outcome(client.wait_for, "client-ids", 0, 1.5, limit=LIMIT)
    if error is not None:
        raise Failure(
            "client-ids",
            f"wait_for(0) raised {type(error).__name__} instead of returning the reply with id 0",
            sent=show(zero),
            expected='{"jsonrpc":"2.0","id":0,"result":{}} (after a forged reply with the id "0", a string)',
            received=f"{type(error).__name__}: {error}",
            hint='0 is an id: test "id" in message, never the truth of message.get("id")',
        )
    _check_reply(reply, 0, "ping")


def _check_reply(reply: Any, request_id: Any, method: str) -> None:
    if not isinstance(reply, dict) or type(reply.get("id")) is not type(request_id) or reply.get("id") != request_id:
        got = reply.get("id") if isinstance(reply, dict) else None
        raise Failure(
            "client-ids",
            f"wait_for({json.dumps(request_id)}) returned the reply with id {json.dumps(got)}",
            expected=f"the reply whose id is {json.dumps(request_id)}, with the same JSON type",
            received=show(reply),
            hint="replies come in any order, and a string id is not a number: keep the others for later",
        )
    want = {} if method == "ping" else None
    if want is not None and reply.get("result") != want:
        raise Failure("client-ids", f"the reply to {method} is not the server's", received=show(reply))
    if method == "tools/list" and "tools" not in reply.get("result", {}):
        raise Failure("client-ids", "the reply to tools/list is not the server's", received=show(reply))


# -- 4. the server speaks first -----------------------------------------------------------------------
def check_server_messages(work: Work) -> None:
    with running(work, command(work, "chatty"), "client-server-requests") as client:
        call(client.initialize, "client-server-requests", LATEST, limit=LIMIT)
        _, error = outcome(client.request, "client-server-requests", "tools/list", limit=LIMIT)
        if error is not None:
            raise Failure(
                "client-server-requests",
                "tools/list failed against a server that sent a ping and a sampling request first",
                received=f"{type(error).__name__}: {error}",
                hint="answer a server's ping with result {}, any other request with error -32601, then go on waiting",
            )
        logs = [n for n in getattr(client, "notifications", []) if isinstance(n, dict)]
        if not any(n.get("method") == "notifications/message" for n in logs):
            raise Failure(
                "client-server-requests",
                "the server's log notifications were not kept in client.notifications",
                received=show(getattr(client, "notifications", None)),
            )


# -- 5. every read bounded ----------------------------------------------------------------------------
def check_timeouts(work: Work, wait: float) -> None:
    with running(work, command(work, "mute"), "client-timeouts") as client:
        error, clock = _timed(work, client, "ping", wait)
        _expect_client_error(error, f"request('ping', timeout={wait}) against a server that never answers")
        if clock.ran > wait + 1.5:
            raise Failure("client-timeouts", f"the timeout was {wait} s but the request gave up after {clock}")
    with running(work, command(work, "babbler"), "client-timeouts") as client:
        call(client.initialize, "client-timeouts", LATEST, limit=LIMIT)
        error, clock = _timed(work, client, "ping", wait)
        _expect_client_error(error, f"request('ping', timeout={wait}) against a server that only sends log lines")
        if clock.ran > wait + 1.5:
            raise Failure(
                "client-timeouts",
                f"the timeout was {wait} s but the request gave up after {clock}",
                hint="the timeout is for the whole request: a deadline, not a wait that starts again at each line",
            )
    with running(work, command(work, "vanish"), "client-timeouts") as client:
        call(client.initialize, "client-timeouts", LATEST, limit=LIMIT)
        error, clock = _timed(work, client, "tools/list", 5.0)
        _expect_client_error(error, "request('tools/list') to a server that exited")
        if clock.ran > 2.0:
            raise Failure(
                "client-timeouts",
                f"the server had exited, yet the request waited {clock} for its whole timeout",
                hint="an empty line from the pump means stdout closed: raise ClientError at once",
            )


class Stopwatch:
    """Seconds since it started, and how many of them the client waited for a CPU (schedstat): a busy
    machine delays the client's own clock checks, which is not its fault, so a time limit is judged on
    the time the client could run. Only the waits of the harness process's threads (the client's call,
    its pump threads) and of the course's servers count (:meth:`~grader.course.remote.Harness.forgiven_delays`):
    processes the learner's code starts to burn CPU wait too, and must not buy a late timeout."""

    def __init__(self, work: Work) -> None:
        self.harness = work.harness()
        self.before = self.harness.forgiven_delays()
        self.started = time.monotonic()
        self.took = self.starved = self.ran = 0.0

    def stop(self) -> float:
        """The seconds the client could run since the start (``ran``: ``took`` less ``starved``)."""
        self.took = time.monotonic() - self.started
        self.starved = self.harness.forgiven_wait(self.before)
        self.ran = self.took - self.starved
        return self.ran

    def __str__(self) -> str:
        waited = f" ({self.starved:.1f} s of it waiting for a CPU)" if self.starved >= 0.1 else ""
        return f"{self.took:.1f} s{waited}"


def _timed(work: Work, client: Any, method: str, timeout: float) -> tuple[BaseException | None, Stopwatch]:
    """``client.request(method, None, timeout)``: what it raised, and how long it took."""
    clock = Stopwatch(work)
    _, error = outcome(client.request, "client-timeouts", method, None, timeout, limit=LIMIT)
    clock.stop()
    return error, clock


def _expect_client_error(error: BaseException | None, what: str) -> None:
    if error is None:
        raise Failure("client-timeouts", f"{what} returned instead of raising ClientError")
    if type(error).__name__ != "ClientError":
        raise Failure("client-timeouts", f"{what} raised {type(error).__name__}: {error}; expected ClientError")


# -- 6. stderr drained ---------------------------------------------------------------------------------
def check_stderr(work: Work) -> None:
    with running(work, command(work, "noisy"), "client-stderr") as client:
        try:
            _, error = outcome(client.initialize, "client-stderr", LATEST, limit=LIMIT)
        except Failure as failure:
            if "did not return" not in failure.summary:
                raise
            # Not a loop of the learner's: the server is blocked on a full stderr pipe no one reads.
            failure.details["hint"] = (
                "this server writes 1 MiB to stderr before it answers: a pipe holds about 64 KiB, so it waits "
                "for someone to read its stderr, and never answers"
            )
            raise Failure(failure.check, failure.summary, **failure.details) from None
        if error is not None:
            raise Failure(
                "client-stderr",
                "initialize failed against a server that writes 1 MiB to stderr before it answers",
                received=f"{type(error).__name__}: {error}",
                hint="a pipe holds about 64 KiB: read the child's stderr on a thread of its own, always",
            )
        deadline = time.monotonic() + 2.0  # the stderr thread may still be reading the last of it
        while b"noisy: end of stderr" not in (tail := _stderr_text(client)) and time.monotonic() < deadline:
            time.sleep(0.05)
        if b"noisy: end of stderr" not in tail:
            raise Failure(
                "client-stderr",
                "client.stderr does not end with the server's last stderr line",
                received=show(tail[-200:]),
            )


def _stderr_text(client: Any) -> bytes:
    return b"".join(line for line in list(getattr(client, "stderr", [])) if isinstance(line, bytes))


# -- 7. shutting down ------------------------------------------------------------------------------------
def check_close(work: Work) -> None:
    with running(work, command(work, "polite"), "client-shutdown") as client:
        call(client.initialize, "client-shutdown", LATEST, limit=LIMIT)
        code = call(client.close, "client-shutdown", limit=CLOSE_LIMIT)
        if code != 0:
            raise Failure(
                "client-shutdown",
                f"close() on a server that exits at the end of its input returned {code}, not 0",
                hint="close stdin first and wait: a signal is for a server that does not exit by itself",
            )
    for name, want in (("deaf", "SIGTERM"), ("stubborn", "SIGKILL")):
        with running(work, command(work, name), "client-shutdown") as client:
            call(client.initialize, "client-shutdown", LATEST, limit=LIMIT)
            clock = Stopwatch(work)
            code = call(client.close, "client-shutdown", GRACE, limit=CLOSE_LIMIT)
            clock.stop()
            process = getattr(client, "process", None)
            if process is None or process.poll() is None:
                raise Failure(
                    "client-shutdown",
                    f"close() returned but the {name} server is still running",
                    hint=f"it ignores the end of its input{' and SIGTERM' if want == 'SIGKILL' else ''}: "
                    f"after waiting, send {want}",
                )
            if not isinstance(code, int) or code >= 0:
                raise Failure(
                    "client-shutdown", f"close() returned {code!r}; a server ended by a signal has a negative status"
                )
            if clock.ran > 4 * GRACE + 2.0:
                raise Failure(
                    "client-shutdown",
                    f"close(grace={GRACE}) took {clock}: wait about `grace` seconds at each step",
                )


# -- 8. the era: probe, fall back ------------------------------------------------------------------------
MODERN = "2026-07-28"
PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO = "io.modelcontextprotocol/clientInfo"


READY_WAIT = 5.0  # seconds a check waits for an adversary's start before the client's probe may time out


@contextlib.contextmanager
def probing(work: Work, name: str, check: str, **kwargs: Any) -> Iterator[Any]:
    """The learner's client on the adversary ``name``, once that adversary reads its stdin.

    A probe's timeout starts when the client sends it: on a busy machine a server still starting
    would look silent, that is legacy. So the check waits (at most READY_WAIT) for the file the
    adversary makes when it is ready, in a folder of the learner's copy; a file made there early
    only starts the wait early, which gains the learner nothing.
    """
    with (
        work.scratch() as (here, inside),
        running(work, command(work, name, "--ready", f"{inside}/ready"), check, **kwargs) as client,
    ):
        deadline = time.monotonic() + READY_WAIT
        while not (here / "ready").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        yield client


def connected(client: Any, check: str, wait: float) -> Any:
    """``client.connect(wait)`` (the server is up: see :func:`probing`)."""
    return call(client.connect, check, wait, limit=LIMIT + wait)


def _received(client: Any, check: str) -> list[Any]:
    """What the adversary read from the learner's client (its ``lab/received``), this request left out."""
    sent = call(client.request, check, "lab/received", limit=LIMIT)
    messages = sent.get("messages") if isinstance(sent, dict) else None
    if not isinstance(messages, list):
        raise Failure(check, "request('lab/received') did not return the server's result", received=show(sent))
    return messages


def _methods(messages: list[Any]) -> list[str]:
    return [m.get("method", "(a reply)") if isinstance(m, dict) else "(not JSON)" for m in messages]


def _check_probe_sent(messages: list[Any]) -> None:
    first = messages[0] if messages else None
    if not isinstance(first, dict) or first.get("method") != "server/discover" or "id" not in first:
        raise Failure(
            "client-probe",
            "connect() must send server/discover first, before any other request",
            expected="server/discover, then (for a legacy server) initialize",
            received=show(_methods(messages)),
        )
    params = first.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if (
        not isinstance(meta, dict)
        or meta.get(PROTOCOL_VERSION) != MODERN
        or not isinstance(meta.get(CLIENT_CAPABILITIES), dict)
    ):
        raise Failure(
            "client-probe",
            "the probe must carry the envelope: params._meta with the version you prefer and your capabilities",
            expected=f'"_meta": {{"{PROTOCOL_VERSION}": "{MODERN}", "{CLIENT_CAPABILITIES}": {{}}, ...}}',
            received=show(first),
        )


def check_probe(work: Work, codes: list[str], wait: float) -> None:
    """connect(probe_timeout=wait) against a dual-era server, legacy ones answering each of ``codes``
    (or nothing: "silent"), and a modern one of a later revision."""
    with probing(work, "polite", "client-probe") as client:
        result = connected(client, "client-probe", wait)
        if not isinstance(result, dict) or result.get("supportedVersions") != [MODERN]:
            raise Failure(
                "client-probe",
                "against a server that speaks 2026-07-28, connect() must return its DiscoverResult",
                expected='an object with "supportedVersions": ["2026-07-28"]',
                received=show(result),
            )
        era, version = getattr(client, "era", None), getattr(client, "version", None)
        if (era, version) != ("modern", MODERN):
            raise Failure(
                "client-probe",
                f'after a DiscoverResult, self.era must be "modern" and self.version "{MODERN}"',
                received=f"era {show(era)}, version {show(version)}",
            )
        messages = _received(client, "client-probe")
        _check_probe_sent(messages)
        if "initialize" in _methods(messages):
            raise Failure(
                "client-probe",
                "the server answered the probe with a DiscoverResult, yet the client sent initialize too",
                received=show(_methods(messages)),
            )
    for how in [*codes, "silent"]:
        said = "no answer at all" if how == "silent" else f"error {how}"
        with probing(work, f"legacy:{how}", "client-probe") as client:
            clock = Stopwatch(work)
            result, error = outcome(client.connect, "client-probe", wait, limit=LIMIT + wait)
            clock.stop()
            if error is not None:
                fell_back(client, said, error)
                raise Failure(
                    "client-probe",
                    f"a legacy server answered the probe with {said}, and connect() raised instead of falling back",
                    received=f"{type(error).__name__}: {error}",
                    hint="no response in time is an answer too: a legacy server"
                    if how == "silent"
                    else "any error that is not -32020, -32021 or -32022 means a legacy server: run initialize()",
                )
            if not isinstance(result, dict) or not isinstance(result.get("protocolVersion"), str):
                raise Failure(
                    "client-probe",
                    f"after the probe got {said}, connect() must return the initialize result",
                    received=show(result),
                )
            era, version = getattr(client, "era", None), getattr(client, "version", None)
            if era != "legacy" or version != result["protocolVersion"]:
                raise Failure(
                    "client-probe",
                    f'after a fallback, self.era must be "legacy" and self.version the revision initialize agreed '
                    f"({result['protocolVersion']})",
                    received=f"era {show(era)}, version {show(version)}",
                )
            if how == "silent" and clock.ran > wait + 2.5:
                raise Failure(
                    "client-probe",
                    f"connect(probe_timeout={wait}) waited {clock} for a server that never answers the probe",
                    hint="wait for the probe's reply at most probe_timeout seconds, then fall back",
                )
            messages = _received(client, "client-probe")
            _check_probe_sent(messages)
            if _methods(messages)[1:3] != ["initialize", "notifications/initialized"]:
                raise Failure(
                    "client-probe",
                    "after the probe, the fallback is the legacy handshake: initialize, then notifications/initialized",
                    received=show(_methods(messages)),
                )
    with probing(work, "future", "client-probe") as client:
        _, error = outcome(client.connect, "client-probe", wait, limit=LIMIT + wait)
        messages = _received(client, "client-probe")
        if error is None or "initialize" in _methods(messages):
            raise Failure(
                "client-probe",
                "the probe got -32022 (UnsupportedProtocolVersionError, listing only 2027-03-01): a modern server "
                "that does not speak 2026-07-28. The spec: use a version of its supported list, and do not fall "
                "back to initialize; your client speaks none of that list, so connect() raises ClientError",
                received=f"sent {show(_methods(messages))}; connect() "
                + ("returned" if error is None else f"raised {type(error).__name__}"),
                hint="-32020, -32021 and -32022 are 2026-07-28's own codes: only a modern server sends them",
            )
        if type(error).__name__ != "ClientError":
            raise Failure(
                "client-probe",
                f"connect() raised {type(error).__name__}: {error}; "
                "a modern server you cannot speak to is a ClientError",
            )


ENVELOPED_INITIALIZE = (
    "MCP 2026-07-28, Versioning > Backward Compatibility with Initialization-Based Versions: a dual-era server "
    'selects its behavior from how the client opens: "A request carrying modern per-request `_meta` is served '
    'statelessly according to this revision." and "An `initialize` request selects legacy semantics"; the '
    "stdio fallback is the `initialize` handshake (Transports > stdio > Backward Compatibility), a legacy "
    "request, so it carries no 2026-07-28 envelope"
)


def fell_back(client: Any, said: str, error: BaseException) -> None:
    """connect() raised after a legacy server's answer to the probe: if it did fall back (the server read an
    initialize), say so, and why that initialize was refused; else return (it raised instead of falling back)."""
    try:
        messages = _received(client, "client-probe")
    except Failure:
        return  # the client cannot even ask: the caller's message stands
    sent = next((m for m in messages if isinstance(m, dict) and m.get("method") == "initialize"), None)
    if sent is None:
        return
    params = sent.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if isinstance(meta, dict) and (PROTOCOL_VERSION in meta or CLIENT_CAPABILITIES in meta):
        raise Failure(
            "client-probe",
            f"after {said} to the probe, connect() fell back to initialize, as it should; then the server refused "
            "that initialize because it carried the 2026-07-28 envelope in params._meta: this server (the "
            "course's dual-era one behind a legacy front) serves a request with that _meta as a 2026-07-28 "
            "request, and 2026-07-28 has no initialize",
            sent=show(sent),
            received=f"{type(error).__name__}: {error}",
            hint='set self.era = "legacy" before initialize(): the fallback is the legacy handshake, without _meta',
            rule=ENVELOPED_INITIALIZE,
            fix='on any other error or no answer in time: self.era = "legacy", then initialize() (send_request '
            'adds the envelope only when self.era is "modern")',
        )
    raise Failure(
        "client-handshake",
        f"after {said} to the probe, connect() fell back to initialize, as it should; then it raised",
        sent=show(sent),
        received=f"{type(error).__name__}: {error}",
        hint="initialize() sends protocolVersion, capabilities and clientInfo, returns the result, then sends "
        "notifications/initialized",
    )


# -- 9. the envelope on every request -----------------------------------------------------------------------
def check_envelope(work: Work, status: str, token: str) -> None:
    with probing(work, "polite", "client-envelope") as client:
        connected(client, "client-envelope", 2.0)
        call(client.request, "client-envelope", "tools/list", limit=LIMIT)
        params = {"name": "count_orders", "arguments": {"status": status}, "_meta": {"progressToken": token}}
        got = call(client.request, "client-envelope", "tools/call", params, limit=LIMIT)
        want = _modern_answer(params)
        equal(got, want, "client-envelope", "request('tools/call', ...) in the modern era must return the result")
        for message in _received(client, "client-envelope")[1:]:
            if not isinstance(message, dict) or "id" not in message or "method" not in message:
                continue
            meta = (message.get("params") or {}).get("_meta") if isinstance(message.get("params"), dict) else None
            info = meta.get(CLIENT_INFO) if isinstance(meta, dict) else None
            if (
                not isinstance(meta, dict)
                or meta.get(PROTOCOL_VERSION) != MODERN
                or meta.get(CLIENT_CAPABILITIES) != {}
                or not isinstance(info, dict)
                or not all(isinstance(info.get(k), str) for k in ("name", "version"))
            ):
                raise Failure(
                    "client-envelope",
                    f"a {message['method']} request after the probe lacks the envelope (or part of it)",
                    expected=f'"_meta": {{"{PROTOCOL_VERSION}": "{MODERN}", "{CLIENT_CAPABILITIES}": {{}}, '
                    f'"{CLIENT_INFO}": {{"name": ..., "version": ...}}}}',
                    received=show(message),
                )
            if message["method"] == "tools/call" and meta.get("progressToken") != token:
                raise Failure(
                    "client-envelope",
                    "the caller's own _meta (a progressToken) was dropped: add the envelope's keys to it",
                    received=show(message),
                )
    with probing(work, "legacy:-32601", "client-envelope") as client:
        connected(client, "client-envelope", 2.0)
        call(client.request, "client-envelope", "tools/list", limit=LIMIT)
        for message in _received(client, "client-envelope")[1:]:
            params = message.get("params") if isinstance(message, dict) else None
            meta = params.get("_meta") if isinstance(params, dict) else None
            if isinstance(meta, dict) and PROTOCOL_VERSION in meta:
                raise Failure(
                    "client-envelope",
                    f"after the fallback to initialize, a {message.get('method')} request carries the 2026-07-28 "
                    "envelope: a legacy connection never does (a dual-era server refuses it after initialize)",
                    received=show(message),
                )


def _modern_answer(params: dict[str, Any]) -> Any:
    """The reference's answer to a modern request with ``params`` (its _meta aside)."""
    server = make_server()
    meta = {PROTOCOL_VERSION: MODERN, CLIENT_CAPABILITIES: {}}
    line = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {**params, "_meta": meta}}
    with contextlib.redirect_stderr(io.StringIO()):
        return server.handle_line(json.dumps(line).encode()).get("result")


# -- 10. input_required, round by round ------------------------------------------------------------------------
def check_input_required(work: Work, seed: str, order_id: int) -> None:
    keys, states = draw_asker(seed)
    answerer = work.fixture("answerer")
    name = "client-input-required"
    with probing(work, f"asker:{seed}", name, on_input=answerer) as client:
        connected(client, name, 2.0)
        params = {"name": "cancel_order", "arguments": {"order_id": order_id, "reason": "asked by phone"}}
        result, error = outcome(client.round_trip, name, "tools/call", params, limit=LIMIT)
        calls = [m for m in _received(client, name) if isinstance(m, dict) and m.get("method") == "tools/call"]
    _judge_rounds(calls, params, keys, states)
    if error is not None or not isinstance(result, dict) or result.get("structuredContent") != {"rounds": 4}:
        raise Failure(
            name,
            "round_trip() must return the complete result of the fourth call",
            received=f"{type(error).__name__}: {error}" if error is not None else show(result),
        )


def _judge_rounds(calls: list[dict[str, Any]], params: dict[str, Any], keys: list[str], states: list[str]) -> None:
    name = "client-input-required"
    kinds = ["boolean", "string"]
    if not calls or _core(calls[0]) != params:
        raise Failure(name, "round_trip() must first send the request as given", received=show(calls[:1]))
    for number in (1, 2, 3):
        asked, state = asker_round(keys, states, number)
        said = f"input_required result {number} (" + (f"inputRequests {asked}" if asked else "no inputRequests")
        shown = json.dumps(state, ensure_ascii=False)
        said += f", requestState {shown})" if state is not None else ", no requestState)"
        if len(calls) <= number:
            raise Failure(
                name,
                f"after {said} the client sent no retry",
                hint="while the result's resultType is input_required, answer it and send the request again",
            )
        retry, earlier = calls[number], calls[:number]
        retry_params = retry.get("params") if isinstance(retry.get("params"), dict) else {}
        if any(same_json_id(retry.get("id"), c.get("id")) for c in earlier):
            raise Failure(name, f"the retry after {said} reused an id: a retry is a new request", received=show(retry))
        if _core(retry) != params:
            raise Failure(
                name, f"the retry after {said} must send the original params again", received=show(retry_params)
            )
        if state is None and "requestState" in retry_params:
            raise Failure(
                name,
                f"after {said} the retry carried a requestState: the client MUST NOT include one",
                received=show(retry_params),
                hint="build each retry from the original params, not from the last retry",
            )
        if state is not None and retry_params.get("requestState") != state:
            raise Failure(
                name,
                f"after {said} the retry must echo its requestState exactly",
                expected=show(state),
                received=show(retry_params.get("requestState", "(none)")),
            )
        if asked:
            want = {k: answer(k, question(k, kinds[i % 2])) for i, k in enumerate(asked)}
            got = retry_params.get("inputResponses")
            if not isinstance(got, dict) or sorted(got) != sorted(want):
                raise Failure(
                    name,
                    f"after {said} inputResponses must answer under the same keys",
                    expected=show(sorted(want)),
                    received=show(sorted(got) if isinstance(got, dict) else got),
                )
            if not all(equal_json(got[k], want[k]) for k in want):
                raise Failure(
                    name,
                    f"after {said} each answer must be what on_input(key, request) returned for that key",
                    expected=show(want),
                    received=show(got),
                )


def _core(message: dict[str, Any]) -> Any:
    params = message.get("params")
    if not isinstance(params, dict):
        return params
    return {k: v for k, v in params.items() if k not in ("_meta", "inputResponses", "requestState")}


def same_json_id(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def equal_json(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
