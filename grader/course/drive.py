"""Driving a server under test: send frames, expect replies or silence, every wait bounded.

The checks of every stage talk to the learner's servers through :class:`Server`: a real child
process over real pipes, through the checker's probe harness (stderr drained, ``PYTHONUNBUFFERED``
removed so that a missing flush shows). A failure names the check, shows the frames and quotes
the rule (:class:`~grader.course.expect.Failure`).

    >>> import sys
    >>> with Server([sys.executable, "-m", "reference.server"]) as server:
    ...     server.expect({"jsonrpc": "2.0", "id": "7", "method": "ping"},
    ...                   {"jsonrpc": "2.0", "id": "7", "result": {}}, "id-echo")
    {'jsonrpc': '2.0', 'id': '7', 'result': {}}
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from grader.checker.probe import EXIT_STARVED, Probe, same_id
from reference import PROTOCOL_REVISION, thread_state
from reference.child import BUSY_CPU
from reference.framing import encode

from .expect import Failure, code_name, describe_id, followed_rule, not_written, not_written_yet, same_json, show

REPLY_TIMEOUT = 3.0  # seconds to wait for one reply: the reference answers in well under 0.1 s
PATIENCE = 3.0  # ... or up to this many times that, while the server is still using the CPU (or held in I/O)
EXIT_TIMEOUT = 2.0  # after stdin closes, a server has this long to exit (mcp-lab check's exit-on-eof)
# seconds the checker waits for one of the shop's tool calls inside a graded cell (the shop answers
# in milliseconds; the checker's own default, for slow real tools, is 30 s: too long for a cell)
CHECK_CALL_TIMEOUT = 5.0
# exit-on-eof's rule is a SHOULD, and mcp-lab check only warns: the course grades it, and says why.
COURSE_ASKS_EXIT = (
    "a SHOULD, on which mcp-lab check only warns; this course asks it of your server (stage 03 teaches it): "
    "a server that outlives its client's stdin is an orphan process the host must kill"
)


SANDBOX_PROGRAMS = ("bwrap", "unshare")  # grading's, around the learner's process: not theirs to explain


def _holding(probe: Probe) -> dict[str, str]:
    """``threads``: what the server's threads wait for once its time to exit ran out ({} where /proc
    cannot tell): the join(), the sleep or the read that keeps it alive."""
    looked = probe.child.last_look
    said = thread_state.describe({path: t for path, t in looked.items() if t.command not in SANDBOX_PROGRAMS})
    return {"threads": said} if said else {}


def request(method: str, id: Any = None, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """A request frame (a fresh random id unless one is given)."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": fresh_id() if id is None else id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def initialize(version: str = PROTOCOL_REVISION, id: Any = None) -> dict[str, Any]:
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "course", "version": "1.0"}}
    return request("initialize", id, params)


MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "course", "version": "1.0"},
}


def modern(method: str, id: Any = None, params: dict[str, Any] | None = None, **meta: Any) -> dict[str, Any]:
    """A 2026-07-28 request: ``params._meta`` carries its version, capabilities and client (``meta``:
    keys to change, by their last part, e.g. ``protocolVersion="2099-01-01"``; ``None`` drops one)."""
    envelope = dict(MODERN_META)
    for name, value in meta.items():
        key = f"io.modelcontextprotocol/{name}"
        if value is None:
            envelope.pop(key, None)
        else:
            envelope[key] = value
    return request(method, id, {**(params or {}), "_meta": envelope})


