"""The client: launch a server as a child, open the session, call it, shut it down in order.

What makes a client correct on the wire:

- every request gets a fresh id, and a reply is matched to its request *by id*, not by order;
- a notification is sent and forgotten: nothing ever answers it, so never wait for a reply;
- every read has a timeout, and stderr is always drained (see :mod:`reference.child`);
- the session ends by closing the server's stdin, then waiting, then SIGTERM, then SIGKILL.

``initialize()`` is the legacy handshake (2025-11-25 and before), as stage 06 teaches it.
``connect()`` speaks both eras: it probes with ``server/discover`` and falls back to
``initialize`` as MCP 2026-07-28 says (see :mod:`reference.era_probe`); once the era is modern,
every request carries the ``_meta`` envelope, every result's ``resultType`` is checked, and an
``input_required`` result is answered through ``on_input`` and the request sent again.

    >>> import sys
    >>> with Client([sys.executable, "-m", "reference.server"]) as client:
    ...     result = client.initialize()
    ...     client.request("tools/call", {"name": "count_orders", "arguments": {"status": "paid"}})
    ... # doctest: +NORMALIZE_WHITESPACE
    {'content': [{'type': 'text', 'text': '{"status": "paid", "count": 341}'}],
     'structuredContent': {'status': 'paid', 'count': 341}, 'isError': False}
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from . import PROTOCOL_REVISION, envelope, era_probe
from .child import ChildProcess
from .era_probe import MODERN_VERSIONS
from .errors import METHOD_NOT_FOUND
from .framing import FrameError, decode, encode
from .stateless import CLIENT_CAPABILITIES, PROTOCOL_VERSION
from .stateless import CLIENT_INFO as CLIENT_INFO_KEY

CLIENT_INFO = {"name": "mcp-wire-lab-client", "version": "0.1.0"}
# The only requests a server may answer with input_required (2026-07-28 basic/patterns/mrtr).
INPUT_REQUIRED_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})
MAX_INPUT_ROUNDS = 8  # a server that keeps asking is cut off rather than followed forever

InputHandler = Callable[[str, dict[str, Any]], dict[str, Any]]


def same_id(a: Any, b: Any) -> bool:
    """Same value *and* same JSON type: 1 and "1" are different ids, so are 1 and true, or 1 and 1.0.

    (Not a dict lookup: in Python ``True == 1 == 1.0`` with one hash, and a list id has none.)
    """
    return type(a) is type(b) and a == b


class ClientError(Exception):
    """The session cannot go on: a timeout, a dead server, or an error reply to a request."""

    def __init__(self, message: str, error: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.error = error

    @property
    def code(self) -> int | None:
        return self.error.get("code") if isinstance(self.error, dict) else None


class Client:
    """A client of one stdio server.

    ``era``: ``"auto"`` (probe, then modern or legacy), ``"modern"`` (no fallback: a server that is
    not modern is an error) or ``"legacy"`` (the ``initialize`` handshake at once); it matters to
    :meth:`connect` only. ``on_input(key, request) -> result`` answers what a server asks of the
    user (``elicitation/create``): in the modern era the entries of an ``input_required`` result,
    in the legacy era the server's own ``elicitation/create`` requests. Only a client given one
    declares the ``elicitation`` capability.
    """

    def __init__(
        self,
        argv: Sequence[str],
        timeout: float = 5.0,
        env: Mapping[str, str] | None = None,
        on_frame: Callable[[str, str], None] | None = None,
        *,
        era: str = "auto",
        on_input: InputHandler | None = None,
        probe_timeout: float | None = None,
        modern_versions: Sequence[str] = MODERN_VERSIONS,
    ) -> None:
        if era not in era_probe.ERAS:
            raise ValueError(f"era must be one of {', '.join(era_probe.ERAS)}, not {era!r}")
        self.argv = list(argv)
        self.timeout = timeout
        self.env = env
        self.on_frame = on_frame or (lambda direction, text: None)
        self.next_id = 0
        self.early: list[dict[str, Any]] = []  # replies that came before we asked for them
        self.notifications: list[dict[str, Any]] = []
        self.noise: list[bytes] = []  # stdout lines that were not JSON-RPC messages
        self.child: ChildProcess | None = None
        self.wanted_era = era
        self.on_input = on_input
        self.probe_timeout = timeout if probe_timeout is None else probe_timeout
        self.modern_versions = tuple(modern_versions)
        # What connect() decided, kept for the life of the server process (versioning: cache the era).
        self.era: str | None = None  # "modern" or "legacy"; None: not decided (plain JSON-RPC)
        self.version: str | None = None
        self.era_reason = ""
        self.server_result: dict[str, Any] | None = None  # the DiscoverResult or the InitializeResult
        self.restarts = 0  # children started again because the probe killed one
        self._probe_sent: tuple[int, str] = (-1, "")  # the last probe's id and version

    def start(self) -> Client:
        self.child = ChildProcess(self.argv, env=self.env)
        return self

    def __enter__(self) -> Client:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _send(self, message: dict[str, Any]) -> None:
        assert self.child is not None, "call start() first"
        data = encode(message)
        self.on_frame("->", data.decode("utf-8").rstrip("\n"))
        if not self.child.send(data):
            raise ClientError(f"the server stopped reading its stdin{self._stderr_hint()}")

    def _stderr_hint(self) -> str:
        tail = self.child.stderr_tail(500).strip() if self.child else ""
        return f"; its stderr ends with: {tail}" if tail else ""

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification. It has no id and no reply: do not wait for one."""
        message: dict[str, Any] = {"jsonrpc": envelope.JSONRPC, "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)

    def request(self, method: str, params: dict[str, Any] | None = None, timeout: float | None = None) -> Any:
        """Send a request and return its result; an error reply raises :class:`ClientError`.

        Once :meth:`connect` has found a modern server, the request carries the envelope and its
        result is checked (see :meth:`_modern_request`); otherwise it is sent as given.
        """
        if self.era == "modern":
            return self._modern_request(method, params, timeout)
        return self._call(method, params, timeout)

    def _call(self, method: str, params: dict[str, Any] | None, timeout: float | None) -> Any:
        """One JSON-RPC request under a fresh id, and its result."""
        request_id = self.next_id
        self.next_id += 1
        message: dict[str, Any] = {"jsonrpc": envelope.JSONRPC, "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)
        reply = self._wait_for(request_id, method, self.timeout if timeout is None else timeout)
        if "error" in reply:
            error = reply["error"]
            raise ClientError(f"{method} failed: {error.get('code')} {error.get('message')}", error)
        return reply.get("result")

    def _wait_for(self, request_id: Any, method: str, timeout: float) -> dict[str, Any]:
        assert self.child is not None
        for reply in self.early:
            if same_id(reply["id"], request_id):
                self.early.remove(reply)
                return reply
        deadline = self.child.elapsed() + timeout
        while True:
            line = self.child.read_line(deadline - self.child.elapsed())
            if line is None:
                if self.child.stdout_closed.is_set():
                    raise ClientError(f"the server closed stdout before answering {method}{self._stderr_hint()}")
                raise ClientError(f"no reply to {method} (id {request_id}) within {timeout:g} s{self._stderr_hint()}")
            text = line.data.decode("utf-8", "replace")
            try:
                message = decode(line.data)
            except FrameError:
                message = None
            if not isinstance(message, dict):
                self.on_frame("!!", text)
                self.noise.append(line.data)
                continue
            self.on_frame("<-", text)
            if "method" in message:
                self._from_server(message)
            elif "id" in message:
                if same_id(message["id"], request_id):
                    return message
                self.early.append(message)

    def _from_server(self, message: dict[str, Any]) -> None:
        """A request or notification from the server: answer pings and elicitations, refuse the rest."""
        if "id" not in message:
            self.notifications.append(message)
        elif message["method"] == "ping":
            self._send(envelope.result_message(message["id"], {}))
        elif message["method"] == "elicitation/create" and self.on_input is not None and self.era != "modern":
            # A legacy server asks mid-call (a modern one may not: it answers input_required);
            # the key is the request's id as JSON ("7", "\"a\"").
            question = {"method": message["method"], "params": message.get("params", {})}
            self._send(envelope.result_message(message["id"], self.on_input(json.dumps(message["id"]), question)))
        else:
            self._send(envelope.error_message(message["id"], METHOD_NOT_FOUND, message["method"]))

    def capabilities(self, modern: bool = False) -> dict[str, Any]:
        """What this client declares: elicitation (form mode) only when it has an ``on_input``.

        Legacy revisions write form mode as ``{}``; 2026-07-28 reads ``{}`` so too, but names it.
        """
        if self.on_input is None:
            return {}
        return {"elicitation": {"form": {}}} if modern else {"elicitation": {}}

    def initialize(self, version: str = PROTOCOL_REVISION) -> dict[str, Any]:
        """The handshake: initialize, then the initialized notification."""
        result = self.request(
            "initialize",
            {"protocolVersion": version, "capabilities": self.capabilities(), "clientInfo": CLIENT_INFO},
        )
        self.notify("notifications/initialized")
        return result

    # -- both eras ---------------------------------------------------------------------------
    def connect(self) -> dict[str, Any]:
        """Open the session in the server's era; return the DiscoverResult or the InitializeResult.

        ``era="auto"`` sends ``server/discover`` with the envelope (this client's preferred
        modern version) and reads the outcome with :func:`reference.era_probe.judge`: modern
        (after asking again in a version a -32022 lists), or legacy, and then ``initialize``.
        The era is decided once: later calls return what the first one found.

        A legacy server may *exit* on a request that comes before ``initialize`` (Rust's rmcp
        does). The TypeScript SDK therefore probes in a throw-away second process every time;
        here the probe goes to the real child, and only a child that dies on it (its stdout closes,
        before or right after its answer) is started again, once, for the handshake. That costs
        one extra start for such servers rather than one for every server; a server whose start
        has side effects sees them twice, and ``restarts`` counts it.
        """
        if self.era is not None and self.server_result is not None:
            return self.server_result
        if self.child is None:
            self.start()
        if self.wanted_era == "legacy":
            return self._legacy("era forced to legacy: the initialize handshake, no probe", probed=False)
        asked = self.modern_versions[0]
        tried: set[str] = set()
        while True:
            tried.add(asked)
            verdict = self._probe(asked)
            if verdict.retry_with is not None and verdict.retry_with not in tried:
                asked = verdict.retry_with
                continue
            break
        if verdict.era == "legacy":
            if self.wanted_era == "modern":
                raise ClientError(f"era forced to modern, but {verdict.reason}")
            died = self.child is not None and self.child.stdout_closed.is_set()
            return self._legacy(verdict.reason, probed=True, restart=died)
        if verdict.result is None or verdict.version is None:
            raise ClientError(verdict.reason)
        self.era, self.version, self.era_reason = "modern", verdict.version, verdict.reason
        self.server_result = verdict.result
        return verdict.result

    def _probe(self, version: str) -> era_probe.Verdict:
        """One ``server/discover`` in ``version``, judged."""
        params = {"_meta": self._envelope(version)}
        self._probe_sent = (self.next_id, version)
        try:
            result = self._call("server/discover", params, self.probe_timeout)
        except ClientError as exc:
            assert self.child is not None
            if exc.error is not None:
                return era_probe.judge({"error": exc.error}, version, self.modern_versions)
            return era_probe.judge(
                None, version, self.modern_versions, self.probe_timeout, self.child.stdout_closed.is_set()
            )
        return era_probe.judge({"result": result}, version, self.modern_versions)

    def _legacy(self, reason: str, probed: bool, restart: bool = False) -> dict[str, Any]:
        """The initialize handshake, in a fresh child if the probe killed this one."""
        self.era, self.version, self.era_reason = "legacy", PROTOCOL_REVISION, reason
        if restart:
            self._restart()
        try:
            result = self.initialize()
        except ClientError as exc:
            late = self._late_discover() if probed else None
            if late is not None:
                return late
            # A server that answered the probe and then exited: the handshake finds it gone.
            assert self.child is not None
            # (Its stdout may close a moment after the write to its stdin failed: give it 2 s.)
            if not probed or restart or exc.error is not None or not self.child.stdout_closed.wait(2.0):
                self.era = None
                raise
            self.era_reason = reason.replace("a legacy server", "a legacy server (it exited after answering)", 1)
            self._restart()
            result = self.initialize()
        if isinstance(result, dict) and isinstance(result.get("protocolVersion"), str):
            self.version = result["protocolVersion"]
        self.server_result = result if isinstance(result, dict) else {}
        return self.server_result

    def _late_discover(self) -> dict[str, Any] | None:
        """A DiscoverResult that came after the probe's timeout: a modern server slow to start.

        Such a server (the SDK's, on a busy machine) then refuses the ``initialize`` sent to it,
        its connection being modern already; its late answer, kept among the early replies, says so.
        """
        probe_id, version = self._probe_sent
        reply = next((m for m in self.early if same_id(m["id"], probe_id)), None)
        verdict = era_probe.judge(reply, version, self.modern_versions) if reply is not None else None
        if verdict is None or verdict.result is None or verdict.version is None:
            return None
        self.early.remove(reply)
        self.era, self.version, self.server_result = "modern", verdict.version, verdict.result
        self.era_reason = (
            f"server/discover answered after the {self.probe_timeout:g} s probe timeout (and initialize was "
            f"refused): a modern server, speaking {verdict.version}"
        )
        return verdict.result

    def _restart(self) -> None:
        """The child died of the probe: end it and start the same command again."""
        if self.child is not None:
            self.child.close(grace=0.5)
        self.restarts += 1
        self.era_reason += "; started it again for the initialize handshake"
        self.start()

    # -- the modern era ------------------------------------------------------------------------
    def _envelope(self, version: str | None = None) -> dict[str, Any]:
        """The per-request ``_meta`` fields (2026-07-28 basic/index, _meta)."""
        return {
            PROTOCOL_VERSION: version or self.version,
            CLIENT_CAPABILITIES: self.capabilities(modern=True),
            CLIENT_INFO_KEY: CLIENT_INFO,
        }

    def _modern_request(self, method: str, params: dict[str, Any] | None, timeout: float | None) -> Any:
        """A request of the modern era: enveloped, its ``resultType`` checked, input rounds carried out.

        The caller's own ``_meta`` keys (a ``progressToken``) are kept; the envelope's keys are the
        client's. An ``input_required`` result is answered through ``on_input``, and the *original*
        request is sent again under a new id with ``inputResponses`` and the ``requestState``
        exactly as received (none if none came), at most ``MAX_INPUT_ROUNDS`` times. A -32022 that
        lists another version this client speaks switches to it and sends the request again.
        """
        original = dict(params or {})
        caller_meta = original.pop("_meta", None)
        extra: dict[str, Any] = {}
        switched = False
        rounds = 0
        while True:
            meta = {**(caller_meta if isinstance(caller_meta, dict) else {}), **self._envelope()}
            try:
                result = self._call(method, {**original, **extra, "_meta": meta}, timeout)
            except ClientError as exc:
                offered = era_probe.supported_versions(exc.error) if exc.code == era_probe.UNSUPPORTED_VERSION else []
                version = era_probe.common_version(offered, self.modern_versions)
                if switched or version is None or version == self.version:
                    raise
                self.version, switched = version, True
                continue
            if not isinstance(result, dict):
                raise ClientError(f"{method}: the result is {json.dumps(result)[:80]}, not an object (basic/index)")
            kind = result.get("resultType", "complete")  # absent: complete (basic/index, ResultType)
            if kind == "complete":
                return result
            if kind != "input_required":
                raise ClientError(
                    f"{method}: resultType {json.dumps(kind)[:80]} is not one this client knows; 2026-07-28 "
                    "basic/index: a client MUST treat an unrecognised resultType as invalid"
                )
            if method not in INPUT_REQUIRED_METHODS:
                raise ClientError(
                    f"{method} answered input_required: only tools/call, prompts/get and "
                    "resources/read may (2026-07-28 basic/patterns/mrtr, Supported Requests)"
                )
            rounds += 1
            if rounds > MAX_INPUT_ROUNDS:
                raise ClientError(f"{method}: still input_required after {MAX_INPUT_ROUNDS} rounds; giving up")
            extra = self._answer(method, result)

    def _answer(self, method: str, result: dict[str, Any]) -> dict[str, Any]:
        """What the retry of an ``input_required`` result adds to the original params."""
        asks, state = result.get("inputRequests"), result.get("requestState")
        if asks is None and state is None:
            raise ClientError(
                f"{method}: an input_required result with neither inputRequests nor requestState "
                "(2026-07-28 basic/patterns/mrtr: a server MUST include at least one)"
            )
        extra: dict[str, Any] = {}
        if asks is not None:
            if not isinstance(asks, dict) or not all(isinstance(v, dict) for v in asks.values()):
                raise ClientError(f"{method}: inputRequests is not an object of request objects (mrtr, InputRequests)")
            on_input = self.on_input
            if asks and on_input is None:
                wanted = sorted({str(v.get("method")) for v in asks.values()})
                raise ClientError(
                    f"{method}: the server asks for {', '.join(wanted)}, which this client did not "
                    "declare (no on_input); mrtr: a server MUST NOT ask for an undeclared capability"
                )
            # One answer per question, under the server's key (the same keys: mrtr, InputResponses).
            extra["inputResponses"] = {key: on_input(key, ask) for key, ask in asks.items()} if on_input else {}
        if "requestState" in result:
            extra["requestState"] = state  # echoed exactly; never read, never made up
        return extra

    def close(self, grace: float = 2.0) -> int | None:
        """Close stdin, wait ``grace`` seconds, then SIGTERM, then SIGKILL. Returns the exit status."""
        if self.child is None:
            return None
        child, self.child = self.child, None
        return child.close(grace)
