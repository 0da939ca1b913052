"""The broken-server gallery: small stdio MCP shop servers, each with one deliberate defect.

Every exhibit is a short runnable program (``python grader/gallery/NAME.py``) that subclasses the
healthy server in ``base.py`` and overrides one thing (one method, two at most). The table below
is the catalogue: what a host or user sees (the symptom), what is wrong and how to fix it (the
explanation, shown only on request), and the checker check the exhibit must fail (or warn on).

    >>> get("banner").check
    'stdout-json-lines'
    >>> command("crlf")[-1].endswith("crlf.py")
    True

The HTTP exhibits (``over_http/``) serve the healthy HTTP shop of ``over_http/base.py`` with one
defect each; run one, it prints its URL on stderr, and point ``mcp-lab check --url`` at it:

    >>> [e.name for e in http_exhibits()][:2], get("broken_sse").transport
    (['broken_sse', 'method_header_unchecked'], 'http')
    >>> command("broken_sse", port=8000)[-2:]
    ['--port', '8000']

The exhibit files are never imported here: they are programs, run as child processes.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
BASE = HERE / "base.py"  # the healthy server: it passes every check
MODERN_BASE = HERE / "modern_base.py"  # the healthy modern-only server (2026-07-28): it passes every check
HTTP_DIR = HERE / "over_http"
HTTP_BASE = HTTP_DIR / "base.py"  # the healthy HTTP server: it passes every check over HTTP


@dataclass(frozen=True)
class Exhibit:
    name: str  # file stem, e.g. "banner"
    symptom: str  # one line: what a host or user sees; no spoiler
    explanation: str  # the defect and its fix, shown only with --reveal
    check: str  # the checker check id it must fail (or warn on)
    expect: str  # "fail", or "warn" where the check's threshold makes it a warning
    field_failure: int | None  # row number in research/field-failures.md; None for subtle variants
    path: Path  # the exhibit's file
    transport: str = "stdio"  # or "http": a Streamable HTTP server that prints its URL
    era: str = "legacy"  # "modern": a 2026-07-28 server (modern_base.py), which refuses initialize
    options: tuple[str, ...] = ()  # what mcp-lab check needs to see the defect (e.g. --call-tools)


# name, field-failures row, check, expect, symptom, explanation
_TABLE: list[tuple[str, int | None, str, str, str, str]] = [
    (
        "banner",
        1,
        "stdout-json-lines",
        "fail",
        "Node hosts: Unexpected token 'S', \"Shop serve\"... is not valid JSON; "
        "the Python SDK logs 'Failed to parse JSONRPC message from server'.",
        "on_start() prints a friendly 'server started' line with print(), which writes to stdout, "
        "before any request arrives. stdout is the protocol channel: every line on it must be one "
        "JSON-RPC message, from the first line on. Fix: print the banner to stderr "
        "(print(..., file=sys.stderr)) or log it there.",
    ),
    (
        "log_to_stdout",
        2,
        "stdout-json-lines",
        "fail",
        "Connects, lists tools, then every tool call shows "
        "'Unexpected non-whitespace character after JSON at position 4'.",
        "on_start() configures logging with stream=sys.stdout at DEBUG level, so the debug line "
        "that call_tool() logs ('2025-... DEBUG gallery-shop: tools/call ...') lands on stdout "
        "between messages. A line starting with a year parses as the number 2025 followed by "
        "junk. Fix: logging.basicConfig(stream=sys.stderr, ...) (stderr is logging's default).",
    ),
    (
        "slow_start",
        3,
        "startup-time",
        "warn",
        "Some hosts report 'MCP error -32001: Request timed out' on connect; others connect after a pause.",
        "on_start() sleeps 3 s ('warming caches') before the server reads stdin, so the "
        "initialize reply comes late. Cline allows 1.5 s, Codex 10 s. Fix: start reading stdin "
        "at once and do slow work lazily, on first use, or in the background.",
    ),
    (
        "no_exit_on_eof",
        4,
        "exit-on-eof",
        "warn",
        "Works, but after the host quits, server processes pile up (in the field, some at 100% CPU).",
        "read_lines() loops on sys.stdin.buffer.readline() forever and ignores b'' (end of "
        "input: the client closed our stdin). The gallery sleeps 50 ms per turn to spare your "
        "CPU; the field version spins. Servers SHOULD exit promptly when their standard input is "
        "closed (MCP 2026-07-28, Transports > stdio > Shutdown), and a client SHOULD shut a stdio "
        "server down by closing its input and waiting for it to exit (MCP 2025-11-25, Lifecycle > "
        "Shutdown): no MUST, hence a warning. Fix: treat b'' as the end: "
        "return and exit with status 0 (iterating 'for raw in sys.stdin.buffer' does this for you).",
    ),
    (
        "answers_notifications",
        5,
        "notification-silence",
        "fail",
        "Strict hosts drop the connection right after the handshake: 'Received a response for an unknown message ID'.",
        "handle_notification() passes every notification on to handle_request() with id null, "
        "so notifications/initialized (and every other notification) gets a -32601 error reply. "
        "A notification has no id and MUST NOT be answered, not even with an error. Fix: act on "
        "the notifications you know and silently ignore the rest.",
    ),
    (
        "notification_named_like_request",
        5,
        "notification-silence",
        "fail",
        'The server exits the moment a client sends {"jsonrpc": "2.0", "method": "ping"}; its stderr ends '
        "in KeyError: 'id'. Every well-named notification works.",
        "handle_message() takes every method that does not start with notifications/ for a request and "
        'reads message["id"] to log it. What makes a message a notification is the missing id, not the '
        'method\'s name: {"method": "ping"} with no id is a notification, MUST NOT be answered, and here '
        'it kills the server (KeyError). Fix: decide with "id" not in message first, then read the id '
        "only for requests.",
    ),
    (
        "bad_input_schema",
        6,
        "tools-list",
        "fail",
        'The host shows no tools at all: expected "object" at tools.0.inputSchema.type.',
        "list_tools() replaces count_orders' inputSchema with {} ('every argument is optional "
        'anyway\'). MCP requires each inputSchema to be a JSON Schema with type: "object", and one '
        "bad schema makes strict hosts reject the whole list. Fix: a tool without required "
        'parameters still says {"type": "object", "properties": {...}}, or '
        '{"type": "object", "additionalProperties": false} when it takes none.',
    ),
    (
        "code_page_crash",
        7,
        "encoding-utf8",
        "fail",
        "On some Windows machines: UnicodeEncodeError: 'charmap' codec can't encode character, "
        "and the server dies on the first emoji.",
        "send() uses print(json.dumps(..., ensure_ascii=False)): print writes to the text layer, "
        "which encodes with the platform's code page (cp1252 on many Windows machines, "
        "reproduced here with PYTHONIOENCODING=cp1252). An emoji or CJK character cannot be "
        "encoded and é comes out as one non-UTF-8 byte. Fix: write UTF-8 bytes yourself to "
        "sys.stdout.buffer (or use ensure_ascii=True, which escapes everything non-ASCII).",
    ),
    (
        "dies_on_bad_line",
        8,
        "survives-bad-input",
        "fail",
        "Host log: 'Server transport closed unexpectedly', then the server shows as disconnected.",
        "handle_line() calls json.loads() without a try, so the first line that is not JSON "
        "raises JSONDecodeError out of the loop and the process exits with a traceback. Fix: "
        "catch ValueError, answer -32700 Parse error with id null, and read the next line.",
    ),
    (
        "tool_error_as_protocol_error",
        9,
        "shop-contract",
        "fail",
        "Asked about an order status that does not exist, the assistant says 'the tool failed' "
        "and never learns which statuses are valid.",
        "call_tool() turns every isError result (for example count_orders with an unknown status) "
        "into a JSON-RPC -32603 error. Clients SHOULD give tool execution errors to the model and "
        "only MAY give it protocol errors (Tools > Error Handling), so the helpful text listing the "
        "valid statuses is likely lost. Fix: a tool that ran and failed "
        "returns a normal result with isError: true and text the model can act on.",
    ),
    (
        "protocol_error_as_tool_error",
        9,
        "unknown-tool",
        "warn",
        "Calling a tool that does not exist 'succeeds' with an error text; the host never learns "
        "its tool list is stale.",
        "call_tool() answers an unknown tool name with an isError result. The spec lists an unknown "
        "tool under protocol errors, with JSON-RPC -32602 Invalid params as its example (no MUST, "
        "hence a warning). Fix: raise "
        "the -32602 error (the reference Toolbox does) and keep isError for tools that ran and "
        "failed.",
    ),
    (
        "missing_flush",
        10,
        "stdout-flush",
        "fail",
        "The handshake hangs until the host times out; yet 'echo ... | python server.py' works.",
        "write_line() writes to sys.stdout.buffer but never flushes. When stdout is a pipe it is "
        "block-buffered (8 KiB), so replies sit in the buffer until it fills or the process "
        "exits; with echo, end of input ends the process, which flushes. PYTHONUNBUFFERED=1 "
        "hides the bug. Fix: sys.stdout.buffer.flush() after every message.",
    ),
    (
        "id_not_echoed",
        11,
        "id-echo",
        "fail",
        "Works with most hosts; with the official Python SDK 1.x client the very first request times out.",
        "handle_request() skips requests whose id is falsy ('if not id'), meant for a missing "
        "id. But 0 is a perfectly good id (SDK 1.x clients start counting at 0), and that "
        "request is never answered. Every request gets exactly one reply carrying its id, "
        "unchanged; test for a notification with '\"id\" not in message', never by truthiness.",
    ),
    (
        "content_length",
        12,
        "stdout-json-lines",
        "fail",
        "Silent hang on connect, then 'context deadline exceeded' or a timeout.",
        "write_line() frames every message the LSP way, a 'Content-Length: N' header, a blank "
        "line and the body with no newline after it. MCP over stdio is one JSON message per "
        "line, no headers. Fix: write the JSON followed by a single \\n.",
    ),
    (
        "capabilities_mismatch",
        13,
        "capabilities-match",
        "fail",
        "The server connects but the host shows no tools (or a spinner forever).",
        "initialize() answers capabilities {} while the server does serve tools/list and "
        "tools/call. Servers that support tools MUST declare the tools capability (Tools > "
        "Capabilities), and hosts only ask for what is declared. Fix: declare "
        '"capabilities": {"tools": {}} (listChanged optional) whenever tools are served, and '
        "declare nothing you do not serve.",
    ),
    (
        "stderr_flood",
        14,
        "stderr-volume",
        "warn",
        "Hangs at random under some hosts, often on the first request, with no error anywhere.",
        "handle_request() writes a 200 KB trace line to stderr for every request. A host that "
        "does not read the stderr pipe leaves it full (a pipe holds 4-64 KiB), the next write "
        "blocks and the server freezes. Fix: log little, and at DEBUG only when asked; put big "
        "dumps in a file.",
    ),
    (
        "fixed_protocol_version",
        15,
        "version-negotiation",
        "warn",
        'Newer hosts refuse to connect: "Server\'s protocol version is not supported".',
        'negotiate() always answers "2024-11-05", whatever the client asked, although the '
        "server speaks 2025-11-25 too. If the server supports the requested version it MUST "
        "answer with that same version; only an unsupported request gets another (its latest). "
        "From outside this looks like a server that only knows 2024-11-05, which is legal, so "
        "the checker can only warn. Fix: return the requested version when it is in SUPPORTED.",
    ),
    (
        "crlf",
        16,
        "stdout-line-ending",
        "warn",
        "Go clients: 'invalid trailing data at the end of stream'; other hosts are fine.",
        "write_line() ends every message with \\r\\n. The stdio transport delimits messages with "
        "\\n and a strict parser reads \\r as trailing data. (On Windows, text-mode stdout "
        "turns \\n into \\r\\n the same way.) The \\r is JSON whitespace and no MUST forbids it: a "
        "warning, for the hosts it breaks. Fix: write bytes ending in a single \\n.",
    ),
    (
        "huge_line",
        17,
        "stdout-line-size",
        "warn",
        "Python asyncio hosts: 'Separator is not found, and chunk exceed the limit' on tools/list.",
        "list_tools() pastes every order into list_orders' description, so the tools/list "
        "reply is one line of over 150 KB. asyncio stream readers stop at 64 KiB per line, the "
        "TypeScript SDK at 10 MiB. Fix: keep listings small; let the model fetch data with "
        "tool calls, and page big results.",
    ),
    (
        "bad_tool_names",
        18,
        "tool-names",
        "warn",
        "The model API rejects every request that includes the server's tools.",
        "list_tools() publishes namespaced names such as 'orders.count'. Many hosts and model "
        "APIs accept only ^[A-Za-z0-9_-]{1,64}$, and a single bad name fails the whole request. "
        "MCP 2025-11-25 allows the dot (Tools > Tool Names, SHOULDs), so this is the hosts' limit, "
        "not the spec's rule: a warning. "
        "Fix: use letters, digits, _ and - only (orders_count).",
    ),
    (
        "duplicate_tool_names",
        18,
        "tool-names",
        "warn",
        "The model API rejects every request that includes the server's tools.",
        "list_tools() adds an 'alias' of count_orders under the same name. Tool names SHOULD be "
        "unique within a server (Tools > Tool Names), and model APIs reject duplicate function "
        "names. Fix: give an alias its own name, or leave it out. (A SHOULD: a warning.)",
    ),
    (
        "pretty_printed",
        19,
        "stdout-json-lines",
        "fail",
        "\"Expected property name or '}' in JSON at position 1\"; newer hosts just time out.",
        "send() uses json.dumps(..., indent=2), which spreads each message over many lines. "
        "The stdio transport is one message per line, so the reader sees '{' alone. Fix: no "
        "indent (separators=(',', ':') for compact output).",
    ),
    (
        "child_writes_stdout",
        20,
        "tools-call-result",
        "fail",
        "Tool calls fail with a parse error about an 'audit: ...' line; ping and tools/list work.",
        "call_tool() runs a subprocess that inherits the server's stdout, and the child's "
        "print() lands in the protocol stream before the reply. Fix: give children their own "
        "pipes: subprocess.run(..., stdin=subprocess.DEVNULL, capture_output=True), and send "
        "what you need to stderr.",
    ),
    (
        "nan_in_json",
        21,
        "stdout-strict-json",
        "fail",
        "Every tool call fails in Node hosts: \"Unexpected token 'N'\"; Python clients accept it.",
        "send_result() adds a relevance score of float('nan') and serialises with json.dumps's "
        "default allow_nan=True, which writes the bare token NaN: not JSON. Fix: never put NaN "
        "or Infinity in a message (use null), and dump with allow_nan=False so it fails loudly.",
    ),
    (
        "broken_envelope",
        22,
        "envelope",
        "fail",
        'Strict hosts reject every reply: "unrecognized keys result, error".',
        'send_result() adds "error": None next to "result". A response has exactly one of '
        "result or error, never both, not even a null one. Fix: build the success reply with "
        "jsonrpc, id and result only.",
    ),
    (
        "wrong_result_shape",
        23,
        "tools-call-result",
        "fail",
        "Tool calls fail in the host: 'validation errors for CallToolResult'.",
        'call_tool() returns "content" as a plain string. A tools/call result\'s content is a '
        'list of typed items, e.g. [{"type": "text", "text": "42"}]. Fix: wrap the text.',
    ),
    (
        "early_server_request",
        24,
        "no-early-server-requests",
        "warn",
        "The handshake stalls with some hosts: 'Failed to request initial roots'.",
        "initialize() sends a roots/list request of its own before the handshake is complete, "
        "and without checking that the client declared the roots capability. Before "
        "notifications/initialized a server SHOULD NOT send requests other than ping and logging. Fix: "
        "wait for notifications/initialized, and only ask for what the client declared.",
    ),
    (
        "version_echoed",
        15,
        "version-negotiation",
        "fail",
        "Connects to every host, then breaks in odd ways with hosts newer than the server.",
        "negotiate() echoes whatever protocolVersion the client proposes, even one it has never "
        "heard of (1999-01-01, or next year's revision). The client then believes the server "
        "speaks a revision it does not. Fix: echo only versions in SUPPORTED; answer anything "
        "else with LATEST.",
    ),
    (
        "bad_line_ignored",
        None,
        "parse-error",
        "fail",
        "A client that sent a broken line waits for an answer that never comes.",
        "handle_line() silently skips lines that are not JSON. The server survives, but "
        "JSON-RPC requires a -32700 Parse error reply with id null. Fix: answer it.",
    ),
    (
        "ready_notification",
        None,
        "stdout-silent-at-start",
        "fail",
        "Most hosts connect fine; strict ones log an unexpected message before the handshake.",
        "on_start() announces itself with a notifications/message before any request has "
        "arrived. The line is valid JSON-RPC, but the initialization phase MUST be the first "
        "interaction between client and server (MCP 2025-11-25, Lifecycle > Initialization), and "
        "servers that emit log message notifications MUST declare the logging capability "
        "(Utilities > Logging), which this one does not. Fix: log readiness to stderr.",
    ),
    (
        "third_request_breaks",
        None,
        "stdout-line-ending",
        "warn",
        "A quick test (initialize, one ping) passes; strict hosts fail a little later.",
        "From the third request on, write_line() takes a 'fast path' that ends lines in "
        "\\r\\n. Output rules hold for every line, not just the handshake. Fix: one writer, "
        "always a single \\n.",
    ),
    (
        "error_replies_broken",
        None,
        "envelope",
        "fail",
        "Everything works until something goes wrong: then the host never matches the error.",
        'send_error() leaves out "jsonrpc": "2.0", so only error replies are malformed. Every '
        "response needs it. Fix: build error replies like result replies.",
    ),
    (
        "string_ids_mangled",
        None,
        "id-echo",
        "fail",
        "Works with hosts that use integer ids; with string ids some requests time out.",
        'handle_request() "normalises" numeric string ids: "7" comes back as 7. To the client '
        "that is a different id (same value, other JSON type). Fix: echo the id unchanged.",
    ),
    (
        "method_not_found_as_invalid_params",
        None,
        "method-not-found",
        "fail",
        "A host probing for an optional method reads 'Invalid params' and reports a bug in its own request.",
        "find_handler() reports an unknown method as -32602 Invalid params (a real bug of the "
        "official SDK 1.x). An unknown method is -32601 Method not found. Fix: keep the codes "
        "apart.",
    ),
    (
        "ping_not_empty",
        None,
        "ping",
        "fail",
        "Strict hosts mark the server unhealthy after their first keep-alive ping.",
        'ping() returns "pong". The ping result is an empty object {}. Fix: return {}.',
    ),
    (
        "null_id_as_notification",
        None,
        "invalid-request",
        "fail",
        'A request with "id": null gets no answer at all; the client waits forever.',
        'is_notification() tests message.get("id") is None, so an explicit "id": null counts '
        'as a notification and is silently dropped. A notification has no "id" member at all; '
        '"id": null is an invalid request that gets -32600. Fix: test "id" not in message.',
    ),
    (
        "bad_args_accepted",
        None,
        "tool-error-kind",
        "fail",
        "Bad arguments give odd answers ('no results') instead of a clear message about the arguments.",
        "call_tool() runs the tool without checking the arguments against its inputSchema, and "
        "when the tool then trips over them it answers a successful 'no results'. Servers MUST "
        "validate all tool inputs: arguments that break the schema are refused, with an isError "
        "result naming the problem (2025-11-25; -32602 is allowed too up to 2025-06-18). Fix: "
        "validate first (the reference Toolbox does).",
    ),
    (
        "tool_errors_ignore_version",
        None,
        "tool-error-kind",
        "warn",
        "On revision 2025-11-25 the model never reads why its arguments were wrong: hosts show a protocol error.",
        "call_tool() answers bad arguments with a -32602 protocol error under every revision. "
        "Up to 2025-06-18 that is one of two allowed answers; 2025-11-25 (SEP-1303) lists input "
        "validation errors under tool execution errors (isError), so that the model can correct "
        "itself, with no MUST: a warning. Fix: decide by the negotiated version "
        "(self.version >= '2025-11-25').",
    ),
    (
        "unsupported_version_error",
        None,
        "version-negotiation",
        "warn",
        "A host newer than the server cannot connect at all.",
        "negotiate() answers an unknown protocolVersion with a -32602 error. The rule is to "
        "answer with another version the server supports (a MUST; it SHOULD be its latest) and let "
        "the client decide. (The same Lifecycle page also shows such an error as its example of "
        "an initialization error, so the checker warns.) Fix: "
        "return LATEST for an unknown version.",
    ),
    (
        "structured_content_missing",
        None,
        "structured-output",
        "fail",
        "The official SDK client raises 'Tool count_orders has an output schema but did not return "
        "structured content'; the Inspector and older clients show the answers fine.",
        "call_tool() drops structuredContent and keeps only the text block, but tools/list still "
        "declares an outputSchema for every tool. From 2025-06-18, a tool with an outputSchema MUST "
        "return structuredContent that conforms to it; the text block is the copy for older clients, "
        "not a replacement. Fix: send both (or declare no outputSchema).",
    ),
    (
        "structured_content_wrong_type",
        None,
        "structured-output",
        "fail",
        'count_orders fails in the official SDK client with "Invalid structured content returned by '
        "tool count_orders: '3,000' is not of type 'integer'\"; the other tools work.",
        "call_tool() formats the count in structuredContent for display ('3,000', a string) while the "
        'outputSchema says "count": {"type": "integer"}. Clients SHOULD validate structuredContent against '
        "the outputSchema (the official SDK client does, and refuses the result). Fix: structuredContent is "
        "data, not display text: send "
        "the number, and write the schema from what the tool really returns.",
    ),
    (
        "partial_flush",
        None,
        "stdout-flush",
        "fail",
        "Connects and lists tools, but a tool call hangs until the host sends something else; the "
        "last call's answer turns up only when the host disconnects.",
        "call_tool() sets a flag so that write_line() skips the flush for tool results ('they go "
        "out with the next flush'). Every other reply is flushed, so the handshake works, but a "
        "tool result waits in the block-buffered stdout until the next flushed reply, or until the "
        "process exits at end of input: the host waits, times out, or pairs answers with the wrong "
        "calls. Fix: flush after every message, whatever its kind.",
    ),
]

_EXHIBITS: dict[str, Exhibit] = {
    name: Exhibit(name, symptom, explanation, check, expect, row, HERE / f"{name}.py")
    for name, row, check, expect, symptom, explanation in _TABLE
}

# The modern era (MCP 2026-07-28): name, check, expect, checker options, symptom, explanation. All but
# silent_before_initialize (a legacy server) subclass the healthy modern-only server of modern_base.py.
_MODERN_TABLE: list[tuple[str, str, str, tuple[str, ...], str, str]] = [
    (
        "no_result_type",
        "modern-result-type",
        "fail",
        (),
        "The official SDK 2.x client in its 2026 mode rejects every answer as an invalid result; older clients work.",
        "wrap() drops resultType from complete results ('complete is the default anyway'). It is the default "
        "only for a client reading a legacy server; in 2026-07-28 every result MUST say what it is, so a modern "
        'client cannot tell a finished answer from one that needs input. Fix: put "resultType": "complete" '
        "in every result of a request that carries the 2026-07-28 _meta (and none in a legacy session).",
    ),
    (
        "resource_not_found_legacy_code",
        "modern-resource-not-found",
        "fail",
        (),
        "Reading a resource that does not exist shows 'error -32002' in modern clients, which expect it "
        "only from servers of earlier revisions.",
        "read_resource() raises the legacy 'Resource not found' (-32002) for an unknown URI. 2026-07-28 retired "
        "-32002: a server of that revision MUST NOT emit it, and MUST answer an unknown resource with -32602 "
        "(Invalid params). Fix: raise -32602 with data {uri} in the modern era (-32002 stays for a legacy "
        "session's resources/read).",
    ),
    (
        "discover_without_ttl",
        "modern-cacheable",
        "fail",
        (),
        "Clients that cache server/discover ask for it again before every request.",
        "wrap() removes ttlMs from the server/discover result ('discover is called once; nobody caches it'). "
        "server/discover is one of the six cacheable results: each complete result of them MUST carry ttlMs "
        "(an integer >= 0) and cacheScope; a missing ttlMs reads as 0, stale at once. Fix: keep the caching "
        "hints on every complete result of server/discover, tools/list, prompts/list, resources/list, "
        "resources/templates/list and resources/read.",
    ),
    (
        "silent_before_initialize",
        "era-probe",
        "warn",
        (),
        "Old clients connect at once; every 2026 client (the SDK 2.x in auto mode) hangs for seconds before "
        "it connects.",
        "handle_request() drops every request that comes before initialize ('clients initialize first'), so "
        "the server/discover probe a dual-era client sends first gets no answer, and the client waits out its "
        "timeout before it falls back to initialize. MCP 2026-07-28 (Transports > stdio > Backward "
        "Compatibility) says legacy servers answer unknown pre-initialize requests with implementation-defined "
        "errors or not at all, with no keyword binding them, hence a warning. Fix: answer a request before "
        "initialize at "
        "once, with an error if nothing else (-32601 for server/discover).",
    ),
    (
        "version_error_without_supported",
        "modern-unsupported-version",
        "fail",
        (),
        "A client that asks for another protocol version gets 'unsupported protocol version' and gives up "
        "instead of retrying.",
        "read_meta() refuses a version it does not serve with -32022 but drops the error's data. The client "
        "learns the versions to retry with only from data.supported: the error MUST list them (and say what "
        'was requested). Fix: answer -32022 with data {supported: ["2026-07-28"], requested: <the version>}.',
    ),
    (
        "request_state_trusted",
        "modern-request-state",
        "fail",
        ("--call-tools",),
        "Users confirm 'Cancel order 5?', and sometimes another order is cancelled.",
        "read_state() decodes the requestState of the confirmation round trip without checking its signature "
        "('we made it, so it is ours'). But the client sends it back, and anyone can edit it: the retry cancels "
        "whatever order the state names. requestState is attacker-controlled; where it drives business logic "
        "the server MUST protect its integrity and MUST reject state that fails verification. Fix: verify the "
        "HMAC (hmac.compare_digest) before using the state, and refuse a bad one with an error. (mcp-lab check "
        "calls cancel_order only with --call-tools: it is not read-only.)",
    ),
    (
        "elicits_over_stdout",
        "modern-no-server-requests",
        "fail",
        (),
        "Modern clients log 'unexpected request from server' on every tool call, and the question never "
        "reaches the user.",
        "call_tool() writes an elicitation/create request to stdout before it answers, as legacy servers "
        "could. In 2026-07-28 the server MUST NOT write JSON-RPC requests to stdout: there is no channel for "
        "the answer. Fix: ask through the tool's result instead (resultType input_required with the "
        "elicitation in inputRequests) and finish when the client retries with inputResponses.",
    ),
    (
        "envelope_unchecked",
        "modern-envelope-errors",
        "fail",
        (),
        "Every client works, but requests from a legacy client that never sent initialize are served as if "
        "they were 2026-07-28 requests.",
        "read_meta() fills in a missing _meta ('be liberal in what you accept'): a request without the "
        "protocol version and client capabilities is served with guessed ones, so the server acts on "
        "capabilities the client never declared. A request missing a required _meta field is malformed and "
        "MUST get -32602. Fix: check params._meta on every request before serving it.",
    ),
]

_EXHIBITS.update(
    {
        name: Exhibit(
            name,
            symptom,
            explanation,
            check,
            expect,
            None,
            HERE / f"{name}.py",
            era="legacy" if name == "silent_before_initialize" else "modern",
            options=options,
        )
        for name, check, expect, options, symptom, explanation in _MODERN_TABLE
    }
)


# name, check, symptom, explanation: Streamable HTTP servers, each failing its check
_HTTP_TABLE: list[tuple[str, str, str, str]] = [
    (
        "no_origin_check",
        "http-origin",
        "Every MCP client connects and works; a security review finds that any web page the user opens "
        "can call the server's tools.",
        "origin_ok() accepts every Origin ('we only listen on 127.0.0.1, so only this machine can call "
        "us'). But a web page can: DNS rebinding points its own name at 127.0.0.1, and the browser then "
        "sends the page's requests to the local server, marked with the page's Origin. MCP 2025-11-25 says "
        "servers MUST validate Origin and answer an invalid one with 403. Fix: refuse every Origin that is "
        "not this machine's (http://localhost, 127.0.0.1, [::1]) with 403; requests without Origin do not "
        "come from a browser.",
    ),
    (
        "session_id_ignored",
        "http-session",
        "After a client ends its session (DELETE), requests with the old session id still succeed; so do "
        "requests with no session id, or one the server never gave out.",
        "session_for() is 'forgiving': a request whose Mcp-Session-Id is missing or unknown gets a fresh "
        "session instead of 400 or 404. So DELETE ends nothing: the id works on, as a new session that "
        "never saw initialize. Once a session is ended the server MUST answer its id with 404 (the client "
        "then initializes again), and SHOULD answer a request without the id with 400. Fix: look the id "
        "up; absent, 400; unknown or ended, 404.",
    ),
    (
        "notification_with_body",
        "http-notification-202",
        "Every request works, yet clients log an error after each notification they send "
        "(notifications/initialized first of all).",
        "accepted() answers a POSTed notification (or response) with 200 and the handler's return value "
        "as JSON: null. A client expects 202 Accepted and no body there (a MUST); a body makes it look for "
        "a JSON-RPC message that is not there. Fix: answer every notification and response with 202 and "
        "an empty body, whatever the handler returned.",
    ),
    (
        "broken_sse",
        "http-sse",
        "Clients that accept JSON work; a client that asks for a stream (Accept: text/event-stream) waits "
        "for every answer until it times out.",
        "stream() writes the reply as one SSE event with pretty-printed JSON: data: {, then lines like "
        '  "jsonrpc": "2.0", without a data: prefix. A client reads an event field by field, so the '
        "event's data is just '{' and the other lines are ignored fields: the response never arrives. "
        "Fix: write the JSON on one data line (json.dumps with no indent) and end the event with a "
        "blank line.",
    ),
]

_HTTP_EXHIBITS: dict[str, Exhibit] = {
    name: Exhibit(name, symptom, explanation, check, "fail", None, HTTP_DIR / f"{name}.py", "http")
    for name, check, symptom, explanation in _HTTP_TABLE
}


# name, check, expect, symptom, explanation: Streamable HTTP servers of both eras (over_http/modern_base.py,
# the reference's transport), each breaking one rule of 2026-07-28's HTTP
_MODERN_HTTP_TABLE: list[tuple[str, str, str, str, str]] = [
    (
        "session_minted",
        "http-modern-no-session",
        "warn",
        "Modern clients work; a gateway in front of the server pins every client to one backend for good, "
        "and the logs show a new Mcp-Session-Id on every single response.",
        "reply() adds a fresh Mcp-Session-Id to every 2026-07-28 response ('it cannot hurt'). That revision "
        "has no sessions: each POST stands alone, and a server SHOULD neither mint nor echo session ids (a "
        "client or a proxy that believes in them keeps state the server does not have). Fix: send "
        "Mcp-Session-Id only in the legacy era, after an initialize; ignore it on a modern request.",
    ),
    (
        "method_header_unchecked",
        "http-modern-headers",
        "fail",
        "Every client works; a gateway that routes and rate-limits on Mcp-Method lets a tools/call through "
        "as a cheap prompts/list.",
        "post_modern() takes the method from the body and ignores what the Mcp-Method header says ('the "
        "header is only for proxies'). But proxies act on it: when the header and the body disagree, the "
        "gateway and the server act on two different requests. The server MUST refuse a request whose "
        "headers disagree with its body: 400 with -32020 (HeaderMismatch). Fix: compare Mcp-Method with the "
        "body's method (and MCP-Protocol-Version, Mcp-Name) before dispatching.",
    ),
    (
        "unknown_method_ok",
        "http-modern-status",
        "fail",
        "A dual-era client that calls a method this server lacks reports a broken response instead of "
        "'not supported'; a load balancer counts the failures as successes.",
        "reply() sends the -32601 error of an unknown method with 200 ('the error is in the body'). MCP "
        "2026-07-28 says a method the server does not implement MUST get 404 Not Found with -32601: the "
        "status is how an HTTP client or an intermediary tells a missing method from a served one. Fix: "
        "answer -32601 with 404, and -32602, -32020, -32021, -32022 with 400.",
    ),
]
_HTTP_EXHIBITS.update(
    {
        name: Exhibit(name, symptom, explanation, check, expect, None, HTTP_DIR / f"{name}.py", "http", "modern")
        for name, check, expect, symptom, explanation in _MODERN_HTTP_TABLE
    }
)
HTTP_MODERN_BASE = HTTP_DIR / "modern_base.py"  # both eras, or (--modern-only) 2026-07-28 only: passes every check


def exhibits() -> list[Exhibit]:
    """Every stdio exhibit, sorted by name."""
    return [_EXHIBITS[name] for name in sorted(_EXHIBITS)]


def http_exhibits() -> list[Exhibit]:
    """Every Streamable HTTP exhibit, sorted by name."""
    return [_HTTP_EXHIBITS[name] for name in sorted(_HTTP_EXHIBITS)]


def get(name: str) -> Exhibit:
    """The exhibit called ``name`` (stdio or HTTP); KeyError naming the known ones otherwise."""
    found = _EXHIBITS.get(name) or _HTTP_EXHIBITS.get(name)
    if found is None:
        known = ", ".join(sorted(_EXHIBITS))
        over_http = ", ".join(sorted(_HTTP_EXHIBITS))
        raise KeyError(f"no gallery exhibit {name!r}; the exhibits are: {known}; over HTTP: {over_http}")
    return found


def command(name: str, port: int | None = None) -> list[str]:
    """The command that runs the exhibit: ``[python, path]`` (an HTTP one on ``port``, default any free one)."""
    exhibit = get(name)
    if port is not None and exhibit.transport != "http":
        raise ValueError(f"{name} is a stdio server: it takes no port")
    return [sys.executable, str(exhibit.path)] + (["--port", str(port)] if port is not None else [])