def notification(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


_RANDOM = random.Random()


def fresh_id() -> Any:
    """An id the learner cannot have hard-coded: a random integer or a random digit string."""
    n = _RANDOM.randrange(2, 10**6)
    return n if _RANDOM.random() < 0.5 else f"req-{n}"


class Server:
    """A server process under test: send frames, expect replies or silence, all within timeouts."""

    def __init__(
        self, argv: Sequence[str], timeout: float = REPLY_TIMEOUT, env: dict[str, str] | None = None, judge: bool = True
    ) -> None:
        self.argv = list(argv)
        self.judge = judge  # False: a session that only shows what came (lab.watch), judged by no one
        self.timeout = timeout
        # The harness starts it with this environment less PYTHONUNBUFFERED, plus ``env``.
        self.probe = Probe(self.argv, timeout, env=env, name="learner")
        self.notices: list[Any] = []  # what the server sent of its own accord (notifications, requests)

    def __enter__(self) -> Server:
        return self

    def __exit__(self, kind: object, value: object, *exc: object) -> None:
        self.close()
        if not self.judge:
            return
        if kind is None:  # the session's own failure, if any, says more than its stdout's tail
            self.expect_clean_stdout()
        elif isinstance(value, Failure) and value.check != "module":
            # A stub still as handed out killed the server, or made it answer -32603: say that.
            stderr = self.probe.stderr_tail(4000)
            name = not_written(stderr)
            if name:
                raise not_written_yet(name, stderr) from None

    def close(self) -> None:
        self.probe.close()

    def expect_clean_stdout(self) -> None:
        """Every line the server wrote in the whole session, up to its exit, is a protocol message.

        A print() in a handler may sit unflushed in the text layer's buffer all session, and reach
        the host only at exit: it breaks the stream as surely as a flushed one, so it costs the same.
        """
        noise = [item for item in self.probe.received if not item.json_ok]
        if noise:
            late = not any(f.direction == "received" and f.stdin_open and not _json(f.data) for f in self.probe.frames)
            raise Failure(
                "stdout-json-lines",
                f"your server wrote {len(noise)} line(s) to stdout that are not JSON-RPC messages"
                + (" when it exited: a print() left in the buffer reaches the host then" if late else ""),
                received=[show(item.line.data) for item in noise[:4]],
                hint="print(..., file=sys.stderr) for anything that is not a protocol message, in every handler",
                stderr=self.probe.stderr_tail(),
            )

    # -- sending and receiving ------------------------------------------------------------------
    def send(self, frame: Any) -> None:
        """Send a message (dict or list), or raw bytes as they are (add the newline yourself)."""
        data = frame if isinstance(frame, bytes) else encode(frame)
        if not self.probe.send_raw(data):
            self._died(f"could not send {show(data)}: the server's stdin is closed")

    def next_line(self, sent: Any, check: str) -> Any:
        """The next response (or batch of responses) on stdout; a teaching failure if none comes or a
        line is not JSON. The server's own messages in between are a client's business, as stage 06
        teaches: a notification is kept in :attr:`notices`, a ping is answered, another request is
        refused with -32601; then the wait goes on."""
        deadline = time.monotonic() + self.timeout
        longest = time.monotonic() + self.timeout * PATIENCE
        cpu = self.probe.child.cpu_seconds()
        while True:
            item = self.probe.read(max(0.0, deadline - time.monotonic()))
            if item is None:
                # A server still on the CPU, or held in the kernel's I/O (a slow start on a busy
                # machine, a sandbox's mounts), is working, not hung: more time, a second at a time,
                # up to PATIENCE times the timeout.
                now = self.probe.child.cpu_seconds()
                working = cpu is not None and now is not None and (now - cpu >= BUSY_CPU or self.probe.child.held_now())
                if working and time.monotonic() < longest:
                    cpu, deadline = now, min(longest, time.monotonic() + 1.0)
                    continue
                self._no_reply(sent, check)
            if not item.json_ok:
                raise Failure(
                    "stdout-json-lines",
                    "a stdout line is not JSON: stdout carries protocol messages only",
                    sent=show(sent),
                    received=show(item.line.data),
                    stderr=self.probe.stderr_tail(),
                )
            message = item.message
            if not (isinstance(message, dict) and isinstance(message.get("method"), str)):
                return message
            self.notices.append(message)
            if "id" in message:  # the server's own request: answer it, as a client must
                answer = (
                    {"result": {}}
                    if message["method"] == "ping"
                    else {"error": {"code": -32601, "message": f"Method not found: {message['method']}"}}
                )
                self.probe.send_raw(encode({"jsonrpc": "2.0", "id": message["id"], **answer}))

    def expect(self, sent: Any, expected: dict[str, Any], check: str) -> dict[str, Any]:
        """Send ``sent`` and demand the reply ``expected``.

        The reply must equal ``expected`` key for key with JSON types kept apart, except that an
        expected ``error`` is matched on its ``code`` alone (its ``message`` is free text).
        """
        self.send(sent)
        reply = self.next_line(sent, check)
        self._compare(sent, reply, expected, check)
        return reply

    def expect_silence(self, sent: Any, check: str = "notification-silence") -> None:
        """Send ``sent``, then a ping: the next response must be the ping's, not an answer to ``sent``."""
        self.send(sent)
        ping = request("ping")
        self.send(ping)
        reply = self.next_line([sent, ping], check)
        if isinstance(reply, dict) and "method" not in reply and _fence_reply(reply.get("id"), ping["id"]):
            return
        raise Failure(
            check,
            "the server answered a message that must get no reply",
            sent=[show(sent), show(ping)],
            expected=f"no reply to the first; the next line is the reply to ping (id {describe_id(ping['id'])})",
            received=show(reply),
        )

    def expect_exit(self, timeout: float = EXIT_TIMEOUT) -> int:
        """Close stdin: the server must exit by itself, with status 0, within ``timeout`` seconds of the
        time it could run (longer by what it waited for a CPU, as mcp-lab check's exit-on-eof waits)."""
        self.probe.close_stdin()
        code = self.probe.wait_exit(timeout, EXIT_STARVED)
        if code is None:
            raise Failure(
                "exit-on-eof",
                f"stdin was closed, and {timeout:.0f} s later the server was still running",
                expected="read_frame returns None at end of input, and the loop returns 0",
                **_holding(self.probe),
                course=COURSE_ASKS_EXIT,
                stderr=self.probe.stderr_tail(),
            )
        if code != 0:
            stderr = self.probe.stderr_tail()
            raise Failure(
                "exit-on-eof", f"the server exited with status {code}, not 0", course=COURSE_ASKS_EXIT, stderr=stderr
            )
        # What a process writes on its way out still reaches the host: a print that sat in the
        # text layer's buffer all session arrives now, and breaks the stream at the last moment.
        noise = [item for item in self.probe.read_for(0.3) if not item.json_ok]
        if noise:
            raise Failure(
                "stdout-json-lines",
                "at exit the server wrote lines that are not JSON (a print() that was never flushed?)",
                received=[show(item.line.data) for item in noise],
                stderr=self.probe.stderr_tail(),
            )
        return code

    # -- explaining ------------------------------------------------------------------------------
    def _compare(self, sent: Any, reply: Any, expected: dict[str, Any], check: str) -> None:
        problem = mismatch(sent, reply, expected)
        if problem:
            # The rule the evidence shows: a reply that carries the right id in another JSON type
            # breaks id-echo, whatever else the exchange was testing.
            shown = check
            want, got = expected.get("id"), reply.get("id") if isinstance(reply, dict) else None
            if "id" in expected and check != "id-echo" and _fence_reply(got, want) and not same_id(got, want):
                shown = "id-echo"
                problem = f"{problem} (this exchange tested {check}; the id broke first)"
            raise Failure(shown, problem, sent=show(sent), expected=show(expected), received=show(reply))

    def _no_reply(self, sent: Any, check: str) -> None:
        stderr = self.probe.stderr_tail()
        if not self.probe.alive() or self.probe.stdout_closed():
            code = self.probe.wait_exit(0.5)
            self._died(f"the server exited (status {code}) before answering", sent)
        # The signature of a missing flush: the reply turns up once stdin closes and the process
        # exits (Python flushes its buffers on the way out).
        self.probe.close_stdin()
        late = [item for item in self.probe.read_for(1.0) if item.json_ok]
        if late:
            raise Failure(
                "stdout-flush",
                f"no reply within {self.timeout:.0f} s; it came only when stdin was closed: a missing flush",
                sent=show(sent),
                received=[show(item.line.data) for item in late],
                stderr=stderr,
            )
        raise Failure(
            check,
            f"no reply within {self.timeout:.0f} s (the server is still running)",
            sent=show(sent),
            hint="is the reply written to stdout and flushed? is the loop reading the next line?",
            stderr=stderr,
        )

    def _died(self, summary: str, sent: Any = None) -> None:
        details: dict[str, Any] = {"stderr": self.probe.stderr_tail()}
        if sent is not None:
            details["sent"] = show(sent)
        raise Failure("survives-bad-input", summary, **details)


def answers_a_tool_call(argv: Sequence[str], timeout: float = REPLY_TIMEOUT) -> None:
    """A short session before the checker runs: a shop server whose tools/call never returns would
    make the checker wait its call timeout on every call (minutes); here it fails in seconds."""
    with Server(argv, timeout=timeout) as server:
        init = initialize()
        server.expect(init, {"jsonrpc": "2.0", "id": init["id"]}, "initialize-result")
        server.send(notification("notifications/initialized"))
        call = request("tools/call", params={"name": "count_orders", "arguments": {}})
        server.expect(call, {"jsonrpc": "2.0", "id": call["id"]}, "tools-call-result")
    # A tool still a stub is answered as a crash (isError): say what is not written, not what differs.
    stderr = server.probe.stderr_tail(4000)  # whole now: the process has ended
    if name := not_written(stderr):
        raise not_written_yet(name, stderr)


def graded_check(argv: Sequence[str], timeout: float = REPLY_TIMEOUT) -> Any:
    """``mcp-lab check`` on a learner's shop server, bounded for a graded cell: first a short
    session that proves a tools/call is answered, then the checker with a short call timeout."""
    from grader.checker.check import run_check

    answers_a_tool_call(argv, timeout)
    return run_check(list(argv), timeout=timeout, call_timeout=CHECK_CALL_TIMEOUT)


STDOUT_CHECKS = ("stdout-json-lines", "stdout-silent-at-start")


def expect_checks(argv: Sequence[str], checks: Sequence[str], timeout: float = REPLY_TIMEOUT) -> None:
    """Run ``mcp-lab check`` on ``argv``; a failure among ``checks`` becomes the cell's failure.

    The failure is the one the checker names as the root: a check that fails only because another
    did (``caused_by``) says so, and the root's own evidence is shown; every failing input is listed.
    """
    results = {r.id: r for r in graded_check(argv, timeout).results}
    # Stdout carries protocol messages only, in every stage whose code runs as a server: a stray
    # line there costs the same wherever the cell's own checks look.
    for check in dict.fromkeys([*STDOUT_CHECKS, *checks]):
        if check not in results and check in STDOUT_CHECKS:
            continue
        result = results[check]
        if result.status != "fail":
            continue
        root = results.get(result.caused_by) if result.caused_by else None
        summary = f"mcp-lab check: {result.summary}"
        if root is not None and root.status == "fail":
            summary = f"mcp-lab check: {check} fails because of {root.id}: {root.summary}"
            result = root
        evidence = result.evidence
        shown: dict[str, Any] = {k: evidence[k] for k in ("sent", "expected", "received") if k in evidence}
        problems = evidence.get("problems")
        if isinstance(problems, list) and problems:
            shown["problems"] = "; ".join(str(p) for p in problems[:8]) + (" ..." if len(problems) > 8 else "")
        raise Failure(result.id, summary, **shown, **followed_rule(result), stderr=evidence.get("stderr_tail", ""))


SDK_TIMEOUT = 12.0  # seconds for a whole SDK session: start, handshake, the steps, shutdown (about 1 s on the shop)


def run_async_bounded(session: Callable[[], Awaitable[Any]], seconds: float) -> tuple[bool, Any]:
    """``await session()`` on a thread of its own, with its own event loop (the kernel already has
    one), waited for ``seconds``: ``(True, what it returned)``, else ``(False, the exception or None
    when it did not end in time)``. The SDK logs every line it cannot parse, with a traceback: its
    logger is quiet meanwhile, the caller's verdict says enough."""
    import logging
    import threading

    box: dict[str, Any] = {}

    def run() -> None:
        import anyio

        sdk_log = logging.getLogger("mcp")
        level = sdk_log.level
        sdk_log.setLevel(logging.CRITICAL)
        try:
            box["value"] = anyio.run(session)
        except BaseException as exc:  # handed to the caller's thread
            box["error"] = exc
        finally:
            sdk_log.setLevel(level)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    return ("value" in box, box.get("value", box.get("error")))


def sdk_client(argv: Sequence[str], steps: Any, check: str, what: str, mode: str = "auto") -> Any:
    """The official MCP SDK's high-level ``Client`` over stdio against ``argv``, in ``mode``: "auto" (its
    default: a server/discover probe, then 2026-07-28 or the handshake) or "legacy" (the handshake).

    Returns what ``await steps(client)`` returned; bounded by ``SDK_TIMEOUT``, a failure says what
    the SDK reported (and a stub that still raises, that it is not written yet).
    """
    import os
    import tempfile

    async def session() -> Any:
        import anyio
        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import stdio_client

        env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
        params = StdioServerParameters(command=argv[0], args=list(argv[1:]), env=env)
        with anyio.fail_after(SDK_TIMEOUT), open(errlog_path, "w") as errlog:
            async with Client(stdio_client(params, errlog=errlog), mode=mode, read_timeout_seconds=5) as client:
                return await steps(client)

    with tempfile.TemporaryDirectory(prefix="mcp-lab-sdk-") as tmp:
        errlog_path = os.path.join(tmp, "stderr")
        done, value = run_async_bounded(session, SDK_TIMEOUT + 5)
        stderr = _tail(errlog_path)
    if not done:
        name = not_written(stderr)
        if name:
            raise not_written_yet(name, stderr)
        value = _innermost(value)
        detail = f"{type(value).__name__}: {value}" if value else "no answer in time"
        raise Failure(
            check, f"the official MCP SDK client ({mode} mode) could not {what} ({detail})", stderr=stderr[-1500:]
        )
    return value


def _innermost(error: Any) -> Any:
    """The error an exception group (anyio's task groups wrap the SDK's) was raised for: its first leaf."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def _tail(path: str, limit: int = 4000) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, 2)
            handle.seek(max(0, handle.tell() - limit))
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _json(data: bytes) -> bool:
    try:
        json.loads(data)
    except ValueError:
        return False
    return True


def _fence_reply(got: Any, ping_id: Any) -> bool:
    """The reply to the fencing ping: its id, or its id in another JSON type (that is id-echo's
    rule, tested on its own; here it only shows that nothing came before the ping's reply)."""
    return same_id(got, ping_id) or json.dumps(got).strip('"') == json.dumps(ping_id).strip('"')


def mismatch(sent: Any, reply: Any, expected: dict[str, Any]) -> str:
    """What is wrong with ``reply`` as the answer ``expected`` to ``sent`` ("" when nothing is)."""
    if not isinstance(reply, dict):
        return f"the reply is not a JSON object but {type(reply).__name__}"
    if reply.get("jsonrpc") != "2.0":
        return 'the reply needs "jsonrpc": "2.0"'
    if ("result" in reply) == ("error" in reply):
        return "a response carries exactly one of result and error"
    if "id" in expected:
        want, got = expected["id"], reply.get("id")
        if not same_id(got, want) or ("id" in reply) != ("id" in expected):
            return f"sent id {describe_id(want)}, got {describe_id(got, 'id' in reply)}"
    if "error" in expected:
        if "error" not in reply:
            return f"expected the error {code_name(expected['error']['code'])}, got a result"
        error = reply["error"]
        if not isinstance(error, dict) or not isinstance(error.get("message"), str):
            return 'an error is an object with an integer "code" and a string "message"'
        if error.get("code") != expected["error"]["code"] or isinstance(error.get("code"), bool):
            return f"expected the error {code_name(expected['error']['code'])}, got {code_name(error.get('code'))}"
        return ""
    if "result" in expected:
        if "result" not in reply:
            return f"expected a result, got the error {code_name(reply['error'].get('code'))}"
        if not same_json(reply["result"], expected["result"]):
            return "the result is not the one expected"
    return ""
