"""The check catalogue: every check's stable id, what must hold, the rule behind it, the fix.

Ids are a contract (other tools and tests key on them); the words may improve. Rules name the
revision they come from: the course teaches MCP 2025-11-25.

    >>> CHECKS["id-echo"].holds
    'ids 0, 42, "abc", "7" come back with the same value and the same JSON type'
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Check:
    id: str
    holds: str  # what must hold, in one line
    rule: str  # where the rule comes from
    fix: str  # what to change when it fails


_STDIO = "MCP 2025-11-25, Transports > stdio"
_BASE = "MCP 2025-11-25, Base Protocol"
_RPC = "JSON-RPC 2.0 section 5"
_LIFE = "MCP 2025-11-25, Lifecycle"
_TOOLS = "MCP 2025-11-25, Server Features > Tools"

CHECKS: dict[str, Check] = {
    c.id: c
    for c in [
        Check(
            "stdout-json-lines",
            "every stdout line is exactly one JSON-RPC message (an object)",
            f"{_STDIO}: the server MUST NOT write anything to stdout that is not a valid MCP message; "
            "messages are delimited by newlines and MUST NOT contain embedded newlines",
            "send logs, banners and debug prints to stderr (print(..., file=sys.stderr), logging with "
            "stream=sys.stderr); serialise with json.dumps(msg) and no indent=; one message per write",
        ),
        Check(
            "stdout-silent-at-start",
            "nothing on stdout before the first request",
            f"{_STDIO}: stdout carries only MCP messages, and a server speaks only to answer",
            "remove start-up prints (banners, 'Server started'); log them to stderr instead",
        ),
        Check(
            "stdout-flush",
            "each reply arrives while stdin is still open (PYTHONUNBUFFERED removed)",
            f"{_STDIO}: messages are exchanged while the connection is open; stdout to a pipe is "
            "block-buffered, so an unflushed reply sits in the buffer until the process exits",
            "call sys.stdout.flush() (or sys.stdout.buffer.flush()) after writing every message",
        ),
        Check(
            "stdout-line-ending",
            'output lines end in "\\n", not "\\r\\n"',
            f"{_STDIO}: messages are delimited by newlines; strict clients (Go) reject a trailing \\r",
            'write json.dumps(msg) + "\\n" to sys.stdout.buffer (binary: no newline translation)',
        ),
        Check(
            "stdout-strict-json",
            "valid UTF-8, no NaN or Infinity, no lone surrogates",
            f"{_STDIO}: messages MUST be UTF-8 encoded; RFC 8259 JSON has no NaN/Infinity",
            "json.dumps(msg, allow_nan=False) and encode the text as UTF-8; replace NaN with null",
        ),
        Check(
            "stdout-line-size",
            "no stdout line above 64 KiB (warning) or 10 MiB (failure)",
            "host limits: asyncio readers stop at 64 KiB per line by default, the TypeScript SDK at 10 MiB",
            "keep replies small: paginate lists (nextCursor), cut long texts, return a resource link",
        ),
        Check(
            "encoding-utf8",
            "non-ASCII text round-trips byte-exact, also under PYTHONIOENCODING=cp1252",
            f"{_STDIO}: messages MUST be UTF-8 encoded (from 2025-03-26)",
            "read sys.stdin.buffer and write sys.stdout.buffer, decoding and encoding UTF-8 yourself; "
            "never rely on the platform's text encoding",
        ),
        Check(
            "envelope",
            'every message has jsonrpc "2.0"; a response has exactly one of result/error; an error '
            "has an integer code and a string message",
            f"{_BASE} > Messages; {_RPC}",
            'build replies as {"jsonrpc": "2.0", "id": id, "result": r} or {"jsonrpc": "2.0", "id": id, '
            '"error": {"code": int, "message": str}}; never both, never "error": null',
        ),
        Check(
            "id-echo",
            'ids 0, 42, "abc", "7" come back with the same value and the same JSON type',
            f"{_BASE} > Responses: a response MUST include the same ID as the request it answers",
            "copy request['id'] into the reply unchanged: no int(), no str(), no `or`-defaults (0 is a valid id)",
        ),
        Check(
            "notification-silence",
            "no reply to notifications (initialized, unknown ones, cancelled)",
            f"{_BASE} > Notifications: the receiver MUST NOT send a response; {_RPC}",
            'a message without an "id" member is a notification: handle it (or ignore it) and write nothing, '
            'not even an error; test with `"id" in msg`',
        ),
        Check(
            "parse-error",
            "a line that is not JSON gets -32700 with id null",
            f"{_RPC}: Parse error -32700; the id is null when it could not be read",
            "wrap json.loads in try/except and answer "
            '{"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}}',
        ),
        Check(
            "invalid-request",
            "JSON that is not a valid request (no method, null id, float id) gets -32600",
            f"{_RPC}: Invalid Request -32600; MCP: a request id is a string or an integer, never null",
            "validate the envelope before dispatching: method must be a string; an id present must be a "
            "string or an integer",
        ),
        Check(
            "method-not-found",
            "an unknown method gets -32601",
            f"{_RPC}: Method not found -32601",
            "answer unknown methods with code -32601 (not -32602, not silence)",
        ),
        Check(
            "survives-bad-input",
            "after every bad input the server still answers ping",
            f"{_RPC}: errors are answers, not crashes; hosts show 'transport closed' when a server dies",
            "catch errors per line and keep reading; never let one message end the loop",
        ),
        Check(
            "initialize-result",
            "initialize returns protocolVersion, a capabilities object, serverInfo with name and version",
            f"{_LIFE} > Initialization",
            'return {"protocolVersion": ..., "capabilities": {...}, "serverInfo": {"name": ..., "version": ...}}',
        ),
        Check(
            "version-negotiation",
            "a supported requested version is echoed; an unknown one gets a version the server supports",
            f"{_LIFE} > Version Negotiation: if the server supports the requested version it MUST respond with "
            "the same version, otherwise with another version it supports (SHOULD be its latest)",
            "keep a list of supported revisions; answer the requested one if it is in the list, else your latest",
        ),
        Check(
            "capabilities-match",
            "tools declared if and only if tools/list is served (likewise prompts and resources)",
            f"{_LIFE} > Capability Negotiation; {_TOOLS}: servers that support tools MUST declare the tools capability",
            'declare "capabilities": {"tools": {}} when you serve tools/list; declare nothing you do not serve',
        ),
        Check(
            "ping",
            "ping gets an empty result {}",
            "MCP 2025-11-25, Utilities > Ping: the receiver MUST respond promptly with an empty response",
            'answer {"jsonrpc": "2.0", "id": id, "result": {}}, before and after initialize',
        ),
        Check(
            "startup-time",
            "the initialize reply comes within 1.5 s (warning past it, failure past 10 s)",
            "host timeouts: Cline allows 1.5 s, Codex 10 s, others up to 60 s",
            "read stdin first and answer initialize at once; do heavy work lazily, on the first tool call",
        ),
        Check(
            "no-early-server-requests",
            "the server sends no requests of its own before notifications/initialized",
            f"{_LIFE} > Initialization: the server SHOULD NOT send requests other than pings and logging "
            "before receiving the initialized notification",
            "wait for notifications/initialized (and a declared client capability) before roots/list, "
            "sampling or elicitation; never block on the answer",
        ),
        Check(
            "stderr-volume",
            "stderr is drained and measured; above 64 KiB during the handshake is a warning",
            f"{_STDIO}: the server MAY write logs to stderr; hosts that do not drain it deadlock when "
            "the pipe (4-64 KiB) fills",
            "log less at start-up (INFO, not DEBUG), or log to a file",
        ),
        Check(
            "exit-on-eof",
            "after stdin closes the process exits within 2 s with status 0",
            f"{_LIFE} > Shutdown (stdio): the client closes the server's stdin, waits, then sends SIGTERM",
            "end the loop when readline() returns b'' (for line in sys.stdin.buffer ends by itself) and "
            "return normally",
        ),
        Check(
            "tools-list",
            'tools/list returns {"tools": [...]}; every inputSchema is type "object" and a valid JSON Schema',
            f"{_TOOLS} > Listing Tools; Data Types > Tool: inputSchema is a JSON Schema object",
            'give every tool "inputSchema": {"type": "object", "properties": {...}} (no parameters: '
            '{"type": "object", "additionalProperties": false})',
        ),
        Check(
            "tool-names",
            "tool names match ^[A-Za-z0-9_-]{1,64}$ and are unique",
            f"{_TOOLS} > Tool Names (1-128 of A-Za-z0-9_.-); many hosts and model APIs accept only "
            "^[A-Za-z0-9_-]{1,64}$",
            "rename tools to letters, digits, _ and -, at most 64 characters, each name once",
        ),
        Check(
            "tools-call-result",
            "results are {content: [typed items], isError?}; stdout stays clean during calls",
            f"{_TOOLS} > Tool Result: content is a list of items with a type (text, image, audio, "
            "resource_link, resource)",
            'return {"content": [{"type": "text", "text": "..."}]}; keep subprocesses off your stdout '
            "(stdout=subprocess.PIPE or DEVNULL, stdin=DEVNULL)",
        ),
        Check(
            "unknown-tool",
            "calling a tool that does not exist gets -32602",
            f"{_TOOLS} > Error Handling: unknown tools are protocol errors (the spec's example uses -32602)",
            "answer tools/call with an unknown name with a JSON-RPC error, code -32602, naming the tool",
        ),
        Check(
            "tool-error-kind",
            "arguments that break the inputSchema get isError (2025-11-25) or -32602 (older revisions)",
            f"{_TOOLS} > Error Handling (2025-11-25, SEP-1303): input validation errors are tool execution "
            "errors, so the model can correct itself; before 2025-11-25 they were protocol errors",
            "validate arguments against the inputSchema; answer per negotiated revision: isError result "
            "from 2025-11-25, -32602 before",
        ),
        Check(
            "shop-contract",
            "(shop servers) the tool set and answers match the course database; an unknown status is isError",
            "MCP Wire Lab shop contract (design.md), and Tools > Error Handling for the unknown status",
            "answer from the course database with parameterised queries; an unknown status is a tool "
            "execution error (isError: true) whose text lists the valid statuses",
        ),
        Check(
            "shop-read-only",
            "(shop servers) no tool call can change the database",
            "MCP Wire Lab shop contract: the database is opened read-only",
            "open the database with sqlite3.connect('file:PATH?mode=ro', uri=True) and use ? placeholders",
        ),
        Check(
            "structured-output",
            "where a tool declares an outputSchema, its successful results carry structuredContent that "
            "conforms to it, and the same JSON as text (sessions on 2025-06-18 or later)",
            f"{_TOOLS} > Output Schema: if an output schema is provided, servers MUST provide structured "
            "results that conform to it; Structured Content: a tool that returns structured content SHOULD "
            "also return the serialized JSON in a text block (both exist from revision 2025-06-18)",
            'return {"content": [{"type": "text", "text": json.dumps(value)}], "structuredContent": value} '
            "with value a JSON object that fits the outputSchema (check it with jsonschema); write the schema "
            "from what the tool really returns (optional members not required, null where it can be null); "
            "leave both out for sessions on 2025-03-26 and 2024-11-05",
        ),
    ]
}
