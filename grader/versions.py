"""Version negotiation, one fresh process per proposed revision.

A server that supports the proposed revision MUST answer with it; otherwise it answers with one it
supports. A server is taken to support every revision it has ever answered with, so answering
2024-11-05 to a 2025-06-18 proposal is wrong only if it answered 2025-06-18 somewhere else. Under
2025-06-18 the old rule for bad tool arguments (-32602) is checked too, and the results of tools
that declare an outputSchema (structured output begins with 2025-06-18, not 2025-11-25).
"""

from __future__ import annotations

import re
import threading
from typing import Any

from reference.lifecycle import SUPPORTED

from .context import Context, initialize, list_tools
from .main_session import judge_tool_error_kind
from .structured_output import judge_structured_output
from .tool_calls import example_arguments, is_shop, safe_to_call

UNKNOWN = "1999-01-01"
PROPOSALS = ["2025-06-18", "2025-03-26", "2024-11-05", UNKNOWN]
# Every published revision: a server may speak one the course does not (2026-07-28 is stateless).
KNOWN_REVISIONS = (*SUPPORTED, "2026-07-28")
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


class Negotiation:
    def __init__(self) -> None:
        self.answers: dict[str, Any] = {}
        self.refused: dict[str, Any] = {}  # proposals answered with an error instead of a version
        self.lock = threading.Lock()

    def record(self, proposed: str, answered: Any) -> None:
        with self.lock:
            self.answers[proposed] = answered


def run_version(ctx: Context, proposed: str, negotiation: Negotiation) -> None:
    probe = ctx.start(f"version {proposed}")
    try:
        reply = initialize(probe, ctx, version=proposed)
        result = reply.result if isinstance(reply.result, dict) else {}
        if reply.error is not None:
            negotiation.refused[proposed] = reply.error
        negotiation.record(proposed, result.get("protocolVersion") if reply.message else None)
        if proposed != "2025-06-18" or result.get("protocolVersion") != "2025-06-18":
            return
        probe.notify("notifications/initialized")
        tools = list_tools(probe)
        if tools is None:
            return
        safe = [t for t in tools if safe_to_call(t, is_shop(tools), ctx.call_tools)]

        def call(name: str, arguments: dict[str, Any]) -> Any:
            return probe.request("tools/call", {"name": name, "arguments": arguments}, id=f"call-{name}")

        judge_tool_error_kind(probe, safe, "2025-06-18", ctx.findings, call)
        calls = []
        for tool in safe:
            if "outputSchema" in tool and isinstance(tool.get("name"), str):
                arguments = example_arguments(tool.get("inputSchema"))
                calls.append((tool["name"], arguments, call(tool["name"], arguments).result))
        if calls:
            judge_structured_output("2025-06-18", tools, calls, ctx.findings)
    finally:
        probe.close()


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
    evidence = {"answers": answers, "rule": "echo a supported proposal; otherwise answer your latest"}
    if wrong:
        f.failed("version-negotiation", wrong[0], {**evidence, "problems": wrong})
    elif negotiation.refused:
        proposed, error = next(iter(negotiation.refused.items()))
        f.warned(
            "version-negotiation",
            f"answered the proposal {proposed} with an error instead of a version it supports",
            {**evidence, "received": error, "expected": "a result naming a supported version; the client decides"},
        )
    elif answers.get("2025-11-25") not in (None, "2025-11-25"):
        f.warned(
            "version-negotiation",
            f"does not speak 2025-11-25 (answered {answers['2025-11-25']}): clients on the current revision may refuse",
            evidence,
        )
    else:
        f.passed("version-negotiation", f"negotiated {', '.join(f'{k}->{v}' for k, v in sorted(answers.items()))}")
