"""Failures that teach: what a graded cell says when the learner's code breaks a rule.

A failing test names the check it belongs to (the ids of ``mcp-lab check``), says in one line what
went wrong, then shows the frame sent, the frame expected and the frame received, the rule quoted
from the catalogue and the fix. In a notebook only that text is shown, not a traceback into the
course's own code (and so not the hidden test that raised it).

    >>> describe_id("7"), describe_id(7), describe_id(None)
    ('"7" (a string)', '7 (a number)', 'null')
    >>> print(Failure("id-echo", 'sent id "7" (a string), got 7 (a number)').text().splitlines()[0])
    id-echo: sent id "7" (a string), got 7 (a number)
"""

from __future__ import annotations

import json
import textwrap
from typing import Any

from grader.checker.catalogue import CATALOGUE
from reference.errors import lookup

# Rules the lessons teach that are not checks of a finished server (a pure function's contract).
LESSON_RULES: dict[str, tuple[str, str]] = {
    # Not a protocol rule: the learner's file did not load, raised, hung or died before any rule
    # could be judged.
    "module": (
        "your file runs as a program of its own (a process the checks start): it must load, and each "
        "function the cell checks must return, within the check's time",
        "run the %%module cell again and read the error it shows: its last line says where; an endless "
        "loop or a read without a timeout shows as a time-out",
    ),
    "read-only-uri": (
        "SQLite URI filenames: mode=ro opens the file read-only, and every write fails",
        'open sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)',
    ),
    "parameterised-sql": (
        "never build SQL from text you were given: pass values as parameters (the ? placeholders)",
        'conn.execute("SELECT ... WHERE status = ?", (status,)): the value never becomes SQL',
    ),
    "stdio-pipes": (
        "MCP 2026-07-28, Transports > stdio: the client launches the server as a subprocess; the server "
        "reads JSON-RPC messages from stdin and writes JSON-RPC messages to stdout; stderr is for logs",
        "pass stdin=PIPE and stdout=PIPE (stderr to its own pipe, never into stdout); write bytes, read bytes",
    ),
    "talk-timeout": (
        "MCP 2026-07-28, Cancellation > Timeouts: implementations SHOULD establish timeouts for all sent requests "
        "(the course holds talk() to it: a server that never exits must not hang the caller)",
        "process.communicate(data, timeout=timeout); on subprocess.TimeoutExpired: process.kill(), "
        "process.communicate() to reap it, then raise TimeoutError",
    ),
    "list-cursor": (
        "MCP 2025-11-25, Utilities > Pagination (SHOULD, and the course holds you to it): invalid cursors "
        "SHOULD result in an error with code -32602 (Invalid params); a server that hands out no nextCursor "
        "has no valid cursor",
        "in list_tools: a cursor that is not a string, or any cursor at all (there is one page), raises "
        "RpcError(INVALID_PARAMS, ...)",
    ),
    "child-stdin": (
        "MCP 2026-07-28, Transports > stdio: the server reads JSON-RPC messages from stdin; a child process "
        "that inherits that stdin can read, and swallow, the client's next message",
        "give every child its own stdin: subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, "
        "text=True)",
    ),
    "dispatcher-wiring": (
        "the course's Dispatcher (reference/dispatch.py, a piece of this course, not of the spec): "
        "Dispatcher(methods, notifications, batches_allowed=..., no_batch=..., log=..., route=...); an "
        "argument in the wrong place serves the wrong function",
        "build the Dispatcher with keyword arguments: Dispatcher(methods, notifications, "
        "batches_allowed=..., route=route)",
    ),
    "stderr-logs": (
        "MCP 2026-07-28, Transports > stdio: the server MAY write UTF-8 strings to stderr for any logging "
        "purposes (a MAY; the course asks that what a server prints, before the descriptor swap or after it, "
        "reach stderr, and at once: a server the host ends with SIGTERM or SIGKILL, as Shutdown allows, "
        "flushes nothing)",
        "in protocol_stdout(): os.dup2(2, 1), then sys.stdout.flush(), then sys.stdout = sys.stderr",
    ),
    "framing-encode": (
        "MCP 2026-07-28, Transports > stdio: messages are delimited by newlines and MUST NOT contain "
        "embedded newlines; Transports > Messages: JSON-RPC messages MUST be UTF-8 encoded",
        'json.dumps(message, ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\\n", encoded as UTF-8',
    ),
    "framing-decode": (
        "JSON (RFC 8259) has no NaN or Infinity, and MCP 2026-07-28 messages MUST be UTF-8: anything else is a "
        "parse error",
        "decode the bytes as UTF-8 yourself, parse with json.loads(text, parse_constant=...) that raises "
        "ValueError, and let every failure surface as ValueError",
    ),
    "client-launch": (
        "MCP 2026-07-28, Transports > stdio: the client launches the MCP server as a subprocess; the server "
        "writes JSON-RPC messages to its stdout and MAY write UTF-8 strings to its stderr for logging",
        "subprocess.Popen(argv, stdin=PIPE, stdout=PIPE, stderr=PIPE, env=a copy of os.environ without "
        "PYTHONUNBUFFERED): a list of arguments, never shell=True",
    ),
    "client-ids": (
        "MCP 2026-07-28, Base Protocol > Responses: result responses MUST include the same ID as the request "
        "they correspond to; nothing says they come in the order the requests went",
        "keep every reply whose id you are not waiting for (self.early) and compare ids by value and JSON type",
    ),
    "client-handshake": (
        "MCP 2025-11-25, Lifecycle > Initialization: the initialization phase MUST be the first interaction; "
        "the client sends initialize (its protocolVersion, capabilities, clientInfo) and, after the server's "
        "result, MUST send the initialized notification",
        "send initialize with a protocolVersion, capabilities ({}) and clientInfo; return the reply's result; "
        "then send notifications/initialized (a notification: no id)",
    ),
    "client-request": (
        "MCP 2026-07-28, Base Protocol > Responses: a response carries the result of the request with the same id",
        "request() sends the request, waits for the reply with its id, and returns reply['result'] (an error "
        "reply raises ClientError)",
    ),
    "hygiene-check": (
        "MCP 2026-07-28, Transports > stdio: the server MUST NOT write anything to its stdout that is not a "
        "valid MCP message; messages are delimited by newlines: every line a host reads is one JSON-RPC message",
        "split the bytes on b'\\n' (the last piece is a line too if it is not empty); for each line: valid UTF-8, "
        "strict JSON (no NaN), one object, no \\r at its end; report 'line N: what is wrong', the first dirty "
        "line first",
    ),
    "client-notify": (
        "MCP 2026-07-28, Base Protocol > Notifications: notifications are one-way messages; the receiver MUST NOT "
        "send a response",
        "send the notification (no id) and return: never wait for a reply to it",
    ),
    "client-server-requests": (
        "MCP 2025-11-25, Utilities > Ping: the receiver MUST respond promptly with an empty response; "
        "either side may send requests and notifications (a legacy server; a 2026-07-28 one sends no requests)",
        'answer a server\'s ping with {"result": {}}, any request you do not serve with error -32601, '
        "keep notifications; then go on waiting for your own reply",
    ),
    "client-timeouts": (
        "MCP 2026-07-28, Cancellation > Timeouts: implementations SHOULD establish timeouts for all sent "
        "requests, to prevent hung connections and resource exhaustion",
        "wait on the queue with queue.get(timeout=...) and raise ClientError when the time is up or stdout has closed",
    ),
    "client-stderr": (
        "MCP 2026-07-28, Transports > stdio: the server MAY write UTF-8 strings to stderr for any logging "
        "purposes; a pipe holds about 64 KiB, and a server blocked on a full stderr pipe stops answering",
        "read the child's stderr on a thread of its own from the start, keeping only its last lines",
    ),
    "client-probe": (
        "MCP 2026-07-28, Transports > stdio > Backward Compatibility: a dual-era client SHOULD probe with "
        "server/discover first; a DiscoverResult or a recognised modern error (such as -32022) means a modern "
        "server: do not fall back to initialize; any other error, or no response within a reasonable timeout, "
        "means a legacy server: fall back to initialize. The fallback MUST NOT be keyed to one specific error code",
        "send server/discover with the _meta envelope and a timeout; on a result stay modern; on -32020, -32021 or "
        "-32022 raise ClientError; on any other error and on a timeout run initialize()",
    ),
    "client-envelope": (
        "MCP 2026-07-28, Base Protocol > _meta: client requests carry the io.modelcontextprotocol/* fields in "
        "_meta; fields marked as required (protocolVersion, clientCapabilities) MUST be included on every "
        "request, and clients SHOULD include clientInfo on every request",
        "in send_request, when self.era is 'modern', send params with _meta = the caller's _meta plus "
        "self.envelope(); a legacy connection gets no _meta",
    ),
    "client-input-required": (
        "MCP 2026-07-28, Multi Round-Trip Requests > Client Requirements: the client MUST construct the inputs "
        "requested before retrying; it MUST echo back the exact requestState, and MUST NOT include one if the "
        "result had none; the retry's JSON-RPC id MUST be different; inputResponses keys correspond to the "
        "keys in inputRequests",
        "build each retry from the original params: inputResponses = {key: on_input(key, request) for each "
        "entry of the last result's inputRequests}, requestState = that result's requestState only if it has "
        "one; send it with request() (a new id) until resultType is not input_required",
    ),
    "client-shutdown": (
        "MCP 2026-07-28, Transports > stdio > Shutdown: the client SHOULD first close the input stream to the "
        "server, wait for it to exit, and if it does not exit in a reasonable time terminate it (SIGTERM, then "
        "SIGKILL)",
        "process.stdin.close(); process.wait(grace); on TimeoutExpired process.terminate(), wait again, "
        "then process.kill(); return the exit status",
    ),
    "clinic": (
        "each clinic case is a server that breaks one rule of the checker's catalogue (mcp-lab check); "
        "your evidence is what shows it: the lines that make it break the rule, or the log line",
        "find the smallest lines that make the case answer differently from the reference, then name the "
        "rule that difference breaks: mcp-lab check's first failure is a lead to test, not the answer",
    ),
    "clinic-repair": (
        "a repair fixes the defect and breaks nothing else: mcp-lab check reports no failure on the repaired file",
        "find the lines that break the first failing check's rule, change as few lines as you can, "
        "then run the checker again",
    ),
    "own-server": (
        "stage 05's capstone is your own server: one file, the Python standard library only; it imports "
        "nothing from the course (reference, grader) and starts none of its servers",
        "paste your own pieces of stages 00 to 05 into my_server.py (open_shop, the framing, handle_line, "
        "initialize, the tool declarations, the tools and call_tool) and import only json, sys, os, sqlite3, ...",
    ),
    "inspector": (
        "the MCP Inspector (@modelcontextprotocol/inspector) is a Node.js program: its CLI starts your server, "
        "lists its tools and calls one, as a host would",
        "install Node.js 22 or newer (https://nodejs.org, or your system's package: apt install nodejs npm), "
        "then run the cell again: npx fetches the Inspector on first use (or run bench/install_corpus.sh)",
    ),
    "framing-read": (
        "MCP 2026-07-28, Transports > stdio: messages are delimited by newlines, one message per line (the spec "
        "names no byte: the course's read_frame ends a line at \\n and also accepts \\r\\n)",
        "stream.readline(); b'' means the other side closed the pipe (return None); strip the line ending",
    ),
    # Stage 10: resources and prompts.
    "resource-template": (
        "RFC 6570 level 1, as MCP 2026-07-28 Resources > Resource Templates uses it: {name} stands for one "
        "percent-encoded value, so a value is one path segment (letters, digits, - . _ ~ and %XX), never a /",
        "build a pattern from the template: re.escape for the fixed parts, (?P<name>[A-Za-z0-9._~%-]+) for each "
        "{name}; re.fullmatch the URI; unquote each value; None when it does not match",
    ),
    "resource-not-found": (
        "MCP 2026-07-28, Resources > Error Handling: if the requested resource does not exist, servers MUST "
        "return -32602 (Invalid Params) and MUST NOT return an empty contents array (MCP 2025-11-25 and before: "
        "SHOULD return -32002); the spec's example error carries the URI in data, and the course requires it; "
        "Security Considerations: servers MUST validate all resource URIs",
        "read only the URIs the server writes itself (digits with no leading 0, expand(template, ...) == uri); "
        'for anything else raise RpcError(RESOURCE_NOT_FOUND, data={"uri": uri}): the course\'s server writes it '
        "as -32602 for a 2026-07-28 request and as -32002 for a legacy one",
    ),
    "prompt-arguments": (
        "MCP 2026-07-28, Prompts > Error Handling (SHOULD): an invalid prompt name and missing required arguments "
        "are -32602 (Invalid params); prompt arguments are an object of strings (schema.ts GetPromptRequestParams)",
        "find the prompt by name, take absent or null arguments as {}, then refuse (RpcError(INVALID_PARAMS, ...)) "
        "what is not an object, a name it does not declare, a value that is not a string, a required one missing",
    ),
    # Stage 11: audited writes.
    "audit-redaction": (
        "the audit keeps what identifies an attempt, never what users wrote: ids, numbers, booleans and text "
        "of at most 40 characters are kept; a longer text is stored as its length only",
        'summary(arguments): a string longer than SHORT becomes f"<text, {len(value)} chars>", a list '
        'f"<array, {len(value)} items>", an object f"<object, {len(value)} members>"; anything else is kept',
    ),
    "audit-record": (
        "every attempt is written to audit_log in a transaction of its own, committed whatever the write did; "
        "an audit that cannot be written never changes what the client is told (it is one line on stderr)",
        "connect with mode=rw (never create a file) and isolation_level=None, CREATE TABLE IF NOT EXISTS, one "
        "INSERT of the summary as JSON, commit; catch sqlite3.Error: one line to stderr, return False",
    ),
    "write-annotations": (
        "MCP 2025-11-25, schema.ts ToolAnnotations: readOnlyHint (default false), destructiveHint (default "
        "true), idempotentHint (default false), openWorldHint (default true); a host reads them to decide what "
        "to ask its user (as untrusted hints)",
        "spell out all four: cancel_order is not read-only, destructive, idempotent, closed-world; "
        "add_order_note is not read-only, not destructive, not idempotent, closed-world",
    ),
    "writable-copy": (
        "the course's database is never written: write tools run only on a copy given with --db, a file that "
        "exists and is not the course's database, compared as files (one file has many spellings)",
        "return a reason for None, for a path that is not a file, and for one that os.path.samefile finds is "
        "reference.database.default_path(); return None for any other existing file",
    ),
    "write-transaction": (
        "SQLite in autocommit mode (isolation_level=None): each statement commits at once, and `with conn:` "
        "begins nothing; a write of several statements is BEGIN IMMEDIATE ... COMMIT, ROLLBACK on any failure",
        "transaction(conn): conn.execute('BEGIN IMMEDIATE'), yield, and on any exception conn.execute('ROLLBACK') "
        "and raise it again; otherwise conn.execute('COMMIT')",
    ),
    "write-tools": (
        "a write tool does what its description promises, or nothing: cancel a pending or paid order (2 rows: "
        "the order, the note; 0 when already cancelled), add a note (1 row); a refusal is a ToolError",
        "read the order's status first (ToolError naming the valid ids when there is none, or saying why it "
        "cannot be cancelled), then UPDATE and INSERT inside one transaction; count conn.total_changes",
    ),
    "write-audit": (
        "every write attempt is audited, also those refused before they run (writes off, bad arguments, an "
        "order that does not exist): the tool, who asked (clientInfo: the request's _meta in 2026-07-28, initialize "
        "before), the outcome, why, the rows",
        "in call_write, audit before every return and raise: 'rejected' (before it runs, or a ToolError), "
        "'failed' (any other exception), 'ok' with value['rows_changed']",
    ),
    "writes-off": (
        "write tools are off unless the server was started with --allow-writes: they are not listed, and a "
        "call to one is answered like any unknown tool (-32602), and audited as rejected",
        "when allowed is false, audit the attempt as rejected ('writes are not allowed ...'), then raise "
        'RpcError(INVALID_PARAMS, f"unknown tool {name!r}"); never run it',
    ),
    # Stage 12: Streamable HTTP (the transport's own checks are the checker's: http-session, http-origin, ...).
    "http-server": (
        "stage 12's mcp_http.py: make_server(address, token) builds the HTTP server on address (port 0: any "
        "free port), with the shop, the sessions and the token on it, and returns it without serving",
        "keep make_server as given: ThreadingHTTPServer(address, Handler) with shop, sessions, lock and token "
        "set on it, returned; main() (or the course) calls serve_forever()",
    ),
    "http-post": (
        "MCP 2025-11-25, Transports > Streamable HTTP: one MCP endpoint for POST and GET; input the server "
        "cannot accept MUST get an HTTP error status (400), its body MAY be a JSON-RPC error with no id; GET "
        "MUST get an SSE stream or 405 Method Not Allowed (RFC 9110: a 405 carries Allow)",
        "a body json.loads cannot read: fail(400, ..., code=PARSE_ERROR); a reply whose id is null: 400 with "
        'it as the body; do_GET: self.fail(405, ..., {"Allow": "POST, DELETE"})',
    ),
    "http-client": (
        "MCP 2025-11-25, Transports > Streamable HTTP: a real client POSTs each message with Accept: "
        "application/json, text/event-stream, sends back Mcp-Session-Id and MCP-Protocol-Version, and reads "
        "JSON or SSE; with a token, Authorization: Bearer on every request",
        "run the checker on your server (python mcp_http.py 127.0.0.1:8000 TOKEN, then mcp-lab check --url "
        "http://127.0.0.1:8000/mcp --header 'Authorization: Bearer TOKEN'): its first failure names the rule",
    ),
}


