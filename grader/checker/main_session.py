"""The main session: one process taken through a whole, well-behaved client's conversation.

Initialize (sent the moment the process starts, as hosts do: it times the start-up), silence
before its reply, the initialized notification (plus an unknown one and a cancellation), ping,
ids of every JSON type, tools/list, tool calls (each with the call timeout; one still running
then is cancelled and the session goes on), protocol and tool errors, the shop contract, resources
and prompts where declared, the bad inputs, and finally closing stdin. Each step reports the
checks it can see; a server that stops answering ends the session early, and the later checks say
why they were skipped.
"""

from __future__ import annotations

import json
import re
from typing import Any

from reference import PROTOCOL_REVISION, thread_state
from reference.tools import TOOL_NAME

from .bad_input import BAD_INPUT_CHECKS, judge_first_reply, run_bad_input
from .context import Context, call_tool, initialize, no_reply_evidence, why_no_reply
from .era import legacy_opened, mixing_on_legacy
from .features import judge_prompts, judge_resources
from .probe import EXIT_STARVED, Probe, Received, Reply, show, show_json
from .request_named_notifications import run_request_named
from .shop_contract import ShopTruth, judge_contract, judge_injection
from .signatures import kind_of
from .structured_output import judge_structured_output
from .tool_calls import example_arguments, is_shop, result_problem, result_text, safe_to_call, schema_problem
from .tool_errors import judge_tool_error_kind, judge_unknown_tool

IDS: list[Any] = [0, 42, "abc", "7"]
UNICODE_ID = "id-ü-☕-桜"
UNICODE_QUERY = "Sakura 桜"
NOTIFICATIONS = [
    ("notifications/initialized", None),
    ("notifications/mcp-lab/unknown", {"note": "a notification no server knows"}),
    ("notifications/cancelled", {"requestId": 999999, "reason": "mcp-lab check: nothing to cancel"}),
]


SPEC_TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")  # MCP 2025-11-25, Tools > Tool Names (SHOULDs)


def server_requests(items: list[Received]) -> list[Received]:
    """Requests the server sent us (it has a method and an id), other than ping and logging."""
    return [
        i
        for i in items
        if isinstance(i.message, dict)
        and "id" in i.message
        and isinstance(i.message.get("method"), str)
        and i.message["method"] not in ("ping", "logging/setLevel")
    ]


def is_ping_request(item: Received) -> bool:
    """A ping from the server: allowed at any time, even before initialize."""
    return isinstance(item.message, dict) and item.message.get("method") == "ping" and "id" in item.message


def stray_responses(items: list[Received]) -> list[Received]:
    return [i for i in items if isinstance(i.message, dict) and "method" not in i.message]


def judge_silence(f: Any, reply: Reply, sent: list[str], after: str, what: str) -> None:
    """notification-silence: the notifications ``sent`` got no reply; ``reply`` (to ``after``) came next."""
    answered = stray_responses(reply.others)
    if answered:
        f.failed(
            "notification-silence",
            "the server answered a notification",
            {
                "sent": sent,
                "received": [show(i.line.data) for i in answered[:3]],
                "expected": f"no reply at all: the next line should be the reply to {after}",
            },
        )
    elif reply.message is not None:
        f.passed("notification-silence", f"no reply to {what}")


def noise(items: list[Received]) -> list[Received]:
    return [i for i in items if not (i.json_ok and isinstance(i.message, dict))]


