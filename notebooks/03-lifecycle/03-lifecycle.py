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
# # Stage 03: eras: every request says who it is, and old clients shake hands
#
# This stage has two parts; each ends with a server you can run.
#
# **Part A: MCP 2026-07-28**, the current revision. A connection has no beginning: there is no
# handshake. Every request carries, in `params._meta`, the protocol version it speaks and what its
# client can do, and the server reads them from *that* request alone. Every result says what kind
# of result it is, some say how long a client may keep them, and every server answers
# `server/discover`. You write `modern_server.py`, a server of 2026-07-28 only, and the official
# MCP SDK's client connects to it.
#
# **Part B: the legacy era.** Clients written before 2026-07-28 (2025-11-25 and older) still open
# every connection with an `initialize` handshake. You write `server.py`, which imports your
# `modern_server.py` and adds the handshake, version negotiation, `ping` and batches: a *dual-era*
# server, which serves both kinds of client.
#
# Both use the course's framing (stage 01) and dispatcher (stage 02).

# %% id="setup" nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false, "task": false}
from grader.course import lab

lab.setup("03")

# %% [markdown] id="envelope"
# # Part A: MCP 2026-07-28
#
# ## 1. The envelope: `_meta` on every request
#
# The spec (MCP 2026-07-28, `basic/index.mdx`, General fields > `_meta` > Per-request protocol
# fields):
#
# > Client requests carry the following `io.modelcontextprotocol/*` fields in `_meta`;
# > fields marked as required **MUST** be included on every request.
#
# Its table marks two keys required, and two optional:
#
# - `io.modelcontextprotocol/protocolVersion`: a `string`, the version of this request (required);
# - `io.modelcontextprotocol/clientCapabilities`: a `ClientCapabilities` object, what the client can
#   do for this request (required; `{}` declares nothing optional);
# - `io.modelcontextprotocol/clientInfo`: the client's name and version (optional, but "Clients
#   **SHOULD** include `io.modelcontextprotocol/clientInfo` on every request [...]");
# - `io.modelcontextprotocol/logLevel`: stage 06 meets it.
#
# Why on *every* request? Because each request stands alone (same page, Statelessness):
#
# > Servers **MUST NOT** rely on prior requests over the same connection to
# > establish context (e.g., capabilities, protocol version, client identity).
#
# A request that stands alone can go to any copy of a server, after any restart: nothing had to be
# remembered from a handshake.

# %% [markdown] id="envelope-errors"
# ### When the envelope is wrong
#
# A key missing (same page):
#
# > A request missing any required field is malformed; the server **MUST** reject it with
# > JSON-RPC error code `-32602` (Invalid params).
#
# The spec names a *missing* field. A field of the wrong type (a version that is a number,
# capabilities that are a list) does not match the table's types either; the course's server
# answers it with the same -32602.
#
# A version the server does not serve (`basic/versioning.mdx`, Protocol Version Negotiation):
#
# > If the server does not implement the requested version (whether the version
# > is unknown to the server, or is a known version the server has chosen not to
# > support), it **MUST** respond with an
# > `UnsupportedProtocolVersionError`
# > listing the versions it does support
#
# That error is code `-32022`; its `data` has `supported` (a list of strings) and `requested` (the
# version asked for), in `schema.ts`, `UnsupportedProtocolVersionError`. The client's side:
#
# > The client **SHOULD** select a mutually supported version from the `supported`
# > list and retry the request, or surface an error to the user if no compatible
# > version exists.
#
# On the wire, against the course's reference server:
#
# ```text
# -> {"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}
# <- {"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: params._meta lacks \"io.modelcontextprotocol/clientCapabilities\" (required on every 2026-07-28 request)"}}
# -> {"jsonrpc":"2.0","id":2,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}
# <- {"jsonrpc":"2.0","id":2,"error":{"code":-32022,"message":"Unsupported protocol version: 2099-01-01 (...)","data":{"supported":["2026-07-28"],"requested":"2099-01-01"}}}
# ```
#
# ### Your turn: `read_meta(params)`
#
# In the cell `%%module modern_server` below. Return the version the request names, once you have
# checked its `_meta`:
#
# - `_meta` missing or not an object, the version missing or not a string, the capabilities
#   missing or not an object: raise `RpcError(INVALID_PARAMS, "what is wrong")`;
# - a version that is not `MODERN` ("2026-07-28"): raise
#   `RpcError(UNSUPPORTED_VERSION, version, data={"supported": [MODERN], "requested": version})`.

