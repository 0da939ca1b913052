Stage 02 of MCP Wire Lab, as text (see grader/course/notebook.py for the cell syntax).

# %% [markdown] id=title
# # Stage 02: messages and ids
#
# Framing gives you one line at a time. This stage decides what each line deserves: an answer, an
# error, or silence. You write `handle_line`, the function at the centre of every server: one line
# in, one reply (or nothing) out. The course runs its server with your `handle_line` inside it.
#
# The rules are those of MCP 2026-07-28, the current revision; a "Before 2026-07-28" note says
# where the legacy era (2025-11-25 and before) differs.

# %% setup id=setup
from grader.course import lab

lab.setup("02")

# %% [markdown] id=three-kinds
# ## 1. Three kinds of message
#
# MCP messages are JSON-RPC 2.0 messages. The spec (MCP 2026-07-28, Base Protocol; 2025-11-25 says
# the same) defines three kinds, and tells them apart by their members:
#
# | kind | has `method` | has `id` | the receiver |
# |---|---|---|---|
# | request | yes | yes | answers exactly once, with the same `id` |
# | notification | yes | **no** | never answers |
# | response | no | yes | matches it to a request it sent |
#
# A request and its reply:
#
# ```text
# -> {"jsonrpc":"2.0","id":"7","method":"ping"}
# <- {"jsonrpc":"2.0","id":"7","result":{}}
# ```
#
# A notification, and no reply at all:
#
# ```text
# -> {"jsonrpc":"2.0","method":"notifications/initialized"}
# ```
#
# The spec's rules for ids:
#
# > Requests **MUST** include a string or integer ID.
# > Unlike base JSON-RPC, the ID **MUST NOT** be `null`.
#
# > Result responses **MUST** include the same ID as the request they correspond to.
#
# "The same" means the same JSON value *and* the same JSON type. `"7"` is a string and `7` is a
# number: a client that sent `"7"` and gets `7` back has no reply to its request, and waits until it
# times out. Never convert an id; copy it. And `0` is a perfectly good id (some clients start
# counting there), so never test an id with `if id:`.
#
# ## 2. A notification has no `id` member at all
#
# > The receiver **MUST NOT** send a response.
#
# Test for a notification with `"id" not in message`. A message with `"id": null` *has* an id
# member, with a value that is not allowed: it is an invalid request, and gets an error. Strict
# hosts drop the connection when a notification is answered, even with an error.
#
# A message with no `method` but a `result` or an `error` is a *response*: the client answering
# a request that the server sent. The shop server never sends requests, so it has nothing to match
# it to; it must not answer it either (an answer would carry an id from the server's own id space).

# %% [markdown] id=errors
# ## 3. The error table
#
# When a request cannot be served, the reply carries `error` instead of `result`: an integer `code`
# and a string `message`. JSON-RPC 2.0 reserves these codes:
#
# | code | name | when |
# |---|---|---|
# | -32700 | Parse error | the line is not JSON |
# | -32600 | Invalid Request | JSON, but not a valid request: not an object, no `"jsonrpc": "2.0"`, no string `method`, an id that is not a string or an integer |
# | -32601 | Method not found | the server does not serve this method |
# | -32602 | Invalid params | `params` is not an object, or the method's handler refuses them |
# | -32603 | Internal error | the handler failed unexpectedly |
#
# When the id cannot be read (a line that is not JSON, an id that is not valid), the reply's id is
# `null`. The spec's words:
#
# > Error responses **MUST** include the same ID as the request they correspond to (except in error
# > cases where the ID could not be read due a malformed request).
#
# ```text
# -> hello?
# <- {"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: Expecting value at column 1"}}
# -> {"jsonrpc":"2.0","id":3,"method":"tools/lisst"}
# <- {"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found: tools/lisst"}}
# -> {"jsonrpc":"2.0","id":null,"method":"ping"}
# <- {"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: the id must be a string or an integer (not null, not 1.5, not true)"}}
# ```
#
# And the rule under all of them: **a bad line never ends the server.** It gets its error, and the
# next line is read as if nothing happened. A host that sees the server die on one bad line shows
# the user "server disconnected", and the user has no idea why.
#
# ### MCP's own codes
#
# JSON-RPC leaves -32000 to -32099 to implementations. MCP 2026-07-28 (Base Protocol, Error Codes)
# takes -32020 to -32099 for itself ("Implementations **MUST NOT** emit any code from this
# sub-range that is not defined by this specification") and defines three:
#
# | code | name | when |
# |---|---|---|
# | -32020 | Header mismatch | HTTP only: an `Mcp-*` header is missing or disagrees with the body (stage 12) |
# | -32021 | Missing required client capability | the request needs a capability its client did not declare; `data.requiredCapabilities` says which (stage 11) |
# | -32022 | Unsupported protocol version | the request names a version the server does not serve; `data.supported` lists those it does (stage 03) |
#
# They exist because in 2026-07-28 every request carries its own protocol version and client
# capabilities, in `params._meta` (stage 03), so every request can be refused for them.
#
# *Before 2026-07-28:* -32002 meant "Resource not found" (2025-11-25, Resources). 2026-07-28
# retired it: an unknown resource is -32602 there (stage 10). Everything else in this stage is the
# same in both eras.

