"""The checks of stage 09 (the clinic: repair).

Each graded cell takes one repaired file, ``repair_N.py``, and runs it *alone*: copied by itself
into a scratch folder, so that it cannot lean on another repair. Before any process starts, the
file must be the learner's repair of the server handed out: changed, within a budget of changed
lines (a repair, not a rewrite), and still a server of its own (no course server imported or
run, no other file executed). Then ``mcp-lab check`` must find no failing check, and replays aimed
at the defect's own path must pass: the checker talks to a server one request at a time, and a
partial repair often survives that. The public replays use fixed values; grading repeats them with
values drawn from the course secret (:mod:`grader.grading.hidden.stage09`).

Every replay reads replies as a client should (stage 06): matched by id, in any order, with the
server's own notifications and requests in between, so a valid repair that also logs through
``notifications/message`` passes.

    >>> changed_lines("a = 1\\nb = 2\\n", "a = 1  # kept\\n# why\\nb = 3\\n")
    1
    >>> own_code_problem("import reference.server\\n")
    'it imports reference.server, a course server (a repair stays your own server)'
    >>> own_code_problem("from reference.shop import shop_toolbox\\n") == ""
    True
"""

from __future__ import annotations

import ast
import contextlib
import difflib
import io
import json
import re
import threading
import time
import tokenize
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from grader.checker.probe import same_id
from reference.framing import encode

from .. import runtime
from ..build import NOTEBOOKS
from ..drive import Server, initialize, notification, request
from ..expect import Failure, describe_id, show
from ..pysource import parse as parse_source
from ..work import Work
from . import public

FOLDER = NOTEBOOKS / "09-clinic-repair"  # the handed-out servers, as the course ships them
SERVERS = 5
BUDGET = 30  # changed lines (blank lines and comments aside): a repair, not a rewrite
PRISTINE = ".orig"  # repair_N.py.orig beside the notebook: the learner's pristine copy


def file_name(number: int) -> str:
    return f"repair_{number}.py"


def handed_out(number: int) -> str:
    """The text of ``repair_NUMBER.py`` as the course hands it out."""
    return (FOLDER / file_name(number)).read_text(encoding="utf-8")


# -- the file itself: changed, a repair, still the learner's own server ----------------------------
def _meaningful(text: str) -> list[str]:
    """The lines of ``text`` without comments, blank lines and trailing spaces."""
    lines = text.splitlines()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                row, column = token.start
                lines[row - 1] = lines[row - 1][:column]
    except (tokenize.TokenError, SyntaxError):
        pass  # not Python: compared as it is
    return [line.rstrip() for line in lines if line.strip()]


def changed_lines(before: str, after: str) -> int:
    """Lines changed from ``before`` to ``after``: a replaced line counts once; blanks and comments never."""
    matcher = difflib.SequenceMatcher(None, _meaningful(before), _meaningful(after), autojunk=False)
    return sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal")


_STARTS_PROGRAMS = re.compile(
    r"^(system|popen|exec[lv]p?e?|spawn[lv]p?e?|posix_spawnp?|startfile|fork|create_subprocess_(exec|shell))$"
)
_RUNS_OTHER_CODE = {"runpy", "importlib", "subprocess", "multiprocessing", "code", "pty"}
_NAMES_OTHER_CODE = re.compile(r"\breference[./]|\bgrader[./]|nbgrader|mcp-lab|repair_\d")


