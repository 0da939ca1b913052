"""Bad input: garbage, invalid requests and unknown methods, each followed by a ping.

A server must answer each with the right error and keep serving. The main session sends them
last, after its well-behaved conversation, so that no process is started for them alone (a fresh
one only after a bad input ended the last). The start-up timing is judged here too.
"""

from __future__ import annotations

from typing import Any

from .context import STARTUP_FAIL, STARTUP_WARN, Context, initialize, no_reply_evidence, why_no_reply
from .probe import Probe, Received, Reply, same_id, show

# (check, raw line, expected code, ids the error may carry, what it is)
BAD_INPUTS: list[tuple[str, bytes, int, tuple[Any, ...], str]] = [
    ("parse-error", b"this is not json", -32700, (None,), "a line that is not JSON"),
    ("parse-error", b'{"jsonrpc": "2.0", "id": 5, "method": "ping"', -32700, (None,), "a truncated message"),
    ("parse-error", b'{"jsonrpc": "2.0", "id": 6, "method": "\xff\xfe"}', -32700, (None,), "invalid UTF-8"),
    ("invalid-request", b'{"jsonrpc": "2.0", "id": null, "method": "ping"}', -32600, (None,), "a null id"),
    ("invalid-request", b'{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}', -32600, (None,), "a float id"),
    ("invalid-request", b'{"jsonrpc": "2.0", "id": 9}', -32600, (None, 9), "a request without a method"),
    (
        "method-not-found",
        b'{"jsonrpc": "2.0", "id": 10, "method": "mcp-lab/no-such-method"}',
        -32601,
        (10,),
        "an unknown method",
    ),
]


LENIENT = {"invalid UTF-8"}  # inputs a server may decode leniently and answer with another error
BAD_INPUT_CHECKS = ("parse-error", "invalid-request", "method-not-found", "survives-bad-input")


def judge_first_reply(ctx: Context, probe: Probe, reply: Reply) -> bool:
    """startup-time from the first initialize; False (the bad-input checks skipped) without a readable reply."""
    f = ctx.findings
    if reply.message is None and reply.spread:
        # It answered, in a form no host can read: time it, and leave the rest to the stdout
        # rules and initialize-result.
        f.passed("startup-time", f"an initialize reply came {reply.elapsed * 1000:.0f} ms after start (unreadable)")
        for check in BAD_INPUT_CHECKS:
            f.skipped(check, "the server's replies cannot be read one per line (see stdout-json-lines)")
        return False
    if reply.message is None:
        f.warned("startup-time", why_no_reply(probe, reply, "initialize"), no_reply_evidence(probe, reply, "a reply"))
        for check in BAD_INPUT_CHECKS:
            f.skipped(check, "the server did not answer initialize")
        return False
    # Timed by the reader's stamp of the reply line, from the server's start: what the checker did
    # after it (parsing, other threads) is not the server's time, nor are the waits of the checker's
    # own threads for a CPU on the way (``Line.late``).
    line = reply.line
    arrived, late = (line.at, line.late) if line is not None else (reply.elapsed, 0.0)
    judge_startup(ctx, arrived, probe.child.starved({}), late + probe.child.spawn_wait)
    return True


