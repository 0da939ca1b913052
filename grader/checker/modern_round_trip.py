"""The modern era's multi round-trip requests, where a tool asks for input (basic/patterns/mrtr).

The checker answers an ``input_required`` result as a careful client would (every elicitation
declined, so that a confirmation confirms nothing), retries under a new id with the answers and
``requestState`` unchanged, retries once more with the state altered as an attacker would (its
decoded payload changed, its signature kept: :func:`grader.checker.modern_checks.forge`), and calls
the tool again declaring no capability: it must not be asked for one it did not declare.

The gallery's healthy modern server signs its state; its ``cancel_order`` asks for confirmation
(called only with ``--call-tools``: it is not read-only):

    >>> import sys
    >>> from grader import gallery
    >>> from grader.checker.catalogue import CHECKS, MODERN_CHECKS
    >>> from grader.checker.context import Context
    >>> from grader.checker.modern_session import ModernSession
    >>> from grader.checker.verdicts import Findings
    >>> server = [sys.executable, str(gallery.MODERN_BASE)]
    >>> ctx = Context(server, call_tools=True, findings=Findings([*CHECKS, *MODERN_CHECKS]))
    >>> ModernSession(ctx).run()
    >>> ctx.findings.status("modern-input-required"), ctx.findings.status("modern-request-state")
    ('pass', 'pass')
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .context import why_no_reply
from .modern_checks import forge, input_required_problems, input_responses
from .modern_wire import ASKING
from .probe import Reply, show_json

if TYPE_CHECKING:
    from .modern_session import ModernSession


def round_trip(s: ModernSession, tool: dict[str, Any], first: Reply) -> None:
    """Answer the input requests (declining), retry; retry again with a forged state; ask without
    the capability (basic/patterns/mrtr)."""
    f, name = s.f, tool["name"]
    result = first.result
    problems = input_required_problems(result, ASKING)
    evidence = {"sent": show_json(first.sent), "received": show_json(result, 600)}
    if problems:
        f.failed("modern-input-required", f"{name}: {problems[0]}", {**evidence, "problems": problems})
    state = result.get("requestState")
    answers = input_responses(result.get("inputRequests"))
    retry: dict[str, Any] = {"inputResponses": answers} if answers else {}
    if isinstance(state, str):
        retry["requestState"] = state
    again = s.call(tool, retry)
    evidence["retry"] = show_json(again.sent, 600)
    evidence["retry_answer"] = show_json(again.message, 400)
    if again.message is None:
        f.failed(
            "modern-input-required",
            f"{name}: the retry with the answers got {why_no_reply(s.probe, again, 'it')}",
            evidence,
        )
    elif again.error is not None and not problems:
        f.warned(
            "modern-input-required",
            f"{name}: the retry with the answers (declined) got error {again.code}, not a result",
            evidence,
            rule="retry",
        )
    elif not problems:
        kind = again.result.get("resultType") if isinstance(again.result, dict) else None
        f.passed(
            "modern-input-required",
            f"{name} asked for input ({', '.join(sorted(answers)) or 'requestState only'}); the retry got {kind}",
        )
    # Without the capability, the same call must not ask for it.
    bare = s.call(tool, capabilities={})
    asked = bare.result if isinstance(bare.result, dict) else {}
    if asked.get("resultType") == "input_required" and (wrong := input_required_problems(asked, {})):
        f.failed(
            "modern-input-required",
            f"{name}, called with no client capabilities: {wrong[0]}",
            {"sent": show_json(bare.sent), "received": show_json(asked, 400)},
        )
    tamper(s, tool, retry, state, again)


def tamper(s: ModernSession, tool: dict[str, Any], retry: dict[str, Any], state: Any, honest: Reply) -> None:
    f, name = s.f, tool["name"]
    if not isinstance(state, str):
        f.skipped("modern-request-state", f"not judged: {name}'s input_required result carries no requestState")
        return
    forged = forge(state)
    reply = s.call(tool, {**retry, "requestState": forged})
    result = reply.result if isinstance(reply.result, dict) else None
    evidence = {
        "requestState": state[:200],
        "forged": forged[:200],
        "sent": show_json(reply.sent, 600),
        "received": show_json(reply.message, 400),
        "expected": "an error (the state fails verification), or input_required asking again",
    }
    if reply.message is None:
        f.failed("modern-request-state", f"{name}: {why_no_reply(s.probe, reply, 'the tampered retry')}", evidence)
    elif (
        result is not None and result.get("resultType", "complete") == "complete" and result.get("isError") is not True
    ):
        read_only = (tool.get("annotations") or {}).get("readOnlyHint") is True
        f.add(
            "modern-request-state",
            "warn" if read_only else "fail",
            f"{name} accepted a tampered requestState and completed: the state is trusted blindly",
            evidence,
            rule="read-only" if read_only else "main",
        )
    else:
        how = (
            f"error {reply.code}"
            if reply.error is not None
            else f"a {result.get('resultType') if result else '?'} result"
        )
        f.passed("modern-request-state", f"{name} refused a tampered requestState ({how})")
