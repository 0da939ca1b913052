Stage 03 of MCP Wire Lab, as text (see grader/course/notebook.py for the cell syntax).

# %% [markdown] id=title
# # Stage 03: eras: every request says who it is, and old clients shake hands
#
# This stage teaches MCP **2026-07-28**, the current revision. In it a connection has no
# beginning: there is no handshake. Every request carries, in `params._meta`, the protocol version
# it speaks and what its client can do, and the server reads them from *that* request alone. A
# server must also answer `server/discover`: "which versions do you speak, what do you offer, who
# are you?".
#
# Clients written before 2026-07-28 (the *legacy* era: 2025-11-25 and older) still open every
# connection with an `initialize` handshake, and there are many of them. So a good server speaks
# both eras. In this stage you write `server.py`, a whole server program that does: the envelope
# check, `server/discover`, the handshake for old clients, and a clean exit. It uses the course's
# framing (stage 01) and dispatcher (stage 02). At the end, the official MCP SDK's client connects
# to your server twice: once the 2026-07-28 way (its default), once the old way.

# %% setup id=setup
from grader.course import lab

lab.setup("03")

# %% [markdown] id=envelope
# ## 1. The envelope: `_meta` on every request
#
# The spec (MCP 2026-07-28, Base Protocol > `_meta`, Per-request protocol fields):
#
# > Client requests carry the following `io.modelcontextprotocol/*` fields in `_meta`; fields
# > marked as required **MUST** be included on every request.
#
# Two keys are required, one is recommended:
#
# - `io.modelcontextprotocol/protocolVersion`: a string, the revision this request speaks;
# - `io.modelcontextprotocol/clientCapabilities`: an object, what the client can do (`{}`: nothing
#   optional);
# - `io.modelcontextprotocol/clientInfo`: who the client is (`name`, `version`); recommended.
#
# Why on *every* request? Because a request must stand alone. The spec again:
#
# > Servers **MUST NOT** rely on prior requests over the same connection to establish context
# > (e.g., capabilities, protocol version, client identity).
#
# A request that stands alone can go to any copy of a server, behind any load balancer, after any
# restart: nothing had to be remembered from a handshake.
#
# What a server answers when the envelope is wrong:
#
# > A request missing any required field is malformed; the server **MUST** reject it with
# > JSON-RPC error code `-32602` (Invalid params).
#
# And when the version is one the server does not serve (Versioning):
#
# > it **MUST** respond with an `UnsupportedProtocolVersionError` listing the versions it does
# > support
#
# That error is `-32022`, with `data: {"supported": [...], "requested": "..."}`: the client picks a
# version from `supported` and tries again. On the wire, against the course's reference server:
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
# Return the version the request names, once you have checked its `_meta`: raise
# `RpcError(INVALID_PARAMS, ...)` when `_meta` is missing or not an object, when the version is
# missing or not a string, when the capabilities are missing or not an object; raise
# `RpcError(UNSUPPORTED_VERSION, version, data=...)` when the version is not `MODERN`
# ("2026-07-28"), its `data` a dict with `"supported"` (the list `[MODERN]`) and `"requested"`
# (the version asked for).

# %% [markdown] id=discover
# ## 2. `server/discover`, and `resultType`
#
# > Servers **MUST** implement it. (MCP 2026-07-28, Discovery)
#
# `server/discover` has no params but the envelope. Its result tells a client everything it used
# to learn from a handshake: `supportedVersions`, `capabilities` (an object; yours offers nothing
# yet, so `{}`), and the server's name and version in `_meta["io.modelcontextprotocol/serverInfo"]`.
# It is one of six results a client may cache, so it says for how long: `ttlMs`, an integer of
# milliseconds (0 or more), and `cacheScope`, `"public"` (the same for every user) or `"private"`.
#
# Every result of 2026-07-28 also says what kind of result it is (Base Protocol > Responses):
#
# > The `result` **MUST** include a `resultType` field to indicate the type of the result.
#
# A finished result is `"resultType": "complete"`. (Stage 11 meets the other kind,
# `"input_required"`: a result that asks the user something first.) The reference's answer:
#
# ```text
# -> {"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"lesson","version":"1.0"}}}}
# <- {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":false},...},"instructions":"...","ttlMs":300000,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcp-wire-lab-shop","title":"MCP Wire Lab shop","version":"0.1.0"}}}}
# ```
#
# ### Your turn: `discover()`
#
# Return that result for your server: `resultType`, `supportedVersions` (`[MODERN]`),
# `capabilities` (`{}`), `ttlMs`, `cacheScope` and `_meta` with `SERVER_INFO`.