def describe_id(value: Any, present: bool = True) -> str:
    """An id as a learner should read it: its JSON text and its JSON type."""
    if not present:
        return "no id at all"
    if value is None:
        return "null"
    text = json.dumps(value, ensure_ascii=False)
    kind = {str: "a string", bool: "a boolean", int: "a number", float: "a number"}.get(type(value), "an object")
    if isinstance(value, list):
        kind = "an array"
    return f"{text} ({kind})"


def show(value: Any) -> str:
    """A frame as compact JSON (bytes as text), cut to a readable length."""
    if isinstance(value, bytes):
        text = value.decode("utf-8", "backslashreplace").rstrip("\n")
    elif isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        except (TypeError, ValueError):
            text = repr(value)
    return text if len(text) <= 400 else text[:400] + f"... ({len(text)} characters)"


def code_name(code: Any) -> str:
    row = lookup(code) if isinstance(code, int) and not isinstance(code, bool) else None
    return f"{code} ({row.name})" if row else json.dumps(code)


class Failure(AssertionError):
    """A test failure that explains itself; IPython shows :meth:`text` instead of a traceback."""

    cause: BaseException | None = None  # the learner's own exception, when theirs raised one

    def __init__(self, check: str, summary: str, **details: Any) -> None:
        self.check = check
        self.summary = summary
        self.details = details
        super().__init__(self.text())

    def text(self) -> str:
        # The rule, the fix and other prose are wrapped to WIDTH under their label: nbgrader's
        # Validate cuts longer lines ("..."), and the fix is the line a learner must read whole.
        # The summary and the frames (sent, expected, received) stay one line each.
        lines = [f"{self.check}: {self.summary}"]
        for key in ("sent", "expected", "received"):
            if key in self.details:
                value = self.details[key]
                values = value if isinstance(value, list) else [value]
                for i, item in enumerate(values or ["(nothing)"]):
                    label = f"{key}:" if i == 0 else ""
                    lines.append(f"  {label:<10}{item if isinstance(item, str) else show(item)}")
        for key, value in self.details.items():
            if key not in ("sent", "expected", "received", "stderr", "rule", "fix"):
                lines.extend(_labelled(key, str(value)))
        # The rule the evidence broke, where the finding names one of the check's other rules
        # (the checker's evidence carries it); else the check's own.
        rule, fix = rule_and_fix(self.check)
        rule, fix = self.details.get("rule") or rule, self.details.get("fix") or fix
        if rule:
            lines.extend(_labelled("rule", rule))
        if fix:
            lines.extend(_labelled("fix", fix))
        stderr = self.details.get("stderr")
        if stderr:
            lines.append("  stderr (last lines):")
            lines.extend(f"    {line}" for line in stderr.strip().splitlines()[-8:])
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()

    def _render_traceback_(self) -> list[str]:
        # IPython calls this instead of printing a traceback: the learner sees the lesson only.
        first, *rest = self.text().splitlines()
        return [f"\x1b[31mFailure\x1b[0m  {first}", *rest]