# %% [markdown] id=inspect-md
# ### Watch it on the wire
#
# The cell below sends the course's server a request with the id `"7"`, a notification, a line
# that is not JSON, a request with `"id": null` and a misspelt method, and shows the exchange as a
# timeline in the wire inspector. A request and its reply point at each other: `#1 (#3)` means
# frame 1 is answered by frame 3. The notification has no partner: nothing answers it. The two
# error replies carry `"id": null`, because the server could not read an id. Click a frame to see
# it pretty-printed.
#
# Then type your own lines into the box below it and press *Send*. Predict each reply first:
# `{"jsonrpc":"2.0","id":0,"method":"ping"}`, the same with the id `1.5`, `[]`,
# `{"jsonrpc":"2.0","id":5,"result":{}}` (a response: what does a server owe it?).

# %% id=inspect
lab.inspect(
    lab.reference(),
    [
        lab.request("ping", id="7"),
        lab.notification("notifications/initialized"),
        "hello?",
        {"jsonrpc": "2.0", "id": None, "method": "ping"},
        lab.request("tools/lisst", id=3),
    ],
)

# %% [markdown] id=task
# ### Your turn: `handle_line`
#
# Write the module `messages`:
#
# - `result_reply(id, result)` and `error_reply(id, code, message)`: the two kinds of response.
# - `handle_line(line, methods)`: `line` is one frame (bytes, line ending removed); `methods` maps
#   a method name to its handler, a function of the request's `params` (a dict) that returns the
#   result. Return the reply as a dict, or `None` when nothing must be sent. In order:
#   1. not JSON (use `decode` from the course's framing, which raises `ValueError`): -32700, id null;
#   2. a JSON array: -32600, id null (batches come in stage 03);
#   3. a response (an object with `result` or `error` and no `method`): `None`;
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

# %% id=rpc-error
from reference.errors import INVALID_PARAMS, RpcError


def get_order(params):
    raise RpcError(INVALID_PARAMS, "order_id must be an integer")


try:
    get_order({"order_id": "seven"})
except RpcError as exc:
    print(exc.code, repr(exc.message))

# %% solution id=messages
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


# %% id=try-it
methods = {"ping": lambda params: {}}
print(handle_line(b'{"jsonrpc":"2.0","id":"7","method":"ping"}', methods))
print(handle_line(b'{"jsonrpc":"2.0","method":"notifications/initialized"}', methods))
print(handle_line(b"hello?", methods))

# %% test id=test_replies points=2
# Result_reply and error_reply for ids 0, "7" and 42; valid_id on ten values.
lab.check("test_replies")

# %% test id=test_branches points=4
# Every branch of handle_line, for ids 1, "7" and 0.
# Hidden when graded: the same checks on other values.
lab.check("test_branches")

# %% [markdown] id=process
# ## 4. Your `handle_line` in a real server
#
# The tests below run the course's server with your `handle_line` inside it: its `methods` are the
# shop server's real ones (`initialize`, `ping`, `tools/list`, `tools/call`, and the notifications).
# This is what `mcp-lab check` would probe on a finished server.

# %% test id=test_id_echo points=3
# Your handle_line in the course's server: pings with ids 0, 42, "abc" and "7".
# Hidden when graded: the same checks on other values.
lab.check("test_id_echo")

# %% test id=test_silence points=2
# No reply to notifications/initialized, notifications/cancelled, an unknown notification.
lab.check("test_silence")

# %% test id=test_error_table points=3
# -32700, -32600 (twice), -32601 and -32602 with id 1, each followed by a ping.
# Hidden when graded: the same checks on other values.
lab.check("test_error_table")

# %% [markdown] id=end
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