# %% [markdown] id=handshake
# ## 3. Old clients: the handshake (before 2026-07-28)
#
# A client of 2025-11-25 or older does not send `_meta`. It opens the connection with `initialize`
# (its revision, capabilities and name), the server answers with the revision it will use, its
# capabilities and its name, and the client sends the notification `notifications/initialized`.
# From then on the revision holds for the whole connection. MCP 2025-11-25, Lifecycle:
#
# > The initialization phase **MUST** be the first interaction between client and server.
#
# ```text
# -> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"lesson","version":"1.0"}}}
# <- {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":false},...},"serverInfo":{"name":"mcp-wire-lab-shop","title":"MCP Wire Lab shop","version":"0.1.0"},...}}
# -> {"jsonrpc":"2.0","method":"notifications/initialized"}
# -> {"jsonrpc":"2.0","id":2,"method":"ping"}
# <- {"jsonrpc":"2.0","id":2,"result":{}}
# ```
#
# The result has three members you must send: `protocolVersion`, `capabilities` (`{}` for now)
# and `serverInfo` (a `name` and a `version`, both strings). No `resultType`: legacy results never
# carry one, and an old client would not know what it is.
#
# **Version negotiation** (2025-11-25):
#
# > If the server supports the requested protocol version, it **MUST** respond with the same
# > version. Otherwise, the server **MUST** respond with another protocol version it supports. This
# > **SHOULD** be the _latest_ version supported by the server.
#
# The handshake revisions are 2025-11-25 (the latest), 2025-06-18, 2025-03-26 and 2024-11-05. A
# client that asks for 1999-01-01, or for a date it does not know, gets 2025-11-25. Never echo a
# version you do not serve. And once agreed, the revision holds ("Both parties **MUST**: Respect
# the negotiated protocol version"), so a second `initialize` is refused (-32600).
#
# **Batches.** One legacy revision, 2025-03-26, allowed a *batch*: a JSON array of messages on one
# line, answered by an array of replies. 2025-06-18 removed them again, and 2026-07-28 has none. So
# an array gets one -32600 error unless the connection negotiated 2025-03-26; the course's
# `Dispatcher` does the batch work, you say when batches are allowed.
#
# **Ping** is a legacy request with no params, answered with `{}`, at any time (even before
# `initialize`). 2026-07-28 removed it: a request with its envelope is its own sign of life.

# %% [markdown] id=eras
# ## 4. One connection, one era
#
# A dual-era server tells the eras apart by the traffic (MCP 2026-07-28, Versioning):
#
# > A request carrying modern per-request `_meta` is served statelessly according to this
# > revision. An `initialize` request selects legacy semantics, scoped to the stdio process
# > (stdio) [...] as specified by the negotiated legacy protocol version.
#
# The spec lets a server serve both eras on one connection (a **MAY**). Yours, like the reference
# and both official SDKs, will not: a client speaks one era per process, so the first request
# that chooses an era fixes it, and traffic of the other era gets an error that says so:
#
# - a 2026-07-28 request after `initialize`: -32600, it needs a connection of its own;
# - on a 2026-07-28 connection, a request without the envelope: -32602 (it is malformed there);
# - before either, a plain request (a `ping`) is served the old way.
#
# On a 2026-07-28 connection the methods that revision removed (`initialize`, `ping`,
# `logging/setLevel`, `resources/subscribe`, `resources/unsubscribe`) are unknown methods: -32601.
# Your server serves one method there so far, `server/discover`; everything else is -32601 for
# now. (Stage 04 adds `tools/list`, whose results carry `"resultType": "complete"` too.)
#
# ## 5. The end
#
# The end of a stdio session has no message, in either era (Transports > stdio, Shutdown):
#
# > 1. First, closing the input stream to the child process (the server)
# > 2. Waiting for the server to exit, or sending `SIGTERM` if the server does not exit within a
# >    reasonable time
#
# When the client closes your stdin, `read_frame` returns `None`: return 0 from the loop and let
# the program exit with status 0. A server that ignores the end of its input lives on as an orphan,
# sometimes spinning at 100% CPU on a `readline()` that returns `b""` forever.

