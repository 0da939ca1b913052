"""The main session over Streamable HTTP: the stdio conversation, where HTTP changes it.

The same well-behaved client's conversation as :mod:`grader.checker.main_session` (initialize,
the notifications, ping, ids of every JSON type, tools, calls, the shop, resources and prompts,
the bad inputs), with the stdio probe replaced by an :class:`~grader.checker.http_probe.HttpProbe`
(one MCP session). Where HTTP differs, this module says how:

- the handshake has no process to time or to watch (startup-time, stdout and stderr: "stdio
  only"); what the server sends before its initialize response can only come in that response's
  SSE stream;
- a notification is a POST of its own, answered 202 with no body; a JSON-RPC response in its body
  breaks notification-silence (the status is http-notification-202's);
- a body the server cannot take (not JSON, a null id...) may be answered with an HTTP error
  status, whose JSON-RPC error body is optional (the spec: MAY): the status answers it; a missing or
  other code in the body warns, a 2xx without the error (202: "taken for a notification") fails;
- the session ends with DELETE, as a client done with it should (exit-on-eof is stdio only).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .bad_input import BAD_INPUTS, LENIENT
from .context import Context, initialize, no_reply_evidence, why_no_reply
from .http_modern import legacy_refused
from .http_probe import HttpProbe
from .main_session import NOTIFICATIONS, MainSession, judge_initialize, judge_ping, server_requests
from .probe import same_id, show, show_json

# A response the client sends to no request of the server's: accepted (202) or refused (an error status).
STRAY_RESPONSE = {"jsonrpc": "2.0", "id": "mcp-lab-check-unsolicited", "result": {}}
HTTP_STATUS_CHECKS = ("parse-error", "invalid-request")  # bad bodies an HTTP error status may answer


@dataclass
class HttpContext(Context):
    """What every session of one ``mcp-lab check --url`` run shares; ``start`` begins a session."""

    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)  # the user's --header (values may be secrets)

    def start(self, name: str, env: Any = None) -> HttpProbe:  # type: ignore[override]
        if self.closed:
            raise RuntimeError("the check is being stopped")
        probe = HttpProbe(self.url, self.timeout, self.headers, name=name)
        self.probes.append(probe)  # type: ignore[arg-type]
        return probe


class HttpMainSession(MainSession):
    probe: HttpProbe  # type: ignore[assignment]

    def handshake(self) -> bool:
        probe, f = self.probe, self.f
        reply = initialize(probe, self.ctx)  # type: ignore[arg-type]
        self.ctx.first_up.set()
        if legacy_refused(self.ctx, reply, probe.exchanges[-1] if probe.exchanges else None):
            f.unreached = self.ctx.eras.skip_reason("legacy")
            return False  # a modern-only endpoint refused initialize: its legacy checks are skipped (era.py)
        if reply.message is None:
            why = why_no_reply(probe, reply, "initialize")  # type: ignore[arg-type]
            last = probe.exchanges[-1]
            if last.status == 401 and not any(k.lower() == "authorization" for k in probe.user_headers):
                why += "; give the credentials with --header 'Authorization: Bearer TOKEN'"
            evidence = no_reply_evidence(probe, reply, "an initialize result with the same id (1)")  # type: ignore[arg-type]
            f.failed("initialize-result", why, evidence)
            f.unreached = f"not reached: {why}"
            return False
        judge_initialize(reply, f)
        if isinstance(reply.result, dict):
            self.capabilities = reply.result.get("capabilities", {})
            self.negotiated = reply.result.get("protocolVersion")
        # Over HTTP the server can only speak first inside the initialize response's SSE stream.
        self.early_requests = server_requests(reply.others)
        if self.early_requests:
            f.warned(
                "no-early-server-requests",
                f"the server sent {self.early_requests[0].message.get('method')} in the initialize response's "
                "stream, before notifications/initialized",
                {"received": [show(i.line.data) for i in self.early_requests[:3]]},
            )
        else:
            f.passed("no-early-server-requests", "no server requests before notifications/initialized")
        return True

    def notifications_and_ping(self) -> None:
        probe, f = self.probe, self.f
        answered = []
        for method, params in NOTIFICATIONS:
            sent = probe.notify(method, params)
            answered += [(method, m) for m in sent.messages if isinstance(m, dict) and "method" not in m]
        probe.send(STRAY_RESPONSE, "response")  # judged by http-notification-202, with the notifications
        reply = probe.request("ping", id=2)
        if answered:
            f.failed(
                "notification-silence",
                "the server answered a notification",
                {
                    "sent": [m for m, _ in NOTIFICATIONS],
                    "received": [f"{m}: {show_json(message)}" for m, message in answered[:3]],
                    "expected": "202 Accepted and no body: no JSON-RPC response at all",
                },
            )
        elif reply.message is not None:
            f.passed("notification-silence", "no response to initialized, an unknown notification, or cancelled")
        judge_ping(probe, reply, f)  # type: ignore[arg-type]

    def bad_input(self) -> None:
        run_http_bad_input(self.ctx, self.probe)

    def end(self) -> None:
        self.probe.close()  # DELETE: the session is over (how a server exits is stdio's question)


def run_http_bad_input(ctx: Context, probe: HttpProbe) -> None:
    """Each bad input as the body of a POST in the session, each followed by a ping."""
    f = ctx.findings
    if probe.stalled:
        return  # not reached: the session stopped answering
    passed: dict[str, list[str]] = {}
    survived = True
    for n, (check, line, code, ids, what) in enumerate(BAD_INPUTS):
        sent = probe.send_raw(line)
        errors = [
            m for m in sent.messages if isinstance(m, dict) and "method" not in m and isinstance(m.get("error"), dict)
        ]
        answer = errors[0] if errors else None
        got = answer["error"].get("code") if answer else None
        id_ok = answer is not None and any(same_id(answer.get("id"), i) for i in ids)
        evidence = {
            "sent": show(line),
            "received": sent.status_line(),
            "expected": f"an error with code {code} and id {' or '.join(map(str, ids)).replace('None', 'null')} "
            "(in a 400 response, or a 200 one)",
        }
        error_status = sent.status is not None and sent.status >= 400
        if sent.status is None:
            f.failed(check, f"no reply to {what}: {sent.error}", evidence)
        elif answer is not None and got == code and id_ok:
            passed.setdefault(check, []).append(what)
        elif error_status and check in HTTP_STATUS_CHECKS:
            body = f"error {got}" if answer is not None else "no JSON-RPC error in its body"
            f.warned(check, f"{what} got HTTP {sent.status} with {body}, not {code}", evidence, rule="http-status")
        elif answer is not None and got != code and what in LENIENT:
            f.warned(check, f"{what} got code {got}, not {code} (decoded leniently)", evidence, rule="lenient")
        elif answer is not None and got != code:
            f.failed(check, f"{what} got code {got}, not {code}", evidence)
        elif answer is not None:
            f.failed(check, f"{what} got {code} but with id {answer.get('id')!r}", evidence)
        elif sent.status == 202:
            f.failed(check, f"{what} got 202 Accepted and no answer: taken for a notification or response", evidence)
        else:
            f.failed(check, f"{what} got HTTP {sent.status} and no JSON-RPC error", evidence)
        ping = probe.request("ping", id=f"alive-{n}")
        if ping.message is None:
            if survived:
                f.failed(
                    "survives-bad-input",
                    f"after {what}, {why_no_reply(probe, ping, 'ping')}",  # type: ignore[arg-type]
                    {**no_reply_evidence(probe, ping, "the reply to ping"), "bad_input": show(line)},  # type: ignore[arg-type]
                )
            survived = False
            if probe.stalled:
                return
    for check, whats in passed.items():
        code = next(c for k, _, c, _, _ in BAD_INPUTS if k == check)
        f.passed(check, f"{code} for {', '.join(whats)}")
    if survived:
        f.passed("survives-bad-input", f"answered ping after each of {len(BAD_INPUTS)} bad inputs")


def is_error(message: Any) -> bool:
    return isinstance(message, dict) and "method" not in message and isinstance(message.get("error"), dict)
