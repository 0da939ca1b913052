# ---
# jupyter:
#   jupytext:
#     comment_magics: false
#     notebook_metadata_filter: language_info,-language_info.codemirror_mode,-language_info.file_extension,-language_info.mimetype,-language_info.nbconvert_exporter,-language_info.pygments_lexer,-language_info.version,-jupytext.text_representation.jupytext_version
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
#   language_info:
#     name: python
# ---

# %% [markdown] id="title"
# # Stage 01: framing
#
# A pipe carries bytes, not messages. *Framing* is the agreement on where one message ends and the
# next begins. Get it wrong and nothing above it works: the host waits for a message that never
# ends, or reads half of one.
#
# In this stage you write the four functions every stdio server and client needs: `encode` and
# `decode` (a message to bytes and back), `read_frame` and `write_frame` (one message off and onto a
# pipe). The course then runs its finished server with your four functions inside it, as a real
# process, and speaks to it the way a host would.
#
# The rules are those of MCP 2026-07-28, the current revision. The framing rules quoted below read
# the same in the legacy era (2025-11-25, Transports > stdio), so what you write here serves both.

# %% id="setup" nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false, "task": false}
from grader.course import lab

lab.setup("01")

# %% [markdown] id="rule"
# ## 1. One message, one line
#
# The spec (MCP 2026-07-28, Transports, `basic/transports/index.mdx` > Messages) says:
#
# > JSON-RPC messages **MUST** be UTF-8 encoded.
#
# and for stdio (Transports > stdio, `basic/transports/stdio.mdx`):
#
# > Messages are delimited by newlines, and **MUST NOT** contain embedded newlines.
#
# > The server **MUST NOT** write anything to its `stdout` that is not a valid MCP message.
#
# So a message on the wire is: one JSON object, serialised on one line, encoded as UTF-8, followed
# by a newline. (The spec says "newlines" and names no byte; the course writes `\n` alone, the byte
# every line reader splits on.) However much a message carries, it is one line. Here a client asks
# the course's server how many orders are paid, and the reply is one line too, though it holds a
# JSON text inside a string (its quotes escaped as `\"`):
#
# ```text
# -> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"count_orders","arguments":{"status":"paid"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}
# <- {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"{\"status\": \"paid\", \"count\": 341}"}],"structuredContent":{"status":"paid","count":341},"isError":false,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcp-wire-lab-shop","title":"MCP Wire Lab shop","version":"0.1.0"}}}}
# ```
#
# (`params._meta` names the revision the request speaks: stage 03. Framing never looks inside a
# message.)
#
# *Before 2026-07-28:* the framing was the same. Requests carried no `_meta`, so the shortest
# request was a `ping`, `{"jsonrpc":"2.0","id":1,"method":"ping"}`; 2026-07-28 removed `ping`.
#
# Can a message contain a newline? Its *text* can: a product description may well have two
# lines. `json.dumps` writes a newline inside a string as the two characters `\` and `n`, so the
# serialised message is still one line. Only `indent=` puts real newlines into the output, and that
# breaks the framing: a host reads `{` as a whole message and fails.

# %% id="newline-demo"
import json

message = {"jsonrpc": "2.0", "id": 1, "result": {"text": "line one\nline two"}}
print(json.dumps(message))
print("real newlines in the output:", json.dumps(message).count("\n"))

# %% [markdown] id="strict"
# ## 2. Strict JSON, in UTF-8
#
# Python's `json` module is generous in two ways that break other programs:
#
# - `json.dumps(float("nan"))` writes `NaN`, which is not JSON. A Node host's `JSON.parse` fails on
#   it (`Unexpected token 'N'`). Pass `allow_nan=False` and the mistake becomes a `ValueError`
#   in your server instead of a broken host.
# - `json.loads("NaN")` accepts it. The `parse_constant` argument is called for `NaN`,
#   `Infinity` and `-Infinity`; make it raise.
#
# Then the bytes. Read and write the *binary* streams (`sys.stdin.buffer`, `sys.stdout.buffer`)
# and do the UTF-8 work yourself: the text streams use the platform's encoding, which on many
# Windows machines is cp1252 and cannot write an emoji. A server that writes text through `print`
# works on your laptop and dies on the first `☕` on someone else's.
#
# Decoding bytes that are not UTF-8 raises `UnicodeDecodeError`; a line that is not JSON raises
# `json.JSONDecodeError`. Both are subclasses of `ValueError`, which is the one exception your
# `decode` may raise: the server turns it into the error reply -32700 (stage 02).