# %% [markdown] id=tools
# ## 6. The pieces you are given
#
# - `read_frame(stream)` and `write_frame(stream, message)` from the course's framing (stage 01).
# - `Dispatcher(methods, notifications, batches_allowed, route)` from the course's dispatch (stage
#   02). `methods` maps a method to its handler (a function of `params` returning the result);
#   `notifications` maps a notification to its handler; `batches_allowed` is a function with no
#   arguments that says whether a JSON array is a batch right now; `route`, a function of the
#   request (with `.method`, `.id`, `.params`), returns the handler that serves it (or `None`: -32601),
#   or raises an `RpcError` that becomes the reply. `dispatcher.handle_line(line)` returns the reply
#   (a dict, or a list for a batch) or `None`.
# - `RpcError(CODE, "detail", data=...)`, with the codes `INVALID_REQUEST`, `METHOD_NOT_FOUND`,
#   `INVALID_PARAMS` and `UNSUPPORTED_VERSION` (-32022): raise one in a handler (or in `route`) and
#   the dispatcher answers with that error.
# - `is_modern(params)`: whether a request carries the 2026-07-28 envelope (given below).
#
# ### Your turn: `server.py`
#
# - `read_meta(params)` (section 1) and `discover()` (section 2).
# - `negotiate(requested)`: the legacy revision to answer with.
# - `Session`: what one connection has agreed on (given).
# - `initialize(session, params)`: checks that `params["protocolVersion"]` is a string (else
#   -32602), refuses a second initialize (-32600), records the negotiated version and returns the
#   result.
# - `route(session, request, methods)`: the handler for one request, by its era (section 4). A
#   2026-07-28 request: refused after `initialize` (-32600); else it marks the session modern,
#   checks the envelope with `read_meta`, and returns a handler that answers `discover()` for
#   `server/discover`; any other method is -32601. A request without the envelope on a modern
#   connection: -32602. Anything else: the handler in `methods`, as before.
# - `make_dispatcher(session)`: a `Dispatcher` serving `initialize` and `ping`, with a handler for
#   `notifications/initialized` that records it in the session, batches only under 2025-03-26, and
#   your `route`.
# - `serve(stdin, stdout)`: the loop. Read frames until `None` (then return 0), skip empty lines,
#   write every reply that is not `None`.

# %% solution id=server
%%module server
import sys
from dataclasses import dataclass

from reference.dispatch import Dispatcher
from reference.errors import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, UNSUPPORTED_VERSION, RpcError
from reference.framing import read_frame, write_frame

MODERN = "2026-07-28"
PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"

LATEST = "2025-11-25"
SUPPORTED = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
SERVER_INFO = {"name": "my-shop", "version": "0.1.0"}


@dataclass
class Session:
    version: str = LATEST
    initialize_seen: bool = False
    initialized: bool = False
    modern: bool = False  # a 2026-07-28 request chose this connection's era


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


def discover():
    """The server/discover result."""
    ### BEGIN SOLUTION
    return {
        "resultType": "complete",
        "supportedVersions": [MODERN],
        "capabilities": {},
        "ttlMs": 60000,
        "cacheScope": "public",
        "_meta": {SERVER_INFO_KEY: SERVER_INFO},
    }
    ### END SOLUTION


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
    return {"protocolVersion": session.version, "capabilities": {}, "serverInfo": SERVER_INFO}
    ### END SOLUTION


def route(session, request, methods):
    """The handler that serves ``request`` in its era (or an RpcError)."""
    ### BEGIN SOLUTION
    if is_modern(request.params):
        if session.initialize_seen:
            raise RpcError(INVALID_REQUEST, "this connection was initialized: a 2026-07-28 request needs its own")
        session.modern = True
        read_meta(request.params)
        if request.method == "server/discover":
            return lambda params: discover()
        raise RpcError(METHOD_NOT_FOUND, f"{request.method} (this server serves server/discover in 2026-07-28)")
    if session.modern:
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
        methods=methods,
        notifications={"notifications/initialized": initialized},
        batches_allowed=lambda: session.version == "2025-03-26",
        route=lambda request: route(session, request, methods),
    )
    ### END SOLUTION


