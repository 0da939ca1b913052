"""Tool errors: an unknown tool, and arguments that break a tool's inputSchema, judged per revision.

What the spec says, and how strongly:

- Servers MUST validate all tool inputs (Tools > Security Considerations, 2025-06-18 and
  2025-11-25): bad arguments that *succeed* fail ``tool-error-kind``.
- Which kind of error: 2025-06-18 lists "invalid arguments" under protocol errors and "invalid
  input data" under tool execution errors, with no MUST; 2025-11-25 (SEP-1303) puts input
  validation errors under tool execution errors (``isError``), again with no MUST. So up to
  2025-06-18 both -32602 and isError pass; under 2025-11-25 isError passes and -32602 warns.
- An unknown tool is listed under protocol errors (the example uses -32602), with no MUST: any
  other answer warns, with the reason. Only silence fails (a request MUST get a response).

    >>> kind_verdict("2025-06-18", {"result": {"content": [], "isError": True}})[0]
    'pass'
    >>> kind_verdict("2025-11-25", {"error": {"code": -32602, "message": "bad"}})[0]
    'warn'
    >>> kind_verdict("2025-11-25", {"result": {"content": []}})[0]
    'fail'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .probe import Probe, Reply, show_json
from .tool_calls import violating_arguments
from .verdicts import Findings

NEW_RULE = "2025-11-25"  # SEP-1303: input validation errors are tool execution errors
MAX_TARGETS = 4  # tools called with bad arguments per session
UNKNOWN_TOOL = "mcp_lab_no_such_tool"

Call = Callable[[str, dict[str, Any]], Reply]


def _is_error_result(message: dict[str, Any]) -> bool:
    result = message.get("result")
    return isinstance(result, dict) and result.get("isError") is True


def _code(message: dict[str, Any]) -> Any:
    error = message.get("error")
    return error.get("code") if isinstance(error, dict) else None


def kind_verdict(version: str, message: dict[str, Any]) -> tuple[str, str, str]:
    """(status, rule, what happened) for the answer to arguments that break the inputSchema."""
    new_rule = version >= NEW_RULE
    if _is_error_result(message):
        return "pass", "main", "an isError result"
    if "error" in message:
        code = _code(message)
        if code == -32602 and not new_rule:
            return "pass", "main", "-32602"
        if code == -32602:
            return (
                "warn",
                "kind",
                (
                    f"-32602 under {version}, which lists input validation errors under tool execution errors "
                    "(isError), so that the model can read the reason and correct itself; no MUST says so"
                ),
            )
        return "warn", "kind", f"error {code}, neither isError nor -32602 (Invalid params)"
    return "fail", "main", "a successful result: the server accepted arguments that break the inputSchema"


def judge_tool_error_kind(probe: Probe, safe: list[dict[str, Any]], version: str, f: Findings, call: Call) -> None:
    """Call up to MAX_TARGETS tools with arguments that break their inputSchema."""
    targets = [(t["name"], a) for t in safe if (a := violating_arguments(t.get("inputSchema"))) is not None]
    if not targets:
        f.skipped("tool-error-kind", "no callable tool has a typed parameter to get wrong", revision=version)
        return
    expected = "an isError result" if version >= NEW_RULE else "an isError result or a JSON-RPC error -32602"
    for name, arguments in targets[:MAX_TARGETS]:
        reply = call(name, arguments)
        evidence = {
            "sent": show_json(reply.sent),
            "received": show_json(reply.message),
            "expected": f"{expected} (negotiated revision {version})",
        }
        if reply.message is None:
            if probe.alive() and not probe.stdout_closed():
                f.skipped("tool-error-kind", f"{name} with bad arguments: no reply in time", revision=version)
                continue
            what = f"{name} with bad arguments: the server exited"
            f.failed("tool-error-kind", what, evidence, rule="no-reply", revision=version)
            break
        status, rule, what = kind_verdict(version, reply.message)
        f.add("tool-error-kind", status, f"bad arguments to {name} got {what}", evidence, rule, version)


def judge_unknown_tool(probe: Probe, call: Call, f: Findings) -> Reply:
    reply = call(UNKNOWN_TOOL, {})
    message = reply.message
    evidence = {
        "sent": show_json(reply.sent),
        "received": show_json(message),
        "expected": "a JSON-RPC error (the spec's example: -32602 'Unknown tool: ...')",
    }
    if message is None:
        why = "the server exited" if not probe.alive() or probe.stdout_closed() else "no reply in time"
        f.failed("unknown-tool", f"calling an unknown tool: {why}", evidence, rule="no-reply")
    elif _code(message) == -32602:
        f.passed("unknown-tool", "an unknown tool gets -32602")
    elif "error" in message:
        f.warned("unknown-tool", f"an unknown tool got error {_code(message)}; the spec's example is -32602", evidence)
    elif _is_error_result(message):
        f.warned(
            "unknown-tool",
            "an unknown tool got an isError result, not a protocol error: both revisions list unknown tools "
            "under protocol errors (no MUST), and a model shown the result may retry a tool that does not exist",
            evidence,
        )
    else:
        f.warned("unknown-tool", "an unknown tool got a successful result", evidence)
    return reply
