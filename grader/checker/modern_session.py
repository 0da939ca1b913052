"""The modern session: one process spoken to as MCP 2026-07-28 asks, every request with its envelope.

It opens with ``server/discover`` (the era probe a dual-era client sends first), then, where the
server speaks the modern era: the tools listed and the safe ones called, resources and prompts
where declared, an ``input_required`` round trip (answered, retried, and retried once more with a
tampered ``requestState``) where a tool asks for input, a subscription where the server declares
change notifications, the envelope errors, an unsupported version, the removed methods, a legacy
``initialize`` on the modern connection, and the exit at end of input. Every result is kept, so
that ``resultType`` and the caching hints are judged on all of them at the end.

Findings of checks that the legacy sessions judge too (the tool list and calls, the stdout rules,
the exit) carry the revision 2026-07-28, so the report says under which era each one holds.

    >>> import sys
    >>> from grader.checker.catalogue import CHECKS, MODERN_CHECKS
    >>> from grader.checker.verdicts import Findings
    >>> ctx = Context([sys.executable, "-m", "reference.server"], findings=Findings([*CHECKS, *MODERN_CHECKS]))
    >>> ModernSession(ctx).run()
    >>> ctx.eras.modern, ctx.findings.status("discover-result"), ctx.findings.status("modern-cacheable")
    (True, 'pass', 'pass')
"""

from __future__ import annotations

import json
from typing import Any

from reference.stateless import CACHEABLE, CLIENT_CAPABILITIES, MODERN, PROTOCOL_VERSION

from .context import CLIENT_INFO as CHECKER
from .context import Context, no_reply_evidence, why_no_reply
from .main_session import EXIT_GRACE, EXIT_GRACE_MAX, EXIT_PER_STARTUP, judge_exit, judge_tools, noise
from .modern_basics import bad_input, ids_and_notifications
from .modern_checks import (
    MISSING_CAPABILITY,
    UNSUPPORTED_VERSION,
    cacheable_problems,
    discover_problems,
    result_type_problem,
    server_info_problem,
    server_requests,
    unsupported_problems,
)
from .modern_round_trip import round_trip
from .modern_subscriptions import judge_subscriptions
from .modern_wire import ASKING, UNKNOWN_URI, Revised, meta
from .probe import EXIT_STARVED, Probe, Reply, show, show_json
from .tool_calls import example_arguments, is_shop, result_problem, safe_to_call

# The checks of the modern era proper (catalogue.MODERN_CHECKS but era-mixing and era-probe, which
# both eras' sessions judge).
MODERN_ONLY = (
    "discover-result",
    "modern-result-type",
    "modern-cacheable",
    "modern-envelope-errors",
    "modern-unsupported-version",
    "modern-removed-methods",
    "modern-resource-not-found",
    "modern-no-server-requests",
    "modern-input-required",
    "modern-request-state",
    "modern-subscriptions",
)
UNKNOWN_VERSION = "1999-01-01"
REMOVED = ("ping", "logging/setLevel", "resources/subscribe", "initialize")
MODERN_ERRORS = (UNSUPPORTED_VERSION, MISSING_CAPABILITY, -32020)  # recognised as modern by a dual-era client
PATIENCE = 2.0  # the probe's timeout, this many times more in all, for a server still at work when it ran out


