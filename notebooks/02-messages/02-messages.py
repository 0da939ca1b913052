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
# # Stage 02: messages and ids
#
# Framing gives you one line at a time. This stage decides what each line deserves: an answer, an
# error, or silence. You write `handle_line`, the function at the centre of every server: one line
# in, one reply (or nothing) out. The course runs its server with your `handle_line` inside it.
#
# The rules here are the Base Protocol of MCP 2026-07-28 (`basic/index.mdx`, "Messages"): the
# messages of JSON-RPC 2.0, with MCP's own rules for ids and error codes. They hold in the legacy
# era too (2025-11-25 and before), and a "Before 2026-07-28" note says where the two differ. What
# differs most is *which methods exist*, so every example below says which era it belongs to.

# %% id="setup" nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false, "task": false}
from grader.course import lab

lab.setup("02")

# %% [markdown] id="three-kinds"
# ## 1. Three kinds of message
#
# The spec (MCP 2026-07-28, Base Protocol > Messages) says:
#
# > All messages between MCP clients and servers **MUST** follow the
# > [JSON-RPC 2.0](https://www.jsonrpc.org/specification) specification.
#
# It defines three kinds of message, and they are told apart by their members:
#
# | kind | has `method` | has `id` | the receiver |
# |---|---|---|---|
# | request | yes | yes | answers it with a response carrying the same `id` |
# | notification | yes | **no** | never answers |
# | response | no | yes | matches it to a request it sent |
#
# A request of MCP 2026-07-28 and its reply. Every 2026-07-28 request carries its revision and the
# client's capabilities in `params._meta` (stage 03 is about that envelope), and every result
# carries `resultType` (`...` marks what is left out here):
#
# ```text
# -> {"jsonrpc":"2.0","id":"7","method":"tools/call","params":{"name":"count_orders","arguments":{"status":"paid"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}
# <- {"jsonrpc":"2.0","id":"7","result":{"resultType":"complete",...,"structuredContent":{"status":"paid","count":341},...}}
# ```
#
# A notification of 2026-07-28, and no reply at all. In 2026-07-28 the client sends one kind of
# notification (`schema.ts`, `ClientNotification`): `notifications/cancelled`, "I no longer want
# the answer to request `"7"`":
#
# ```text
# -> {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"7"}}
# ```
#
# *Before 2026-07-28:* the same three kinds, with more methods. A request needed no `_meta`, and
# the smallest was `ping`; after the `initialize` handshake the client sent the notification
# `notifications/initialized`:
#
# ```text
# -> {"jsonrpc":"2.0","id":"7","method":"ping"}
# <- {"jsonrpc":"2.0","id":"7","result":{}}
# -> {"jsonrpc":"2.0","method":"notifications/initialized"}
# ```
#
# MCP 2026-07-28 removed the handshake, its notification and `ping` (`changelog.mdx`, Major
# changes 2 and 5). So in 2026-07-28 `ping` is a method the server does not serve, and the course's
# server answers it with -32601 (Method not found, section 3):
#
# ```text
# -> {"jsonrpc":"2.0","id":"7","method":"ping","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}
# <- {"jsonrpc":"2.0","id":"7","error":{"code":-32601,...}}
# ```
#
# The course's server serves both eras (stage 03), because clients in the field still open with
# `initialize`. The server your `handle_line` runs in at the end of this stage is its legacy half,
# so its checks send `ping`: a legacy request whose reply is always `{}`.
#
# **Who sends what.** In 2026-07-28 requests go one way: "servers do not initiate JSON-RPC requests
# and clients do not send JSON-RPC responses" (Transports > Messages). In the legacy era
# "Requests are sent from the client to the server or vice versa" (2025-11-25, Base Protocol >
# Requests): a server could ask the client something (`ping`, `roots/list`,
# `sampling/createMessage`, `elicitation/create`), and the client's response came in on the
# server's stdin.
#
# ### Ids
#
# The spec's rules for ids (MCP 2026-07-28, Base Protocol > Requests and > Result Responses;
# 2025-11-25 says the same):
#
# > Requests **MUST** include a string or integer ID.
#
# > Unlike base JSON-RPC, the ID **MUST NOT** be `null`.
#
# > Result responses **MUST** include the same ID as the request they correspond to.
#
# The same ID: and an ID is a string or a number (`schema.ts`: `RequestId = string | number`), so
# `"7"` and `7` are two different ids. A client that sent `"7"` and gets `7` back has no reply to
# its request, and waits until it times out. Never convert an id; copy it. And `0` is an integer,
# so a valid id (the official TypeScript SDK numbers its requests from 0): never test an id with
# `if id:`.
#
# ## 2. A notification has no `id` member at all
#
# The spec (MCP 2026-07-28, Base Protocol > Notifications; 2025-11-25 says the same):
#
# > The receiver **MUST NOT** send a response.
#
# > Notifications **MUST NOT** include an ID.
#
# Test for a notification with `"id" not in message`. A message with `"id": null` *has* an id
# member, with a value the spec forbids: it is not a valid request, and gets an error (section 3).
# An answer to a notification, even an error, breaks the MUST NOT, and the client has no request
# to match it with.
#
# A message with no `method` but a `result` or an `error` is a *response*. In the legacy era it is
# the client's answer to a request the server sent. In 2026-07-28 none should come: "The client
# **MUST NOT** write JSON-RPC _responses_." (Transports > stdio > Sending Messages). Either way it
# is not a request, so nothing answers it. The spec says nothing more about a response nobody asked
# for; the course's server sends no requests, so it drops every response, and so does your
# `handle_line`.