def own_code_problem(text: str) -> str:
    """Why ``text`` is not a server of the learner's own ("" when it is one)."""
    try:
        tree = parse_source(text)
    except SyntaxError as exc:
        return f"it is not valid Python: {exc.msg} (line {exc.lineno})"
    allowed = runtime.plan("09").may_import
    for node in ast.walk(tree):
        imported: list[str] = []
        if isinstance(node, ast.Import):
            imported = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        for name in imported:
            top, _, rest = name.partition(".")
            piece = rest.partition(".")[0]
            if top == "reference" and piece and piece not in allowed:
                return f"it imports {name}, a course server (a repair stays your own server)"
            if top in ("grader", "nbgrader", "lab_runtime") or top.startswith("repair_"):
                return f"it imports {name} (a repair stays your own server)"
            if top in _RUNS_OTHER_CODE:
                return f"it imports {top}, which runs other code or programs: a repair needs none"
        called = node.func.id if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) else ""
        if called in ("exec", "eval", "compile", "__import__"):
            return f"line {node.lineno} calls {called}(): a repair runs only the code you can read"
        if isinstance(node, ast.Attribute) and _STARTS_PROGRAMS.match(node.attr):
            return f"line {node.lineno} uses {node.attr}(): a repair starts no other program"
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found = _NAMES_OTHER_CODE.search(node.value)
            if found:
                return f"line {node.lineno} names {found.group(0)!r}: a repair runs no other server"
    return ""


def repaired_text(work: Work, number: int) -> str:
    path = work.folder / file_name(number)
    if not path.is_file():
        raise Failure(
            "clinic-repair",
            f"there is no {path.name} beside the notebook",
            hint=f"it was handed out with the notebook; its first state is in {path.name}{PRISTINE}",
        )
    return path.read_text(encoding="utf-8", errors="replace")


def pristine(work: Work, number: int) -> str:
    """The file as handed out: the learner's own copy (``repair_N.py.orig``), else the course's."""
    copy = work.folder / (file_name(number) + PRISTINE)
    return copy.read_text(encoding="utf-8") if copy.is_file() else handed_out(number)


def check_is_a_repair(number: int, original: str, text: str) -> None:
    """Changed, within the budget, and still the learner's own server."""
    name = file_name(number)
    changed = changed_lines(original, text)
    if changed == 0:
        raise Failure(
            "clinic-repair",
            f"{name} is as it was handed out: find its defect and fix it",
            hint="its first line says what a host or a user reports; the checker and the frames show where",
        )
    if changed > BUDGET:
        raise Failure(
            "clinic-repair",
            f"{name} differs from the file handed out in {changed} lines: a repair changes at most {BUDGET}",
            hint=f"blank lines and comments do not count; diff it with {name}{PRISTINE} and keep the fix only",
        )
    problem = own_code_problem(text)
    if problem:
        raise Failure("clinic-repair", f"{name} must stay a server of its own: {problem}")


@contextlib.contextmanager
def alone(work: Work, number: int, text: str) -> Iterator[list[str]]:
    """The command that runs ``text`` as ``repair_NUMBER.py``, alone in a scratch folder."""
    with work.scratch() as (here, _inside):
        path = here / file_name(number)
        path.write_text(text, encoding="utf-8")
        path.chmod(0o644)  # the learner's processes may run as a user of their own
        yield work.run_file(path)


# The fix a failure names where the catalogue's general one does not fit this server: repair_4's
# stdout is written by a vendored library (print() and os.write(1, ...)) that the lesson says not to
# change, so "print to stderr" is no repair there; the descriptor is.
STDOUT_CHECKS = ("stdout-json-lines", "stdout-silent-at-start", "stdout-strict-json", "stdout-line-ending")
SERVER_FIXES = {
    4: "tally writes to stdout in two ways, print() and os.write(1, ...), and you do not change tally: repair "
    "your server's own main() at the descriptor, as in stage 07, before Tally is made: protocol = "
    'os.fdopen(os.dup(1), "wb") keeps the real stdout for the protocol; os.dup2(2, 1) points descriptor 1 '
    "(print, os.write(1, ...)) at stderr; then write and flush every message on protocol (or send tally's "
    "lines as notifications/message, and declare the logging capability)",
}


def server_fix(number: int, check: str) -> dict[str, str]:
    """The ``fix`` detail for a failure of ``check`` on server ``number`` ({} where the catalogue's fits)."""
    fix = SERVER_FIXES.get(number, "")
    return {"fix": fix} if fix and check in STDOUT_CHECKS else {}