WIDTH = 82  # nbgrader's Validate shows 83 characters of a line (90, less its indent and "...")


def _labelled(label: str, text: str) -> list[str]:
    """``  label:   text``, wrapped to :data:`WIDTH` under the text's first column."""
    first = f"  {label + ':':<10}"
    wrapped = textwrap.wrap(
        text, WIDTH, initial_indent=first, subsequent_indent=" " * len(first), break_on_hyphens=False
    )
    return wrapped or [first.rstrip()]


def followed_rule(result: Any) -> dict[str, str]:
    """The rule and fix a checker result followed (its ``rule``), as :class:`Failure` details.

    A check's finding may follow another of its rules than the main one (``notification-silence``
    for a notification named like a request): the failure quotes that one.

    >>> from grader.checker.verdicts import Result
    >>> from grader.checker.catalogue import CATALOGUE
    >>> rule = CATALOGUE["notification-silence"].rule_named("request-named")
    >>> found = Result("notification-silence", "fail", "", {}, rule)
    >>> followed_rule(found)["rule"].startswith("JSON-RPC 2.0 section 4.1")
    True
    """
    rule = getattr(result, "rule", None)
    entry = CATALOGUE.get(getattr(result, "id", ""))
    if rule is None or entry is None:
        return {}
    return {"rule": f"{rule.source} ({rule.keyword}): {rule.text}", "fix": entry.fix_for("python", rule)}


