"""Version negotiation, one fresh process per proposed revision.

A server that supports the proposed revision MUST answer with it; otherwise it answers with one it
supports. A server is taken to support every revision it has ever answered with, so answering
2024-11-05 to a 2025-06-18 proposal is wrong only if it answered 2025-06-18 somewhere else. Under
2025-06-18 bad tool arguments are tried too (that revision accepts -32602 or isError), and the
results of tools that declare an outputSchema (structured output begins with 2025-06-18). A
proposal that gets no answer is named in the verdict, never dropped.
"""

from __future__ import annotations

import json
import re
import threading
from typing import Any

from reference.lifecycle import SUPPORTED

from .context import Context, call_tool, initialize, list_tools, why_no_reply
from .encoding import ENV, judge_code_page
from .probe import Probe
from .structured_output import judge_structured_output
from .tool_calls import example_arguments, is_shop, safe_to_call
from .tool_errors import judge_tool_error_kind

UNKNOWN = "1999-01-01"
OLD_RULE = "2025-06-18"  # the last revision before SEP-1303, and the first with structured output
CODE_PAGE_PROPOSAL = "2024-11-05"  # for a Python server this probe also runs under cp1252
PROPOSALS = ["2025-06-18", "2025-03-26", "2024-11-05", UNKNOWN]
# Every published revision: a server may speak one the course does not (2026-07-28 is stateless).
KNOWN_REVISIONS = (*SUPPORTED, "2026-07-28")
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


class Negotiation:
    def __init__(self) -> None:
        self.answers: dict[str, Any] = {}
        self.refused: dict[str, Any] = {}  # proposals answered with an error instead of a version
        self.missing: dict[str, str] = {}  # proposals never answered, and why
        self.lock = threading.Lock()

    def record(self, proposed: str, answered: Any) -> None:
        with self.lock:
            self.answers[proposed] = answered


def run_version(ctx: Context, proposed: str, negotiation: Negotiation) -> None:
    code_page = proposed == CODE_PAGE_PROPOSAL and ctx.language == "python"
    probe = ctx.start(f"version {proposed}" + (" (cp1252)" if code_page else ""), env=ENV if code_page else None)
    try:
        reply = initialize(probe, ctx, version=proposed)
        if reply.error is not None and not ctx.eras.settled("legacy", ctx.init_timeout + ctx.timeout + 5.0):
            return  # a modern-only server refuses initialize: its legacy checks are skipped (era.py)
        result = reply.result if isinstance(reply.result, dict) else {}
        if reply.error is not None:
            negotiation.refused[proposed] = reply.error
        if reply.message is None:
            negotiation.missing[proposed] = why_no_reply(probe, reply, "initialize")
        negotiation.record(proposed, result.get("protocolVersion") if reply.message else None)
        if proposed == OLD_RULE:
            old_rule_session(ctx, probe, result.get("protocolVersion"), negotiation.missing.get(proposed))
        if code_page and reply.message is not None:
            judge_code_page(ctx, probe)
    finally:
        # No grace: how a server exits is judged in the main session; here it would only cost
        # the wait (a Python SDK server takes about 0.4 s to exit at end of input).
        probe.close(grace=0.0)


def old_rule_session(ctx: Context, probe: Probe, answered: Any, missing: str | None) -> None:
    """Under 2025-06-18: bad tool arguments (either kind of error passes), structured output."""
    f = ctx.findings
    if answered != OLD_RULE:
        why = (
            f"the {OLD_RULE} session did not start: {missing}"
            if missing
            else f"the server answered {json.dumps(answered)} to that proposal"
        )
        for check in ("tool-error-kind", "structured-output"):
            f.skipped(check, f"not judged under {OLD_RULE}: {why}", revision=OLD_RULE)
        return
    probe.notify("notifications/initialized")
    tools = list_tools(probe)
    if tools is None:
        return
    safe = [t for t in tools if safe_to_call(t, is_shop(tools), ctx.call_tools)]
    judge_tool_error_kind(probe, safe, OLD_RULE, f, lambda n, a: call_tool(probe, ctx, n, a))
    calls = []  # only calls with valid arguments: their results are judged for structured output
    for tool in safe:
        if "outputSchema" in tool and isinstance(tool.get("name"), str):
            arguments = example_arguments(tool.get("inputSchema"))
            calls.append((tool["name"], arguments, call_tool(probe, ctx, tool["name"], arguments).result))
    judge_structured_output(OLD_RULE, tools, calls, f)


def judge_negotiation(ctx: Context, main_answer: Any, negotiation: Negotiation) -> None:
    f = ctx.findings
    answers = {"2025-11-25": main_answer, **negotiation.answers}
    answers = {k: v for k, v in answers.items() if v is not None}
    if not answers:
        f.skipped("version-negotiation", "the server never answered initialize")
        return
    supported = {v for v in answers.values() if isinstance(v, str)}
    wrong = []
    for proposed, answer in sorted(answers.items()):
        if not isinstance(answer, str) or not DATE.match(answer):
            wrong.append(f"proposed {proposed}: answered {answer!r}, not a revision date")
        elif proposed == UNKNOWN and answer == UNKNOWN:
            wrong.append(f"proposed the unknown {UNKNOWN}: the server echoed it instead of a version it supports")
        elif answer not in KNOWN_REVISIONS:
            wrong.append(f"proposed {proposed}: answered {answer}, which is no MCP revision")
        elif proposed in supported and answer != proposed:
            wrong.append(f"proposed {proposed} (which it supports elsewhere): answered {answer}")
    evidence: dict[str, Any] = {"answers": answers, "rule": "echo a supported proposal; otherwise answer your latest"}
    # A proposal whose probe never got an answer is named, never silently left out.
    unjudged = {
        p: negotiation.missing.get(p, "its probe did not run")
        for p in PROPOSALS
        if negotiation.answers.get(p) is None and p not in negotiation.refused
    }
    note = ""
    if unjudged:
        evidence["not_judged"] = unjudged
        note = " (not judged: " + "; ".join(f"{p}: {why}" for p, why in unjudged.items()) + ")"
    if wrong:
        f.failed("version-negotiation", wrong[0] + note, {**evidence, "problems": wrong})
    elif negotiation.refused:
        proposed, error = next(iter(negotiation.refused.items()))
        f.warned(
            "version-negotiation",
            f"answered the proposal {proposed} with an error instead of a version it supports{note}",
            {**evidence, "received": error, "expected": "a result naming a supported version; the client decides"},
            rule="latest",
        )
    elif answers.get("2025-11-25") not in (None, "2025-11-25"):
        f.warned(
            "version-negotiation",
            f"does not speak 2025-11-25 (answered {answers['2025-11-25']}): clients on the current revision may "
            f"refuse{note}",
            evidence,
            rule="latest",
        )
    else:
        negotiated = ", ".join(f"{k}->{v}" for k, v in sorted(answers.items()))
        f.passed("version-negotiation", f"negotiated {negotiated}{note}", evidence)