def check_checker(argv: Sequence[str], name: str) -> None:
    """mcp-lab check on the repaired server: no check may fail (warnings are fine)."""
    from ..drive import graded_check

    try:
        report = graded_check(argv)
    except Failure as failure:
        if not failure.summary.startswith("sent id "):
            raise
        raise Failure("id-echo", f"a tool call before the checker: {failure.summary}", **failure.details) from None
    failed = [r for r in report.results if r.status == "fail"]
    if not failed:
        return
    first = next((r for r in failed if not r.caused_by), failed[0])
    others = [r.id for r in failed if r is not first]
    evidence = first.evidence or {}
    shown = {k: evidence[k] for k in ("sent", "expected", "received") if k in evidence}
    also = f" (also failing: {', '.join(others)})" if others else ""
    raise Failure(
        first.id,
        f"mcp-lab check on {name}: {first.summary}{also}",
        **shown,
        stderr=evidence.get("stderr_tail", ""),
    )


# -- a client's reading: replies matched by id, the server's own messages let through ---------------
def _error_reply(sent: Any, reply: Any, code: int, ids: tuple[Any, ...], check: str) -> None:
    error = reply.get("error") if isinstance(reply, dict) else None
    got = error.get("code") if isinstance(error, dict) else None
    if got != code or not any(same_id(reply.get("id"), i) for i in ids) or ("id" not in reply and None not in ids):
        raise Failure(
            check,
            f"expected the error {code} with id {' or '.join(describe_id(i) for i in ids)}",
            sent=show(sent),
            received=show(reply),
        )


def handshake(server: Server, version: str = "2025-11-25", id: Any = 1) -> dict[str, Any]:
    """initialize and notifications/initialized; the initialize result."""
    init = initialize(version, id=id)
    reply = server.expect(init, {"jsonrpc": "2.0", "id": id}, "initialize-result")
    server.send(notification("notifications/initialized"))
    return reply.get("result") if isinstance(reply.get("result"), dict) else {}


@dataclass
class Burst:
    """Requests and bad lines sent without waiting, as a busy host sends them; replies matched by id."""

    requests: list[dict[str, Any]] = field(default_factory=list)
    bad_lines: list[tuple[bytes, int]] = field(default_factory=list)  # (line, the error code it earns)
    pause: float = 0.0  # seconds between two sends (a sender thread spreads them over time)

    def frames(self) -> list[bytes]:
        out: list[bytes] = []
        for i in range(max(len(self.requests), len(self.bad_lines))):
            if i < len(self.requests):
                out.append(encode(self.requests[i]))
            if i < len(self.bad_lines):
                out.append(self.bad_lines[i][0] + b"\n")
        return out


def run_burst(server: Server, burst: Burst, check: str, what: str) -> dict[Any, Any]:
    """Send ``burst``; every reply must be one JSON message per line; returns the replies by request id."""
    frames = burst.frames()

    def send_all() -> None:
        for frame in frames:
            if not server.probe.send_raw(frame):
                return
            if burst.pause:
                time.sleep(burst.pause)

    sender = threading.Thread(target=send_all, name="burst", daemon=True)  # ends with the server
    sender.start()
    wanted = {json.dumps(r["id"]): r for r in burst.requests}
    replies: dict[str, Any] = {}
    errors: list[int] = []
    shown = [show(f) for f in frames[:4]] + ([f"... ({len(frames)} lines in all)"] if len(frames) > 4 else [])
    while len(replies) < len(wanted) or len(errors) < len(burst.bad_lines):
        try:
            reply = server.next_line(shown, check)
        except Failure as failure:
            if failure.check != "stdout-json-lines":
                raise
            raise Failure(
                "stdout-json-lines",
                f"{what}: a stdout line is not one JSON message (replies written into each other?)",
                sent=shown,
                received=failure.details.get("received", ""),
                fix="every message must leave in one piece: hold one lock around each whole write of a message "
                "(json.dump or write, then flush), whichever thread writes it",
                stderr=server.probe.stderr_tail(),
            ) from None
        key = json.dumps(reply.get("id")) if isinstance(reply, dict) else ""
        if isinstance(reply, dict) and reply.get("id") is None and "error" in reply:
            errors.append(reply["error"].get("code") if isinstance(reply["error"], dict) else None)
        elif key in wanted and key not in replies:
            replies[key] = reply
        else:
            raise Failure(
                "id-echo",
                f"{what}: a reply that answers none of the requests sent (or one twice)",
                sent=shown,
                received=show(reply),
            )
    sender.join(5)
    want_codes = sorted(code for _, code in burst.bad_lines)
    if sorted(errors, key=str) != sorted(want_codes, key=str):
        raise Failure("parse-error", f"{what}: the bad lines got other errors", expected=want_codes, received=errors)
    return {key: replies[key] for key in wanted}