# %% [markdown] id="result-type"
# ## 2. Every result says what it is: `resultType`
#
# The spec (2026-07-28, `basic/index.mdx`, Messages > Responses > Result Responses):
#
# > - The `result` **MUST** include a `resultType` field to indicate the type of the result.
#
# and, under ResultType:
#
# > - A `resultType` of `"complete"` indicates the request completed successfully and the result contains the final content.
# > - A `resultType` of `"input_required"` indicates the request is incomplete and more information is needed to process the request. [...]
# > - Extensions **MAY** add additional `ResultType` values. [...]
# > - A `resultType` of any value unrecognized by the client **MUST** be considered invalid.
# > - For backward compatibility with servers implementing earlier protocol versions, which do not include `resultType`, clients **MUST** treat an absent `resultType` as `"complete"`.
#
# So `resultType` is a string, not a choice of two: the core defines `"complete"` and
# `"input_required"` (`schema.ts`: `type ResultType = "complete" | "input_required" | string`), an
# extension may define more, and a client rejects a value it does not know. Your server finishes
# every request at once: its results are all `"resultType": "complete"`. (Stage 11 meets
# `"input_required"`, a result that asks the user something first.)
#
# A result should also say who answered (same page, Per-response protocol fields: servers
# **SHOULD** include `io.modelcontextprotocol/serverInfo` in every result's `_meta`).

# %% [markdown] id="caching"
# ## 3. Caching hints
#
# Some results may be kept by the client for a while (2026-07-28,
# `server/utilities/caching.mdx`, Cacheable Results):
#
# > Servers MUST include caching hints on results with `resultType: "complete"` returned by
# > the following operations:
# >
# > - `server/discover`
# > - `tools/list`
# > - `prompts/list`
# > - `resources/list`
# > - `resources/templates/list`
# > - `resources/read`
#
# The hints are two fields. `ttlMs`, milliseconds the client may consider the result fresh
# ("Servers **MUST** provide a `ttlMs` value that is `>= 0`"), and `cacheScope`, `"public"` (no
# user-specific data: any cache may share it) or `"private"` (only for the same authorization
# context). Other results need no hints.
#
# ### Your turn: `complete(method, result)`
#
# Return `result` as a 2026-07-28 result of `method`: `"resultType": "complete"` first, then the
# result's own members; for the six operations above, `ttlMs` (`TTL_MS`) and `cacheScope`
# (`"public"`: your server's answers are the same for every user); and
# `"_meta": {SERVER_INFO_KEY: SERVER_INFO}`.

# %% [markdown] id="discover"
# ## 4. `server/discover`
#
# The spec (2026-07-28, `server/discover.mdx`):
#
# > `server/discover` lets a client query a server's supported protocol versions,
# > capabilities, and identity before sending any other requests. Servers **MUST**
# > implement it.
#
# It has no params but the envelope. Its result (DiscoverResult) has `supportedVersions`,
# `capabilities` (an object; yours offers nothing yet, so `{}`), the server's name and version in
# `_meta["io.modelcontextprotocol/serverInfo"]` ("Servers **SHOULD** include this field") and,
# optionally, `instructions`. It is one of the six cacheable results. The reference's answer:
#
# ```text
# -> {"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"lesson","version":"1.0"}}}}
# <- {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":false},...},"instructions":"...","ttlMs":300000,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcp-wire-lab-shop","title":"MCP Wire Lab shop","version":"0.1.0"}}}}
# ```
#
# ### Your turn: `discover()`
#
# Return that result for your server, made by your `complete`: `supportedVersions` (`[MODERN]`)
# and `capabilities` (`{}`).

# %% [markdown] id="modern-server"
# ## 5. A server of 2026-07-28 only
#
# Your server serves one method, `server/discover`. Every other method is one it does not serve:
# -32601 (Method not found, JSON-RPC 2.0). That includes the methods 2026-07-28 removed (its
# `changelog.mdx`, Major changes 2, 4 and 5: `initialize` and `notifications/initialized`,
# `resources/subscribe` and `resources/unsubscribe`, `ping` and `logging/setLevel`).
#
# One removed method gets a better answer. A client of the legacy era sends `initialize` without
# any `_meta`, and cannot learn anything else from your server (`basic/versioning.mdx`, Backward
# Compatibility with Initialization-Based Versions):
#
# > A server that supports only modern versions **SHOULD**
# > name the protocol versions it supports in any error it returns to an `initialize`
# > request, on any transport: legacy clients have no fall-forward mechanism, and
# > this message may be the only diagnostic they can surface to users.
#
# The spec leaves the code to the server ("the exact code is implementation-defined", its
# Compatibility Matrix). The course's server answers -32022 with `data.supported` and
# `data.requested` (the `protocolVersion` the `initialize` asked for), as it does for any version
# it does not serve.
#
# ### The end of a session
#
# A stdio session ends without a message. The spec (2026-07-28, `basic/transports/stdio.mdx`,
# Shutdown):
#
# > The client **SHOULD** initiate shutdown by:
# >
# > 1. Closing the input stream to the child process (the server).
# > 2. Waiting for the server to exit.
# > 3. If the server does not exit within a reasonable time, forcibly terminating
# >    the process using the mechanism appropriate for the operating system.
#
# > Servers **SHOULD** exit promptly when their standard input is closed or reads
# > return end-of-file. This is the primary graceful-shutdown signal and the only
# > portable one, so honoring it reduces the need for forced termination.
#
# (The legacy text, MCP 2025-11-25, Lifecycle > Shutdown > stdio, says the same to the client in
# other words: close the input stream, wait, then `SIGTERM`, then `SIGKILL`; it has no sentence
# for the server.) When the client closes your stdin, `read_frame` returns `None`: return 0 from
# the loop, and the program exits with status 0.