class MainSession:
    probe: Probe  # started by run()

    def __init__(self, ctx: Context, truth: ShopTruth) -> None:
        self.ctx = ctx
        self.f = ctx.findings
        self.truth = truth
        self.early_requests: list[Received] = []
        self.capabilities: Any = {}
        self.negotiated: Any = None  # the protocolVersion answered to 2025-11-25
        self.shop = False
        self.calls: list[tuple[str, dict[str, Any], Any]] = []  # every tools/call: name, arguments, result
        self.readable = False  # the first initialize got a reply that can be read
        self.startup = 0.0  # seconds from its start to the first initialize reply: how fast it runs here
        self.hung = False  # it stopped answering after a bad input

    def run(self) -> None:
        # Started here, in the session's own thread: it runs alone until initialize is answered,
        # so that the other probes starting at the same moment do not slow its start-up timing.
        try:
            self.probe = self.ctx.start("main")
        except BaseException:
            self.ctx.first_up.set()  # OSError: a usage error, reported by run_check
            raise
        try:
            if self.handshake():
                self.notifications_and_ping()
                self.ids()
                mixing_on_legacy(self.ctx, self.probe)
                tools = self.tools_list()
                if tools is not None:
                    self.tool_calls(tools)
                self.resources_and_prompts()
                self.bad_input()
        finally:
            self.ctx.first_up.set()
            self.end()

    # -- steps -----------------------------------------------------------------------------
    def handshake(self) -> bool:
        probe, f = self.probe, self.f
        reply = initialize(probe, self.ctx)  # sent the moment it starts, as hosts do: timed
        self.ctx.first_up.set()  # the other probes may start now
        if not legacy_opened(self.ctx, reply):
            return False  # a modern-only server refused initialize: its legacy checks are skipped (era.py)
        self.readable = judge_first_reply(self.ctx, probe, reply)
        if reply.message is not None:
            self.startup = reply.elapsed
        # A server answers in order, so whatever came before the initialize reply was written
        # before it read any request, however slowly it started: that is all "at start".
        # Without a readable reply, every line that came while the checker waited for one counts
        # (a reply it could not read, pretty-printed or with its id mistyped, is marked by the root
        # cause as the reply itself), but never a framing header or a blank line: those start a
        # reply framed another way. No time window: what counts must not depend on the machine's load.
        early = [i for i in reply.others if reply.message is not None or kind_of(i.line.data) != "header"]
        unprompted = [i for i in early if not is_ping_request(i)]
        if unprompted:
            f.failed(
                "stdout-silent-at-start",
                f"{len(unprompted)} line(s) on stdout before the reply to the first request",
                {
                    "received": [show(i.line.data) for i in unprompted[:5]],
                    "expected": "nothing until the first request is answered",
                },
            )
        else:
            f.passed("stdout-silent-at-start", "nothing on stdout before the first reply")
        if reply.message is None:
            self.no_initialize(reply)
            return False
        f.passed("stdout-flush", "replies arrive while stdin is open (PYTHONUNBUFFERED removed)")
        judge_initialize(reply, f)
        if isinstance(reply.result, dict):
            self.capabilities = reply.result.get("capabilities", {})
            self.negotiated = reply.result.get("protocolVersion")
        self.early_requests += server_requests(early) + server_requests(probe.drain(0.05))
        if self.early_requests:
            f.warned(
                "no-early-server-requests",
                f"the server sent {self.early_requests[0].message.get('method')} before notifications/initialized",
                {"received": [show(i.line.data) for i in self.early_requests[:3]]},
            )
        else:
            f.passed("no-early-server-requests", "no server requests before notifications/initialized")
        volume = probe.child.stderr_bytes
        if volume > 64 * 1024:
            f.warned(
                "stderr-volume",
                f"{volume} bytes of stderr during the handshake (a host that does not drain stderr hangs)",
                {"stderr_bytes": volume, "stderr_tail": probe.stderr_tail(300)},
            )
        else:
            f.passed("stderr-volume", f"{volume} bytes of stderr during the handshake")
        return True

    def no_initialize(self, reply: Reply) -> None:
        probe, f = self.probe, self.f
        evidence = no_reply_evidence(probe, reply, "an initialize result with the same id (1)")
        # Bytes that arrived but were never delivered as a line: written and flushed, but not
        # ended with "\n" (Content-Length framing does that). Not a flush problem.
        unterminated = probe.child.stdout_bytes - sum(i.line.size + 1 for i in probe.received)
        why = why_no_reply(probe, reply, "initialize")
        if unterminated > 0 and not reply.spread:
            why = f"the server wrote {unterminated} bytes without ending the line: every message must end in \\n"
        elif probe.alive() and not probe.stdout_closed() and not reply.spread:
            # Silence while stdin is open: is the reply stuck in a buffer? Closing stdin makes a
            # Python server exit, and exiting flushes.
            probe.close_stdin()
            late = probe.read_for(1.0)
            if any(isinstance(i.message, dict) and i.message.get("id") == 1 for i in late):
                f.failed(
                    "stdout-flush",
                    "the initialize reply arrived only after stdin was closed: the server does not flush",
                    {**evidence, "received_after_close": [show(i.line.data) for i in late[:3]]},
                )
        f.failed("initialize-result", why, evidence)
        f.unreached = f"not reached: {why}"

    def notifications_and_ping(self) -> None:
        probe, f = self.probe, self.f
        for method, params in NOTIFICATIONS:
            probe.notify(method, params)
        reply = probe.request("ping", id=2)
        judge_silence(
            f, reply, [m for m, _ in NOTIFICATIONS], "ping (id 2)", "initialized, an unknown notification, or cancelled"
        )
        judge_ping(probe, reply, f)

    def ids(self) -> None:
        probe, f = self.probe, self.f
        for request_id in [*IDS, UNICODE_ID]:
            if probe.stalled:
                return
            reply = probe.request("ping", id=request_id)
            check = "encoding-utf8" if request_id == UNICODE_ID else "id-echo"
            if reply.message is None:
                got = show(reply.near_miss.line.data) if reply.near_miss else None
                f.failed(
                    check,
                    f"ping with id {json.dumps(request_id, ensure_ascii=False)}: {why_no_reply(probe, reply, 'it')}",
                    {
                        **no_reply_evidence(
                            probe,
                            reply,
                            f"a reply with id {json.dumps(request_id, ensure_ascii=False)} (same JSON type)",
                        ),
                        "near_miss": got,
                    },
                )
        if not probe.stalled:
            f.passed("id-echo", 'ids 0, 42, "abc" and "7" came back with the same value and type')
            if self.ctx.language != "python":  # else the code-page probe judges it, cp1252 included
                f.passed("encoding-utf8", f"the non-ASCII id {UNICODE_ID!r} came back byte-exact")

    def tools_list(self) -> list[dict[str, Any]] | None:
        probe, f = self.probe, self.f
        tools: list[dict[str, Any]] = []
        cursor = None
        for _page in range(20):
            reply = probe.request("tools/list", {"cursor": cursor} if cursor else None, id="tools-list")
            if reply.message is None:
                f.failed(
                    "tools-list",
                    why_no_reply(probe, reply, "tools/list"),
                    no_reply_evidence(probe, reply, "a result"),
                )
                return None
            if reply.error is not None:
                self.judge_capabilities(served_tools=reply.code != -32601, list_reply=reply)
                if reply.code == -32601:
                    for check in (
                        "tools-list",
                        "tool-names",
                        "tools-call-result",
                        "unknown-tool",
                        "tool-error-kind",
                        "structured-output",
                    ):
                        f.skipped(check, "the server does not serve tools/list (-32601)")
                    self.not_a_shop("it serves no tools")
                    return None
                f.failed("tools-list", f"tools/list answered an error: {reply.error}", {"received": reply.error})
                return None
            result = reply.result
            page = result.get("tools") if isinstance(result, dict) else None
            if not isinstance(page, list):
                f.failed("tools-list", 'the result has no "tools" list', {"received": show_json(result)})
                return None
            tools += page
            cursor = result.get("nextCursor")
            if not cursor:
                break
        self.judge_capabilities(served_tools=True, list_reply=None)
        judge_tools(tools, f)
        self.shop = is_shop(tools)
        if not self.shop:
            self.not_a_shop("no count_orders/list_orders/get_order/search_products")
        return [t for t in tools if isinstance(t, dict)]

    def not_a_shop(self, why: str) -> None:
        self.f.skipped("shop-contract", f"not a shop server ({why})")
        self.f.skipped("shop-read-only", f"not a shop server ({why})")

    def judge_capabilities(self, served_tools: bool, list_reply: Reply | None) -> None:
        probe, f = self.probe, self.f
        caps = self.capabilities if isinstance(self.capabilities, dict) else {}
        wrong = []  # served but not declared: a MUST
        unserved = []  # declared but not served: misleading, but no MUST says so
        if served_tools and "tools" not in caps:
            wrong.append('tools/list is served but capabilities has no "tools"')
        if not served_tools and "tools" in caps:
            unserved.append('capabilities declares "tools" but tools/list answers -32601')
        for feature in ("prompts", "resources"):
            reply = probe.request(f"{feature}/list", id=f"{feature}-list")
            served = reply.message is not None and reply.code != -32601
            if feature in caps and not served:
                unserved.append(f'capabilities declares "{feature}" but {feature}/list is not served')
            if served and feature not in caps and reply.error is None:
                wrong.append(f'{feature}/list is served but capabilities has no "{feature}"')
        if wrong:
            f.failed("capabilities-match", "; ".join(wrong), {"capabilities": caps})
        if unserved:
            f.warned("capabilities-match", "; ".join(unserved), {"capabilities": caps}, rule="unserved")
        if not wrong and not unserved:
            f.passed("capabilities-match", f"declared capabilities {sorted(caps)} match the methods served")

    def call(self, name: str, arguments: dict[str, Any], timeout: float | None = None) -> Reply:
        reply = call_tool(self.probe, self.ctx, name, arguments, timeout)
        self.calls.append((name, arguments, reply.result))
        return reply

    def tool_calls(self, tools: list[dict[str, Any]]) -> None:
        probe, f, ctx = self.probe, self.f, self.ctx
        safe = [t for t in tools if isinstance(t.get("name"), str) and safe_to_call(t, self.shop, ctx.call_tools)]
        bad_shape: list[str] = []
        dirty: list[Received] = []
        slow: list[str] = []
        for tool in safe:
            reply = self.call(tool["name"], example_arguments(tool.get("inputSchema")))
            dirty += noise(reply.others)
            if reply.message is None and reply.sent["id"] in probe.in_flight:
                slow.append(tool["name"])  # still running: cancelled, and the session goes on
                continue
            if reply.message is None:
                f.failed(
                    "tools-call-result",
                    f"tools/call {tool['name']}: {why_no_reply(probe, reply, 'it')}",
                    no_reply_evidence(probe, reply, "a CallToolResult"),
                    rule="no-reply",
                )
                f.unreached = f"not reached: the session ended during tools/call {tool['name']}"
                return
            if reply.error is None and (problem := result_problem(reply.result)):
                bad_shape.append(f"{tool['name']}: {problem} (received {show_json(reply.result, 150)})")
        after = probe.request("ping", id="after-calls")
        dirty += noise(after.others)
        self.judge_call_results(safe, bad_shape, dirty, slow, after)
        judge_unknown_tool(probe, lambda n, a: self.call(n, a, probe.timeout), f)
        # Judge by the revision this session negotiated: an older server answers the older rule.
        version = self.negotiated if isinstance(self.negotiated, str) else PROTOCOL_REVISION
        # Not self.call: results of calls with bad arguments are not judged for structured output.
        judge_tool_error_kind(probe, safe, version, f, lambda n, a: call_tool(probe, ctx, n, a))
        if self.shop:
            self.shop_checks()
        # Every successful result of every call above, under the revision this session negotiated.
        judge_structured_output(version, tools, self.calls, f)

    def judge_call_results(
        self, safe: list[dict[str, Any]], bad_shape: list[str], dirty: list[Received], slow: list[str], after: Reply
    ) -> None:
        probe, f = self.probe, self.f
        if bad_shape:
            f.failed("tools-call-result", bad_shape[0], {"problems": bad_shape})
        if dirty:
            f.failed(
                "tools-call-result",
                "stdout carried non-protocol lines during tool calls",
                {"received": [show(i.line.data) for i in dirty[:5]], "expected": "only JSON-RPC replies"},
                rule="stdout",
            )
        if after.message is None:
            f.failed(
                "tools-call-result",
                f"after the tool calls the server stopped answering ({why_no_reply(probe, after, 'ping')})",
                no_reply_evidence(probe, after, "the reply to ping"),
                rule="no-reply",
            )
        if slow:
            f.warned(
                "tools-call-result",
                f"no reply from {', '.join(slow)} within {self.ctx.call_timeout:g} s (--call-timeout): the checker "
                "sent notifications/cancelled and went on; the spec bounds no tool's run time, but hosts give up",
                {"cancelled": [str(i) for i in probe.in_flight]},
                rule="slow",
            )
        elif safe and not (bad_shape or dirty or after.message is None):
            f.passed("tools-call-result", f"{len(safe)} tool(s) called; every result is a valid CallToolResult")
        elif not safe:
            f.skipped(
                "tools-call-result",
                "no tool is annotated readOnlyHint: true; pass --call-tools to call them anyway",
            )

    def shop_checks(self) -> None:
        def call(name: str, arguments: dict[str, Any]) -> Any:
            reply = self.call(name, arguments)
            return reply.result if isinstance(reply.result, dict) else None

        judge_contract(call, self.truth, self.f)
        judge_injection(call, self.truth, self.f)
        text = result_text(call("search_products", {"query": UNICODE_QUERY}))
        if text and UNICODE_QUERY not in text:
            self.f.failed(
                "encoding-utf8",
                f"search_products {UNICODE_QUERY!r} did not bring back the non-ASCII text intact",
                {"received": text[:300]},
            )

    def resources_and_prompts(self) -> None:
        """resources-list, resources-read, prompts-list, prompts-get: where the server declares them."""
        if self.probe.stalled or not self.probe.alive():
            return  # not reached: the findings say why
        judge_resources(self.probe, self.capabilities, self.f)
        judge_prompts(self.probe, self.capabilities, self.f)

    def fresh_for_bad_input(self, why: str) -> Probe | None:
        """A new process, past its handshake, for the bad inputs (None, the checks skipped, if it does not answer)."""
        probe = self.ctx.start(why)
        if initialize(probe, self.ctx).message is None:
            for check in BAD_INPUT_CHECKS:
                self.f.skipped(check, "not judged: a fresh process for bad input did not answer initialize")
            probe.close()
            return None
        probe.notify("notifications/initialized")
        return probe

    def bad_input(self) -> None:
        """The bad inputs, last: on this process if it still answers, else on a fresh one."""
        if not self.readable:
            return  # judge_first_reply said why the bad-input checks are skipped
        probe, ctx = self.probe, self.ctx
        fresh = probe.stalled or not probe.alive() or probe.stdout_closed()
        if fresh:
            probe = self.fresh_for_bad_input("bad-input")
            if probe is None:
                return
        probe = run_request_named(ctx, probe)
        if probe.stalled and probe.alive() and not probe.stdout_closed():
            # Silent since a notification: each bad input would wait its full timeout for nothing,
            # and its verdict would blame the bad input. A fresh process takes them.
            probe.close()
            probe = self.fresh_for_bad_input("bad-input after a notification")
            if probe is None:
                return
            fresh = True
        final, answering = run_bad_input(ctx, probe)
        if fresh:
            final.close()
            return
        self.probe = final  # a bad input may have ended the main process: exit-on-eof on its successor
        if not answering and final.alive():
            self.hung = True

    def end(self) -> None:
        probe = self.probe
        if self.hung:
            self.f.skipped("exit-on-eof", "not judged: the server stopped answering after a bad input")
            probe.close()
            return
        probe.close_stdin()
        closed_at = probe.child.elapsed()
        # A server that took long to start on this machine (a busy one, a heavy runtime) may take
        # as long to wind down: the grace grows with its own start-up, within bounds.
        grace = min(max(EXIT_GRACE, EXIT_PER_STARTUP * self.startup), EXIT_GRACE_MAX)
        code = probe.wait_exit(grace, EXIT_STARVED)
        if code is None and probe.in_flight:
            # Work the checker gave up on may still be running: a server may finish it first.
            code = probe.wait_exit(max(self.ctx.call_timeout, IN_FLIGHT_GRACE))
        judge_exit(self.f, probe, code, probe.child.elapsed() - closed_at, grace)
        probe.close()