class ModernSession:
    probe: Probe  # started by run()

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.f = ctx.findings
        self.results: list[tuple[str, Any, str]] = []  # (method, result, the request as sent) of every result
        self.capabilities: dict[str, Any] = {}
        self.shop = False
        self.tools: list[dict[str, Any]] = []

    # -- sending ---------------------------------------------------------------------------------
    def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        id: Any = None,
        capabilities: dict[str, Any] | None = None,
        timeout: float | None = None,
        give_up: bool = False,
        enveloped: bool = True,
    ) -> Reply:
        """A modern request (``_meta`` added unless ``enveloped`` is false); its result is kept."""
        params = dict(params or {})
        if enveloped:
            params["_meta"] = {**meta(capabilities), **params.get("_meta", {})}
        reply = self.probe.request(method, params, id=id, timeout=timeout, give_up=give_up)
        if reply.message is not None and "result" in reply.message:
            self.results.append((method, reply.result, show_json(reply.sent, 200)))
        return reply

    # -- the conversation ------------------------------------------------------------------------
    def run(self) -> None:
        eras = self.ctx.eras
        try:
            self.probe = self.ctx.start("modern")
        except BaseException:
            eras.set_modern(False, "the server could not be started")
            self.ctx.first_up.set()
            raise
        try:
            spoken = self.probe_era()
            self.ctx.first_up.set()
            if eras.settled("modern", self.ctx.init_timeout + self.ctx.timeout + 5.0):
                if spoken:
                    self.converse()
                else:
                    self.not_modern()
        finally:
            eras.set_modern(bool(eras.modern), eras.why.get("modern", "no answer"))  # settled, whatever happened
            self.ctx.first_up.set()
            self.end()

    def probe_era(self) -> bool:
        """server/discover first, as a dual-era client sends it: the era probe (era-probe)."""
        f, probe, eras = self.f, self.probe, self.ctx.eras
        # A server still starting on the CPU (a busy machine) is waited for, not taken for a legacy
        # server that ignores the probe: an idle one's silence, or a flood of other lines, stands.
        reply = self.probe.request(
            "server/discover",
            {"_meta": meta()},
            id=1,
            timeout=self.ctx.init_timeout,
            patience=PATIENCE * self.ctx.init_timeout,
        )
        self.discover = reply
        if isinstance(reply.result, dict):
            self.results.append(("server/discover", reply.result, show_json(reply.sent, 200)))
        evidence = {"sent": show_json(reply.sent), "received": show_json(reply.message)}
        if reply.message is None:
            why = why_no_reply(probe, reply, "server/discover")
            if probe.alive() and not probe.stdout_closed() and not reply.spread and reply.near_miss is None:
                # Silence while stdin is open: a reply stuck in the buffer comes out when stdin closes
                # (exiting flushes), and flush.py then names it a held reply: stdout-flush, the root.
                probe.close_stdin()
                probe.read_for(1.0)
            eras.set_modern(False, why)
            f.warned(
                "era-probe",
                f"{why}: a dual-era client waits out its timeout before it falls back to initialize",
                no_reply_evidence(probe, reply, "a DiscoverResult, or any error at once"),
            )
            return False
        if reply.error is not None:
            code = reply.code
            modern = code in MODERN_ERRORS
            eras.set_modern(modern, f"server/discover answered error {code}")
            f.passed(
                "era-probe",
                f"server/discover answered error {code} at once"
                + (" (a modern error: the server is modern)" if modern else ": a dual-era client falls back at once"),
                evidence,
            )
            if code == UNSUPPORTED_VERSION:
                self.unsupported_only(reply)
                return False
            return modern
        eras.set_modern(True, "server/discover answered a result")
        f.passed("era-probe", "server/discover answered a result: the server speaks the modern era", evidence)
        return True

    def not_modern(self) -> None:
        """The modern era was asked for (--era modern or both) but server/discover found none."""
        reply = self.discover
        got = f"error {reply.code}" if reply.error is not None else "no reply"
        self.f.failed(
            "discover-result",
            f"server/discover got {got}: the server does not speak {MODERN} (servers MUST implement server/discover)",
            no_reply_evidence(self.probe, reply, "a DiscoverResult")
            if reply.message is None
            else {"sent": show_json(reply.sent), "received": show_json(reply.message)},
        )
        for check in MODERN_ONLY[1:]:
            self.f.skipped(check, f"not judged: the server does not speak {MODERN} (server/discover got {got})")

    def unsupported_only(self, reply: Reply) -> None:
        data = reply.error.get("data") if reply.error else None
        supported = data.get("supported") if isinstance(data, dict) else None
        self.f.failed(
            "discover-result",
            f"server/discover asked in {MODERN} got -32022: the server serves {json.dumps(supported)}, not {MODERN}",
            {"sent": show_json(reply.sent), "received": show_json(reply.message)},
        )

    def converse(self) -> None:
        f = Revised(self.f)
        reply = self.discover
        # Nothing before the first reply, and the reply came while stdin was open.
        early = [i for i in reply.others if not server_requests([i])]
        if early:
            f.failed(
                "stdout-silent-at-start",
                f"{len(early)} line(s) on stdout before the reply to server/discover",
                {"received": [show(i.line.data) for i in early[:5]], "expected": "nothing until the first reply"},
            )
        else:
            f.passed("stdout-silent-at-start", "nothing on stdout before the reply to server/discover")
        f.passed("stdout-flush", "the server/discover reply arrived while stdin was open")
        self.judge_discover(reply.result)
        self.tools_and_calls()
        self.features()
        self.envelope_errors()
        self.unsupported_version()
        self.removed_methods()
        judge_subscriptions(self)
        ids_and_notifications(self)
        if bad_input(self):
            self.era_mixing()
        else:
            self.f.skipped("era-mixing", "not judged: the server stopped answering after a bad input", revision=MODERN)
        self.judge_results()
        self.judge_server_requests()

    def judge_discover(self, result: Any) -> None:
        f = self.f
        evidence = {"received": show_json(result, 600)}
        if problems := discover_problems(result):
            f.failed("discover-result", problems[0], {**evidence, "problems": problems})
            return
        self.capabilities = result["capabilities"]
        if problem := server_info_problem(result):
            f.warned("discover-result", problem, evidence, rule="server-info")
        else:
            info = result["_meta"][next(k for k in result["_meta"] if k.endswith("/serverInfo"))]
            f.passed(
                "discover-result",
                f"{info['name']} {info['version']} serves {', '.join(result['supportedVersions'])}; "
                f"capabilities {sorted(self.capabilities)}",
            )

    # -- tools -----------------------------------------------------------------------------------
    def tools_and_calls(self) -> None:
        f, probe = Revised(self.f), self.probe
        if "tools" not in self.capabilities:
            for check in ("tools-list", "tool-names", "tools-call-result"):
                f.skipped(check, f'not judged under {MODERN}: server/discover declares no "tools"')
            self.no_mrtr("the server declares no tools")
            return
        tools: list[Any] = []
        cursor = None
        for _page in range(20):
            reply = self.request("tools/list", {"cursor": cursor} if cursor else None, id=f"tools-list-{_page}")
            page = reply.result.get("tools") if isinstance(reply.result, dict) else None
            if not isinstance(page, list):
                why = why_no_reply(probe, reply, "tools/list") if reply.message is None else "no tools list"
                f.failed("tools-list", f"{MODERN} tools/list: {why}", {"received": show_json(reply.message)})
                self.no_mrtr("tools/list gave no list")
                return
            tools += page
            cursor = reply.result.get("nextCursor")
            if not cursor:
                break
        judge_tools(tools, f)
        self.tools = [t for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)]
        self.shop = is_shop(self.tools)
        self.calls()

    def call(self, tool: dict[str, Any], extra: dict[str, Any] | None = None, capabilities: Any = None) -> Reply:
        params = {"name": tool["name"], "arguments": example_arguments(tool.get("inputSchema")), **(extra or {})}
        sent = sum(fr.direction == "sent" for fr in self.probe.frames)
        caps = ASKING if capabilities is None else capabilities
        return self.request(
            "tools/call", params, id=f"call-{tool['name']}-{sent}", capabilities=caps,
            timeout=self.ctx.call_timeout, give_up=True,
        )  # fmt: skip

    def calls(self) -> None:
        f, probe = Revised(self.f), self.probe
        safe = [t for t in self.tools if safe_to_call(t, self.shop, self.ctx.call_tools)]
        bad: list[str] = []
        dirty: list[Any] = []
        asking: list[tuple[dict[str, Any], Reply]] = []
        for tool in safe:
            reply = self.call(tool)
            dirty += noise(reply.others)
            if reply.message is None:
                if reply.sent["id"] in probe.in_flight:
                    continue  # still running: cancelled, and the session goes on
                f.failed(
                    "tools-call-result",
                    f"{MODERN} tools/call {tool['name']}: {why_no_reply(probe, reply, 'it')}",
                    no_reply_evidence(probe, reply, "a CallToolResult"),
                    rule="no-reply",
                )
                return
            result = reply.result
            if isinstance(result, dict) and result.get("resultType") == "input_required":
                asking.append((tool, reply))
            elif reply.error is None and (problem := result_problem(result)):
                bad.append(f"{tool['name']}: {problem} (received {show_json(result, 150)})")
        if bad:
            f.failed("tools-call-result", bad[0], {"problems": bad})
        if dirty:
            f.failed(
                "tools-call-result",
                "stdout carried non-protocol lines during tool calls",
                {"received": [show(i.line.data) for i in dirty[:5]], "expected": "only JSON-RPC messages"},
                rule="stdout",
            )
        if safe and not bad and not dirty:
            f.passed("tools-call-result", f"{len(safe)} tool(s) called under {MODERN}; every result well-formed")
        elif not safe:
            f.skipped("tools-call-result", "no tool is annotated readOnlyHint: true; pass --call-tools to call them")
        if asking:
            round_trip(self, *asking[0])
        else:
            why = "no tool call answered input_required"
            self.no_mrtr(
                why
                + ("" if self.ctx.call_tools else " (tools that are not read-only are called only with --call-tools)")
            )

    def no_mrtr(self, why: str) -> None:
        self.f.skipped("modern-input-required", f"not judged: {why}")
        self.f.skipped("modern-request-state", f"not judged: {why}")

    # -- resources and prompts ---------------------------------------------------------------------
    def features(self) -> None:
        f = self.f
        caps = self.capabilities
        if "prompts" in caps:
            self.request("prompts/list", id="prompts-list")
        if "resources" not in caps:
            f.skipped("modern-resource-not-found", 'server/discover declares no "resources"')
            return
        listed = self.request("resources/list", id="resources-list")
        self.request("resources/templates/list", id="templates-list")
        resources = listed.result.get("resources") if isinstance(listed.result, dict) else None
        first = next((r for r in resources or [] if isinstance(r, dict) and isinstance(r.get("uri"), str)), None)
        if first is not None:
            self.request("resources/read", {"uri": first["uri"]}, id="resources-read")
        reply = self.request("resources/read", {"uri": UNKNOWN_URI}, id="resources-read-unknown")
        evidence = {"sent": show_json(reply.sent), "received": show_json(reply.message), "expected": "error -32602"}
        if reply.message is None:
            f.failed("modern-resource-not-found", why_no_reply(self.probe, reply, "resources/read"), evidence)
        elif reply.error is None:
            contents = reply.result.get("contents") if isinstance(reply.result, dict) else None
            empty = " (an empty contents list, which the spec forbids for a missing resource)" if contents == [] else ""
            f.failed("modern-resource-not-found", f"a URI that names nothing got a result{empty}", evidence)
        elif reply.code != -32602:
            f.failed(
                "modern-resource-not-found", f"a URI that names nothing got error {reply.code}, not -32602", evidence
            )
        else:
            f.passed("modern-resource-not-found", "an unknown URI got -32602")

    # -- the envelope ------------------------------------------------------------------------------
    def envelope_errors(self) -> None:
        f = self.f
        cases = [
            ("no params._meta", {}),
            ("_meta without the client capabilities", {"_meta": {PROTOCOL_VERSION: MODERN}}),
            ("_meta without the protocol version", {"_meta": {CLIENT_CAPABILITIES: {}}}),
        ]
        wrong: list[str] = []
        evidence: dict[str, Any] = {}
        for n, (what, params) in enumerate(cases):
            reply = self.probe.request(
                "tools/list" if "tools" in self.capabilities else "server/discover", params, id=f"envelope-{n}"
            )
            if reply.message is None:
                wrong.append(f"{what}: {why_no_reply(self.probe, reply, 'it')}")
            elif reply.error is None:
                wrong.append(f"{what}: served, not refused")
            elif reply.code != -32602:
                wrong.append(f"{what}: error {reply.code}, not -32602")
            else:
                continue
            evidence = evidence or {"sent": show_json(reply.sent), "received": show_json(reply.message)}
        if wrong:
            f.failed("modern-envelope-errors", wrong[0], {**evidence, "problems": wrong, "expected": "error -32602"})
        else:
            f.passed("modern-envelope-errors", f"-32602 for {', '.join(w for w, _ in cases)}")

    def unsupported_version(self) -> None:
        params = {"_meta": meta(version=UNKNOWN_VERSION)}
        reply = self.probe.request("server/discover", params, id="unsupported-version")
        evidence = {"sent": show_json(reply.sent), "received": show_json(reply.message)}
        if reply.message is None:
            self.f.failed("modern-unsupported-version", why_no_reply(self.probe, reply, "it"), evidence)
        elif problems := unsupported_problems(reply.error, UNKNOWN_VERSION):
            self.f.failed("modern-unsupported-version", problems[0], {**evidence, "problems": problems})
        else:
            supported = reply.error["data"]["supported"]
            self.f.passed(
                "modern-unsupported-version", f"-32022 for {UNKNOWN_VERSION}, supported {json.dumps(supported)}"
            )

    def removed_methods(self) -> None:
        f = self.f
        served: list[str] = []
        evidence: dict[str, Any] = {}
        for method in REMOVED:
            params = (
                {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": CHECKER}
                if method == "initialize"
                else {}
            )
            if method == "logging/setLevel":
                params = {"level": "info"}
            if method == "resources/subscribe":
                params = {"uri": UNKNOWN_URI}
            reply = self.request(method, params, id=f"removed-{method}")
            if reply.message is None:
                f.failed(
                    "modern-removed-methods",
                    f"{method} (a modern request): {why_no_reply(self.probe, reply, 'it')}",
                    no_reply_evidence(self.probe, reply, "error -32601"),
                    rule="no-reply",
                )
                return
            # initialize's error code is the server's choice (basic/versioning's matrix): -32601, or
            # -32022 naming the versions served, as a dual-era server answers a confused client.
            if reply.code != -32601 and not (method == "initialize" and reply.error is not None):
                served.append(f"{method}: " + (f"error {reply.code}" if reply.error else "served"))
                evidence = evidence or {"sent": show_json(reply.sent), "received": show_json(reply.message)}
        if served:
            f.warned(
                "modern-removed-methods",
                f"{served[0]}, not -32601: {MODERN} removed it",
                {**evidence, "problems": served, "expected": "error -32601"},
            )
        else:
            f.passed(
                "modern-removed-methods", f"-32601 for {', '.join(REMOVED[:-1])}, an error for initialize ({MODERN})"
            )

    # -- the other era on this connection ----------------------------------------------------------
    def era_mixing(self) -> None:
        params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": CHECKER}
        reply = self.probe.request("initialize", params, id="legacy-initialize")
        if reply.message is None:
            self.f.failed(
                "era-mixing",
                f"a legacy initialize on a modern connection: {why_no_reply(self.probe, reply, 'it')}",
                no_reply_evidence(self.probe, reply, "an InitializeResult, or an error that says why"),
                revision=MODERN,
            )
        else:
            got = f"error {reply.code}" if reply.error is not None else "a result"
            self.f.passed("era-mixing", f"a legacy initialize on a modern connection got {got}", revision=MODERN)

    # -- judged over the whole session -------------------------------------------------------------
    def judge_results(self) -> None:
        f = self.f
        untyped = [(m, r, sent) for m, r, sent in self.results if result_type_problem(r)]
        if untyped:
            method, result, sent = untyped[0]
            methods = sorted({m for m, _, _ in untyped})
            f.failed(
                "modern-result-type",
                f"{len(untyped)} of {len(self.results)} modern results: {result_type_problem(result)} "
                f"({', '.join(methods)})",
                {
                    "sent": sent,
                    "received": show_json(result, 200),
                    "expected": '"resultType": "complete" (or "input_required") in every result',
                    "problems": list(dict.fromkeys(f"{m}: {result_type_problem(r)}" for m, r, _ in untyped)),
                },
            )
        else:
            f.passed("modern-result-type", f"all {len(self.results)} modern results carry a known resultType")
        hints = [(m, p, r) for m, r, _ in self.results for p in cacheable_problems(m, r)]
        counted = sorted({m for m, r, _ in self.results if m in CACHEABLE})
        if hints:
            method, problem, result = hints[0]
            f.failed(
                "modern-cacheable",
                f"{method}: {problem}",
                {"received": show_json(result, 200), "problems": list(dict.fromkeys(f"{m}: {p}" for m, p, _ in hints))},
            )
        else:
            f.passed("modern-cacheable", f"ttlMs and cacheScope on every complete result of {', '.join(counted)}")

    def judge_server_requests(self) -> None:
        found = server_requests(self.probe.received)
        if found:
            method = found[0].message.get("method")
            self.f.failed(
                "modern-no-server-requests",
                f"the server wrote a request ({method}) to stdout in the modern era",
                {"received": [show(i.line.data) for i in found[:3]], "expected": "an input_required result instead"},
            )
        else:
            self.f.passed("modern-no-server-requests", "no request from the server in the modern session")

    def end(self) -> None:
        probe = getattr(self, "probe", None)
        if probe is None:
            return
        if not self.ctx.eras.judged("modern") or self.ctx.eras.modern is not True:
            probe.close(grace=0.0)
            return
        probe.close_stdin()
        closed_at = probe.child.elapsed()
        # A slow starter may wind down as slowly (as in the main session).
        grace = min(max(EXIT_GRACE, EXIT_PER_STARTUP * self.discover.elapsed), EXIT_GRACE_MAX)
        code = probe.wait_exit(grace, EXIT_STARVED)
        judge_exit(Revised(self.f), probe, code, probe.child.elapsed() - closed_at, grace)
        probe.close()