def serve(stdin, stdout):
    """Serve one session until stdin ends; return the exit status."""
    ### BEGIN SOLUTION
    dispatcher = make_dispatcher(Session())
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
    sys.exit(serve(sys.stdin.buffer, sys.stdout.buffer))

# %% id=try-it
# The 2026-07-28 way: a discover, then a request the revision removed (ping), then one without its capabilities.
lab.watch(
    lab.program("server"),
    [
        lab.modern("server/discover", id=1),
        lab.modern("ping", id=2),
        lab.modern("server/discover", id=3, clientCapabilities=None),
    ],
)

# %% id=try-it-legacy
# The old way, on a new connection: the handshake, then a ping.
lab.watch(lab.program("server"), [lab.initialize(id=1), lab.notification("notifications/initialized"), lab.request("ping", id=2)])

# %% [markdown] id=inspect-md
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

# %% id=inspect
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

# %% test id=test_read_meta points=3
# read_meta for a whole envelope; each required key missing or of the wrong type (-32602);
# a version that is not 2026-07-28 (-32022 with supported and requested).
# Hidden when graded: the same checks on other values.
lab.check("test_read_meta")

# %% test id=test_discover points=2
# discover(): resultType, supportedVersions, capabilities, ttlMs, cacheScope, _meta serverInfo.
lab.check("test_discover")

# %% test id=test_negotiate points=2
# Negotiate for the four supported revisions and one unknown (1999-01-01).
# Hidden when graded: the same checks on other values.
lab.check("test_negotiate")

# %% test id=test_initialize points=2
# Initialize(session, params) for 2025-06-18; a second initialize; a numeric version.
# Hidden when graded: the same checks on other values.
lab.check("test_initialize")

# %% test id=test_handshake points=3
# Your server: ping, initialize (2025-11-25), initialized, ping, a second initialize.
# Hidden when graded: the same checks on other values.
lab.check("test_handshake")

# %% test id=test_batches points=2
# A batch of two pings under 2025-03-26; a batch refused under 2025-11-25.
lab.check("test_batches")

# %% test id=test_eras points=3
# Your server, 2026-07-28: discover, resultType, the envelope's errors, removed methods (-32601),
# a request without _meta on a modern connection (-32602); a modern request after initialize (-32600).
# Hidden when graded: the same checks with other ids and versions.
lab.check("test_eras")

# %% test id=test_exit points=1
# Stdin closed: your server exits by itself, status 0, with nothing more on stdout.
lab.check("test_exit")

# %% [markdown] id=sdk
# ## 7. Real clients, both eras
#
# Your server now does everything a client needs, in either era. The last tests connect with the
# official MCP Python SDK's client, the one real hosts are built on. In its default mode it does
# what the spec asks of a client that meets a server it does not know (Transports > stdio,
# Backward Compatibility): it sends `server/discover` first; a `DiscoverResult` means the server
# speaks 2026-07-28, and from then on every request carries the envelope. Any other answer, or
# none in time, and it falls back to `initialize`. Your server must be spoken to the new way.
# Then the same client in its legacy mode shakes hands and pings, as an old client does.

# %% test id=test_sdk_client points=2
# The official MCP SDK's client in its default mode: server/discover first, and it stays on 2026-07-28.
lab.check("test_sdk_client")

# %% test id=test_sdk_legacy points=2
# The official MCP SDK's client in its legacy mode: initialize and ping.
lab.check("test_sdk_legacy")

# %% [markdown] id=recall
# ## Recall
#
# 1. Which two `_meta` keys must every 2026-07-28 request carry, and what does a server answer when
#    one is missing?
# 2. A request names the version 2027-01-01. What does the server answer, and what does the client
#    do with it?
# 3. Why must a 2026-07-28 server not take a client's capabilities from an earlier request on the
#    same connection?
# 4. An old client sends `initialize` asking for 2025-06-18. What does your server answer, and what
#    does it answer to a second `initialize`?

# %% [markdown] id=end
# ## What you have now
#
# A whole MCP server that speaks both eras: a 2026-07-28 client discovers it and sends enveloped
# requests; an old client shakes hands and pings; both can leave by closing the pipe. It has
# nothing to offer yet. Stage 04 gives it tools.