# -- the replays, one per server --------------------------------------------------------------------
def big_call(id: Any, offset: int, tool: str = "list_orders") -> dict[str, Any]:
    """A tool call with a long answer (tens of kilobytes)."""
    arguments = {"limit": 100, "offset": offset} if tool == "list_orders" else {"query": "a", "limit": 50}
    return request("tools/call", id=id, params={"name": tool, "arguments": arguments})


def replay_many_at_once(argv: Sequence[str], bursts: list[Burst]) -> None:
    """Server 1: big replies from many threads at once, bad lines answered by the reader meanwhile."""
    for burst in bursts:
        with Server(argv) as server:
            handshake(server)
            replies = run_burst(server, burst, "stdout-json-lines", "many tool calls at once")
            for sent in burst.requests:
                reply = replies[json.dumps(sent["id"])]
                result = reply.get("result")
                if not isinstance(result, dict) or result.get("isError") is not False:
                    raise Failure(
                        "tools-call-result", "a tool call of the burst failed", sent=show(sent), received=show(reply)
                    )


@dataclass(frozen=True)
class Alone:
    """One line sent by itself: its reply must come while stdin stays open (a flushed reply)."""

    frame: Any  # a message, or raw bytes (a line without its newline)
    code: int | None  # the error code expected (None: a result)
    check: str
    ids: tuple[Any, ...] = ()  # the ids the error may carry (a request's own id when empty)


def replay_one_by_one(argv: Sequence[str], lines: list[Alone]) -> None:
    """Server 2: every kind of reply, each to a line sent alone, must come while the client waits."""
    with Server(argv) as server:
        handshake(server)
        for item in lines:
            sent = item.frame if isinstance(item.frame, dict) else item.frame + b"\n"
            server.send(sent)
            reply = server.next_line(sent, item.check)
            ids = item.ids or ((item.frame.get("id"),) if isinstance(item.frame, dict) else (None,))
            if item.code is not None:
                _error_reply(item.frame, reply, item.code, ids, item.check)
            elif not (isinstance(reply, dict) and "result" in reply and same_id(reply.get("id"), ids[0])):
                what = "expected a result with the request's id"
                raise Failure(item.check, what, sent=show(item.frame), received=show(reply))