# %% [markdown] id="tools"
# ### The pieces you are given
#
# - `read_frame(stream)` and `write_frame(stream, message)` from the course's framing (stage 01).
# - `Dispatcher(methods, notifications, batches_allowed=..., no_batch=..., log=..., route=...)`
#   from the course's dispatch (stage 02). Those are its parameters, in that order: pass all but
#   the first two **by keyword**, or a function meant for `route` lands in `batches_allowed` or
#   `no_batch`. `methods` maps a method to its handler (a function of `params` returning the
#   result); `notifications` maps a notification to its handler; `batches_allowed`, a function of
#   no arguments, says whether a JSON array is a batch right now (by default never); `route`, a
#   function of the request (with `.method`, `.id`, `.params`), returns the handler that serves it
#   (or `None`: -32601), or raises an `RpcError` that becomes the reply. Leave `no_batch` and `log`
#   to their defaults. `dispatcher.handle_line(line)` returns the reply (a dict, or a list for a
#   batch) or `None`.
# - `RpcError(CODE, "detail", data=...)`, with the codes `INVALID_REQUEST`, `METHOD_NOT_FOUND`,
#   `INVALID_PARAMS` and `UNSUPPORTED_VERSION` (-32022): raise one in a handler (or in `route`) and
#   the dispatcher answers with that error.
#
# ### Your turn: the rest of `modern_server.py`
#
# - `route(request)`: an `initialize` gets -32022 naming your versions (above); any other request
#   has its envelope checked by `read_meta`; `server/discover` is served by a handler that returns
#   `discover()`; any other method is -32601.
# - `make_dispatcher()`: a `Dispatcher` with no methods, no notifications, and your `route`.
# - `serve(dispatcher, stdin, stdout)`: the loop. Read frames until `None` (then return 0), skip
#   empty lines, write every reply that is not `None`.

# %% id="modern" nbgrader={"grade": false, "grade_id": "modern", "locked": false, "schema_version": 3, "solution": true, "task": false}
%%module modern_server
"""A server of MCP 2026-07-28 only: every request carries its envelope, and there is no handshake."""

import sys

from reference.dispatch import Dispatcher
from reference.errors import INVALID_PARAMS, METHOD_NOT_FOUND, UNSUPPORTED_VERSION, RpcError
from reference.framing import read_frame, write_frame

MODERN = "2026-07-28"
PREFIX = "io.modelcontextprotocol/"
PROTOCOL_VERSION = PREFIX + "protocolVersion"
CLIENT_CAPABILITIES = PREFIX + "clientCapabilities"
SERVER_INFO_KEY = PREFIX + "serverInfo"
SERVER_INFO = {"name": "my-shop", "version": "0.1.0"}
# The operations whose complete results carry caching hints (server/utilities/caching).
CACHEABLE = ("server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read")
TTL_MS = 60000  # a minute: nothing this server serves changes while it runs