def run_bad_input(ctx: Context, probe: Probe) -> tuple[Probe, bool]:
    """Send every bad input, each followed by a ping, to an initialized ``probe``.

    Returns the probe to go on with (a fresh process when a bad input ended the last one) and
    whether it still answers.
    """
    f = ctx.findings
    passed: dict[str, list[str]] = {}
    survived = True
    for n, (check, line, code, ids, what) in enumerate(BAD_INPUTS):
        if not probe.alive() or probe.stdout_closed():
            # The last bad input killed it: a fresh process for each of the rest, so that every
            # input still gets its own verdict.
            probe.close()
            probe = ctx.start(f"bad-input after a crash ({n})")
            if initialize(probe, ctx).message is None:
                return probe, False
            probe.notify("notifications/initialized")
        # Send the bad line and a ping together: a server answers in order, so whatever comes
        # before the ping's reply is its answer to the bad line, and no answer costs no waiting.
        probe.send_raw(line + b"\n")
        ping = probe.request("ping", id=f"alive-{n}")
        answers = [o for o in ping.others if is_answer(o, probe.in_flight)]
        answer = answers[0] if answers else None
        message = answer.message if answer else {}
        error = message.get("error") if isinstance(message.get("error"), dict) else None
        got_code = error.get("code") if error else None
        evidence = {
            "sent": show(line),
            "received": show(answer.line.data) if answer else None,
            "expected": f"an error with code {code} and id {' or '.join(map(str, ids)).replace('None', 'null')}",
            "stderr_tail": probe.stderr_tail(600),
        }
        if answer is None:
            f.failed(check, f"no reply to {what}", evidence)
        elif got_code != code and error and what in LENIENT:
            # Decoded leniently (U+FFFD) and answered with another error: it still answered.
            f.warned(check, f"{what} got code {got_code}, not {code} (decoded leniently)", evidence, rule="lenient")
        elif got_code != code:
            f.failed(check, f"{what} got {'code ' + str(got_code) if error else 'a result'}, not {code}", evidence)
        elif not any(same_id(message.get("id"), i) for i in ids):
            f.failed(check, f"{what} got {code} but with id {message.get('id')!r}", evidence)
        else:
            passed.setdefault(check, []).append(what)
        if ping.message is None:
            if survived:
                f.failed(
                    "survives-bad-input",
                    f"after {what}, {why_no_reply(probe, ping, 'ping')}",
                    {**no_reply_evidence(probe, ping, "the reply to ping"), "bad_input": show(line)},
                )
            survived = False
            if probe.alive() and not probe.stdout_closed():
                return probe, False  # alive but silent: a hang, and waiting on it again would only cost time
    for check, whats in passed.items():
        code = next(c for k, _, c, _, _ in BAD_INPUTS if k == check)
        f.passed(check, f"{code} for {', '.join(whats)}")
    if survived:
        f.passed("survives-bad-input", f"answered ping after each of {len(BAD_INPUTS)} bad inputs")
    return probe, probe.alive() and not probe.stdout_closed()


def is_answer(item: Received, in_flight: list[Any]) -> bool:
    """A response, but not a late one to a tool call the checker gave up on."""
    message = item.message
    return isinstance(message, dict) and "method" not in message and message.get("id") not in in_flight


def judge_startup(ctx: Context, elapsed: float, waited: float = 0.0, late: float = 0.0) -> None:
    """startup-time, on a warm start; a launcher's cold start (download included) beside it.

    Judged on the time the server could run: what its threads waited for a CPU (``waited``, the
    kernel's ``schedstat``) is taken off, and so is what the checker's own threads waited for one
    before they saw the reply (``late``): a busy machine does not make a quick server slow.

        >>> busy, quiet, checker_busy = Context([]), Context([]), Context([])
        >>> judge_startup(busy, 1.9, waited=0.8)
        >>> judge_startup(quiet, 1.9)
        >>> judge_startup(checker_busy, 1.9, waited=0.2, late=0.6)
        >>> [(r.status, r.summary) for r in (c.findings.results()["startup-time"] for c in (busy, quiet, checker_busy))]
        [('pass', 'initialize answered 1900 ms after start (800 ms of it waiting for a CPU)'), \
('warn', 'initialize answered after 1.90 s (some hosts give up at 1.5 s)'), \
('pass', 'initialize answered 1900 ms after start (800 ms of it waiting for a CPU)')]
    """
    cold = ""
    evidence: dict[str, Any] = {"warm_seconds": round(elapsed, 3)}
    busy = ""
    held = waited + late
    if held >= 0.05:  # below that, scheduling noise on any machine
        evidence["cpu_wait_seconds"] = round(waited, 3)
        if late:
            evidence["checker_cpu_wait_seconds"] = round(late, 3)
        busy = f" ({held * 1000:.0f} ms of it waiting for a CPU)"
    else:
        held = 0.0
    if ctx.cold_start is not None:
        cold = f"; the launcher's first (cold) start took {ctx.cold_start:.2f} s"
        evidence["cold_seconds"] = round(ctx.cold_start, 3)
    elif ctx.cold_note:
        cold = f"; the launcher's first (cold) start: {ctx.cold_note}"
    ran = elapsed - held
    if ran > STARTUP_FAIL:
        ctx.findings.warned(
            "startup-time", f"initialize answered after {elapsed:.2f} s{busy} (hosts give up at 10 s){cold}", evidence
        )
    elif ran > STARTUP_WARN:
        ctx.findings.warned(
            "startup-time",
            f"initialize answered after {elapsed:.2f} s{busy} (some hosts give up at 1.5 s){cold}",
            evidence,
        )
    else:
        ctx.findings.passed(
            "startup-time", f"initialize answered {elapsed * 1000:.0f} ms after start{busy}{cold}", evidence
        )