def replay_ids(argv: Sequence[str], ids: list[Any], burst_ids: list[Any]) -> None:
    """Server 3: tool calls (and their errors) with ids of every JSON type, alone and several at once."""
    tools = [
        ("count_orders", {"status": "paid"}),
        ("get_order", {"order_id": 7}),
        ("search_products", {"query": "mug"}),
        ("list_orders", {"limit": 2}),
        ("no_such_tool", {}),
    ]
    with Server(argv) as server:
        handshake(server, id="init")
        for n, request_id in enumerate(ids):
            name, arguments = tools[n % len(tools)]
            call = request("tools/call", id=request_id, params={"name": name, "arguments": arguments})
            expected = {"jsonrpc": "2.0", "id": request_id}
            if name == "no_such_tool":
                expected["error"] = {"code": -32602}
            server.expect(call, expected, "id-echo")
        calls = [request("tools/call", id=i, params={"name": "count_orders", "arguments": {}}) for i in burst_ids]
        run_burst(server, Burst(calls), "id-echo", "tool calls sent together")
    # What the author wanted, and a repair must keep: a call cancelled before it starts gets no reply,
    # whether notifications/cancelled names it by a number or by a string.
    for kind in (int, str):
        cancel_id = next((i for i in ids if type(i) is kind), 7 if kind is int else "7")
        replay_cancel(argv, cancel_id)


QUEUED = 20  # big tool calls queued ahead of the one cancelled: its cancellation arrives long before it runs


def replay_cancel(argv: Sequence[str], cancel_id: Any) -> None:
    """Server 3: tool calls queued behind one worker, the last cancelled at once by its id: every other
    call is answered, the cancelled one never is."""
    with Server(argv) as server:
        handshake(server, id="init")
        busy = [big_call(f"busy-{n}", 100 * n) for n in range(QUEUED)]
        target = request("tools/call", id=cancel_id, params={"name": "count_orders", "arguments": {}})
        cancel = notification("notifications/cancelled", {"requestId": cancel_id, "reason": "the user pressed Stop"})
        server.send(b"".join(encode(m) for m in [*busy, target, cancel]))  # one write: read together
        sent = [f"{QUEUED} tool calls (ids busy-0 ...)", show(target), show(cancel)]
        answered: list[Any] = []
        for _ in range(QUEUED):
            reply = server.next_line(sent, "id-echo")
            answered.append(reply.get("id") if isinstance(reply, dict) else reply)
        ping = request("ping", id="after-cancel")
        server.send(ping)
        late = [server.next_line(ping, "ping")]
        late += [item.message for item in server.probe.read_for(0.5) if item.json_ok]
        for reply in [*answered, *late]:
            got = reply.get("id") if isinstance(reply, dict) else reply
            if same_id(got, cancel_id):
                raise Failure(
                    "clinic-repair",
                    f"the call with id {describe_id(cancel_id)}, cancelled before it could start, was answered: "
                    "the repair broke cancelling a call (what the author wanted, and the repair must keep)",
                    sent=sent,
                    received=show(reply),
                    expected="no reply to the cancelled call; a reply to every other call, then to ping",
                )


def replay_stdout_clean(argv: Sequence[str], calls: list[tuple[str, dict[str, Any]]], quiet: float) -> None:
    """Server 4: nothing on stdout before the first request, and only messages after: at start, during
    every tool call, at exit. A server that logs through notifications/message declares logging."""
    with Server(argv) as server:
        early = server.probe.read_for(quiet)
        if early:
            raise Failure(
                "stdout-silent-at-start",
                f"{len(early)} line(s) on stdout before any request was sent",
                received=[show(item.line.data) for item in early[:3]],
                stderr=server.probe.stderr_tail(),
            )
        result = handshake(server)
        for n, (name, arguments) in enumerate(calls, 2):
            call = request("tools/call", id=n, params={"name": name, "arguments": arguments})
            server.expect(call, {"jsonrpc": "2.0", "id": n}, "tools-call-result")
        server.expect(request("ping", id="last"), {"jsonrpc": "2.0", "id": "last", "result": {}}, "ping")
        server.expect_exit()
        logs = [n for n in server.notices if isinstance(n, dict) and n.get("method") == "notifications/message"]
        capabilities = result.get("capabilities") if isinstance(result.get("capabilities"), dict) else {}
        if logs and "logging" not in capabilities:
            raise Failure(
                "capabilities-match",
                "the server sent notifications/message without declaring the logging capability",
                received=show(logs[0]),
                expected='"capabilities": {"tools": {...}, "logging": {}} in the initialize result',
            )