# %% [markdown] id="task-codec"
# ### Your turn: `encode` and `decode`
#
# The cell below starts with `%%module framing`. Running it saves the cell as `framing.py` beside
# this notebook (the file the course runs inside its server) and runs it here, so you can try your
# functions in the next cells.
#
# - `encode(message)`: the message as `bytes`: JSON on one line, UTF-8, ending in exactly one
#   `b"\n"`. A message holding NaN or Infinity raises `ValueError`.
# - `decode(line)`: the JSON value in `line` (bytes without its line ending). Raise `ValueError`
#   for anything that is not strict JSON in UTF-8: bad bytes, `NaN`, `Infinity`, not JSON at all.
# - `read_frame(stream)`: read one line from a binary stream and return it without its `\n` (and
#   without a `\r` before it: the spec does not say which bytes a newline is, so the course's
#   reader also accepts `\r\n` from others, and its writer sends `\n` alone). At the end of the input
#   `stream.readline()` returns `b""`: return `None`. An empty line is `b""`, not `None`.
# - `write_frame(stream, message)`: write `encode(message)` to the binary stream, then flush it.

# %% id="framing" nbgrader={"grade": false, "grade_id": "framing", "locked": false, "schema_version": 3, "solution": true, "task": false}
%%module framing
import json


def _no_constants(name):
    raise ValueError(f"{name} is not JSON")