EXIT_GRACE = 2.0  # seconds a server has at least to exit after stdin closes
EXIT_PER_STARTUP = 3.0  # ... or this many times its own start-up time, if longer
EXIT_GRACE_MAX = 10.0  # ... but never more (hosts wait a few seconds, then send SIGTERM)
IN_FLIGHT_GRACE = 10.0  # at least this long more when calls were left running


def judge_exit(f: Any, probe: Probe, code: int | None, waited: float, grace: float = EXIT_GRACE) -> None:
    """exit-on-eof: prompt exit, exit once the work in flight ends, or no exit at all."""
    if code == 0 and waited <= grace:
        f.passed("exit-on-eof", "exited with status 0 after stdin closed")
    elif code == 0 and probe.in_flight:
        f.passed(
            "exit-on-eof",
            f"exited with status 0 {waited:.1f} s after stdin closed, once the tool call(s) in flight ended",
        )
    elif code == 0:
        slowed = "slowed by a busy machine (it waited for a CPU)"
        f.passed("exit-on-eof", f"exited with status 0 {waited:.1f} s after stdin closed, {slowed}")
    elif code is None:
        f.warned(
            "exit-on-eof",
            f"never exits: still running {waited:.1f} s after stdin closed"
            + (" (with tool calls in flight)" if probe.in_flight else ""),
            {
                "expected": "leave the read loop at end of input and exit 0",
                "threads": thread_state.describe(probe.child.last_look),  # what holds it: a join(), a sleep, ...
                "stderr_tail": probe.stderr_tail(300),
            },
        )
    else:
        f.warned(
            "exit-on-eof",
            f"exited with status {code} after stdin closed, not 0",
            {"stderr_tail": probe.stderr_tail()},
        )