# %% [markdown] id="errors"
# ## 3. The error table
#
# When a request cannot be served, the reply carries `error` instead of `result`. The spec (MCP
# 2026-07-28, Base Protocol > Error Responses):
#
# > Error responses **MUST** include an `error` field with a `code` and `message`.
#
# > Error codes **MUST** be integers.
#
# and (> Error Codes):
#
# > MCP uses the standard JSON-RPC 2.0 error codes (`-32700`, `-32600` to `-32603`)
# > for general protocol failures.
#
# JSON-RPC 2.0 (section 5.1) gives each its name and meaning; the last column says when the
# course's server sends it. Where JSON-RPC and MCP leave the choice open (`params` that are an
# array: -32600 or -32602?), that column is the course's choice, and the checks grade it:
#
# | code | JSON-RPC 2.0's name: meaning | the course's server sends it for |
# |---|---|---|
# | -32700 | Parse error: invalid JSON was received | a line that is not JSON (or not UTF-8, stage 01) |
# | -32600 | Invalid Request: the JSON is not a valid Request object | not an object, no `"jsonrpc": "2.0"`, no string `method`, an id that is not a string or an integer (the MCP rule above) |
# | -32601 | Method not found: the method does not exist or is not available | a method the server does not serve (in 2026-07-28, `ping` too) |
# | -32602 | Invalid params: invalid method parameter(s) | `params` that are not an object (MCP's requests carry an object, `schema.ts` `Request`), or params the method's handler refuses |
# | -32603 | Internal error: internal JSON-RPC error | a handler that failed unexpectedly |
#
# When the id cannot be read (a line that is not JSON, an id that is not valid), the reply cannot
# carry it. The spec's words (MCP 2026-07-28, Base Protocol > Error Responses):
#
# > Error responses **MUST** include the same ID as the request they correspond to (except in error
# > cases where the ID could not be read due a malformed request).
#
# What such an error carries instead: JSON-RPC 2.0 (section 5) says the id MUST be `null`; MCP's
# schema lets it leave `id` out (`JSONRPCErrorResponse`, `id?`). The course's server follows
# JSON-RPC 2.0 and sends `"id": null`, and so does your `handle_line`. Three errors of 2026-07-28:
#
# ```text
# -> hello?
# <- {"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: Expecting value at column 1"}}
# -> {"jsonrpc":"2.0","id":3,"method":"tools/lisst","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}
# <- {"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found: tools/lisst"}}
# -> {"jsonrpc":"2.0","id":null,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}
# <- {"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: the id must be a string or an integer (not null, not 1.5, not true)"}}
# ```
#
# And under all of them: **a bad line never ends the server.** It gets its error, and the next
# line is read as if nothing happened. The spec has no sentence for this, but it follows from the
# rule that every request gets a response (JSON-RPC 2.0, section 5): a server that died on one bad
# line answers none of the requests after it. MCP 2026-07-28 asks a client to restart a server
# that exits unexpectedly, and "any in-flight requests are simply lost" (Transports > stdio >
# Unexpected Termination).
#
# *JSON arrays.* A JSON-RPC *batch* (an array of messages) was part of MCP 2025-03-26 only:
# 2025-06-18 removed batching, and 2026-07-28 has none. The course's server answers an array with
# -32600 (stage 03 serves batches to a 2025-03-26 client).
#
# ### MCP's own codes
#
# JSON-RPC 2.0 leaves -32000 to -32099 to implementations ("implementation-defined server-errors").
# MCP 2026-07-28 (Base Protocol > Error Codes) splits that range: -32000 to -32019 is *legacy*
# (codes implementations allocated before the policy; new implementations **SHOULD NOT** use them), and of -32020 to
# -32099 it says:
#
# > Error codes in this sub-range are defined exclusively by the MCP specification and
# > recorded in the schema. Implementations **MUST NOT** emit any code from this sub-range that
# > is not defined by this specification and **MUST** use defined codes only with their
# > specified meanings.
#
# It defines three (the names are the spec's; what each means is from `schema.ts`):
#
# | code | name | when |
# |---|---|---|
# | -32020 | `HeaderMismatch` | the HTTP headers of a request do not match its body, or required headers are missing or malformed: Streamable HTTP only, stdio has no headers (stage 12) |
# | -32021 | `MissingRequiredClientCapability` | the request needs a client capability its `_meta` did not declare; `data.requiredCapabilities` lists them (stage 11) |
# | -32022 | `UnsupportedProtocolVersion` | the server does not support the request's protocol version; `data.supported` lists the versions it does, `data.requested` repeats the one asked for (stage 03) |
#
# They exist because in 2026-07-28 every request carries its own protocol version and client
# capabilities, in `params._meta` (stage 03), so every request can be refused for them.
#
# *Before 2026-07-28:* those three codes did not exist, and two legacy codes are retired. Of
# -32002 (resource not found, 2025-11-25 and earlier) and -32042 (URL elicitation required,
# 2025-11-25 only), 2026-07-28 says "Implementations of this protocol version **MUST NOT** emit
# these codes": an unknown resource is -32602 there (stage 10). The other differences this stage
# touches: a 2026-07-28 result **MUST** carry `resultType` (the handler puts it in, stage 03;
# `handle_line` sends the result it is given), and requests and notifications of the legacy era
# came from both sides (section 1).

