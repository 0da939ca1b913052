"""One defect, one diagnosis: a failure that only follows from another is marked as its consequence.

A missing flush makes initialize time out; a pretty-printed reply cannot be read, so initialize
fails too; a server that dies on a bad line cannot answer it. The report leads with the root
cause and marks each consequence with ``caused_by``, and only where the consequence's own evidence
shows the root's signature on the wire (:mod:`grader.checker.signatures`): its request is one whose reply
was held back, its lines are the non-JSON lines, its reply is the one with the mistyped id, its
input is the line the server died on. A failure with evidence of its own is never marked.

A signature can also name a root that no step judged: a reply to initialize with its id in another
JSON type ends the session before ``id-echo`` runs, so ``id-echo`` fails here, on that evidence.

    >>> found = Findings()
    >>> found.failed("stdout-flush", "a reply held back", {"sent": '{"id":1,"method":"initialize"}'})
    >>> found.failed("initialize-result", "no reply to initialize", {"sent": '{"id":1,"method":"initialize"}'})
    >>> attribute(found.results(), Signatures(held=['{"id":1,"method":"initialize"}']))
    {'initialize-result': ('stdout-flush', "its request's reply was held in the server's stdout buffer (not flushed)")}
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from reference.framing import encode

from .catalogue import CATALOGUE
from .nudge import FLUSHED_WITHIN, PREFIX
from .probe import Probe, show
from .signatures import Signatures, gather
from .verdicts import Findings, Result

BAD = ("fail", "warn")
CUT = 100  # characters of a signature line compared with a check's evidence


def strings(value: Any) -> Iterable[str]:
    """Every string in an evidence value, however nested."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from strings(item)


def mentions(result: Result, lines: Iterable[str]) -> bool:
    """Whether ``result``'s evidence shows any of ``lines`` (the sent or received frames)."""
    needles = {line[:CUT] for line in lines if line.strip()}
    return bool(needles) and any(n in text for text in strings(result.evidence) for n in needles)


def received_lines(result: Result) -> list[str]:
    """The lines a check's evidence says were received before the reply ("received")."""
    value = result.evidence.get("received")
    items = value if isinstance(value, list) else [value] if isinstance(value, str) else []
    return [item.removeprefix("<- ") for item in items]


# -- the rules: each finds the consequences of one kind of root cause --------------------------
Rule = Callable[[dict[str, Result], Signatures], dict[str, str]]  # consequence -> why


def held_replies(results: dict[str, Result], wire: Signatures) -> dict[str, str]:
    """stdout-flush: a check whose failing exchange is a request whose reply was held back."""
    if results["stdout-flush"].status != "fail":
        return {}
    why = "its request's reply was held in the server's stdout buffer (not flushed)"
    return {r.id: why for r in results.values() if r.status in BAD and mentions(r, wire.held)}


def pushed_out(probes: Iterable[Probe]) -> list[str]:
    """Requests given up on whose replies came out the moment the checker wrote its next message.

    The nudge (:mod:`grader.checker.nudge`) never pings after a session's opening request
    (``server/discover``, ``initialize``), so a held reply to one of those sent later in a session
    (era-mixing's, modern-unsupported-version's) is not seen nudged out: it comes out with the
    next message the server flushes, after the checker stopped waiting. That is a held reply too:
    it arrived, stdin still open, within a moment of a later write of the checker. A request given
    up on as work in flight (a slow tool, cancelled) is left out: it may simply have finished.
    Each request is given as its evidence may show it: compact (as sent) and as ``json.dumps``.
    """
    found: list[str] = []
    for probe in probes:
        pending: dict[str, dict[str, Any]] = {}  # id (as JSON, typed) -> request, awaiting a reply
        last_sent: float | None = None
        moved_on: set[str] = set()  # awaited ids after which the checker wrote a later request
        skip = {json.dumps(i) for i in probe.in_flight}
        for frame in probe.frames:
            message = _json(frame.data)
            if not isinstance(message, dict) or "id" not in message:
                if frame.direction == "sent":
                    last_sent = frame.at
                continue
            key = json.dumps(message["id"])
            if frame.direction == "sent":
                if "method" in message:
                    moved_on |= set(pending)
                    if not str(message["id"]).startswith(PREFIX):
                        pending[key] = message
                last_sent = frame.at
                continue
            request = pending.pop(key, None) if "method" not in message else None
            if request is None or key not in moved_on or key in skip or not frame.stdin_open:
                continue
            if last_sent is not None and 0 <= frame.at - last_sent <= FLUSHED_WITHIN:
                found += [
                    show(encode(request).rstrip(b"\n")),
                    json.dumps(request),
                    json.dumps(request, ensure_ascii=False),
                ]
    return found


