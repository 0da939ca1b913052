"""Streamable HTTP's own checks: sessions, the protocol-version header, Origin, 202, content types, SSE, auth.

Two kinds. Probes of their own, each in a session of its own, that send what a careless or hostile
client would (:func:`run_transport_checks`): a foreign ``Origin``, an unsupported
``MCP-Protocol-Version``, no ``Mcp-Session-Id``, an id never issued, the id of a session just
ended with DELETE, no credentials or wrong ones (only when the user gave some with ``--header
Authorization``), and a request that accepts only ``text/event-stream`` (a server that answers
JSON otherwise may then stream; one that refuses, 406, is within its rights). And judges of
every HTTP exchange of the whole run, once it is over (:func:`judge_exchanges`): each
notification and response got 202 and no body, each request a JSON or SSE body, each SSE stream
is well-formed and carries the response.

    >>> from grader.checker.http_probe import Exchange
    >>> sent = Exchange("notification", "POST", {}, b'{"jsonrpc":"2.0","method":"notifications/initialized"}', 0.0)
    >>> sent.status, sent.reason, sent.data = 200, "OK", b"null"
    >>> accepted(sent)
    'notifications/initialized got HTTP 200 with a 4-byte body, not 202 Accepted and no body'
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from reference.framing import encode

from .context import initialize
from .http_probe import FOREIGN_ORIGIN, JSON_TYPE, SESSION_HEADER, SSE_TYPE, VERSION_HEADER, Exchange, HttpProbe
from .http_session import HttpContext
from .probe import show
from .stdout_rules import idless_error, judge_envelopes
from .verdicts import Findings, Result

UNSUPPORTED_VERSION = "1999-01-01"
UNKNOWN_SESSION = "mcp-lab-check-no-such-session"
WRONG_CREDENTIALS = "mcp-lab-check-wrong-credentials"
TRANSPORT_CHECKS = ("http-session", "http-protocol-version", "http-origin", "http-auth")


def ping(id: str) -> bytes:
    return encode({"jsonrpc": "2.0", "id": id, "method": "ping"}).rstrip(b"\n")


def evidence(sent: Exchange, expected: str) -> dict[str, Any]:
    """An exchange as evidence: what was sent (headers named, the user's values masked), what came."""
    return {
        "sent": sent.request_line(),
        "headers": "; ".join(f"{k}: {v}" for k, v in sent.sent_headers.items()),
        "received": sent.status_line(),
        "expected": expected,
    }


def run_transport_checks(ctx: HttpContext) -> None:
    f = ctx.findings
    probe = ctx.start("transport")
    try:
        reply = initialize(probe, ctx)  # type: ignore[arg-type]
        if not isinstance(reply.result, dict) and not ctx.eras.settled("legacy", ctx.init_timeout + ctx.timeout + 5):
            return  # a modern-only endpoint refused initialize: its legacy checks are skipped (era.py)
        if reply.message is None:
            for check in TRANSPORT_CHECKS:
                f.skipped(check, "not judged: initialize got no response (see initialize-result)")
            return
        probe.notify("notifications/initialized")
        judge_origin(ctx, probe)
        judge_protocol_version(ctx, probe)
        judge_session(ctx, probe)  # ends the session, last
    finally:
        probe.close()
    sse_probe(ctx)
    judge_auth(ctx)


# -- Origin -------------------------------------------------------------------------------------
def judge_origin(ctx: HttpContext, probe: HttpProbe) -> None:
    """A foreign Origin on a request in the session, and on an initialize (403 for both: a MUST)."""
    f = ctx.findings
    in_session = probe.http("POST", ping("origin-1"), probe.headers_for({"Origin": FOREIGN_ORIGIN}), "origin")
    opening = probe.http(
        "POST",
        encode(init_message("origin-2")).rstrip(b"\n"),
        probe.headers_for({"Origin": FOREIGN_ORIGIN, SESSION_HEADER: None, VERSION_HEADER: None}),
        "origin",
    )
    end_session(probe, opening)
    wrong = [s for s in (in_session, opening) if s.status != 403]
    expected = "403 Forbidden"
    if not wrong:
        f.passed("http-origin", f"Origin: {FOREIGN_ORIGIN} gets 403, on initialize and within a session")
        return
    sent = wrong[0]
    what = "an initialize" if sent is opening else "a request in the session"
    if sent.status is None:
        summary = f"{what} with Origin: {FOREIGN_ORIGIN} got no response ({sent.error}), not 403"
    elif 200 <= sent.status < 300:
        summary = (
            f"the server answered {what} from Origin: {FOREIGN_ORIGIN} (HTTP {sent.status}): no DNS-rebinding check"
        )
    else:
        summary = f"{what} with Origin: {FOREIGN_ORIGIN} got HTTP {sent.status}, not 403 Forbidden"
    f.failed("http-origin", summary, evidence(sent, expected))


def init_message(id: str) -> dict[str, Any]:
    from .context import CLIENT_INFO

    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": CLIENT_INFO}
    return {"jsonrpc": "2.0", "id": id, "method": "initialize", "params": params}


def end_session(probe: HttpProbe, sent: Exchange) -> None:
    """A session a probe opened by the way (an initialize that should have been refused): DELETE it."""
    session = sent.headers.get(SESSION_HEADER.lower())
    if sent.status is not None and 200 <= sent.status < 300 and session:
        headers = probe.headers_for({SESSION_HEADER: session, VERSION_HEADER: None, "Content-Type": None})
        probe.http("DELETE", b"", headers, "delete")


# -- MCP-Protocol-Version -----------------------------------------------------------------------
def judge_protocol_version(ctx: HttpContext, probe: HttpProbe) -> None:
    f = ctx.findings
    sent = probe.http("POST", ping("version-1"), probe.headers_for({VERSION_HEADER: UNSUPPORTED_VERSION}), "version")
    found = evidence(sent, "400 Bad Request")
    if sent.status == 400:
        f.passed("http-protocol-version", f"MCP-Protocol-Version: {UNSUPPORTED_VERSION} gets 400")
    elif sent.status is None:
        f.failed("http-protocol-version", f"MCP-Protocol-Version: {UNSUPPORTED_VERSION}: {sent.error}", found)
    else:
        f.failed(
            "http-protocol-version",
            f"a request with MCP-Protocol-Version: {UNSUPPORTED_VERSION} (no such revision) got HTTP {sent.status}, "
            "not 400",
            found,
        )


# -- sessions -----------------------------------------------------------------------------------
def judge_session(ctx: HttpContext, probe: HttpProbe) -> None:
    f = ctx.findings
    session = probe.session_id
    if session is None:
        f.skipped("http-session", "the server issues no Mcp-Session-Id: it keeps no sessions (the spec allows that)")
        return
    bad = [c for c in session if not 0x21 <= ord(c) <= 0x7E]
    if bad:
        f.failed(
            "http-session",
            f"the session id has characters that are not visible ASCII: {bad[:3]!r}",
            {"received": f"{SESSION_HEADER}: {session!r}"},
        )
    missing = probe.http("POST", ping("session-1"), probe.headers_for({SESSION_HEADER: None}), "session")
    if missing.status != 400:
        got = f"HTTP {missing.status}" if missing.status is not None else missing.error
        f.warned(
            "http-session",
            f"a request without {SESSION_HEADER} (the server issued one) got {got}, not 400",
            evidence(missing, "400 Bad Request"),
            rule="missing",
        )
    unknown = probe.http("POST", ping("session-2"), probe.headers_for({SESSION_HEADER: UNKNOWN_SESSION}), "session")
    if unknown.status != 404:
        got = f"HTTP {unknown.status}" if unknown.status is not None else unknown.error
        f.warned(
            "http-session",
            f"a request with an id the server never issued got {got}, not 404 Not Found",
            evidence(unknown, "404 Not Found"),
            rule="unknown",
        )
    ended = probe.http("DELETE", b"", probe.headers_for({"Content-Type": None}), "session")
    probe.closed = True
    note = ""
    if ended.status == 204 and ("content-length" in ended.headers or ended.data):
        f.failed(
            "http-session",
            "DELETE got 204 No Content with "
            + (f"Content-Length: {ended.headers['content-length']}" if "content-length" in ended.headers else "a body")
            + ": a 204 has no content, and so no Content-Length",
            evidence(ended, "204 with no Content-Length and no body"),
            rule="no-content",
        )
    if ended.status is not None and 200 <= ended.status < 300:
        after = probe.http("POST", ping("session-3"), probe.headers_for(), "session")
        if after.status != 404:
            got = f"HTTP {after.status}" if after.status is not None else after.error
            f.failed(
                "http-session",
                f"DELETE ended the session (HTTP {ended.status}), yet a request with its id got {got}, not 404",
                evidence(after, "404 Not Found"),
            )
        note = ", and 404 once ended by DELETE"
    elif ended.status == 405:
        note = "; DELETE gets 405 (the server does not let clients end sessions: allowed)"
    else:
        note = f"; DELETE got {f'HTTP {ended.status}' if ended.status else ended.error} (not judged)"
    if f.status("http-session") is None:
        f.passed(
            "http-session",
            f"{SESSION_HEADER} issued ({len(session)} visible ASCII characters) and required: 400 without it, "
            f"404 for an id never issued{note}",
        )


# -- SSE ----------------------------------------------------------------------------------------
def sse_probe(ctx: HttpContext) -> None:
    """Requests that accept only text/event-stream, in a session of their own: a server that answers
    JSON when it may shows its SSE here (the streams are judged with all others, at the end)."""
    probe = ctx.start("sse")
    try:
        if initialize(probe, ctx).message is None:  # type: ignore[arg-type]
            return
        probe.notify("notifications/initialized")
        for n, method in enumerate(("ping", "tools/list")):
            body = encode({"jsonrpc": "2.0", "id": f"sse-{n}", "method": method}).rstrip(b"\n")
            probe.http("POST", body, probe.headers_for({"Accept": SSE_TYPE}), "sse", want=f"sse-{n}")
    finally:
        probe.close()


def judge_sse(exchanges: list[Exchange], f: Findings) -> None:
    streams = [e for e in exchanges if e.is_sse and e.status is not None and 200 <= e.status < 300]
    if not streams:
        f.skipped(
            "http-sse",
            "no response came as an SSE stream (the server answers application/json, and refused or ignored "
            "Accept: text/event-stream)",
        )
        return
    problems: list[tuple[Exchange, str]] = []
    for sent in streams:
        for problem in sent.problems:
            problems.append((sent, f"{sent.rpc_method}: {problem}"))
        answered = any(isinstance(m, dict) and "method" not in m and m.get("id") == sent.want for m in sent.messages)
        if sent.want is not None and not answered and not sent.problems:
            what = "ended" if sent.complete else "stopped"
            problems.append((sent, f"{sent.rpc_method}: the SSE stream {what} without the response"))
    if problems:
        sent = problems[0][0]
        found = {
            **evidence(sent, "event: message / data: <one JSON-RPC message on one line> / a blank line"),
            "problems": [p for _, p in problems],
        }
        if sent.ignored:
            found["ignored_lines"] = sent.ignored[:5]
        f.failed("http-sse", problems[0][1], found)
        return
    events = sum(len(s.events or []) for s in streams)
    f.passed("http-sse", f"{len(streams)} SSE stream(s), {events} event(s): each well-formed, with its response")


# -- authorization ------------------------------------------------------------------------------
def judge_auth(ctx: HttpContext) -> None:
    f = ctx.findings
    given = next((k for k in ctx.headers if k.lower() == "authorization"), None)
    if given is None:
        f.skipped(
            "http-auth",
            "no credentials given: with --header 'Authorization: Bearer TOKEN' the checker also tries without them",
        )
        return
    scheme = ctx.headers[given].strip().split(" ", 1)[0] or "Bearer"
    probe = ctx.start("auth")
    body = encode(init_message("auth")).rstrip(b"\n")
    tries = {
        "without credentials": {given: None},
        "with wrong credentials": {given: f"{scheme} {WRONG_CREDENTIALS}"},
    }
    results = {what: probe.http("POST", body, probe.headers_for(headers), "auth") for what, headers in tries.items()}
    for sent in results.values():
        end_session(probe, sent)
    answered = [w for w, s in results.items() if s.status is not None and 200 <= s.status < 300]
    refused = {w: s for w, s in results.items() if w not in answered}
    expected = "401 Unauthorized with WWW-Authenticate: Bearer ... (RFC 9110: every 401 carries one)"
    if len(answered) == len(results):
        sent = results["without credentials"]
        f.warned(
            "http-auth",
            "the server answered initialize without credentials and with wrong ones: it asks for none",
            evidence(sent, expected),
            rule="none",
        )
        return
    for what in answered:
        f.failed(
            "http-auth",
            f"initialize {what} was answered (HTTP {results[what].status}), not refused with 401",
            evidence(results[what], expected),
        )
    for what, sent in refused.items():
        if sent.status != 401:
            got = f"HTTP {sent.status}" if sent.status is not None else sent.error
            f.failed("http-auth", f"initialize {what} got {got}, not 401 Unauthorized", evidence(sent, expected))
        elif "www-authenticate" not in sent.headers:
            f.failed(
                "http-auth", f"initialize {what} got 401 without a WWW-Authenticate header", evidence(sent, expected)
            )
    if f.status("http-auth") is None:
        challenge = results["without credentials"].headers.get("www-authenticate", "")
        f.passed(
            "http-auth",
            f"without credentials or with wrong ones: 401, WWW-Authenticate: {show(challenge.encode(), 80)}",
        )


# -- every exchange of the run --------------------------------------------------------------------
def accepted(sent: Exchange) -> str | None:
    """Why a POSTed notification or response was not answered as the spec says, or None."""
    what = sent.rpc_method
    if sent.status is None:
        return f"{what} got no response ({sent.error})"
    if sent.status >= 400:
        return None  # the server cannot accept it: an error status is what the spec asks for then
    if sent.status == 202 and not sent.data:
        return None
    body = f"a {len(sent.data)}-byte body" if sent.data else "no body"
    return f"{what} got HTTP {sent.status} with {body}, not 202 Accepted and no body"


def judge_exchanges(exchanges: list[Exchange], f: Findings) -> None:
    """http-notification-202, http-content-type and http-sse, from every exchange of the run."""
    posted = [e for e in exchanges if e.kind in ("notification", "response")]
    wrong = [(e, why) for e in posted if (why := accepted(e)) is not None]
    if wrong:
        sent, why = wrong[0]
        found = {**evidence(sent, "202 Accepted, no body"), "problems": list(dict.fromkeys(w for _, w in wrong))}
        f.failed("http-notification-202", why, found)
    elif posted:
        refused = sum(1 for e in posted if e.status is not None and e.status >= 400)
        note = f" ({refused} refused with an error status, as allowed)" if refused else ""
        f.passed("http-notification-202", f"{len(posted)} notification(s) and response(s) got 202 and no body{note}")
    else:
        f.skipped("http-notification-202", "not reached: no notification was sent (no session began)")
    # Both eras' requests: the legacy sessions', and the modern session's (http_modern.py: kind "modern",
    # a request when it waits for a reply's id).
    requests = [
        e
        for e in exchanges
        if (e.kind == "request" or (e.kind == "modern" and e.want is not None))
        and e.status is not None
        and 200 <= e.status < 300
    ]
    bad = []
    for sent in requests:
        if sent.content_type not in (JSON_TYPE, SSE_TYPE):
            kind = sent.headers.get("content-type", "no Content-Type")
            bad.append((sent, f"{sent.rpc_method} was answered with {kind}, neither application/json nor SSE"))
        elif sent.content_type == JSON_TYPE and not (len(sent.messages) == 1 and isinstance(sent.messages[0], dict)):
            what = "not JSON" if "the body is not JSON" in sent.problems else "not one JSON object"
            bad.append((sent, f"{sent.rpc_method} was answered as application/json with a body that is {what}"))
    if bad:
        found = {
            **evidence(bad[0][0], "Content-Type: application/json or text/event-stream"),
            "problems": [b for _, b in bad],
        }
        f.failed("http-content-type", bad[0][1], found)
    elif requests:
        kinds = sorted({e.content_type for e in requests})
        f.passed("http-content-type", f"{len(requests)} request(s) answered as {' or '.join(kinds)}")
    else:
        f.skipped("http-content-type", "not reached: no request was answered")
    judge_sse(exchanges, f)


def all_exchanges(probes: Iterable[Any]) -> list[Exchange]:
    return [e for p in probes if isinstance(p, HttpProbe) for e in p.exchanges]


def judge_http_envelopes(probes: Iterable[Any], f: Findings) -> None:
    """envelope, over every message of every body: those of 2xx responses by their session's
    revision; in the body of an HTTP error status, only what claims to be JSON-RPC, and an error
    without id there is the transport's own allowance (the body MAY be one)."""
    messages: list[tuple[Any, str | None]] = []
    for probe in probes:
        for sent in probe.exchanges if isinstance(probe, HttpProbe) else []:
            ok = sent.status is not None and sent.status < 300
            for message in sent.messages:
                if ok or (isinstance(message, dict) and "jsonrpc" in message and not idless_error(message)):
                    messages.append((message, probe.protocol_version))
    if messages:
        judge_envelopes(messages, f)
    else:
        f.skipped("envelope", "no JSON-RPC message came back")


# -- one defect, one diagnosis ---------------------------------------------------------------------
SSE_SIGNS = ("an event's data is not JSON", "ended inside an event", "clients read only", "not UTF-8 (an SSE")


def attribute_sse(results: list[Result]) -> list[Result]:
    """A broken SSE stream leaves every reply it carried unreadable: those failures are its consequences."""
    if not any(r.id == "http-sse" and r.status == "fail" for r in results):
        return results
    marked = []
    for result in results:
        text = result.summary + " " + " ".join(str(v) for v in result.evidence.values())
        if result.id != "http-sse" and result.status in ("fail", "warn") and any(s in text for s in SSE_SIGNS):
            why = "its response came in an SSE event no client can read"
            result = replace(result, caused_by="http-sse", evidence={**result.evidence, "because": why})
        marked.append(result)
    return marked
