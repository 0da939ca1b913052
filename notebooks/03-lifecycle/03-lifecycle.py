Stage 03 of MCP Wire Lab, as text (see grader/course/notebook.py for the cell syntax).

# %% [markdown] id=title
# # Stage 03: the lifecycle
#
# A connection has a beginning and an end. At the beginning, client and server agree on a revision
# of the protocol and say what each can do: the `initialize` handshake. At the end, the client
# closes the pipe and the server leaves. In between, a `ping` now and then asks "are you still
# there?".
#
# In this stage you write a whole server program, `server.py`: the handshake, version negotiation,
# ping, batches where the revision has them, and a clean exit. It uses the course's framing (stage
# 01) and three-branch dispatcher (stage 02), so it stands on tested pieces. At the end of the
# stage the official MCP SDK's client connects to your server and pings it.

# %% setup id=setup
from grader.course import lab

lab.setup("03")

# %% [markdown] id=handshake
# ## 1. The handshake
#
# The spec (MCP 2025-11-25, Lifecycle):
#
# > The initialization phase **MUST** be the first interaction between client and server.
#
# The client sends `initialize` with the revision it speaks, its capabilities and its name. The
# server answers with the revision it will use, its own capabilities and its name. Then the client
# sends the notification `notifications/initialized` (a notification: no reply), and the session
# is open:
#
# ```text
# -> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"lesson","version":"1.0"}}}
# <- {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":false},...},"serverInfo":{"name":"mcp-wire-lab-shop","title":"MCP Wire Lab shop","version":"0.1.0"},...}}
# -> {"jsonrpc":"2.0","method":"notifications/initialized"}
# -> {"jsonrpc":"2.0","id":2,"method":"ping"}
# <- {"jsonrpc":"2.0","id":2,"result":{}}
# ```
#
# The result has three members you must send:
#
# - `protocolVersion`: the revision this session will follow (next section);
# - `capabilities`: an object saying which optional features the server offers. A server with
#   tools says `"tools": {}` (stage 04). Yours has none yet, so its capabilities are `{}`;
# - `serverInfo`: an object with the server's `name` and `version` (both strings).
#
# The reference also sends `title` and `instructions` (a text for the model); both are optional.

# %% [markdown] id=negotiation
# ## 2. Version negotiation
#
# > If the server supports the requested protocol version, it **MUST** respond with the same
# > version. Otherwise, the server **MUST** respond with another protocol version it supports. This
# > **SHOULD** be the _latest_ version supported by the server.
#
# Revisions are dates. The course's server supports four: 2025-11-25 (the latest), 2025-06-18,
# 2025-03-26 and 2024-11-05. A client that asks for 2025-06-18 gets 2025-06-18. A client that asks
# for 1999-01-01, or for a revision newer than any it knows, gets 2025-11-25; it is then up to the
# client to go on or to disconnect.
#
# Never echo a version you do not support: the client would believe you speak it. And once a
# revision is agreed, it holds for the whole session:
#
# > Both parties **MUST**: Respect the negotiated protocol version
#
# so a second `initialize` on the same connection is refused (-32600), not renegotiated.
#
# ## 3. What changes with the revision: batches
#
# Most of what this course teaches is the same in all four revisions. One difference lives in the
# framing: **2025-03-26** allowed a *batch*, a JSON array of messages on one line, answered by an
# array of replies (a batch of notifications only gets no reply at all). 2025-06-18 removed batches
# again. So a server answers an array with one -32600 error, unless the session negotiated
# 2025-03-26. The course's `Dispatcher` does the batch work; you tell it when batches are allowed.
#
# ## 4. Ping, and the end
#
# `ping` is a request with no params; the answer is an empty result, `{}`. It may come at any time,
# even before `initialize`.
#
# The end of a stdio session has no message. The spec's shutdown for stdio:
#
# > 1. First, closing the input stream to the child process (the server)
# > 2. Waiting for the server to exit, or sending `SIGTERM` if the server does not exit within a
# >    reasonable time
#
# When the client closes your stdin, `read_frame` returns `None`: return 0 from the loop and let
# the program exit with status 0. A server that ignores the end of its input lives on as an orphan,
# sometimes spinning at 100% CPU on a `readline()` that returns `b""` forever.

# %% [markdown] id=tools
# ## 5. The pieces you are given
#
# - `read_frame(stream)` and `write_frame(stream, message)` from the course's framing (stage 01).
# - `Dispatcher(methods, notifications, batches_allowed)` from the course's dispatch (stage 02).
#   `methods` maps a method to its handler (a function of `params` returning the result);
#   `notifications` maps a notification to its handler; `batches_allowed` is a function with no
#   arguments that says whether a JSON array is a batch right now. `dispatcher.handle_line(line)`
#   returns the reply (a dict, or a list for a batch) or `None`.
# - `RpcError(INVALID_REQUEST, "...")` and `RpcError(INVALID_PARAMS, "...")`: raise one in a handler
#   and the dispatcher answers with that error.
#
# ### Your turn: `server.py`
#
# - `negotiate(requested)`: the revision to answer with.
# - `Session`: what one connection has agreed on (given).
# - `initialize(session, params)`: checks that `params["protocolVersion"]` is a string (else
#   -32602), refuses a second initialize (-32600), records the negotiated version and returns the
#   result.
# - `make_dispatcher(session)`: a `Dispatcher` serving `initialize` and `ping`, with a handler for
#   `notifications/initialized` that records it in the session, and batches only under
#   2025-03-26.
# - `serve(stdin, stdout)`: the loop. Read frames until `None` (then return 0), skip empty lines,
#   write every reply that is not `None`.

# %% solution id=server
%%module server
import sys
from dataclasses import dataclass

from reference.dispatch import Dispatcher
from reference.errors import INVALID_PARAMS, INVALID_REQUEST, RpcError
from reference.framing import read_frame, write_frame

LATEST = "2025-11-25"
SUPPORTED = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
SERVER_INFO = {"name": "my-shop", "version": "0.1.0"}


@dataclass
class Session:
    version: str = LATEST
    initialize_seen: bool = False
    initialized: bool = False


def negotiate(requested):
    """The revision to answer ``requested`` with."""
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


def make_dispatcher(session):
    """The dispatcher for one session."""
    ### BEGIN SOLUTION
    def initialized(params):
        session.initialized = True

    return Dispatcher(
        methods={"initialize": lambda params: initialize(session, params), "ping": lambda params: {}},
        notifications={"notifications/initialized": initialized},
        batches_allowed=lambda: session.version == "2025-03-26",
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

# %% test id=test_exit points=1
# Stdin closed: your server exits by itself, status 0, with nothing more on stdout.
lab.check("test_exit")

# %% [markdown] id=sdk
# ## 6. A real client
#
# Your server now does everything a client needs to open a session. The last test connects with
# the official MCP Python SDK's client, the one real hosts are built on: it launches `server.py`,
# initializes, pings and closes.

# %% test id=test_sdk_client points=2
# The official MCP SDK's client: initialize and ping.
lab.check("test_sdk_client")

# %% [markdown] id=end
# ## What you have now
#
# A whole MCP server: it starts, agrees on a revision, answers pings, and leaves when its client
# does. It has nothing to offer yet. Stage 04 gives it tools.