# %% [markdown] id="inspect-md"
# ### Watch it on the wire
#
# The cell below sends the course's server five frames of MCP 2026-07-28: a `tools/call` with the
# id `"7"`, the notification that cancels request `"7"` (it has already been answered, so there is
# nothing left to stop), a line that is not JSON, a request with `"id": null` and a misspelt
# method. It shows the exchange as a timeline in the wire inspector. A request and its reply point
# at each other: `#1 (#3)` means frame 1 is answered by frame 3. The notification has no partner:
# nothing answers it. The two error replies carry `"id": null`, because the server could not read
# an id. Click a frame to see it pretty-printed.
#
# Then type your own lines into the box below it and press *Send*. Predict each reply first:
# `{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}`, `[]`, and
# `{"jsonrpc":"2.0","id":5,"result":{}}` (a response: what does a server owe it?).

# %% id="inspect"
lab.inspect(
    lab.reference(),
    [
        lab.modern("tools/call", id="7", params={"name": "count_orders", "arguments": {"status": "paid"}}),
        lab.notification("notifications/cancelled", {"requestId": "7"}),
        "hello?",
        {**lab.modern("tools/list"), "id": None},
        lab.modern("tools/lisst", id=3),
    ],
)

# %% [markdown] id="task"
# ### Your turn: `handle_line`
#
# Write the module `messages`:
#
# - `result_reply(id, result)` and `error_reply(id, code, message)`: the two kinds of response.
# - `handle_line(line, methods)`: `line` is one frame (bytes, line ending removed); `methods` maps
#   a method name to its handler, a function of the request's `params` (a dict) that returns the
#   result. Return the reply as a dict, or `None` when nothing must be sent. In order:
#   1. not JSON (use `decode` from the course's framing, which raises `ValueError`): -32700, id null;
#   2. a JSON array: -32600, id null (batches were MCP 2025-03-26's only: stage 03);
#   3. a response (an object with `result` or `error` and no `method`): `None` (nothing answers a
#      response);
#   4. not an object, `jsonrpc` not `"2.0"`, or `method` not a string: -32600, with the message's id
#      if it is a valid id, else null;
#   5. a notification (no `id` member): call its handler if there is one, ignore what it returns or
#      raises, and return `None`;
#   6. an id that is not a string or an integer (`null`, `1.5`, `true`): -32600, id null. Careful:
#      in Python `True` is an `int`;
#   7. a method not in `methods`: -32601;
#   8. `params` present and not an object: -32602;
#   9. call the handler with the params (`{}` when absent). If it raises `RpcError`, answer with
#      that error's `code` and `message`; if it raises anything else, -32603; otherwise the result.
#
# `RpcError` is the course's protocol error, from `reference.errors` (the one table of error
# codes, which every stage may import). A handler raises it to choose the error it is answered
# with: `exc.code` is the number to send, `exc.message` the text (the code's name, then the
# detail). Anything else a handler raises is a bug of the server's: -32603.
#
# `handle_line` never reads the members of `params`: checking a 2026-07-28 request's `_meta`
# envelope is stage 03's work, and a handler's result (with its `resultType`) goes out as the
# handler made it.