MODERN = "2026-07-28"
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"


def modern_meta(version: Any = MODERN, capabilities: Any = None, drop: str = "") -> dict[str, Any]:
    """A request's 2026-07-28 ``_meta`` (``drop``: a key left out)."""
    meta = {
        VERSION_KEY: version,
        CAPABILITIES_KEY: {} if capabilities is None else capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "mcp-lab-grader", "version": "1.0"},
    }
    return {k: v for k, v in meta.items() if k != drop}


@dataclass(frozen=True)
class Step:
    """One 2026-07-28 request, sent alone: a complete result, or the error ``code`` (``-32022`` names the versions)."""

    message: dict[str, Any]
    code: int | None
    check: str


def modern_step(id: Any, method: str, params: dict[str, Any], meta: dict[str, Any] | None) -> dict[str, Any]:
    body = dict(params) if meta is None else {**params, "_meta": meta}
    return request(method, id=id, params=body)


def replay_each_request(argv: Sequence[str], steps: list[Step]) -> None:
    """Server 5: every 2026-07-28 request is judged by its own _meta, whatever came before on the
    connection (MCP 2026-07-28 is stateless); then stdin closes and the server exits by itself."""
    with Server(argv) as server:
        for step in steps:
            server.send(step.message)
            reply = server.next_line(step.message, step.check)
            if not isinstance(reply, dict) or not same_id(reply.get("id"), step.message["id"]):
                raise Failure(
                    "id-echo",
                    "expected the reply to the request just sent",
                    sent=show(step.message),
                    received=show(reply),
                )
            error, result = reply.get("error"), reply.get("result")
            meta = step.message.get("params", {}).get("_meta")
            if step.code is None:
                if not isinstance(result, dict) or result.get("resultType") != "complete":
                    raise Failure(
                        step.check,
                        "a well-formed 2026-07-28 request must get a complete result",
                        sent=show(step.message),
                        received=show(reply),
                        expected='a result with "resultType": "complete"',
                    )
                continue
            got = error.get("code") if isinstance(error, dict) else None
            if got != step.code:
                why = "served" if error is None else f"answered error {got}"
                raise Failure(
                    step.check,
                    f"a request whose own _meta is {show(meta)[:160]} was {why}, not refused with {step.code}: "
                    "a 2026-07-28 server reads every request's _meta, never an earlier request's",
                    sent=show(step.message),
                    received=show(reply),
                    expected=f"error {step.code}",
                )
            data = error.get("data") if isinstance(error, dict) else None
            supported = data.get("supported") if isinstance(data, dict) else None
            if step.code == -32022 and not (isinstance(supported, list) and MODERN in supported):
                raise Failure(
                    step.check,
                    "-32022 must list the versions served in data.supported",
                    sent=show(step.message),
                    received=show(reply),
                )
        server.expect_exit()


# -- the public values -------------------------------------------------------------------------------
def public_bursts() -> list[Burst]:
    bad = [(b"this is not json", -32700), (b'{"jsonrpc": "2.0", "id": null, "method": "ping"}', -32600)]
    return [
        Burst([big_call(n, 25 * n) for n in range(2, 42)], [bad[n % 2] for n in range(40)], pause=0.001)
        for _ in range(2)
    ]