def is_modern(params):
    """Whether a request's params carry the 2026-07-28 envelope (one of its two required keys)."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and (PROTOCOL_VERSION in meta or CLIENT_CAPABILITIES in meta)


def read_meta(params):
    """The version a 2026-07-28 request names, once its _meta is checked."""
    ### BEGIN SOLUTION
    if not isinstance(params, dict) or not isinstance(params.get("_meta"), dict):
        raise RpcError(INVALID_PARAMS, "a 2026-07-28 request needs params._meta")
    meta = params["_meta"]
    version = meta.get(PROTOCOL_VERSION)
    if not isinstance(version, str):
        raise RpcError(INVALID_PARAMS, f'params._meta needs the string "{PROTOCOL_VERSION}"')
    if not isinstance(meta.get(CLIENT_CAPABILITIES), dict):
        raise RpcError(INVALID_PARAMS, f'params._meta needs the object "{CLIENT_CAPABILITIES}"')
    if version != MODERN:
        raise RpcError(UNSUPPORTED_VERSION, version, data={"supported": [MODERN], "requested": version})
    return version
    ### END SOLUTION


def complete(method, result):
    """``result`` as a 2026-07-28 result of ``method``: its type, caching hints where due, who answered."""
    ### BEGIN SOLUTION
    out = {"resultType": "complete", **result}
    if method in CACHEABLE:
        out["ttlMs"] = TTL_MS
        out["cacheScope"] = "public"
    out["_meta"] = {SERVER_INFO_KEY: SERVER_INFO}
    return out
    ### END SOLUTION


def discover():
    """The server/discover result."""
    ### BEGIN SOLUTION
    return complete("server/discover", {"supportedVersions": [MODERN], "capabilities": {}})
    ### END SOLUTION


def route(request):
    """The handler that serves ``request`` (or an RpcError): a server of 2026-07-28 only."""
    ### BEGIN SOLUTION
    if request.method == "initialize":
        asked = request.params.get("protocolVersion") if isinstance(request.params, dict) else None
        asked = asked if isinstance(asked, str) else ""
        why = f"{asked or 'initialize'} (this server speaks {MODERN}, per request: no initialize)"
        raise RpcError(UNSUPPORTED_VERSION, why, data={"supported": [MODERN], "requested": asked})
    read_meta(request.params)
    if request.method == "server/discover":
        return lambda params: discover()
    raise RpcError(METHOD_NOT_FOUND, f"{request.method} (this server serves server/discover)")
    ### END SOLUTION


def make_dispatcher():
    """The dispatcher of a 2026-07-28 server."""
    ### BEGIN SOLUTION
    return Dispatcher({}, {}, route=route)
    ### END SOLUTION


def serve(dispatcher, stdin, stdout):
    """Serve until stdin ends; return the exit status."""
    ### BEGIN SOLUTION
    while True:
        line = read_frame(stdin)
        if line is None:
            return 0
        if not line.strip():
            continue
        reply = dispatcher.handle_line(line)
        if reply is not None:
            write_frame(stdout, reply)
    ### END SOLUTION


if __name__ == "__main__":
    sys.exit(serve(make_dispatcher(), sys.stdin.buffer, sys.stdout.buffer))

# %% id="try-it-modern"
# Your 2026-07-28 server: a discover, a ping (removed in 2026-07-28), a request without its
# capabilities, an old client's initialize; then stdin closes.
lab.watch(
    lab.program("modern_server"),
    [
        lab.modern("server/discover", id=1),
        lab.modern("ping", id=2),
        lab.modern("server/discover", id=3, clientCapabilities=None),
        lab.initialize("2025-11-25", id=4),
    ],
)

# %% [markdown] id="try-it-modern-md"
# The times aside, you should see these frames (the messages' wording is yours), then
# `(stdin closed)` and `(exit status 0)`:
#
# ```text
# $ python3 modern_server.py
# -> {"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"course","version":"1.0"}}}}
# <- {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{},"ttlMs":60000,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"my-shop","version":"0.1.0"}}}}
# -> {"jsonrpc":"2.0","id":2,"method":"ping","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"course","version":"1.0"}}}}
# <- {"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found: ..."}}
# -> {"jsonrpc":"2.0","id":3,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"course","version":"1.0"}}}}
# <- {"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid params: ..."}}
# -> {"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"course","version":"1.0"}}}
# <- {"jsonrpc":"2.0","id":4,"error":{"code":-32022,"message":"Unsupported protocol version: ...","data":{"supported":["2026-07-28"],"requested":"2025-11-25"}}}
# ```

# %% id="test_read_meta" nbgrader={"grade": true, "grade_id": "test_read_meta", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 3}
# read_meta for a whole envelope; each required key missing or of the wrong type (-32602);
# a version that is not 2026-07-28 (-32022 with supported and requested).
# Hidden when graded: the same checks on other values.
lab.check("test_read_meta")

# %% id="test_complete" nbgrader={"grade": true, "grade_id": "test_complete", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# complete(method, result): resultType "complete", the result kept, serverInfo in _meta; ttlMs and
# cacheScope on the six cacheable operations.
# Hidden when graded: the same checks on other operations.
lab.check("test_complete")

# %% id="test_discover" nbgrader={"grade": true, "grade_id": "test_discover", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 1}
# discover(): resultType, supportedVersions, capabilities, ttlMs, cacheScope, _meta serverInfo.
lab.check("test_discover")

# %% id="test_modern_server" nbgrader={"grade": true, "grade_id": "test_modern_server", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# Your modern_server.py: discover, a removed method (-32601), the envelope's errors (-32602, -32022),
# a request without _meta (-32602), an old client's initialize (-32022 naming your versions).
# Hidden when graded: the same checks with other versions.
lab.check("test_modern_server")

# %% id="test_exit" nbgrader={"grade": true, "grade_id": "test_exit", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 1}
# Stdin closed: your server exits by itself, status 0, with nothing more on stdout.
lab.check("test_exit")

# %% [markdown] id="sdk"
# ## 6. A real client
#
# The official MCP Python SDK's client, the one real hosts are built on, connects to your server in
# its default mode. It does what the spec asks of a client that meets a server whose era it does not
# know (2026-07-28, `basic/transports/stdio.mdx`, Backward Compatibility): it sends
# `server/discover` first. The spec's three outcomes:
#
# > - The server returns a `DiscoverResult`: the server is modern. Select a
# >   mutually supported version from `supportedVersions` and continue.
# > - The server returns a recognized modern JSON-RPC error such as
# >   `UnsupportedProtocolVersionError`: the server is
# >   modern but does not support the requested version. Use one of the versions
# >   in its advertised `supported` list. Do **not** fall back to `initialize`.
# > - The server returns any other error, or does not respond within a
# >   reasonable timeout: the server is legacy. Fall back to the `initialize`
# >   handshake.
#
# So a -32022 never sends a client back to the handshake: it retries with a version from
# `supported`. Your server answers the probe with a `DiscoverResult`, and the client stays on
# 2026-07-28, every request with its envelope.

# %% id="test_sdk_client" nbgrader={"grade": true, "grade_id": "test_sdk_client", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# The official MCP SDK's client in its default mode: server/discover first, and it stays on 2026-07-28.
lab.check("test_sdk_client")

# %% [markdown] id="handshake"
# # Part B: old clients, and one server for both eras
#
# ## 7. The handshake (2025-11-25 and before)
#
# A client of 2025-11-25 or older sends no `_meta`. It opens the connection with `initialize` (its
# revision, capabilities and name); the server answers with the revision it will use, its
# capabilities and its name; the client sends the notification `notifications/initialized`. The
# revision then holds for the whole connection. MCP 2025-11-25, Lifecycle > Initialization:
#
# > The initialization phase **MUST** be the first interaction between client and server.
#
# > The server **MUST** respond with its own capabilities and information
#
# ```text
# -> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"lesson","version":"1.0"}}}
# <- {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":false},...},"serverInfo":{"name":"mcp-wire-lab-shop","title":"MCP Wire Lab shop","version":"0.1.0"},...}}
# -> {"jsonrpc":"2.0","method":"notifications/initialized"}
# -> {"jsonrpc":"2.0","id":2,"method":"ping"}
# <- {"jsonrpc":"2.0","id":2,"result":{}}
# ```
#
# The result has three members you must send (`schema.ts` of 2025-11-25, `InitializeResult`):
# `protocolVersion`, `capabilities` (`{}` for now) and `serverInfo` (a `name` and a `version`,
# both strings). No `resultType`: the legacy schemas define none, and the course's server sends it
# only in 2026-07-28 results.

# %% [markdown] id="negotiate"
# ## 8. Version negotiation
#
# MCP 2025-11-25, Lifecycle > Initialization > Version Negotiation:
#
# > If the server supports the requested protocol version, it **MUST** respond with the same
# > version. Otherwise, the server **MUST** respond with another protocol version it
# > supports. This **SHOULD** be the _latest_ version supported by the server.
#
# Your server, like the course's, serves the handshake revisions 2025-11-25 (the latest),
# 2025-06-18, 2025-03-26 and 2024-11-05. A client that asks for 1999-01-01, or for a date your
# server does not know, gets 2025-11-25. Never echo a version you do not serve.
#
# Once agreed, the revision holds (Lifecycle > Operation: "Both parties **MUST**: Respect the
# negotiated protocol version"), so a second `initialize` is refused. The spec names no code for
# that; the course's server answers -32600 (Invalid Request).
#
# ### Your turn: `negotiate(requested)` and `initialize(session, params)`
#
# In the cell `%%module server` below. `negotiate` returns the revision to answer with.
# `initialize` checks that `params["protocolVersion"]` is a string (else -32602), refuses a second
# `initialize` on the same session (-32600), records the negotiated version in `session.version`,
# marks the session as initialized and in the legacy era (its fields `initialize_seen` and `era`)
# and returns the result.

# %% [markdown] id="ping-batches"
# ## 9. Ping and batches
#
# **Ping** is a request of the legacy era with no params (MCP 2025-11-25, Utilities > Ping):
#
# > The receiver **MUST** respond promptly with an empty response
#
# It may come before `initialize` (Lifecycle: "The client **SHOULD NOT** send requests other than
# pings before the server has responded to the `initialize` request"). 2026-07-28 removed it
# (`changelog.mdx`, Major changes 5): there, a request with its envelope is its own sign of life.
#
# **Batches.** One legacy revision, 2025-03-26, had JSON-RPC *batches*: an array of messages on one
# line, answered by an array of replies (2025-03-26, `basic/index.mdx`, Batching):
#
# > MCP implementations **MAY** support sending JSON-RPC
# > batches, but **MUST** support receiving JSON-RPC batches.
#
# and (its Lifecycle) "The initialize request **MUST NOT** be part of a JSON-RPC batch [...]". 2025-06-18
# removed them (its `changelog.mdx`: "Remove support for JSON-RPC **batching**"), and in
# 2026-07-28 "Each message is a single JSON-RPC request, notification, or response"
# (`basic/transports/stdio.mdx`). So the course's server treats an array as a batch only on a
# connection that negotiated 2025-03-26, and answers one anywhere else with a single -32600, id
# null. The `Dispatcher` does the batch work (and refuses an `initialize` inside a batch, its
# `no_batch` default); you say when batches are allowed.

# %% [markdown] id="eras"
# ## 10. Which era is a connection in?
#
# What the spec says of a dual-era server (2026-07-28, `basic/versioning.mdx`, Backward
# Compatibility with Initialization-Based Versions):
#
# > A dual-era **server** selects its behavior from how the client opens:
# >
# > - A request carrying modern per-request `_meta` is served statelessly
# >   according to this revision.
# > - An `initialize` request selects legacy semantics, scoped to the stdio
# >   process (stdio) or the session (HTTP), as specified by the negotiated
# >   legacy protocol version.
# >
# > A dual-era server **MAY** serve both eras concurrently on the same endpoint
# > or process.
#
# So the spec allows one stdio process to serve both eras; it does not say what a server that does
# not must answer. **The course's choice** (the course's reference server makes it, as the
# official SDKs do) is to lock a stdio process to the first era chosen, since a client speaks one
# era per process:
#
# - a request carrying the 2026-07-28 `_meta` chooses modern; an `initialize` chooses legacy.
#   Nothing else chooses: a plain `ping` (or any request without `_meta`) before either is served
#   the legacy way, and the connection is still open to both;
# - on a modern connection, an `initialize` gets -32022 with `data.supported` (the modern versions
#   you serve) and `data.requested`, the answer your `modern_server.route` already gives (for a
#   modern-only server the spec's **SHOULD** above; here the course's choice), and any other
#   request without the `_meta` envelope gets -32602;
# - on a connection that was initialized, a request carrying the 2026-07-28 `_meta` gets -32600
#   (it needs a process of its own), and a 2026-07-28 method without `_meta` (`server/discover`)
#   gets -32601: it is not a method of the negotiated revision.
#
# Against the course's reference server, a plain `ping` first, then a 2026-07-28 request, then an
# `initialize` and a plain request on what is now a modern connection:
#
# ```text
# -> {"jsonrpc":"2.0","id":1,"method":"ping"}
# <- {"jsonrpc":"2.0","id":1,"result":{}}
# -> {"jsonrpc":"2.0","id":2,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}
# <- {"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],...}}
# -> {"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"lesson","version":"1.0"}}}
# <- {"jsonrpc":"2.0","id":3,"error":{"code":-32022,"message":"Unsupported protocol version: 2025-11-25 (...)","data":{"supported":["2026-07-28"],"requested":"2025-11-25"}}}
# -> {"jsonrpc":"2.0","id":4,"method":"ping"}
# <- {"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"Invalid params: ..."}}
# ```
#
# ### Your turn: `route(session, request, methods)` and `make_dispatcher(session)`
#
# - `route`: the handler for one request, by its era. A request whose params carry the 2026-07-28
#   envelope (`modern_server.is_modern(request.params)`): -32600 if the session's era is
#   `"legacy"`; else its era becomes `"modern"` and `modern_server.route(request)` serves it. On a
#   modern connection, a request without the envelope: `initialize` goes to `modern_server.route`
#   too (its -32022), anything else is -32602. Otherwise: the handler in `methods`, and the era
#   stays as it was.
# - `make_dispatcher(session)`: a `Dispatcher` serving `initialize` and `ping`, with a handler for
#   `notifications/initialized` that records it in the session, batches only under 2025-03-26, and
#   your `route`. Pass `batches_allowed=` and `route=` by keyword.
#
# The loop is your `modern_server.serve`: the last lines of `server.py` run it with this dispatcher.

# %% id="server" nbgrader={"grade": false, "grade_id": "server", "locked": false, "schema_version": 3, "solution": true, "task": false}
%%module server
"""A dual-era server: 2026-07-28 per request (modern_server.py), and the handshake for old clients."""

import sys
from dataclasses import dataclass

import modern_server
from reference.dispatch import Dispatcher
from reference.errors import INVALID_PARAMS, INVALID_REQUEST, RpcError

LATEST = "2025-11-25"
SUPPORTED = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
SERVER_INFO = modern_server.SERVER_INFO


@dataclass
class Session:
    """What one connection has agreed on."""

    era: str = ""  # "" until a request chooses: "modern" (the 2026-07-28 _meta) or "legacy" (initialize)
    version: str = LATEST  # the legacy revision initialize negotiated
    initialize_seen: bool = False
    initialized: bool = False


def negotiate(requested):
    """The legacy revision to answer ``requested`` with."""
    ### BEGIN SOLUTION
    return requested if requested in SUPPORTED else LATEST
    ### END SOLUTION


def initialize(session, params):
    """Handle an initialize request; return its result."""
    ### BEGIN SOLUTION
    if session.initialize_seen:
        raise RpcError(INVALID_REQUEST, f"initialize was already answered (revision {session.version})")
    requested = params.get("protocolVersion")
    if not isinstance(requested, str):
        raise RpcError(INVALID_PARAMS, '"protocolVersion" must be a string such as "2025-11-25"')
    session.version = negotiate(requested)
    session.initialize_seen = True
    session.era = "legacy"
    return {"protocolVersion": session.version, "capabilities": {}, "serverInfo": SERVER_INFO}
    ### END SOLUTION


def route(session, request, methods):
    """The handler that serves ``request`` in its era (or an RpcError)."""
    ### BEGIN SOLUTION
    if modern_server.is_modern(request.params):
        if session.era == "legacy":
            raise RpcError(INVALID_REQUEST, "this connection was initialized: a 2026-07-28 request needs its own")
        session.era = "modern"
        return modern_server.route(request)
    if session.era == "modern":
        if request.method == "initialize":
            return modern_server.route(request)
        raise RpcError(INVALID_PARAMS, "this connection speaks 2026-07-28: every request needs params._meta")
    return methods.get(request.method)
    ### END SOLUTION


def make_dispatcher(session):
    """The dispatcher for one session."""
    ### BEGIN SOLUTION
    def initialized(params):
        session.initialized = True

    methods = {"initialize": lambda params: initialize(session, params), "ping": lambda params: {}}
    return Dispatcher(
        methods,
        {"notifications/initialized": initialized},
        batches_allowed=lambda: session.version == "2025-03-26",
        route=lambda request: route(session, request, methods),
    )
    ### END SOLUTION


if __name__ == "__main__":
    sys.exit(modern_server.serve(make_dispatcher(Session()), sys.stdin.buffer, sys.stdout.buffer))

# %% id="try-it"
# The old way, on a new connection: the handshake, then a ping, then a 2026-07-28 request.
lab.watch(
    lab.program("server"),
    [
        lab.initialize(id=1),
        lab.notification("notifications/initialized"),
        lab.request("ping", id=2),
        lab.modern("server/discover", id=3),
    ],
)

# %% [markdown] id="try-it-md"
# The times aside, you should see:
#
# ```text
# $ python3 server.py
# -> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"course","version":"1.0"}}}
# <- {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"my-shop","version":"0.1.0"}}}
# -> {"jsonrpc":"2.0","method":"notifications/initialized"}
# -> {"jsonrpc":"2.0","id":2,"method":"ping"}
# <- {"jsonrpc":"2.0","id":2,"result":{}}
# -> {"jsonrpc":"2.0","id":3,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"course","version":"1.0"}}}}
# <- {"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"Invalid Request: ..."}}
# ```

# %% id="try-it-eras"
# A plain ping first (it chooses no era), then a 2026-07-28 request (it chooses modern), then an
# initialize and a plain ping on what is now a modern connection.
lab.watch(
    lab.program("server"),
    [lab.request("ping", id=1), lab.modern("server/discover", id=2), lab.initialize(id=3), lab.request("ping", id=4)],
)

# %% [markdown] id="try-it-eras-md"
# You should see the four answers of section 10's example, with your server's name and versions:
# `{}` for the ping, a `DiscoverResult` (the ping chose no era), -32022 with `"supported":
# ["2026-07-28"]` and `"requested": "2025-11-25"` for the `initialize`, and -32602 for the last
# ping.

# %% [markdown] id="inspect-md"
# ### Your server beside the reference
#
# The wire inspector runs one script against your `server.py` and against the course's reference
# server, side by side: an `initialize` asking for a revision nobody knows (1999-01-01), the
# `initialized` notification, a ping with the id `"7"`, and a second `initialize`. Names and
# capabilities may differ (yours has no tools yet); what the rules fix may not: the revision
# agreed, the ids, silence after a notification, the error for a second `initialize`, the exit
# when stdin closes.
#
# A red box names the first frame where your server parts from the reference, the rule it breaks
# and the fix; a green box says they agree. Until `server.py` is written, read the stderr lines
# (`2>`): the traceback says which function is still missing.

# %% id="inspect"
lab.inspect(
    lab.program("server"),
    [
        lab.initialize("1999-01-01", id=1),
        lab.notification("notifications/initialized"),
        lab.request("ping", id="7"),
        lab.initialize(id=2),
    ],
    against=lab.reference(),
)

# %% id="test_negotiate" nbgrader={"grade": true, "grade_id": "test_negotiate", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 1}
# Negotiate for the four supported revisions and one unknown (1999-01-01).
# Hidden when graded: the same checks on other values.
lab.check("test_negotiate")

# %% id="test_initialize" nbgrader={"grade": true, "grade_id": "test_initialize", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# Initialize(session, params) for 2025-06-18; a second initialize; a numeric version.
# Hidden when graded: the same checks on other values.
lab.check("test_initialize")

# %% id="test_handshake" nbgrader={"grade": true, "grade_id": "test_handshake", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# Your server: ping, initialize (2025-11-25), initialized, ping, a second initialize.
# Hidden when graded: the same checks on other values.
lab.check("test_handshake")

# %% id="test_batches" nbgrader={"grade": true, "grade_id": "test_batches", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# A batch of two pings under 2025-03-26; a batch refused under 2025-11-25.
lab.check("test_batches")

# %% id="test_eras" nbgrader={"grade": true, "grade_id": "test_eras", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# Your server: a plain ping chooses no era; then 2026-07-28 (discover, a removed method, the
# envelope's errors), and on that modern connection an initialize (-32022 with supported and
# requested) and a plain request (-32602); on an initialized connection a 2026-07-28 request
# (-32600) and server/discover without _meta (-32601).
# Hidden when graded: the same checks with other ids and versions.
lab.check("test_eras")

# %% [markdown] id="sdk-legacy"
# ## 11. An old client
#
# The same SDK client in its legacy mode does what a client of 2025-11-25 does: `initialize`,
# `notifications/initialized`, then a `ping`.

# %% id="test_sdk_legacy" nbgrader={"grade": true, "grade_id": "test_sdk_legacy", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# The official MCP SDK's client in its legacy mode: initialize and ping.
lab.check("test_sdk_legacy")

# %% [markdown] id="recall"
# ## Recall
#
# 1. Which two `_meta` keys must every 2026-07-28 request carry, and what does a server answer when
#    one is missing?
# 2. A request names the version 2027-01-01. What does the server answer, and what does a client do
#    with that answer? Does it fall back to `initialize`?
# 3. Why must a 2026-07-28 server not take a client's capabilities from an earlier request on the
#    same connection?
# 4. A client receives `"resultType": "deferred"` and declared no extension that defines it. What
#    must it make of the result?
# 5. An old client sends `initialize` asking for 2025-06-18. What does your server answer, and what
#    does it answer to a second `initialize`?
# 6. Does the spec require a dual-era server to refuse a 2026-07-28 request after `initialize`?
#    What does the course's server do, and why does a plain `ping` not decide?

# %% [markdown] id="end"
# ## What you have now
#
# Two servers: `modern_server.py` speaks 2026-07-28 only, and `server.py` serves both eras. A
# 2026-07-28 client discovers it and sends enveloped requests; an old client shakes hands and
# pings; both can leave by closing the pipe. It has nothing to offer yet. Stage 04 gives it tools.

# %% [markdown] id="read-next"
# ## Read next in the spec
#
# The pages this stage relies on, in the spec repository (`docs/specification/...`, `schema/...`):
#
# - `2026-07-28/basic/index.mdx`: Messages > Responses > Result Responses and ResultType; General
#   fields > `_meta` > Per-request protocol fields and Per-response protocol fields;
#   Statelessness.
# - `2026-07-28/basic/versioning.mdx`: Protocol Version Negotiation (-32022); Backward
#   Compatibility with Initialization-Based Versions (the Compatibility Matrix, the dual-era
#   server's MAY, the modern-only server's SHOULD for `initialize`).
# - `2026-07-28/server/discover.mdx`: Request, Response, When to Call, DiscoverResult.
# - `2026-07-28/server/utilities/caching.mdx`: Cacheable Results, Time-to-Live (TTL) Field, Cache
#   Scope Field.
# - `2026-07-28/basic/transports/stdio.mdx`: Shutdown; Backward Compatibility (the probe and its
#   three outcomes).
# - `2026-07-28/changelog.mdx`: Major changes 2, 3, 5 and 8 (no handshake, `server/discover`,
#   `ping` removed, `resultType`).
# - `schema/2026-07-28/schema.ts`: `ResultType`, `Result`, `UnsupportedProtocolVersionError`,
#   `DiscoverResult`.
# - `2025-11-25/basic/lifecycle.mdx`: Initialization, Version Negotiation, Operation, Shutdown >
#   stdio (the legacy text).
# - `2025-11-25/basic/utilities/ping.mdx`: Behavior Requirements.
# - `2025-03-26/basic/index.mdx`: Batching; `2025-06-18/changelog.mdx`, item 1 (batching removed).