def encode(message):
    """One message as one line of UTF-8 JSON, ending in a single newline."""
    ### BEGIN SOLUTION
    text = json.dumps(message, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return text.encode("utf-8") + b"\n"
    ### END SOLUTION


def decode(line):
    """The JSON value in ``line``; ValueError for anything that is not strict JSON in UTF-8."""
    ### BEGIN SOLUTION
    return json.loads(line.decode("utf-8"), parse_constant=_no_constants)
    ### END SOLUTION


def read_frame(stream):
    """One line from ``stream`` without its line ending; None at the end of the input."""
    ### BEGIN SOLUTION
    line = stream.readline()
    if not line:
        return None
    if line.endswith(b"\n"):
        line = line[:-1]
        if line.endswith(b"\r"):
            line = line[:-1]
    return line
    ### END SOLUTION


def write_frame(stream, message):
    """Write one message and flush: a pipe holds what you write until you do."""
    ### BEGIN SOLUTION
    stream.write(encode(message))
    stream.flush()
    ### END SOLUTION


# %% id="try-codec"
print(encode({"jsonrpc": "2.0", "id": 1, "result": {"text": "café ☕"}}))
print(decode(b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'))

# %% id="test_encode" nbgrader={"grade": true, "grade_id": "test_encode", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# Encode: four messages (newlines in text, non-ASCII, 0 and ""); NaN refused.
# Hidden when graded: the same checks on other values.
lab.check("test_encode")

# %% id="test_decode" nbgrader={"grade": true, "grade_id": "test_decode", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# Decode: the same four messages back; eight lines that are not strict JSON refused.
# Hidden when graded: the same checks on other values.
lab.check("test_decode")

# %% id="test_read_frame" nbgrader={"grade": true, "grade_id": "test_read_frame", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# Read_frame: \n and \r\n endings, an empty line, a last line with no newline, the end.
# Hidden when graded: the same checks on other values.
lab.check("test_read_frame")

# %% [markdown] id="flush"
# ## 3. The flush
#
# When stdout is a terminal, Python writes each line at once. When stdout is a *pipe*, which it
# always is for an MCP server, Python collects what you write in a buffer of several kilobytes
# and sends it when the buffer is full or the program ends. A reply of 40 bytes sits in that buffer
# while the host waits for it. The host times out; or, if the host happens to close the pipe first,
# the program ends, the buffer is written, and everything seems fine. That is why this bug survives
# `echo '...' | python server.py`.
#
# Watch it happen. The server below (from the course's gallery of broken servers) forgets to
# flush. It is an older server, of the legacy era, so the client opens with `initialize` and then
# sends a `ping` (the flush bug is the same in every revision). The client waits a second for each
# reply; the replies arrive only when stdin is closed and the server exits.
#
# No sentence of the spec mentions buffers. The rule a missing flush breaks is the reply rule: a
# request gets a response ("the Server MUST reply with a Response", JSON-RPC 2.0, section 5), and a
# reply still in a buffer has not been sent. The checks call this `stdout-flush`:

# %% id="watch-missing-flush"
lab.watch(lab.exhibit("missing_flush"), [lab.initialize(id=1), lab.request("ping", id=2)])

# %% [markdown] id="flush-fixed"
# The same two requests against the reference server: each reply within a millisecond or two.
# (Some machines set `PYTHONUNBUFFERED=1`, which hides the bug; the course removes it from every
# server it starts, so that you see what a user of your server would see.)

# %% id="watch-reference"
lab.watch(lab.reference(), [lab.initialize(id=1), lab.request("ping", id=2)])

# %% [markdown] id="inspect-flush-md"
# ### The same two servers in the wire inspector
#
# The inspector sends the same two requests to the broken server and to the reference, and shows
# the two sessions side by side. Each row is one event with its time: `→` a frame the client sent,
# `←` a frame the server wrote, `2>` a line on stderr, `··` a note (no reply in time, stdin closed,
# the exit). `#1 (#7)` means frame 1 is answered by frame 7. Click a frame to see it
# pretty-printed.
#
# Look at the red box first: it names the first frame where the broken server parts from the
# reference, the rule it breaks (`stdout-flush`) and the fix. Then find the two replies: they are
# there, at the very end, after `stdin closed`. Below the sessions you can type any line, press
# *Send*, and see what a live copy of the broken server does with it.

# %% id="inspect-flush"
lab.inspect(lab.exhibit("missing_flush"), [lab.initialize(id=1), lab.request("ping", id=2)], against=lab.reference(), timeout=1.5)

# %% [markdown] id="process-tests"
# ## 4. Your framing in a real server
#
# The tests below start the course's server with your `framing.py` inside it, as a child process
# with pipes. They send requests and wait for replies with stdin still open, as a host does. If a
# reply only comes when stdin closes, the failure says so.
#
# Most of them send `ping`, the legacy era's request whose reply is always `{}`. MCP 2026-07-28
# removed it, but the course's server serves both eras (stage 03), and framing does not care which
# era a line belongs to.

# %% id="test_flush" nbgrader={"grade": true, "grade_id": "test_flush", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# Your framing in the course's server: three (legacy) pings, ids 1, "abc", 42, answered at once.
# Hidden when graded: the same checks on other values.
lab.check("test_flush")

# %% id="test_unicode_process" nbgrader={"grade": true, "grade_id": "test_unicode_process", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# Non-ASCII both ways through the server, also under PYTHONIOENCODING=cp1252.
lab.check("test_unicode_process")

# %% id="test_bad_lines" nbgrader={"grade": true, "grade_id": "test_bad_lines", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# Four lines that are not JSON: -32700 each, and the server answers the next ping.
lab.check("test_bad_lines")

# %% [markdown] id="end"
# ## What you have now
#
# Four functions that every later stage stands on: your server can now *carry* any message.
# Stage 02 decides what to *answer*: requests, notifications, and the lines that are neither.

# %% [markdown] id="read-next"
# ## Read next in the spec
#
# - `docs/specification/2026-07-28/basic/transports/index.mdx`: "Messages" (UTF-8), "Custom
#   Transports".
# - `docs/specification/2026-07-28/basic/transports/stdio.mdx`: the opening list (newlines, what
#   stdout may carry), "Sending Messages", "Receiving Messages".
# - The legacy era: `docs/specification/2025-11-25/basic/transports.mdx`, the opening and "stdio".
# - JSON (RFC 8259): section 6 (numbers: no NaN or Infinity) and section 8.1 (UTF-8 between
#   systems). JSON-RPC 2.0 (https://www.jsonrpc.org/specification), section 5 (a request gets a
#   response).