def _json(data: bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return None


def mistyped_ids(results: dict[str, Result], wire: Signatures) -> dict[str, str]:
    """id-echo: a check whose failing exchange shows a reply with the id in another JSON type."""
    if results["id-echo"].status != "fail":
        return {}
    misses = [m.reply for m in wire.near_misses] + [m.request for m in wire.near_misses]
    why = "its reply came back with the request's id in another JSON type"
    found = {r.id: why for r in results.values() if r.status in BAD and mentions(r, misses)}
    # Lines "before the first reply" that are the mistyped reply itself.
    silent = results["stdout-silent-at-start"]
    if silent.status == "fail" and all(line[:CUT] in "\n".join(misses) for line in received_lines(silent)):
        found[silent.id] = "the line it saw before the reply was the reply, with its id in another JSON type"
    return found


def died_on_input(results: dict[str, Result], wire: Signatures) -> dict[str, str]:
    """survives-bad-input: no answer to an input the server died on (it could not answer)."""
    if results["survives-bad-input"].status != "fail" or not wire.killers:
        return {}
    found = {}
    killers = {k[:CUT] for k in wire.killers}
    for result in results.values():
        sent, received = result.evidence.get("sent"), result.evidence.get("received")
        if result.status in BAD and not received and isinstance(sent, str) and sent[:CUT] in killers:
            found[result.id] = "the server died on this input, so it could not answer it"
    return found


def unreadable_lines(results: dict[str, Result], wire: Signatures) -> dict[str, str]:
    """stdout-json-lines: a check whose failing exchange is made of the lines that are not JSON.

    Not where the only noise is a tool's non-log output during tool calls: that is the tool's
    defect (see :func:`tool_output`). A line before the first reply that is not a piece of a
    reply (a banner) breaks stdout-silent-at-start on its own.
    """
    if results["stdout-json-lines"].status != "fail" or tool_output_only(wire):
        return {}
    noise = [n.text for n in wire.noise]
    # A blank line matches any evidence as text, so mentions() leaves it out: a check that saw only
    # blank lines where a reply should be is the same stray newline, counted once.
    blank = any(not n.strip() for n in noise)
    found = {}
    for result in results.values():
        if result.status not in BAD or result.id in ("stdout-json-lines", "stdout-silent-at-start"):
            continue
        if mentions(result, noise):
            found[result.id] = "its reply was among the lines that are not one JSON message each"
        elif blank and _only_blank_lines(result):
            found[result.id] = "the lines it saw were the stray blank lines, which are not JSON messages"
    ends = results["stdout-line-ending"]
    if ends.status in BAD and wire.crlf_other and not wire.crlf_json:
        found[ends.id] = 'the only lines ending in "\\r\\n" are lines that are not JSON (headers, not messages)'
    silent = results["stdout-silent-at-start"]
    framing = {n.text[:CUT] for n in wire.noise if n.kind in ("spread", "header")}
    lines = received_lines(silent)
    if silent.status == "fail" and lines and all(line[:CUT] in framing for line in lines):
        found[silent.id] = "the lines it saw before the reply were the reply itself, spread over lines or framed"
    return found


def _only_blank_lines(result: Result) -> bool:
    lines = received_lines(result)
    return bool(lines) and not any(line.strip() for line in lines)


def tool_output_only(wire: Signatures) -> bool:
    """Every non-JSON line came during a tool call and none is a log record: a tool's output."""
    return bool(wire.noise) and all(n.during == "tools/call" and n.kind == "other" for n in wire.noise)


def tool_output(results: dict[str, Result], wire: Signatures) -> dict[str, str]:
    """tools-call-result: the non-JSON lines are all a tool's own output during calls."""
    if results["tools-call-result"].status != "fail" or not tool_output_only(wire):
        return {}
    lines = results["stdout-json-lines"]
    if lines.status == "fail" and mentions(results["tools-call-result"], [n.text for n in wire.noise]):
        return {lines.id: "every line that is not JSON was a tool's output during a tool call"}
    return {}


def early_requests(results: dict[str, Result], wire: Signatures) -> dict[str, str]:
    """no-early-server-requests: the lines "before the first reply" were the server's requests."""
    root, silent = results["no-early-server-requests"], results["stdout-silent-at-start"]
    lines = received_lines(silent)
    if root.status not in BAD or silent.status != "fail" or not lines:
        return {}
    if all(_is_request(line) for line in lines):
        return {silent.id: "the lines before the reply were requests of the server's own, sent while it initialized"}
    return {}


def _is_request(line: str) -> bool:
    try:
        message = json.loads(line)
    except ValueError:
        return False
    return isinstance(message, dict) and isinstance(message.get("method"), str) and "id" in message


def unreadable_results(results: dict[str, Result], wire: Signatures) -> dict[str, str]:
    """tools-call-result: shop answers that could not be read from results of the wrong shape."""
    contract = results["shop-contract"]
    if results["tools-call-result"].status != "fail" or contract.status not in BAD or not wire.bad_results:
        return {}
    differences = contract.evidence.get("differences")
    if not isinstance(differences, list) or not differences:
        return {}
    tools = {str(d).split(" ", 1)[0] for d in differences}
    if tools <= set(wire.bad_results):
        listed = ", ".join(sorted(tools))
        return {contract.id: f"the answers were read from results that are not CallToolResults ({listed})"}
    return {}


RULES: list[tuple[str, Rule]] = [
    ("stdout-flush", held_replies),
    ("id-echo", mistyped_ids),
    ("survives-bad-input", died_on_input),
    ("stdout-json-lines", unreadable_lines),
    ("tools-call-result", tool_output),
    ("no-early-server-requests", early_requests),
    ("tools-call-result", unreadable_results),
]


def imply_roots(wire: Signatures, findings: Findings) -> None:
    """Roots the session could not reach: a mistyped id on the first reply fails id-echo."""
    if wire.near_misses and findings.status("id-echo") != "fail":
        first = wire.near_misses[0]
        findings.failed(
            "id-echo",
            "a reply came back with the request's id in another JSON type",
            {"sent": first.request, "received": first.reply, "expected": "the same id, in the same JSON type"},
        )


def attribute(results: dict[str, Result], wire: Signatures) -> dict[str, tuple[str, str]]:
    """Each consequence's root and why; a root is never a consequence of its own consequence."""
    causes: dict[str, tuple[str, str]] = {}
    for root, rule in RULES:
        found = rule(results, wire)
        root = causes[root][0] if root in causes else root  # a consequence's consequences follow its root
        for check, why in found.items():
            if check != root and check not in causes and not any(r == check for r, _ in causes.values()):
                causes[check] = (root, why)
    return causes


def order(results: list[Result]) -> list[Result]:
    """Root failures first, then root warnings, then consequences, then the rest (catalogue order)."""
    rank = {check: n for n, check in enumerate(CATALOGUE)}

    def key(result: Result) -> tuple[int, int]:
        if result.status not in BAD:
            return 3, rank[result.id]
        return (2 if result.caused_by else 0 if result.status == "fail" else 1), rank[result.id]

    return sorted(results, key=key)


def diagnose(probes: Iterable[Probe], findings: Findings) -> list[Result]:
    """The results, root causes first, each consequence marked ``caused_by`` its root."""
    probes = list(probes)
    wire = gather(probes)
    wire.held += pushed_out(probes)
    imply_roots(wire, findings)
    results = findings.results()
    causes = attribute(results, wire)
    marked = []
    for result in results.values():
        if result.id in causes:
            root, why = causes[result.id]
            result = replace(result, caused_by=root, evidence={**result.evidence, "because": why})
        marked.append(result)
    return order(marked)