# %% id="rpc-error"
from reference.errors import INVALID_PARAMS, RpcError


def get_order(params):
    raise RpcError(INVALID_PARAMS, "order_id must be an integer")


try:
    get_order({"order_id": "seven"})
except RpcError as exc:
    print(exc.code, repr(exc.message))

# %% id="messages" nbgrader={"grade": false, "grade_id": "messages", "locked": false, "schema_version": 3, "solution": true, "task": false}
%%module messages
from reference.errors import RpcError
from reference.framing import decode

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


def result_reply(id, result):
    ### BEGIN SOLUTION
    return {"jsonrpc": "2.0", "id": id, "result": result}
    ### END SOLUTION


def error_reply(id, code, message):
    ### BEGIN SOLUTION
    return {"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}
    ### END SOLUTION


def valid_id(value):
    """A string or an integer, and not a bool."""
    ### BEGIN SOLUTION
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))
    ### END SOLUTION


def handle_line(line, methods):
    """The reply to one line, or None when nothing must be sent."""
    ### BEGIN SOLUTION
    try:
        message = decode(line)
    except ValueError as exc:
        return error_reply(None, PARSE_ERROR, f"Parse error: {exc}")
    if isinstance(message, list):
        return error_reply(None, INVALID_REQUEST, "Invalid Request: batches are not supported")
    if isinstance(message, dict) and "method" not in message and ("result" in message or "error" in message):
        return None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or not isinstance(message.get("method"), str):
        id = message.get("id") if isinstance(message, dict) and valid_id(message.get("id")) else None
        return error_reply(id, INVALID_REQUEST, "Invalid Request")
    method = message["method"]
    params = message.get("params", {})
    if "id" not in message:
        handler = methods.get(method)
        if handler is not None:
            try:
                handler(params)
            except Exception:
                pass
        return None
    id = message["id"]
    if not valid_id(id):
        return error_reply(None, INVALID_REQUEST, "Invalid Request: the id must be a string or an integer")
    if method not in methods:
        return error_reply(id, METHOD_NOT_FOUND, f"Method not found: {method}")
    if not isinstance(params, dict):
        return error_reply(id, INVALID_PARAMS, "Invalid params: params must be an object")
    try:
        return result_reply(id, methods[method](params))
    except RpcError as exc:
        return error_reply(id, exc.code, exc.message)
    except Exception as exc:
        return error_reply(id, INTERNAL_ERROR, f"Internal error: {type(exc).__name__}")
    ### END SOLUTION


