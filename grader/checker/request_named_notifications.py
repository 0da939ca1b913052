"""Notifications named like requests: no id makes a message a notification, whatever its method.

``{"jsonrpc": "2.0", "method": "ping"}`` has no ``id``: it is a notification, and the receiver
owes it nothing (JSON-RPC 2.0 section 4.1; MCP Base Protocol > Notifications: MUST NOT send a
response). Two common servers break on it: one that dispatches on the method name alone answers
it (an error, or a result with ``"id": null``), and one that reads ``msg["id"]`` for every method
it serves dies on it (``KeyError: 'id'``). The checker sends each, then a ping, and judges both
under ``notification-silence``.

    >>> [show_json(m) for m in REQUEST_NAMED]
    ['{"jsonrpc":"2.0","method":"ping"}', '{"jsonrpc":"2.0","method":"tools/list"}', \
'{"jsonrpc":"2.0","method":"mcp-lab/no-such-method"}']
"""

from __future__ import annotations

from .bad_input import is_answer
from .context import Context, no_reply_evidence, why_no_reply
from .probe import Probe, show, show_json

# A method every server serves, one a tool server serves, and one no server knows.
REQUEST_NAMED: list[dict[str, str]] = [
    {"jsonrpc": "2.0", "method": "ping"},
    {"jsonrpc": "2.0", "method": "tools/list"},
    {"jsonrpc": "2.0", "method": "mcp-lab/no-such-method"},
]


def run_request_named(ctx: Context, probe: Probe) -> Probe:
    """Send each of :data:`REQUEST_NAMED` to an initialized ``probe``, each followed by a ping.

    Judges ``notification-silence`` (its ``request-named`` rule); stops at the first failure.
    Returns the probe to go on with: a server that died on one is left dead, for the caller's
    next step to replace (as after a bad input).
    """
    f = ctx.findings
    for n, message in enumerate(REQUEST_NAMED):
        sent = show_json(message)
        # A server answers in order: whatever comes before the ping's reply answers the notification.
        probe.send(message)
        ping = probe.request("ping", id=f"after-notification-{n}")
        answers = [o for o in ping.others if is_answer(o, probe.in_flight)]
        if answers:
            f.failed(
                "notification-silence",
                f"the server answered {sent}: it has no id, so it is a notification, whatever its method",
                {
                    "sent": [sent, show_json(ping.sent)],
                    "received": show(answers[0].line.data),
                    "expected": f"no reply; the next line is the reply to ping (id {ping.sent['id']})",
                },
                rule="request-named",
            )
            return probe
        if ping.message is None:
            evidence = no_reply_evidence(probe, ping, "the reply to ping")
            evidence["sent"] = [sent, evidence["sent"]]
            evidence["expected"] = "no reply to the notification, then the reply to ping: the server still serving"
            died = not probe.alive() or probe.stdout_closed()
            summary = f"after the notification {sent}, {why_no_reply(probe, ping, 'ping')}"
            if died:
                summary = (
                    f"the server died on {sent} (exit status {probe.wait_exit(0.5)}): it has no id, "
                    "so it is a notification, whatever its method"
                )
            f.failed(
                "notification-silence",
                summary,
                evidence,
                rule="request-named",
            )
            return probe
    f.passed(
        "notification-silence",
        "no reply to ping, tools/list or an unknown method sent as notifications (no id), and still serving",
        rule="request-named",
    )
    return probe
