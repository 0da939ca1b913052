"""What every probe of one ``mcp-lab check`` run shares: the command, the limits, the findings.

>>> ctx = Context(["python3", "server.py"], timeout=3.0)
>>> ctx.init_timeout
10.0
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from reference import PROTOCOL_REVISION
from reference.framing import encode

from . import CALL_TIMEOUT
from .era import Eras
from .nudge import NudgingProbe
from .probe import Probe, Reply, show
from .verdicts import Findings

CLIENT_INFO = {"name": "mcp-lab-check", "version": "0.1.0"}
STARTUP_WARN = 1.5
STARTUP_FAIL = 10.0
STOP_WAIT = 5.0  # seconds a teardown waits for a server start under way to be registered


@dataclass
class Context:
    argv: list[str]
    timeout: float = 3.0  # per reply
    call_timeout: float = CALL_TIMEOUT  # per tools/call: the spec bounds no tool's run time
    call_tools: bool = False  # call every tool, not only the read-only ones
    findings: Findings = field(default_factory=Findings)
    probes: list[Probe] = field(default_factory=list)
    closed: bool = False  # set when the run is being torn down: start no more servers
    language: str = "python"  # the server's language as the command tells it (see language.py)
    cold_start: float | None = None  # a launcher's first start-up, download included (seconds)
    cold_note: str = ""  # why the warm-up start did not answer, if it did not
    first_up: threading.Event = field(default_factory=threading.Event)  # the first initialize is answered
    eras: Eras = field(default_factory=Eras)  # the eras asked for (--era) and found (era.py)
    # Held while a server starts and is registered: a teardown (Ctrl-C) waits for a start under way,
    # or a server started in that moment on another thread, not yet in ``probes``, would outlive us.
    starting: threading.Lock = field(default_factory=threading.Lock)

    @property
    def init_timeout(self) -> float:
        """Waiting for initialize: long enough to tell a slow start (warn) from a dead one (fail)."""
        return max(self.timeout, STARTUP_FAIL)

    def start(self, name: str, env: Mapping[str, str] | None = None) -> Probe:
        with self.starting:
            if self.closed:
                raise RuntimeError("the check is being stopped")
            probe = NudgingProbe(self.argv, self.timeout, env=env, name=name)
            self.probes.append(probe)
        return probe

    def stop_starting(self) -> list[Probe]:
        """No more servers from now on; every probe started so far (a start under way is waited
        for, at most STOP_WAIT seconds: a teardown never hangs on it)."""
        held = self.starting.acquire(timeout=STOP_WAIT)
        try:
            self.closed = True
            return list(self.probes)
        finally:
            if held:
                self.starting.release()


def initialize(
    probe: Probe, ctx: Context, version: str = PROTOCOL_REVISION, id: Any = 1, timeout: float | None = None
) -> Reply:
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": CLIENT_INFO}
    reply = probe.request("initialize", params, id=id, timeout=timeout or ctx.init_timeout)
    answered = reply.result.get("protocolVersion") if isinstance(reply.result, dict) else None
    probe.revision = answered if isinstance(answered, str) else None
    return reply


def call_tool(probe: Probe, ctx: Context, name: str, arguments: dict[str, Any], timeout: float | None = None) -> Reply:
    """tools/call with the call timeout (or ``timeout``); a call still running then is cancelled,
    and later requests on this probe wait as long, since they may queue behind the work in flight."""
    params = {"name": name, "arguments": arguments}
    # A fresh id per call: a late reply to a cancelled call must not pass for a later one's.
    request_id = f"call-{name}-{sum(f.direction == 'sent' for f in probe.frames)}"
    limit = ctx.call_timeout if timeout is None else timeout
    reply = probe.request("tools/call", params, id=request_id, timeout=limit, give_up=True)
    if probe.in_flight:
        probe.timeout = max(probe.timeout, ctx.call_timeout)
    return reply


def list_tools(probe: Probe) -> list[dict[str, Any]] | None:
    """The tools a server lists on its first page (objects only), or None without a list."""
    reply = probe.request("tools/list", id="tools")
    tools = reply.result.get("tools") if isinstance(reply.result, dict) else None
    return [t for t in tools if isinstance(t, dict)] if isinstance(tools, list) else None


def no_reply_evidence(probe: Probe, reply: Reply, expected: str) -> dict[str, Any]:
    """Evidence for a request that got no (matching) reply."""
    evidence: dict[str, Any] = {
        "sent": show(encode(reply.sent).rstrip(b"\n")),
        "received": [f"<- {o.line.data[:300].decode('utf-8', 'replace')}" for o in reply.others[-5:]],
        "expected": expected,
        "waited_seconds": round(reply.elapsed, 2),
        "stderr_tail": probe.stderr_tail(),
        "transcript": probe.transcript(8),
    }
    if not probe.alive():
        evidence["exit_status"] = probe.child.process.returncode
    return evidence


def why_no_reply(probe: Probe, reply: Reply, what: str) -> str:
    if reply.why:
        return f"no reply to {what}: {reply.why}"
    if reply.spread:
        return (
            f"the reply to {what} came pretty-printed over {reply.spread} lines; a host reads one line as one message"
        )
    if reply.near_miss is not None:
        return f"the reply to {what} came back with the id in another JSON type"
    if not probe.alive() or probe.stdout_closed():
        code = probe.wait_exit(0.5)  # stdout closes a moment before the exit status is known
        status = f"exit status {code}" if code is not None else "it closed its stdout"
        return f"the server exited before answering {what} ({status})"
    noise = sum(not o.json_ok for o in reply.others)
    if noise:
        return f"no readable reply to {what} within {reply.elapsed:.1f} s ({noise} stdout line(s) were not JSON)"
    return f"no reply to {what} within {reply.elapsed:.1f} s"