def public_alone() -> list[Alone]:
    call = {"name": "count_orders", "arguments": {"status": "paid"}}
    return [
        Alone(b"this is not json", -32700, "parse-error"),
        Alone(request("ping", id=2), None, "ping"),
        Alone(b'{"jsonrpc": "2.0", "id": null, "method": "ping"}', -32600, "invalid-request"),
        Alone(b'{"jsonrpc": "2.0", "id": 3}', -32600, "invalid-request", ids=(None, 3)),
        Alone(request("prompts/list", id=4), -32601, "method-not-found"),
        Alone(request("tools/call", id=5, params={"name": "refund_order", "arguments": {}}), -32602, "unknown-tool"),
        Alone(request("tools/call", id=6, params=call), None, "tools-call-result"),
        Alone({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": [1]}, -32602, "invalid-request"),
        Alone(b'{"jsonrpc": "2.0", "id": 8, "method": "ping"', -32700, "parse-error"),
    ]


PUBLIC_IDS = [1, "17", 0, "call-x", -4, 2**40, "0"]
PUBLIC_BURST_IDS = [5, "5", 6, "six"]
PUBLIC_CALLS = [
    ("count_orders", {"status": "paid"}),
    ("list_orders", {"limit": 3}),
    ("get_order", {"order_id": 42}),
    ("search_products", {"query": "lamp"}),
]


def public_steps() -> list[Step]:
    call = {"name": "count_orders", "arguments": {"status": "paid"}}
    return [
        Step(modern_step(1, "server/discover", {}, modern_meta()), None, "discover-result"),
        Step(modern_step(2, "tools/list", {}, modern_meta(drop=VERSION_KEY)), -32602, "modern-envelope-errors"),
        Step(modern_step(3, "tools/call", call, modern_meta(drop=CAPABILITIES_KEY)), -32602, "modern-envelope-errors"),
        Step(modern_step(4, "tools/call", call, modern_meta()), None, "tools-call-result"),
        Step(modern_step(5, "tools/call", call, None), -32602, "modern-envelope-errors"),
        Step(modern_step(6, "tools/list", {}, modern_meta("2027-01-01")), -32022, "modern-unsupported-version"),
        Step(modern_step(7, "tools/list", {}, modern_meta()), None, "tools-list"),
    ]


# What each cell checks, in one line.
SAYS = {
    1: "repair_1.py: mcp-lab check, then 40 big tool calls and bad lines sent at once, twice",
    2: "repair_2.py: mcp-lab check, then each kind of reply and error to a line sent alone",
    3: 'repair_3.py: mcp-lab check, tool calls with ids 1, "17", 0, "call-x", -4, 2**40, "0"; cancelling a call',
    4: "repair_4.py: mcp-lab check, then stdout at start, during four tool calls and at exit",
    5: "repair_5.py: mcp-lab check, then 2026-07-28 requests alone, each judged by its own _meta; then the exit",
}


def replay(number: int, argv: Sequence[str], values: Any) -> None:
    """The replay aimed at server ``number``'s defect, with ``values`` (the public ones, or drawn)."""
    if number == 1:
        replay_many_at_once(argv, values)
    elif number == 2:
        replay_one_by_one(argv, values)
    elif number == 3:
        replay_ids(argv, *values)
    elif number == 4:
        replay_stdout_clean(argv, values, quiet=0.5)
    else:
        replay_each_request(argv, values)


PUBLIC_VALUES = {
    1: public_bursts,
    2: public_alone,
    3: lambda: (PUBLIC_IDS, PUBLIC_BURST_IDS),
    4: lambda: PUBLIC_CALLS,
    5: public_steps,
}


def check_repair(work: Work, number: int, original: str, values: Any, checker: bool = True) -> None:
    """The whole cell: the file is a repair, then (alone) the checker and the replay."""
    text = repaired_text(work, number)
    check_is_a_repair(number, original, text)
    with alone(work, number, text) as argv:
        try:
            if checker:
                check_checker(argv, file_name(number))
            replay(number, argv, values)
        except Failure as failure:
            fix = server_fix(number, failure.check)
            if not fix:
                raise
            kept = {key: value for key, value in failure.details.items() if key != "hint"}  # a general hint
            raise Failure(failure.check, failure.summary, **kept, **fix) from None


def _cell(number: int) -> None:
    @public("09", f"test_repair_{number}", SAYS[number])
    def run(work: Work) -> None:
        check_repair(work, number, pristine(work, number), PUBLIC_VALUES[number]())


for _number in SAYS:
    _cell(_number)
