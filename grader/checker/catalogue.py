"""The check catalogue: every check's stable id, what must hold, the rule behind it, the fix.

Ids are a contract (other tools and tests key on them); the words may improve. Each check names
the keyword behind its main rule and where that rule is written (page and revision, or JSON-RPC
2.0 section); findings of a check under another rule (a SHOULD beside the MUST, a point where
revisions disagree) name it in ``also``. Only a MUST or a schema violation may fail a check (see
:mod:`grader.checker.severity`). Fixes are worded for Python servers, with Node and neutral wording
where the Python one would mean nothing.

    >>> CHECKS["id-echo"].holds
    'ids 0, 42, "abc", "7" come back with the same value and the same JSON type'
    >>> CHECKS["tool-names"].main.keyword
    'SHOULD'
    >>> CHECKS["exit-on-eof"].fix_for("node")
    "exit when stdin ends: process.stdin.on('end', () => process.exit(0))"

``CHECKS`` are the checks of a stdio report (every one of them, in this order), those that apply
to both transports included; ``HTTP_CHECKS`` are Streamable HTTP's own, reported only over HTTP,
where the checks in ``STDIO_ONLY`` are skipped. ``CATALOGUE`` holds them all.

    >>> CATALOGUE["http-origin"].main.label
    '[MUST] MCP 2025-11-25, Transports > Streamable HTTP > Security Warning'
    >>> sorted(set(CHECKS) & set(HTTP_CHECKS)), "exit-on-eof" in STDIO_ONLY
    ([], True)

``MODERN_CHECKS`` are the checks of MCP 2026-07-28 (the modern era, no ``initialize``) and of the
boundary between the eras; a stdio report holds them after ``CHECKS``. Every check says the era
whose sessions judge it:

    >>> CATALOGUE["initialize-result"].era, CATALOGUE["stdout-json-lines"].era, CATALOGUE["discover-result"].era
    ('legacy', 'both', 'modern')
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from .severity import Rule


@dataclass(frozen=True)
class Check:
    id: str
    holds: str  # what must hold, in one line
    keyword: str  # the main rule's keyword: MUST, SHOULD, schema, recommendation, ...
    source: str  # where the main rule is written
    rule: str  # what the rule says, in words
    fix: str  # what to change when it fails (Python wording)
    node: str = ""  # the fix for a Node server, where it differs
    neutral: str = ""  # the fix for a server in an unknown language, where it differs
    also: Mapping[str, Rule] = field(default_factory=dict)  # other rules some findings follow
    era: str = "legacy"  # the era whose sessions judge it: "legacy", "modern" or "both" (see era.py)

    @property
    def main(self) -> Rule:
        return Rule(self.keyword, self.source, self.rule)

    def rule_named(self, name: str) -> Rule:
        """``"main"`` or a key of ``also``."""
        return self.main if name == "main" else self.also[name]

    def fix_for(self, language: str, rule: Rule | None = None) -> str:
        """The fix in the wording of ``language`` ("python", "node" or "neutral"), or the fix
        of ``rule`` where that rule has its own."""
        if rule is not None and rule.fix:
            return rule.fix
        if language == "node":
            return self.node or self.neutral or self.fix
        if language == "neutral":
            return self.neutral or self.fix
        return self.fix


_STDIO = "MCP 2026-07-28, Transports > stdio (the same in 2025-11-25)"
_BASE = "MCP 2026-07-28 and 2025-11-25, Base Protocol"
_RPC = "JSON-RPC 2.0 section 5"
_M_STDIO_PAGE = "MCP 2026-07-28, Transports > stdio"
_LIFE = "MCP 2025-11-25, Lifecycle"
_TOOLS = "MCP 2025-11-25, Server Features > Tools"
_SHOP = "MCP Wire Lab shop contract (stage 04's four tools; the data in data/seed/)"
_HOSTS = "host limits and field practice"
_RESOURCES = "MCP 2025-11-25, Server Features > Resources"
_PROMPTS = "MCP 2025-11-25, Server Features > Prompts"
_NO_REPLY = Rule(
    "MUST",
    f"JSON-RPC 2.0 section 5; {_BASE} > Messages > Responses",
    "a request (not a notification) MUST get a response",
)
# Over HTTP a body the server cannot take is answered by an HTTP error status; the JSON-RPC error
# in its body is optional there, so a missing or other code in it warns (on stdio it is the answer).
_HTTP_STATUS = Rule(
    "described",
    "MCP 2025-11-25, Transports > Streamable HTTP > Sending Messages to the Server; JSON-RPC 2.0 section 5.1",
    "over HTTP, input the server cannot accept gets an HTTP error status whose body MAY be a JSON-RPC error "
    "without id; JSON-RPC 2.0 gives its code: -32700 for text that is not JSON, -32600 for JSON that is not "
    "a valid request",
    "answer with 400 and the JSON-RPC error in the body: -32700 for a body that is not JSON, -32600 for JSON "
    "that is not a valid request (a null or fractional id, no method)",
)
_UNSERVED = Rule(
    "recommendation",
    f"{_LIFE} > Capability Negotiation",
    "a declared capability whose list method answers an error misleads the client (no MUST says so)",
)

CHECKS: dict[str, Check] = {
    c.id: c
    for c in [
        Check(
            "stdout-json-lines",
            "every stdout line is exactly one JSON-RPC message (an object)",
            "MUST NOT",
            _STDIO,
            "the server MUST NOT write anything to stdout that is not a valid MCP message; "
            "messages are delimited by newlines and MUST NOT contain embedded newlines",
            "send logs, banners and debug prints to stderr (print(..., file=sys.stderr), logging with "
            "stream=sys.stderr); serialise with json.dumps(msg) and no indent=; one message per write",
            node="send logs to stderr (console.error, never console.log); serialise with JSON.stringify(msg) "
            "and no indent argument; one message per write",
            neutral="send logs, banners and debug output to stderr; serialise each message compactly (no "
            "pretty-printing) and write one message per line",
        ),
        Check(
            "stdout-silent-at-start",
            "nothing on stdout before the first request",
            "MUST",
            f"{_STDIO}; {_LIFE} > Initialization",
            "the server MUST NOT write anything to its stdout that is not a valid MCP message; in 2025-11-25 "
            "the initialization phase MUST be the first interaction between client and server, and in "
            "2026-07-28 the server writes responses and notifications of a request or a subscription, so a "
            "line before the first request answers nothing",
            "remove start-up prints (banners, 'Server started'); log them to stderr instead",
            node="remove start-up console.log calls (banners, 'Server started'); use console.error",
        ),
        Check(
            "stdout-flush",
            "each reply arrives while stdin is still open (PYTHONUNBUFFERED removed)",
            "MUST",
            "JSON-RPC 2.0 section 5; MCP 2026-07-28, Transports > stdio (the same in 2025-11-25)",
            "the server MUST reply to every request (not a notification), and writes its messages to stdout; "
            "the spec says nothing of buffers, but stdout to a pipe is block-buffered, so an unflushed reply "
            "sits in the buffer until the process exits and the client never sees it while it waits",
            "call sys.stdout.flush() (or sys.stdout.buffer.flush()) after writing every message",
            node="write each message with process.stdout.write and never buffer replies yourself",
            neutral="flush stdout after writing every message",
        ),
        Check(
            "stdout-line-ending",
            'output lines end in "\\n", not "\\r\\n"',
            "recommendation",
            f"{_STDIO}; {_HOSTS}",
            'messages are delimited by newlines; a "\\r" before it is JSON whitespace, but strict '
            "clients (Go) reject it",
            'write json.dumps(msg) + "\\n" to sys.stdout.buffer (binary: no newline translation)',
            node='write JSON.stringify(msg) + "\\n" (never os.EOL, which is "\\r\\n" on Windows)',
            neutral='end every message with "\\n" alone and write stdout in binary mode (no newline translation)',
        ),
        Check(
            "stdout-strict-json",
            "valid UTF-8, no NaN or Infinity, no lone surrogates",
            "MUST",
            f"{_STDIO}; RFC 8259",
            "JSON-RPC messages MUST be UTF-8 encoded, and the server MUST NOT write anything to its stdout "
            "that is not a valid MCP message; RFC 8259 JSON has no NaN/Infinity",
            "json.dumps(msg, allow_nan=False) and encode the text as UTF-8; replace NaN with null",
            node="JSON.stringify already writes null for NaN; write strings as UTF-8 and never split a "
            "surrogate pair when cutting text",
            neutral="serialise with a strict JSON encoder (no NaN or Infinity) and encode the text as UTF-8",
            also={
                "surrogate": Rule(
                    "recommendation",
                    "RFC 8259 section 8.2",
                    "a lone surrogate escape is valid JSON text, but receivers behave unpredictably",
                )
            },
        ),
        Check(
            "stdout-line-size",
            "no stdout line above 64 KiB (warning) or 10 MiB (a host's hard limit)",
            "recommendation",
            _HOSTS,
            "asyncio readers stop at 64 KiB per line by default, the TypeScript SDK at 10 MiB; the spec sets no limit",
            "keep replies small: paginate lists (nextCursor), cut long texts, return a resource link",
        ),
        Check(
            "encoding-utf8",
            "non-ASCII text round-trips byte-exact (for Python, also under PYTHONIOENCODING=cp1252)",
            "MUST",
            f"{_STDIO}; MCP 2026-07-28, Transports > Messages; MCP 2025-11-25, Transports",
            "JSON-RPC messages MUST be UTF-8 encoded (the words of 2026-07-28 and of 2025-11-25, as of every "
            "revision since 2025-03-26)",
            "read sys.stdin.buffer and write sys.stdout.buffer, decoding and encoding UTF-8 yourself; "
            "never rely on the platform's text encoding (cp1252 on many Windows machines)",
            node="read stdin as UTF-8 (process.stdin.setEncoding('utf8') or a TextDecoder that keeps "
            "partial characters across chunks) and write strings, which Node encodes as UTF-8",
            neutral="read and write stdin/stdout as bytes, decoding and encoding UTF-8 yourself; never rely "
            "on the platform's text encoding",
        ),
        Check(
            "envelope",
            'every message has jsonrpc "2.0"; a response has exactly one of result/error; an error '
            "has an integer code and a string message",
            "MUST",
            f"{_BASE} > Messages; {_RPC}",
            "all messages between MCP clients and servers MUST follow the JSON-RPC 2.0 specification; a "
            "response has result on success and error on error, never both (JSON-RPC 2.0 section 5); error "
            "codes MUST be integers",
            'build replies as {"jsonrpc": "2.0", "id": id, "result": r} or {"jsonrpc": "2.0", "id": id, '
            '"error": {"code": int, "message": str}}; never both, never "error": null',
            also={
                "error-id": Rule(
                    "revisions disagree",
                    "MCP 2025-06-18 schema.ts JSONRPCError (id required); MCP 2025-11-25 schema.ts "
                    "JSONRPCErrorResponse (id optional); JSON-RPC 2.0 section 5 (id null when unknown)",
                    "an error response carries the request's id; when the id could not be read, JSON-RPC "
                    "2.0 says null, MCP up to 2025-06-18 requires an id, 2025-11-25 lets it be left out",
                )
            },
        ),
        Check(
            "id-echo",
            'ids 0, 42, "abc", "7" come back with the same value and the same JSON type',
            "MUST",
            f"{_BASE} > Messages > Responses",
            "result responses (and error responses, where the id could be read) MUST include the same ID as "
            "the request they correspond to",
            "copy request['id'] into the reply unchanged: no int(), no str(), no `or`-defaults (0 is a valid id)",
            node="copy msg.id into the reply unchanged: no Number(), no String(), no `||` defaults (0 is a valid id)",
            neutral="copy the request's id into the reply unchanged, with its JSON type (0 is a valid id)",
            also={
                "no-reply": replace(
                    _NO_REPLY,
                    fix='a message with an "id" member is a request, whatever the id (0 and "" too): test '
                    'for a notification with `"id" not in msg`, never `if not msg.get("id")`',
                )
            },
        ),
        Check(
            "notification-silence",
            "no reply to notifications (initialized, unknown ones, cancelled, and ones named like requests: "
            "ping, tools/list), and the server keeps serving after them",
            "MUST NOT",
            f"{_BASE} > Messages > Notifications; JSON-RPC 2.0 section 4.1",
            "the receiver of a notification MUST NOT send a response",
            'a message without an "id" member is a notification: handle it (or ignore it) and write nothing, '
            'not even an error; test with `"id" in msg`',
            node="a message without an id member is a notification: handle or ignore it and write nothing; "
            "test with `'id' in msg`, not `msg.id == null`",
            neutral="a message without an id member is a notification: handle or ignore it and write nothing, "
            "not even an error",
            also={
                "request-named": Rule(
                    "MUST NOT",
                    "JSON-RPC 2.0 section 4.1; MCP 2025-11-25, Base Protocol > Notifications",
                    "a request object without an id member is a notification, whatever its method (ping, "
                    "tools/list, one the server does not know): the server MUST NOT reply to it",
                    'decide "is it a notification?" with `"id" not in msg` before anything reads msg["id"], '
                    'whatever the method: {"method": "ping"} with no id gets no reply, and no KeyError',
                ),
                "response": Rule(
                    "described",
                    "MCP 2026-07-28 and 2025-11-25, Base Protocol > Responses; MCP 2026-07-28, Transports > stdio "
                    "> Sending Messages",
                    "responses are sent in reply to requests, and a response is not a request: nothing answers it "
                    "(up to 2025-11-25 a client's response answers a request the server sent; in 2026-07-28 the "
                    "client MUST NOT write responses at all)",
                    'a message with "result" or "error" and no "method" is a response: match it to a request '
                    "you sent, or drop it; never reply to it, not even with an error",
                ),
            },
        ),
        Check(
            "parse-error",
            "a line that is not JSON gets -32700 with id null (or, from 2025-11-25, no id)",
            "MUST",
            f"JSON-RPC 2.0 sections 5 and 5.1; {_BASE} > Messages > Error Responses",
            "the server MUST reply to a request; a line that cannot be parsed gets Parse error -32700, "
            "with id null when the id could not be read",
            "wrap json.loads in try/except and answer "
            '{"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}}',
            node="wrap JSON.parse in try/catch and answer "
            '{"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}}',
            neutral="catch the JSON parser's error and answer "
            '{"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}}',
            also={
                "lenient": Rule(
                    "recommendation",
                    "RFC 8259 section 8.1; JSON-RPC 2.0 section 5.1",
                    "bytes that are not UTF-8 are not JSON text (-32700); a server that decodes them leniently "
                    "and answers another error still answers, so no MUST is broken",
                    "decode each line as strict UTF-8 and answer a failure with -32700",
                ),
                "http-status": _HTTP_STATUS,
            },
        ),
        Check(
            "invalid-request",
            "JSON that is not a valid request (no method, null id, float id) gets -32600",
            "MUST",
            f"JSON-RPC 2.0 sections 5 and 5.1; {_BASE} > Messages > Requests",
            "the server MUST reply to a request; JSON that is not a valid Request object gets Invalid "
            "Request -32600; MCP requests MUST include a string or integer ID, and the ID MUST NOT be null",
            "validate the envelope before dispatching: method must be a string; an id present must be a "
            "string or an integer",
            also={
                "http-status": _HTTP_STATUS,
                "params": Rule(
                    "described",
                    "MCP 2026-07-28 schema.ts Request (params is an object); JSON-RPC 2.0 section 5.1",
                    "an MCP request's params, when present, are an object; the spec names no code for params of "
                    "another type: the course's server answers -32602 (Invalid params, JSON-RPC's code for invalid "
                    "method parameters), the request itself being readable",
                    "check params before calling the handler: present and not a dict is error -32602, with the id",
                ),
            },
        ),
        Check(
            "method-not-found",
            "an unknown method gets -32601",
            "schema",
            f"{_RPC}.1 (pre-defined codes); MCP 2026-07-28 and 2025-11-25 schema.ts METHOD_NOT_FOUND",
            "-32601 is the code defined for a method that does not exist",
            "answer unknown methods with code -32601 (not -32602, not silence)",
        ),
        Check(
            "survives-bad-input",
            "after every bad input the server still answers ping",
            "MUST",
            "JSON-RPC 2.0 section 5; MCP 2025-11-25, Utilities > Ping; MCP 2026-07-28, Key Changes > Major changes 5",
            "the server MUST reply to every request: after a bad line the checker asks again (ping, whose receiver "
            "MUST respond promptly, in 2025-11-25; server/discover in 2026-07-28, which removed ping), and a "
            "server that died on the bad line answers nothing",
            "catch errors per line and keep reading; never let one message end the loop",
        ),
        Check(
            "initialize-result",
            "initialize returns protocolVersion, a capabilities object, serverInfo with name and version",
            "MUST",
            f"{_LIFE} > Initialization; MCP 2025-11-25 schema.ts InitializeResult",
            "the server MUST respond with its own capabilities and information",
            'return {"protocolVersion": ..., "capabilities": {...}, "serverInfo": {"name": ..., "version": ...}}',
            also={
                "schema": Rule(
                    "schema",
                    "MCP 2025-11-25 schema.ts InitializeResult",
                    "protocolVersion, capabilities and serverInfo {name, version} are required",
                )
            },
        ),
        Check(
            "version-negotiation",
            "a supported requested version is echoed; an unknown one gets a version the server supports",
            "MUST",
            f"{_LIFE} > Version Negotiation",
            "if the server supports the requested version it MUST respond with the same version, otherwise "
            "with another version it supports (SHOULD be its latest)",
            "keep a list of supported revisions; answer the requested one if it is in the list, else your latest",
            also={
                "latest": Rule(
                    "SHOULD",
                    f"{_LIFE} > Version Negotiation",
                    "an unsupported proposal is answered with another version, which SHOULD be the latest",
                )
            },
        ),
        Check(
            "capabilities-match",
            "tools declared if and only if tools/list is served (likewise prompts and resources)",
            "MUST",
            f"{_TOOLS} > Capabilities; {_LIFE} > Capability Negotiation",
            "servers that support tools MUST declare the tools capability (likewise prompts and resources)",
            'declare "capabilities": {"tools": {}} when you serve tools/list; declare nothing you do not serve',
            also={
                "unserved": Rule(
                    "recommendation",
                    f"{_LIFE} > Capability Negotiation",
                    "a declared capability that is not served misleads the client (no MUST says so)",
                )
            },
        ),
        Check(
            "ping",
            "ping gets an empty result {}",
            "MUST",
            "MCP 2025-11-25, Utilities > Ping",
            "the receiver MUST respond promptly with an empty response",
            'answer {"jsonrpc": "2.0", "id": id, "result": {}}, before and after initialize',
        ),
        Check(
            "startup-time",
            "the initialize reply comes within 1.5 s on a warm start (a warning past it)",
            "recommendation",
            _HOSTS,
            "hosts time the start: Cline allows 1.5 s, Codex 10 s, others up to 60 s; the spec sets no limit",
            "read stdin first and answer initialize at once; do heavy work lazily, on the first tool call",
        ),
        Check(
            "no-early-server-requests",
            "the server sends no requests of its own before notifications/initialized",
            "SHOULD NOT",
            f"{_LIFE} > Initialization",
            "the server SHOULD NOT send requests other than pings and logging before receiving the "
            "initialized notification",
            "wait for notifications/initialized (and a declared client capability) before roots/list, "
            "sampling or elicitation; never block on the answer",
        ),
        Check(
            "stderr-volume",
            "stderr is drained and measured; above 64 KiB during the handshake is a warning",
            "recommendation",
            f"{_STDIO}; {_HOSTS}",
            "the server MAY write logs to stderr; hosts that do not drain it deadlock when the pipe (4-64 KiB) fills",
            "log less at start-up (INFO, not DEBUG), or log to a file",
        ),
        Check(
            "exit-on-eof",
            "after stdin closes the process exits (within 2 s, longer for a slow starter, or once the work "
            "in flight ends), status 0",
            "SHOULD",
            f"{_M_STDIO_PAGE} > Shutdown; {_LIFE} > Shutdown > stdio",
            "servers SHOULD exit promptly when their standard input is closed or reads return end-of-file "
            "(2026-07-28); in both revisions the client SHOULD shut down by closing the server's input stream "
            "and waiting for it to exit, then terminate it: a server that does not exit at end of input is killed",
            "end the loop when readline() returns b'' (for line in sys.stdin.buffer ends by itself) and "
            "return normally",
            node="exit when stdin ends: process.stdin.on('end', () => process.exit(0))",
            neutral="leave the read loop at end of input (a read that returns nothing) and exit with status 0",
        ),
        Check(
            "tools-list",
            'tools/list returns {"tools": [...]}; every inputSchema is type "object" and a valid JSON Schema',
            "schema",
            f"{_TOOLS} > Tool; MCP 2026-07-28 and 2025-11-25 schema.ts Tool.inputSchema",
            'inputSchema MUST be a valid JSON Schema object, with type "object"',
            'give every tool "inputSchema": {"type": "object", "properties": {...}} (no parameters: '
            '{"type": "object", "additionalProperties": false})',
        ),
        Check(
            "tool-names",
            "tool names match ^[A-Za-z0-9_-]{1,64}$ and are unique",
            "SHOULD",
            "MCP 2026-07-28 and 2025-11-25, Server Features > Tools > Tool Names",
            "names SHOULD be 1-128 characters of A-Za-z0-9_.- and SHOULD be unique within a server; many "
            "hosts and model APIs accept only ^[A-Za-z0-9_-]{1,64}$",
            "rename tools to letters, digits, _ and -, at most 64 characters, each name once",
            also={
                "hosts": Rule(
                    "recommendation",
                    _HOSTS,
                    "every name keeps to the spec's characters and length (the dot is one from 2025-11-25), but "
                    "many hosts and model APIs accept only ^[A-Za-z0-9_-]{1,64}$ and refuse the whole tool list",
                )
            },
        ),
        Check(
            "tools-call-result",
            "results are {content: [typed items], isError?}; stdout stays clean during calls",
            "schema",
            f"{_TOOLS} > Tool Result; MCP 2026-07-28 and 2025-11-25 schema.ts CallToolResult",
            "content is a list of items with a type (text, image, audio, resource_link, resource)",
            'return {"content": [{"type": "text", "text": "..."}]}: a list of typed items, never a bare string',
            node='return {content: [{type: "text", text: "..."}]}: a list of typed items, never a bare string',
            neutral='return {"content": [{"type": "text", "text": "..."}]}: a list of typed items, never a bare string',
            also={
                "stdout": Rule(
                    "MUST NOT",
                    _STDIO,
                    "nothing but MCP messages on stdout, also during tool calls",
                    "log to stderr, and keep child processes off your stdout: give each its own stdout pipe and "
                    "no stdin (Python: stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)",
                ),
                "no-reply": _NO_REPLY,
                "slow": Rule(
                    "SHOULD",
                    f"{_LIFE} > Timeouts",
                    "the spec bounds no tool's run time; a client that gives up SHOULD send "
                    "notifications/cancelled and stop waiting",
                    "answer quickly, or report progress (notifications/progress) and stop work on "
                    "notifications/cancelled; a longer --call-timeout lets the checker wait",
                ),
            },
        ),
        Check(
            "unknown-tool",
            "calling a tool that does not exist gets a protocol error (the spec's example: -32602)",
            "described",
            f"{_TOOLS} > Error Handling (2025-06-18 and 2025-11-25)",
            "unknown tools are listed under protocol errors, with no MUST; the spec's example uses -32602",
            "answer tools/call with an unknown name with a JSON-RPC error, code -32602, naming the tool",
            also={"no-reply": _NO_REPLY},
        ),
        Check(
            "tool-error-kind",
            "arguments that break the inputSchema are refused: isError (2025-11-25), isError or -32602 (older)",
            "MUST",
            f"{_TOOLS} > Security Considerations (2025-06-18 and 2025-11-25)",
            "servers MUST validate all tool inputs (a list item under Security Considerations): arguments that "
            "break the inputSchema never succeed",
            "validate arguments against the inputSchema; answer an isError result whose text says what is "
            "wrong (2025-11-25), or -32602 for sessions on older revisions",
            also={
                "kind": Rule(
                    "revisions disagree",
                    f"{_TOOLS} > Error Handling (2025-06-18: invalid arguments under protocol errors and "
                    "invalid input under tool execution errors; 2025-11-25, SEP-1303: input validation "
                    "errors are tool execution errors)",
                    "no MUST either way: 2025-11-25 calls its choice a clarification",
                ),
                "no-reply": _NO_REPLY,
            },
        ),
        Check(
            "shop-contract",
            "(shop servers) the tool set and answers match the course database; an unknown status is isError",
            "MUST",
            f"{_SHOP}; {_TOOLS} > Error Handling for the unknown status",
            "a shop server declares stage 04's four tools (a title, a description a model can act on, a "
            "described argument each, schemas that take exactly the shop's arguments, the read-only "
            "annotations) and answers from the course database; an unknown status is a tool execution error",
            "declare the four tools as stage 04 describes them; answer from the course database with "
            "parameterised queries; an unknown status is a tool execution error (isError: true) whose text "
            "lists the valid statuses",
        ),
        Check(
            "shop-read-only",
            "(shop servers) no tool call can change the database",
            "MUST",
            _SHOP,
            "the database is opened read-only and no tool call changes it",
            "open the database with sqlite3.connect('file:PATH?mode=ro', uri=True) and use ? placeholders",
        ),
        Check(
            "structured-output",
            "where a tool declares an outputSchema, its successful results carry structuredContent that "
            "conforms to it, and the same JSON as text (sessions on 2025-06-18 or later)",
            "MUST",
            f"{_TOOLS} > Output Schema (from 2025-06-18)",
            "if an output schema is provided, servers MUST provide structured results that conform to it",
            'return {"content": [{"type": "text", "text": json.dumps(value)}], "structuredContent": value} '
            "with value a JSON object that fits the outputSchema (check it with jsonschema); write the schema "
            "from what the tool really returns (optional members not required, null where it can be null); "
            "leave both out for sessions on 2025-03-26 and 2024-11-05",
            node='return {content: [{type: "text", text: JSON.stringify(value)}], structuredContent: value} '
            "with value an object that fits the outputSchema; leave both out for sessions before 2025-06-18",
            neutral="return the value as structuredContent (a JSON object that fits the outputSchema) and the "
            "same JSON as a text block; leave both out for sessions before 2025-06-18",
            also={
                "text-block": Rule(
                    "SHOULD",
                    f"{_TOOLS} > Structured Content (from 2025-06-18)",
                    "a tool that returns structured content SHOULD also return the serialized JSON in a text block",
                )
            },
        ),
        Check(
            "resources-list",
            "(servers that declare resources) resources/list gives resources with a uri and a name; "
            "resources/templates/list, where served, templates with a uriTemplate and a name",
            "schema",
            f"{_RESOURCES} > Listing Resources, Resource Templates; MCP 2025-11-25 schema.ts ListResourcesResult",
            "Resource requires uri and name; ResourceTemplate requires uriTemplate and name",
            'return {"resources": [{"uri": "shop://schema", "name": "schema", "mimeType": "..."}]} and '
            '{"resourceTemplates": [{"uriTemplate": "shop://orders/{order_id}", "name": "order"}]}',
            also={"no-reply": _NO_REPLY, "unserved": _UNSERVED},
        ),
        Check(
            "resources-read",
            "resources/read of a listed resource gives contents with a uri and text or base64 blob; "
            "an unknown URI gets -32002 (Resource not found)",
            "schema",
            f"{_RESOURCES} > Reading Resources; MCP 2025-11-25 schema.ts ReadResourceResult",
            "every item of contents has a uri and either a text or a blob (base64) string",
            'return {"contents": [{"uri": uri, "mimeType": "...", "text": "..."}]} (binary: "blob" in base64); '
            'answer a URI you do not have with {"code": -32002, "message": "Resource not found", "data": {"uri": uri}}',
            also={
                "no-reply": _NO_REPLY,
                "not-found": Rule(
                    "SHOULD",
                    f"{_RESOURCES} > Error Handling",
                    "servers SHOULD return standard JSON-RPC errors: resource not found is -32002",
                ),
                "listed": Rule(
                    "described",
                    f"{_RESOURCES} > Reading Resources",
                    "a client reads the resources the server lists; one that cannot be read misleads it",
                    "serve resources/read for every URI resources/list gives (or list only what can be read)",
                ),
                "blob": Rule(
                    "MUST",
                    f"{_RESOURCES} > Security Considerations; MCP 2025-11-25 schema.ts BlobResourceContents",
                    "binary data MUST be properly encoded; the schema's blob is a base64-encoded string",
                ),
            },
        ),
        Check(
            "prompts-list",
            "(servers that declare prompts) prompts/list gives prompts with a name, and arguments with a name",
            "schema",
            f"{_PROMPTS} > Listing Prompts; MCP 2025-11-25 schema.ts ListPromptsResult, Prompt",
            "Prompt requires name; each PromptArgument requires name (required is a boolean)",
            'return {"prompts": [{"name": "summarise_order", "arguments": [{"name": "order_id", "required": true}]}]}',
            also={"no-reply": _NO_REPLY, "unserved": _UNSERVED},
        ),
        Check(
            "prompts-get",
            "prompts/get gives messages, each with a role (user or assistant) and a typed content block; "
            "an unknown prompt and a missing required argument get -32602",
            "schema",
            f"{_PROMPTS} > Getting a Prompt; MCP 2025-11-25 schema.ts GetPromptResult, PromptMessage",
            'GetPromptResult requires messages; each PromptMessage has a role ("user" or "assistant") and content, '
            "a content block with a type",
            'return {"messages": [{"role": "user", "content": {"type": "text", "text": "..."}}]}; answer an '
            "unknown prompt or a missing required argument with -32602 (Invalid params)",
            also={
                "no-reply": _NO_REPLY,
                "errors": Rule(
                    "SHOULD",
                    f"{_PROMPTS} > Error Handling",
                    "servers SHOULD return -32602 (Invalid params) for an invalid prompt name and for missing "
                    "required arguments",
                ),
            },
        ),
    ]
}

# Checks that need a process of the server's own and its stdio: skipped over HTTP ("stdio only").
STDIO_ONLY = frozenset(
    {
        "stdout-json-lines",
        "stdout-silent-at-start",
        "stdout-flush",
        "stdout-line-ending",
        "stdout-strict-json",
        "stdout-line-size",
        "startup-time",
        "stderr-volume",
        "exit-on-eof",
    }
)

_HTTP = "MCP 2025-11-25, Transports > Streamable HTTP"
_M_HTTP_PAGE = "MCP 2026-07-28, Transports > Streamable HTTP"
_MH = "MCP 2026-07-28"
_M_HTTP = f"{_MH}, Transports > Streamable HTTP"
_MH_SIX = "server/discover, tools/list, prompts/list, resources/list, resources/templates/list, resources/read"
HTTP_CHECKS: dict[str, Check] = {
    c.id: c
    for c in [
        Check(
            "http-session",
            "a session id issued with initialize is visible ASCII and then required: 400 without it, 404 once "
            "the session is ended (DELETE) or for an id never issued",
            "MUST",
            f"{_HTTP} > Session Management",
            "a session id MUST only contain visible ASCII (0x21-0x7E); once the server ends a session it MUST "
            "answer requests carrying its id with 404 Not Found",
            "keep the ids issued at initialize in a table and look up every request's Mcp-Session-Id: absent, "
            "400; not in the table, 404; DELETE removes it (204), so that the id then gets 404",
            also={
                "missing": Rule(
                    "SHOULD",
                    f"{_HTTP} > Session Management",
                    "servers that require a session id SHOULD answer requests without one (other than "
                    "initialize) with 400 Bad Request",
                ),
                "unknown": Rule(
                    "described",
                    f"{_HTTP} > Session Management",
                    "an id the server never issued names no session: the spec's answer for a session that is "
                    "gone is 404, which tells the client to initialize again",
                ),
                "no-content": Rule(
                    "MUST NOT",
                    "RFC 9110 sections 8.6 and 15.3.5 (204 No Content)",
                    "a 204 response has no content: a server MUST NOT send a Content-Length header field in a "
                    "response with status 204, nor a body after its headers",
                    "answer DELETE with 204 and no Content-Length and no body (or with 200 and a body of its own); "
                    "in a reply() helper: send Content-Length and write the body only when the status is not 204",
                ),
            },
        ),
        Check(
            "http-protocol-version",
            "a request with an unsupported MCP-Protocol-Version header gets 400",
            "MUST",
            f"{_HTTP} > Protocol Version Header",
            "a server that receives a request with an invalid or unsupported MCP-Protocol-Version MUST respond "
            "with 400 Bad Request",
            "read MCP-Protocol-Version on every request after initialize: a revision you do not support gets 400; "
            "no header: assume the negotiated revision (the spec's fallback is 2025-03-26)",
        ),
        Check(
            "http-origin",
            "a request with a foreign Origin gets 403 (DNS rebinding)",
            "MUST",
            f"{_HTTP} > Security Warning",
            "servers MUST validate the Origin header of every request; a present and invalid Origin MUST get "
            "403 Forbidden (a web page could otherwise reach a local server through DNS rebinding)",
            "refuse with 403 every Origin you do not serve (for a server on this machine: anything but "
            "http(s)://localhost, 127.0.0.1 or [::1]); a request without Origin does not come from a browser",
        ),
        Check(
            "http-notification-202",
            "a POSTed notification or response gets 202 Accepted and no body (or an error status)",
            "MUST",
            f"{_HTTP} > Sending Messages to the Server",
            "for a notification or a response the server accepts it MUST return 202 Accepted with no body; one "
            "it cannot accept gets an HTTP error status",
            "answer a POSTed notification or response with 202 and an empty body (Content-Length: 0), whatever "
            "the handler returned; never serialise its return value",
        ),
        Check(
            "http-content-type",
            "a POSTed request is answered as application/json (one JSON object) or text/event-stream",
            "MUST",
            f"{_HTTP} > Sending Messages to the Server; {_M_HTTP_PAGE} > Sending Messages",
            "for a request the server MUST return either Content-Type: text/event-stream (an SSE stream) or "
            "Content-Type: application/json (one JSON object)",
            "send the JSON-RPC response as the body with Content-Type: application/json, or an SSE stream with "
            "Content-Type: text/event-stream",
            era="both",  # 2026-07-28 says the same (Sending Messages): both eras' replies are judged
        ),
        Check(
            "http-sse",
            "an SSE stream is well-formed: each event ends with a blank line and its data is one JSON-RPC "
            "message; the request's response comes in it",
            "MUST",
            f"{_HTTP} (SSE streams); {_M_HTTP_PAGE} > Receiving Messages; WHATWG HTML, Server-sent events > "
            "Interpreting an event stream",
            "a text/event-stream is events of field lines, each event ended by a blank line; a client joins an "
            "event's data lines, reads it as one JSON-RPC message and drops an event the stream ends inside; "
            "the request MUST get its response",
            "write each message as 'event: message\\ndata: ' + json.dumps(msg) + '\\n\\n': compact JSON on "
            "one data line (no indent=), a blank line after every event",
            era="both",
        ),
        Check(
            "http-auth",
            "(with --header 'Authorization: ...') a request without it, or with a wrong token, gets 401 with "
            "a WWW-Authenticate challenge",
            "MUST",
            "MCP 2025-11-25, Authorization > Access Token Usage > Token Handling, Error Handling; RFC 9110 section "
            "15.5.2",
            "invalid or expired tokens MUST receive a 401 response, and 401 is the status for authorization "
            "required; a 401 MUST carry a WWW-Authenticate header (RFC 9110)",
            "check the Authorization header of every request before anything else: missing or wrong, answer "
            '401 with WWW-Authenticate: Bearer realm="..." (OAuth servers add resource_metadata)',
            also={
                "none": Rule(
                    "SHOULD",
                    f"{_HTTP} > Security Warning",
                    "servers SHOULD implement proper authentication for all connections; this one answered "
                    "without the credentials given to the checker",
                    "require the credentials on every request (or, if the server is meant to be open, check it "
                    "without --header Authorization)",
                )
            },
        ),
        # The modern era's Streamable HTTP (2026-07-28): no session, the routing headers, the statuses.
        Check(
            "http-modern-headers",
            "(2026-07-28) a POST without MCP-Protocol-Version, Mcp-Method or (tools/call, resources/read) "
            "Mcp-Name, or with one that disagrees with the body, gets 400 with -32020; a =?base64?...?= "
            "Mcp-Name is decoded and served",
            "MUST",
            f"{_M_HTTP} > Request Metadata > Server Validation; Value Encoding",
            "servers that process the body MUST reject a request whose required headers are missing or disagree "
            "with the body, with 400 Bad Request and a JSON-RPC error -32020 (HeaderMismatch); they MUST "
            "decode Base64-encoded values before comparing",
            "before dispatching a 2026-07-28 POST, compare MCP-Protocol-Version with _meta's version, Mcp-Method "
            "with the method and Mcp-Name (decoded when it is =?base64?...?=) with params.name or params.uri; "
            'any missing or different: 400 with {"code": -32020, "message": "Header mismatch: ..."}',
            also={
                "routed": Rule(
                    "described",
                    f"{_M_HTTP} > Protocol Version Header; {_MH}, Versioning > Backward Compatibility",
                    "a dual-era server may route a request by its MCP-Protocol-Version header: a 2025 header takes "
                    "it to the legacy transport, which refuses it (400) by that revision's rules instead of -32020",
                    "compare the header with the body's _meta before routing: a modern body under a 2025 header is "
                    "a header mismatch (400, -32020)",
                )
            },
            era="modern",
        ),
        Check(
            "http-modern-status",
            "(2026-07-28) -32602 and -32022 come with 400, an unknown method with 404 and -32601, a foreign Origin "
            "with 403, a notification with 202 and no body (or an error status); GET and DELETE get 405",
            "MUST",
            f"{_M_HTTP} > Protocol Version Header, Sending Messages, Security & Endpoint; {_MH}, Base Protocol > "
            "General fields",
            "on HTTP a malformed envelope MUST get 400, an unsupported version 400 with -32022, a method the "
            "server does not implement 404 with -32601, an invalid Origin 403; an accepted notification MUST get "
            "202 with no body",
            "map the JSON-RPC error to the HTTP status: -32602, -32020, -32021 and -32022 are 400, -32601 is 404; "
            "answer an accepted notification with 202 and an empty body; a foreign Origin with 403 (modern requests "
            "too); GET and DELETE with 405",
            also={
                "get-delete": Rule(
                    "SHOULD",
                    f"{_M_HTTP} > Backward Compatibility > Earlier Streamable HTTP Revisions",
                    "a server that supports only this revision SHOULD answer GET or DELETE to the MCP endpoint with "
                    "405 Method Not Allowed (2026-07-28 has no GET stream and no session to end)",
                    "answer GET and DELETE carrying MCP-Protocol-Version: 2026-07-28 with 405 and Allow: POST",
                )
            },
            era="modern",
        ),
        Check(
            "http-modern-no-session",
            "(2026-07-28) no response carries Mcp-Session-Id; a request with a stale one is served as if it had none",
            "SHOULD",
            f"{_M_HTTP} > Backward Compatibility > Earlier Streamable HTTP Revisions",
            "2026-07-28 has no sessions: a server SHOULD ignore an Mcp-Session-Id header on a request, and not "
            "mint or echo session ids",
            "serve every 2026-07-28 POST on its own: never set Mcp-Session-Id in its response, and do not look "
            "the header up (a stale one from a legacy session is ignored, not 404)",
            era="modern",
        ),
        Check(
            "http-modern-result",
            "(2026-07-28) over HTTP, every result carries resultType, the six cacheable ones ttlMs and cacheScope, "
            "and server/discover its required fields",
            "MUST",
            f"{_MH}, Base Protocol > Messages > Responses > Result Responses > ResultType; {_MH}, Server Features > "
            "Utilities > Caching; schema.ts DiscoverResult",
            "the result MUST include a resultType field; servers MUST include caching hints on complete results of "
            f"{_MH_SIX}; DiscoverResult requires supportedVersions and capabilities",
            'put "resultType": "complete" in every result of a 2026-07-28 request, and "ttlMs" (>= 0) and '
            '"cacheScope" ("public" or "private") in the six cacheable ones; implement server/discover',
            era="modern",
        ),
    ]
}

# Checks of CHECKS that the modern session judges too (the stdout rules over every process's
# lines, ids, notifications and bad input, the tool list and calls under 2026-07-28, the exit at
# end of input); the rest are judged in the legacy sessions only.
BOTH_ERAS = frozenset(
    {
        "stdout-json-lines",
        "stdout-silent-at-start",
        "stdout-flush",
        "stdout-line-ending",
        "stdout-strict-json",
        "stdout-line-size",
        "envelope",
        "id-echo",
        "notification-silence",
        "parse-error",
        "invalid-request",
        "method-not-found",
        "survives-bad-input",
        "exit-on-eof",
        "tools-list",
        "tool-names",
        "tools-call-result",
    }
)
CHECKS = {key: replace(check, era="both") if key in BOTH_ERAS else check for key, check in CHECKS.items()}

_MODERN = "MCP 2026-07-28"
_M_BASE = f"{_MODERN}, Base Protocol"
_M_STDIO = f"{_MODERN}, Transports > stdio"
_M_VERSIONS = f"{_MODERN}, Versioning"
_M_MRTR = f"{_MODERN}, Base Protocol > Patterns > Multi Round-Trip Requests > Basic Workflow"
_SIX = "server/discover, tools/list, prompts/list, resources/list, resources/templates/list, resources/read"
MODERN_CHECKS: dict[str, Check] = {
    c.id: c
    for c in [
        Check(
            "era-probe",
            "a server/discover probe sent first gets an answer at once: a DiscoverResult or a modern error "
            "(a modern server), any error (a legacy one), never silence",
            "described",
            f"{_M_STDIO} > Backward Compatibility",
            "a dual-era client probes with server/discover first and falls back to initialize on any other "
            "error or after a timeout; legacy servers answer with an error or not at all (no keyword binds "
            "them), and silence makes every dual-era client wait out its timeout before it connects",
            "answer every request before initialize at once, with an error if nothing else (e.g. -32601 for "
            "server/discover, or -32600 'initialize first'); never ignore it",
            era="both",
        ),
        Check(
            "discover-result",
            "server/discover returns supportedVersions (strings, 2026-07-28 among them) and a capabilities "
            "object, and the server's name and version in _meta",
            "MUST",
            f"{_MODERN}, Server Features > Discovery; schema.ts DiscoverResult",
            "servers MUST implement server/discover; DiscoverResult requires supportedVersions and capabilities",
            'answer server/discover with {"resultType": "complete", "supportedVersions": ["2026-07-28"], '
            '"capabilities": {...}, "ttlMs": 300000, "cacheScope": "public", "_meta": '
            '{"io.modelcontextprotocol/serverInfo": {"name": ..., "version": ...}}}',
            also={
                "server-info": Rule(
                    "SHOULD",
                    f"{_MODERN}, Server Features > Discovery > Data Types > DiscoverResult",
                    "servers SHOULD include _meta['io.modelcontextprotocol/serverInfo'] (name and version)",
                    'add "_meta": {"io.modelcontextprotocol/serverInfo": {"name": ..., "version": ...}}',
                )
            },
            era="modern",
        ),
        Check(
            "modern-result-type",
            'every modern result carries resultType: "complete" (or "input_required" where allowed)',
            "MUST",
            f"{_M_BASE} > Messages > Responses > Result Responses > ResultType; schema.ts Result",
            "the result MUST include a resultType field; a value the client does not recognise MUST be "
            "considered invalid",
            'put "resultType": "complete" in every result of a request with the 2026-07-28 _meta (an empty '
            'result is {"resultType": "complete"}); never in a legacy session\'s results',
            era="modern",
        ),
        Check(
            "modern-cacheable",
            f"complete results of {_SIX} carry ttlMs (an integer >= 0) and cacheScope (public or private)",
            "MUST",
            f"{_MODERN}, Server Features > Utilities > Caching; schema.ts CacheableResult",
            "servers MUST include caching hints on complete results of these six operations, and MUST "
            "provide a ttlMs value that is >= 0",
            'add "ttlMs": 300000 (0 for data that may change at any moment) and "cacheScope": "public" '
            '("private" for per-user data) to those six results; none on input_required results',
            era="modern",
        ),
        Check(
            "modern-envelope-errors",
            "a modern request without params._meta, or whose _meta lacks the protocol version or the client "
            "capabilities, gets -32602",
            "MUST",
            f"{_M_BASE} > General fields > _meta",
            "a request missing any required field is malformed; the server MUST reject it with -32602 (Invalid params)",
            'read params._meta of every request first: without "io.modelcontextprotocol/protocolVersion" (a '
            'string) and "io.modelcontextprotocol/clientCapabilities" (an object), answer -32602 naming the '
            "missing key, and serve nothing",
            era="modern",
        ),
        Check(
            "modern-unsupported-version",
            "a request whose _meta names a version the server does not serve gets -32022 with data.supported "
            "(a list) and data.requested",
            "MUST",
            f"{_M_VERSIONS} > Protocol Version Negotiation; schema.ts UnsupportedProtocolVersionError",
            "if the server does not implement the requested version it MUST respond with an "
            "UnsupportedProtocolVersionError listing the versions it supports",
            'answer {"code": -32022, "message": "Unsupported protocol version", "data": {"supported": '
            '["2026-07-28"], "requested": <the version asked for>}}',
            era="modern",
        ),
        Check(
            "modern-removed-methods",
            "methods 2026-07-28 removed (ping, logging/setLevel, resources/subscribe) get -32601 on a modern "
            "request, and initialize an error (one that names the versions served)",
            "described",
            f"{_MODERN}, Key Changes > Major changes 2, 4 and 5 (initialize, resources/subscribe, ping and "
            f"logging/setLevel removed); {_M_VERSIONS} > Backward Compatibility",
            "the revision removed these methods: a modern request for one is a request for a method that does "
            "not exist (-32601); a modern-only server SHOULD name its versions in its answer to initialize",
            "answer ping, logging/setLevel, resources/subscribe, resources/unsubscribe and initialize that "
            "come with the 2026-07-28 _meta with -32601, saying what replaced them (for initialize the spec "
            "leaves the code to the implementation: Versioning > Compatibility Matrix)",
            also={
                "no-reply": _NO_REPLY,
                "initialize": Rule(
                    "SHOULD",
                    f"{_M_VERSIONS} > Backward Compatibility",
                    "a server that supports only modern versions SHOULD name the protocol versions it supports in "
                    "any error it returns to an initialize request (legacy clients have no other way to learn them)",
                    'answer a legacy initialize with an error that names your versions, e.g. {"code": -32022, '
                    '"message": "this server speaks 2026-07-28 only", "data": {"supported": ["2026-07-28"]}}',
                ),
            },
            era="modern",
        ),
        Check(
            "modern-resource-not-found",
            "(servers that declare resources) resources/read of an unknown URI gets -32602, never -32002",
            "MUST",
            f"{_MODERN}, Server Features > Resources > Error Handling; {_M_BASE} > Messages > Error Codes",
            "if the requested resource does not exist, servers MUST return -32602 (Invalid Params), and MUST NOT "
            "return an empty contents array for it; implementations of this revision MUST NOT emit -32002",
            'answer an unknown URI on a modern request with {"code": -32602, "message": "Resource not found", '
            '"data": {"uri": uri}} (-32002 stays for legacy sessions)',
            era="modern",
        ),
        Check(
            "modern-no-server-requests",
            "in the modern era the server writes no JSON-RPC request to stdout (elicitation, sampling and "
            "roots go through input_required results)",
            "MUST NOT",
            f"{_M_STDIO} > Receiving Messages",
            "the server MUST NOT write JSON-RPC requests to stdout",
            "ask the user through an input_required result (resultType input_required, inputRequests with "
            "the elicitation/create request) and finish when the client retries with inputResponses",
            era="modern",
        ),
        Check(
            "modern-input-required",
            "(tools that ask for input) an input_required result has inputRequests or requestState, asks only "
            "what the request's capabilities declare, and the retry with the answers is served",
            "MUST",
            f"{_M_MRTR} > Server Requirements (Basic Workflow)",
            "servers MUST include at least one of inputRequests or requestState, MUST NOT send inputRequests "
            "the client has not declared support for, and the retry is a request like any other",
            'answer {"resultType": "input_required", "inputRequests": {"confirm": {"method": '
            '"elicitation/create", "params": {...}}}, "requestState": "..."} only to a request whose _meta '
            "declares elicitation (else -32021), and serve the retry that carries inputResponses",
            also={
                "retry": Rule(
                    "SHOULD",
                    f"{_M_MRTR.removesuffix(' > Basic Workflow')} > Error Handling",
                    "the retry carries the answers and is served on them (a declined elicitation is an answer); "
                    "if the client fails to send all the information requested and it is necessary, the server "
                    "SHOULD respond with a new InputRequiredResult requesting the missing information again, "
                    "rather than returning an error",
                    "serve the retry: act on the answers (a declined confirmation means nothing is done) and "
                    "return a complete result, or input_required again if something is missing",
                )
            },
            era="modern",
        ),
        Check(
            "modern-request-state",
            "(tools that return requestState) a retry with a tampered requestState is refused",
            "MUST",
            f"{_M_MRTR} > Server Requirements (Basic Workflow)",
            "servers MUST treat requestState as attacker-controlled; where it influences business logic they "
            "MUST protect its integrity (e.g. HMAC or AEAD) and MUST reject state that fails verification",
            "sign requestState (hmac.new(key, payload, 'sha256') with a per-process secret key), bind it to "
            "the tool and its arguments, give it an expiry, and answer a state that fails verification with an "
            "error (-32602) instead of acting on it",
            also={
                "read-only": Rule(
                    "described",
                    f"{_M_MRTR} > Server Requirements (Basic Workflow)",
                    "integrity protection MAY be omitted only when tampering can cause nothing worse than request "
                    "failure; this tool is annotated read-only, so it may be such a case",
                    "sign requestState anyway if it names anything the caller may not choose freely",
                )
            },
            era="modern",
        ),
        Check(
            "modern-subscriptions",
            "(servers that declare listChanged or subscribe) subscriptions/listen is acknowledged first, "
            "with the subscription's id in _meta",
            "MUST",
            f"{_MODERN}, Base Protocol > Patterns > Subscriptions > Acknowledgment",
            "the server MUST send notifications/subscriptions/acknowledged as the first message, carrying the "
            "subscription's id in _meta under io.modelcontextprotocol/subscriptionId",
            "answer subscriptions/listen with notifications/subscriptions/acknowledged (params: the accepted "
            'filter, "_meta": {"io.modelcontextprotocol/subscriptionId": <the request id>}) before any '
            "notification of it; end it with a complete response when the client cancels",
            also={
                "unserved": Rule(
                    "described",
                    f"{_MODERN}, Key Changes > Major changes 4",
                    "change notifications reach a modern client only through subscriptions/listen; a declared "
                    "listChanged or subscribe that cannot be listened to misleads the client",
                    "serve subscriptions/listen, or declare listChanged false and no subscribe",
                )
            },
            era="modern",
        ),
        Check(
            "era-mixing",
            "a request of the other era on a connection gets an answer (a result or an error), never silence",
            "MUST",
            f"JSON-RPC 2.0 section 5; {_M_VERSIONS} > Backward Compatibility with Initialization-Based Versions",
            "a request MUST get a response; a dual-era server MAY serve both eras concurrently on the same "
            "endpoint or process, and the spec is silent on what one that does not (the course's server locks a "
            "stdio process to the era its first era-choosing request picks) answers the other era: any answer "
            "passes, silence fails",
            "answer an initialize on a modern connection, and a request with the 2026-07-28 _meta on an "
            "initialized one, either by serving it or with an error that says why (never ignore it)",
            also={
                # What the course's stage 03 grades beyond the spec: its own choice, labelled as one.
                "course-lock": Rule(
                    "recommendation",
                    f"{_M_VERSIONS} > Backward Compatibility with Initialization-Based Versions (a dual-era "
                    "server MAY serve both eras on one process); the course's choice, as the official SDKs'",
                    "the course's server locks a stdio process to the era its first era-choosing request picks: "
                    "a request with the 2026-07-28 _meta chooses modern, initialize chooses legacy, nothing else "
                    "chooses (a plain ping locks nothing); then initialize gets -32022 naming the versions served "
                    "and any other request without _meta -32602, or a 2026-07-28 request -32600",
                    "set the era in initialize (legacy) and for a request with the 2026-07-28 _meta (modern) "
                    "only; serve a plain request before either from methods, and leave the era as it was",
                )
            },
            era="both",
        ),
    ]
}

CATALOGUE: dict[str, Check] = {**CHECKS, **MODERN_CHECKS, **HTTP_CHECKS}