# -- judges shared with the other probes ---------------------------------------------------
def judge_initialize(reply: Reply, f: Any) -> None:
    result = reply.result
    wrong = []
    if not isinstance(result, dict):
        wrong.append("initialize answered an error" if reply.error else "the result is not an object")
        result = {}
    if not isinstance(result.get("protocolVersion"), str):
        wrong.append('"protocolVersion" must be a string')
    if not isinstance(result.get("capabilities"), dict):
        wrong.append('"capabilities" must be an object')
    info = result.get("serverInfo")
    if not isinstance(info, dict) or not isinstance(info.get("name"), str) or not isinstance(info.get("version"), str):
        wrong.append('"serverInfo" must have a "name" and a "version" string')
    if wrong:
        f.failed("initialize-result", "; ".join(wrong), {"received": show_json(reply.message, 500)}, rule="schema")
    else:
        f.passed(
            "initialize-result",
            f"serverInfo {info['name']} {info['version']}, revision {result['protocolVersion']}",
        )


def judge_ping(probe: Probe, reply: Reply, f: Any) -> None:
    if reply.message is None:
        f.failed("ping", why_no_reply(probe, reply, "ping"), no_reply_evidence(probe, reply, '{"result": {}}'))
    elif reply.result == {} and reply.error is None:
        f.passed("ping", "ping answered {}")
    else:
        f.failed(
            "ping",
            "ping must be answered with an empty result {}",
            {"received": show_json(reply.message)},
        )


def judge_tools(tools: list[Any], f: Any) -> None:
    wrong = []
    names = []
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            wrong.append(f"tools[{i}] has no name string")
            continue
        names.append(tool["name"])
        if (problem := schema_problem(tool.get("inputSchema"))) is not None:
            wrong.append(f"{tool['name']}: {problem}")
    if wrong:
        f.failed("tools-list", wrong[0], {"problems": wrong, "expected": '"inputSchema": {"type": "object", ...}'})
    else:
        f.passed("tools-list", f"{len(tools)} tool(s), every inputSchema an object schema")
    bad = [n for n in names if not TOOL_NAME.match(n)]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if bad or repeated:
        what = (f"names not matching {TOOL_NAME.pattern}: {bad}" if bad else "") + (
            f"{'; ' if bad else ''}repeated names: {repeated}" if repeated else ""
        )
        # Within the spec's own characters and length (a dot is one from 2025-11-25), only the hosts object.
        spec_ok = not repeated and all(SPEC_TOOL_NAME.match(n) for n in bad)
        f.warned("tool-names", what, {"names": names}, rule="hosts" if spec_ok else "main")
    else:
        f.passed("tool-names", "every name matches ^[A-Za-z0-9_-]{1,64}$ and is unique")