def rule_and_fix(check: str) -> tuple[str, str]:
    if check in CATALOGUE:  # the checks of both transports (stage 12 fails with http-origin, ...)
        entry = CATALOGUE[check]
        return f"{entry.source} ({entry.keyword}): {entry.rule}", entry.fix
    return LESSON_RULES.get(check, ("", ""))


def equal(actual: Any, expected: Any, check: str, what: str) -> None:
    """``actual == expected`` with JSON types kept apart (1 is not True, 7 is not "7")."""
    if not same_json(actual, expected):
        raise Failure(check, what, expected=show(expected), received=show(actual))


def same_json(a: Any, b: Any) -> bool:
    """Equal as JSON values: types must match (a bool is not a number, an int equals its float)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def not_written(stderr: str) -> str:
    r"""The function whose NotImplementedError ends a Python traceback in ``stderr`` ("" if none does):
    a stub still as it was handed out, in a program the checks ran.

    >>> not_written('  File "server.py", line 9, in serve\n    raise NotImplementedError\nNotImplementedError')
    'serve'
    >>> not_written("ValueError: bad line")
    ''
    """
    import re

    end = stderr.rfind("NotImplementedError")
    frames = re.findall(r'File "[^"]*", line \d+, in (\w+)', stderr[: max(end, 0)])
    return frames[-1] if end >= 0 and frames else ""


def not_written_yet(name: str, stderr: str = "") -> Failure:
    """The failure for a stub ``name`` that still raises, said as stages 00 to 04 say it."""
    return Failure("module", f"{name} is not written yet (it raises NotImplementedError)", stderr=stderr)