# %% id="try-it"
# A table of one method; its handler's result is a 2026-07-28 one (with resultType).
methods = {"tools/list": lambda params: {"resultType": "complete", "tools": []}}
print(handle_line(b'{"jsonrpc":"2.0","id":"7","method":"tools/list"}', methods))
print(handle_line(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"7"}}', methods))
print(handle_line(b"hello?", methods))
print(handle_line(b'{"jsonrpc":"2.0","id":0,"method":"ping"}', methods))  # not in the table: -32601

# %% id="test_replies" nbgrader={"grade": true, "grade_id": "test_replies", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# Result_reply and error_reply for ids 0, "7" and 42; valid_id on ten values.
lab.check("test_replies")

# %% id="test_branches" nbgrader={"grade": true, "grade_id": "test_branches", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 4}
# Every branch of handle_line, for ids 1, "7" and 0.
# Hidden when graded: the same checks on other values.
lab.check("test_branches")

# %% [markdown] id="process"
# ## 4. Your `handle_line` in a real server
#
# The tests below run the course's server with your `handle_line` inside it, every line of its
# stdin handed to your function. It is the course's server of the legacy era (2025-11-25): its
# `methods` are `initialize`, `ping`, `tools/list`, `tools/call` and the notifications
# `notifications/initialized` and `notifications/cancelled`, and it reads no `_meta` yet (stage 03
# adds the 2026-07-28 envelope). So the tests send `ping`, the legacy era's request whose reply
# is always `{}`: the probes `mcp-lab check` sends a legacy server.

# %% id="test_id_echo" nbgrader={"grade": true, "grade_id": "test_id_echo", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 3}
# Your handle_line in the course's (legacy) server: pings with ids 0, 42, "abc" and "7".
# Hidden when graded: the same checks on other values.
lab.check("test_id_echo")

# %% id="test_silence" nbgrader={"grade": true, "grade_id": "test_silence", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# No reply to notifications/initialized (legacy), notifications/cancelled, an unknown notification,
# or a response.
lab.check("test_silence")

# %% id="test_error_table" nbgrader={"grade": true, "grade_id": "test_error_table", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 3}
# -32700, -32600 (twice), -32601 and -32602 with id 1, each followed by a ping.
# Hidden when graded: the same checks on other values.
lab.check("test_error_table")

# %% [markdown] id="end"
# ## What you have now
#
# Every line gets what it deserves, and no line can end the server. Stage 03 teaches the server the
# two eras: the 2026-07-28 envelope every request carries (and `server/discover`), and the
# `initialize` handshake old clients still open with; and a clean exit when the client goes away.
#
# ## Recall
#
# 1. A message has `"id": null`. Is it a notification? What does the server answer?
# 2. Why is `if id:` wrong for telling a request from a notification?
# 3. A client sent the id `"7"` and the reply has `7`. What does the client see?
# 4. Which error code says "this request names a version I do not serve", and what does its `data`
#    carry?
# 5. Which notification does a 2026-07-28 client send? What does a 2026-07-28 `ping` get, and why?
# 6. A response arrives on the server's stdin. What does the server answer?

# %% [markdown] id="read-next"
# ## Read next in the spec
#
# - `docs/specification/2026-07-28/basic/index.mdx`: "Messages" (Requests, Responses with Result
#   Responses, Error Responses and Error Codes, Notifications).
# - `docs/specification/2026-07-28/basic/transports/index.mdx`: "Messages" (who sends requests,
#   who sends responses).
# - `docs/specification/2026-07-28/basic/transports/stdio.mdx`: "Sending Messages", "Receiving
#   Messages", "Unexpected Termination".
# - `docs/specification/2026-07-28/changelog.mdx`: "Major changes" 2 and 5 (the handshake and
#   `ping` removed), "Minor changes" 6 and 12 (-32002 replaced, the error code ranges).
# - `schema/2026-07-28/schema.ts`: `JSONRPCMessage`, `RequestId`, `JSONRPCErrorResponse`,
#   `ClientNotification`, `HeaderMismatchError`, `UnsupportedProtocolVersionError`,
#   `MissingRequiredClientCapabilityError`.
# - The legacy era: `docs/specification/2025-11-25/basic/index.mdx`, "Messages".
# - JSON-RPC 2.0 (https://www.jsonrpc.org/specification): sections 4 (Request object, 4.1
#   Notification), 5 (Response object, 5.1 Error object) and 6 (Batch).
