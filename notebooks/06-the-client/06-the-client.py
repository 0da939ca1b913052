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
# # Stage 06: the client
#
# Until now you wrote the server and the course played the client. Now you write the other end:
# the host's side of the pipe. A client starts the server, finds out which era of MCP it speaks,
# calls its tools, answers what it asks of the user, and shuts it down again, and it must stay in
# charge the whole time, whatever the server does. Real servers answer late, answer out of order,
# talk when nobody asked, flood their stderr and ignore the end of their input. The tests in this
# stage are servers that do exactly that.
#
# This stage teaches MCP **2026-07-28**, the current revision: no handshake, every request carries
# its version and your capabilities in `_meta` (stage 03 taught the server's side). Many servers
# still speak only the legacy handshake (2025-11-25 and before), so your client falls back to it
# when the server is old.
#
# You write one class, `Client`, in a file `mcp_client.py`, one method at a time.

# %% id="setup" nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false, "task": false}
from grader.course import lab

lab.setup("06")

# %% [markdown] id="launch"
# ## 1. Launching the server
#
# The spec (MCP 2026-07-28, Transports > stdio):
#
# > In the **stdio** transport, the client launches the MCP server as a subprocess.
#
# Three pipes: you write to its stdin, you read its stdout, and its stderr is a third pipe, for its
# logs. Three details matter:
#
# - **A list of arguments, no shell.** `["python", "server.py", "--db", "my shop.db"]` reaches the
#   server as four arguments. Through a shell, the space, a `$` or a `;` in an argument would be
#   interpreted, and a `;` runs a second command.
# - **stderr apart.** Never send stderr into stdout (`stderr=STDOUT`): one log line in the middle of
#   the protocol channel, and your JSON parser sees garbage.
# - **No `PYTHONUNBUFFERED`.** Notebooks and containers often set it. A Python server started with
#   it flushes every write, so a server that forgets `flush()` works with you and hangs with every
#   other host. Remove it from the child's environment, and such a bug shows up on your desk.

# %% [markdown] id="reading"
# ## 2. Reading without waiting forever
#
# `process.stdout.readline()` blocks until a line comes. If the server never writes one, your
# program waits forever. The spec (MCP 2026-07-28, Cancellation > Timeouts):
#
# > Implementations **SHOULD** establish timeouts for all sent requests, to prevent hung
# > connections and resource exhaustion.
#
# The plain way to get a timeout on a pipe: a thread reads lines and puts them on a
# `queue.Queue`; you take them off with `queue.get(timeout=...)`, which raises `queue.Empty` when
# the time is up. The function `pump` below is that thread's work. At the end of the stream it
# hands on `b""`: a real line always has at least its `\n`, so an empty one can only mean "closed"
# (as `readline()` itself says).
#
# stderr needs a thread of its own too, even if you never look at it. A pipe holds about 64 KiB.
# A server that logs more than that while nobody reads blocks in its `write` to stderr, and never
# gets to answer you. Keep the last lines (a `collections.deque(maxlen=...)`), so that when
# something fails you can show what the server said.

# %% [markdown] id="ids"
# ## 3. Matching replies by id
#
# Each request carries an id, and the spec (MCP 2026-07-28, Base Protocol > Responses) says:
#
# > Result responses **MUST** include the same ID as the request they correspond to.
#
# It does not say that replies come in the order of the requests. A server that works on several
# requests at once answers whichever finishes first. So a client never takes "the next line" as the
# answer: it reads until the reply *with its id* comes, and keeps the others (in `self.early`) for
# whoever waits for them. Compare ids as stage 02 taught: by value *and* JSON type. The string
# `"2"` is not the number `2`, and `0` is an id like any other: test `"id" in message`, never the
# truth of `message.get("id")`. Your ids are yours to choose; a counter from 1 is the usual choice,
# and the tests also wait for a request of id `0`.
#
# A notification has no id, and the spec says of notifications (Base Protocol > Notifications):
#
# > The receiver **MUST NOT** send a response.
#
# So `notify()` sends and returns. A client that waits for a reply to a notification (such as
# `notifications/cancelled`, which tells the server you gave up on a request) waits until its
# timeout, every time.

# %% [markdown] id="inspect-reverse"
# The wire inspector shows why the JSON type matters. The course's "reverse" test server (the one
# the tests use for out-of-order replies) writes, before each true reply, a forged one whose id is
# the right number as a string. The inspector links each request to its true reply and marks the
# forged ones: a client that compared `str(id)`, or kept replies in a dict keyed by `str(id)`,
# would have taken them.

# %% id="inspect-reverse-run"
lab.inspect(lab.adversary("reverse"), [lab.initialize(id=1), lab.request("ping", id=2), lab.request("ping", id=3)])

# %% [markdown] id="server-speaks"
# ## 4. When the server speaks first
#
# While you wait for your reply, the server may send a **notification** that relates to your
# request (MCP 2026-07-28, Transports > stdio > Receiving Messages: "_Notifications_ that relate to
# an in-flight request, such as `notifications/progress` and `notifications/message`"). Keep it;
# answer nothing.
#
# In 2026-07-28 such a notification comes only when your request asked for it. A log message
# (Server > Utilities > Logging, Per-request log level):
#
# > To receive log messages for a specific request, include
# > `io.modelcontextprotocol/logLevel` in the request's `_meta`. The server **MUST NOT**
# > emit `notifications/message` for a request that does not include this field.
#
# Progress notifications likewise need a `progressToken` in the request's `_meta`. Your client
# sends no `logLevel` (and Logging is deprecated in 2026-07-28: the spec points servers to stderr
# instead), so a 2026-07-28 server sends it no log messages. A legacy server may send them at any
# time, as the one below does: before 2026-07-28 a client set the level once, with
# `logging/setLevel`, which 2026-07-28 removed.
#
# It may not send a request of its own (MCP 2026-07-28, Transports > stdio):
#
# > The server **MUST NOT** write JSON-RPC _requests_ to `stdout`.
#
# When a 2026-07-28 server needs something from you, it says so in its *result* (section 8).
#
# > **Before 2026-07-28.** A legacy server may send requests: a message with a `method` *and* an
# > `id`, which it waits for you to answer (it may hold back your reply until then). A `ping`
# > (MCP 2025-11-25, Utilities > Ping): "The receiver **MUST** respond promptly with an empty
# > response." A request you do not serve (your client declared no `sampling` capability, say)
# > gets error -32601, Method not found. Either way, answer with the server's id, then go on
# > waiting. Your client falls back to such servers (section 6), so it answers them.
#
# This is a legacy server's ping, and the reply your client must write:
#
# ```json
# {"jsonrpc":"2.0","id":"srv-1-ping","method":"ping"}
# {"jsonrpc":"2.0","id":"srv-1-ping","result":{}}
# ```
#
# Watch a legacy server that does all of this. The cell runs the course's "chatty" test server and
# shows every line it writes:

# %% id="watch-chatty"
lab.watch(
    lab.adversary("chatty"),
    [
        lab.initialize(id=1),
        lab.notification("notifications/initialized"),
        lab.request("tools/list", id=2),
    ],
)

# %% [markdown] id="watch-explained"
# It answered `initialize` after a log notification; then, asked for `tools/list`, it sent a
# `ping` and a `sampling/createMessage` request and waited. Nobody answered them (the course's
# `watch` is not a client), so after three seconds it answered `tools/list` with an error that says
# so. Your client will answer them.

# %% [markdown] id="shutdown"
# ## 5. Shutting down
#
# The spec (MCP 2026-07-28, Transports > stdio > Shutdown):
#
# > The client **SHOULD** initiate shutdown by:
# > 1. Closing the input stream to the child process (the server).
# > 2. Waiting for the server to exit.
# > 3. If the server does not exit within a reasonable time, forcibly terminating the process
# >    using the mechanism appropriate for the operating system.
#
# The same page: "On POSIX systems, forced termination typically escalates from `SIGTERM` to
# `SIGKILL`." And of the server: "Servers **SHOULD** exit promptly when their standard input is
# closed or reads return end-of-file." A well-made server exits with
# status 0 as soon as its stdin closes (you wrote that in stage 03). Killing it first would cut off
# whatever it was still writing. The signals are for servers that do not listen:
# `process.terminate()` sends SIGTERM, `process.kill()` sends SIGKILL, and `process.wait(timeout)`
# raises `subprocess.TimeoutExpired` when the time is up. A process ended by a signal has a
# negative exit status (`-15`, `-9`).

# %% [markdown] id="probe"
# ## 6. Which era? Probe with `server/discover`
#
# Your client meets servers of both eras, and a 2026-07-28 request means nothing to a legacy
# server. So before anything else it asks. The spec (MCP 2026-07-28, Transports > stdio > Backward
# Compatibility):
#
# > A client that supports both modern (per-request-metadata) MCP versions and a legacy version
# > that requires an `initialize` handshake **SHOULD** probe with `server/discover` before sending
# > any other request, setting its preferred modern version in `_meta`.
#
# The probe has three outcomes:
#
# 1. A `DiscoverResult` (its `supportedVersions` lists 2026-07-28): the server is modern. Stay
#    modern.
# 2. A "recognized modern JSON-RPC error such as `UnsupportedProtocolVersionError`" (-32022, whose
#    `data.supported` lists the versions the server serves). The spec gives no closed list; this
#    course counts the three codes 2026-07-28 itself defines, -32020, -32021 and -32022 (the
#    course's choice). The server is modern, only not in your
#    version. The spec: "Use one of the versions in its advertised `supported` list. Do **not**
#    fall back to `initialize`." Your client speaks one modern version, 2026-07-28, so when the
#    list does not hold it there is nothing to retry with: raise `ClientError`, saying which
#    versions the server serves.
# 3. Any other error, or no answer within a reasonable timeout: the server is legacy. Run the
#    `initialize` handshake.
#
# The third outcome has a rule of its own:
#
# > The fallback **MUST NOT** be keyed to one specific error code: legacy servers respond to
# > unknown pre-`initialize` requests with implementation-defined errors (commonly `-32601` or
# > `-32602`) or not at all.
#
# So test for the few codes that mean *modern*, never for one code that would mean *legacy*, and
# treat a timeout as an answer. The probe against the course's server, which speaks both eras:
#
# ```text
# $ mcp-lab serve
# -> {"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"mcp-wire-lab-learner","version":"1.0"}}}}
# <- {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":false},...},"instructions":"...","ttlMs":300000,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcp-wire-lab-shop","title":"MCP Wire Lab shop","version":"0.1.0"}}}}
# ```
#
# The era is a property of the server, not of one request (MCP 2026-07-28, Versioning > Backward
# Compatibility with Initialization-Based Versions): "Clients **SHOULD** cache the result for the
# lifetime of the server process (stdio) [...]". Keep it in `self.era`, and the version in
# `self.version`.

# %% [markdown] id="fallback"
# ### The fallback: the legacy handshake
#
# > **Before 2026-07-28.** A legacy server expects `initialize` first (MCP 2025-11-25, Lifecycle):
# > your revision, capabilities and name; the server answers with the revision it will use, and
# > you send the notification `notifications/initialized`. From then on that revision holds for the
# > whole connection, and requests carry no 2026-07-28 `_meta`: not the `initialize` either. A
# > dual-era server (Versioning, Backward Compatibility) serves "A request carrying modern
# > per-request `_meta` [...] statelessly according to this revision", and 2026-07-28 has no
# > `initialize`; so set `self.era = "legacy"` before you send it. Against the course's server:
#
# ```text
# -> {"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcp-wire-lab-learner","version":"1.0"}}}
# <- {"jsonrpc":"2.0","id":2,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":false},...},"serverInfo":{"name":"mcp-wire-lab-shop",...},...}}
# -> {"jsonrpc":"2.0","method":"notifications/initialized"}
# -> {"jsonrpc":"2.0","id":3,"method":"tools/list"}
# <- {"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"count_orders",...}]}}
# ```
#
# Watch a legacy-only server meet the probe. The course's "legacy" test server refuses anything
# before `initialize` with -32601; others answer -32602, -32600 or nothing at all:

# %% id="watch-legacy"
lab.watch(
    lab.adversary("legacy"),
    [
        lab.modern("server/discover", id=1),
        lab.initialize(id=2),
        lab.notification("notifications/initialized"),
    ],
)

# %% [markdown] id="envelope"
# ## 7. The envelope on every request
#
# Once the server is modern, every request you send carries the envelope stage 03's server read
# (MCP 2026-07-28, Base Protocol > `_meta`):
#
# > Client requests carry the following `io.modelcontextprotocol/*` fields in `_meta`; fields
# > marked as required **MUST** be included on every request.
#
# `io.modelcontextprotocol/protocolVersion` (the version you speak) and
# `io.modelcontextprotocol/clientCapabilities` (what you can do) are required;
# `io.modelcontextprotocol/clientInfo` "**SHOULD**" be there too, so send all three. Every
# request, not only the first: the server remembers nothing between them. A request the caller
# gave with a `_meta` of its own (a `progressToken`) keeps it, with the three keys added. After a
# fallback, no `_meta`: a legacy connection never carries it.
#
# ```text
# $ mcp-lab serve
# -> {"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"count_orders","arguments":{"status":"paid"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"mcp-wire-lab-learner","version":"1.0"}}}}
# <- {"jsonrpc":"2.0","id":4,"result":{"resultType":"complete","content":[{"type":"text","text":"{\"status\": \"paid\", \"count\": 341}"}],"structuredContent":{"status":"paid","count":341},"isError":false,...}}
# ```
#
# Every 2026-07-28 result says what kind it is: `"resultType": "complete"` here.

# %% [markdown] id="input-required"
# ## 8. When the server needs the user: `input_required`
#
# A 2026-07-28 server that needs something from the user before it can finish (a confirmation, a
# name) does not send you a request. It answers with a result whose `resultType` is
# `"input_required"`: its `inputRequests` are the questions, each under a key the server chose, and
# its `requestState` is an opaque string for the server's memory. You ask the user, then send the
# *same* request again, under a new id, with the answers. The course's server asks before it
# cancels an order (it offers `cancel_order` when started with `--allow-writes` on a copy of the
# shop), but only of a client whose capabilities declare `elicitation`:
#
# ```text
# $ mcp-lab serve --allow-writes --db COPY
# -> {"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"cancel_order","arguments":{"order_id":9,"reason":"asked by phone"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}},"io.modelcontextprotocol/clientInfo":{"name":"mcp-wire-lab-learner","version":"1.0"}}}}
# <- {"jsonrpc":"2.0","id":5,"result":{"resultType":"input_required","inputRequests":{"confirm":{"method":"elicitation/create","params":{"mode":"form","message":"Cancel order 9 (paid, 4 items, 1730.88 in total, for Priya Rossi)? Reason given: asked by phone. The order cannot be un-cancelled.","requestedSchema":{"type":"object","properties":{"confirm":{"type":"boolean",...}},"required":["confirm"]}}}},"requestState":"...",...}}
# ```
#
# The retry: the original params, plus `inputResponses` (one answer per key, under the *same* key)
# and the `requestState` exactly as it came (shortened here):
#
# ```text
# -> {"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"cancel_order","arguments":{"order_id":9,"reason":"asked by phone"},"inputResponses":{"confirm":{"action":"accept","content":{"confirm":true}}},"requestState":"...","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}},"io.modelcontextprotocol/clientInfo":{"name":"mcp-wire-lab-learner","version":"1.0"}}}}
# <- {"jsonrpc":"2.0","id":6,"result":{"resultType":"complete","content":[{"type":"text","text":"{\"order_id\": 9, \"status\": \"cancelled\", \"previous_status\": \"paid\", \"rows_changed\": 2}"}],"structuredContent":{"order_id":9,"status":"cancelled","previous_status":"paid","rows_changed":2},"isError":false,...}}
# ```
#
# The rules are the client's (MCP 2026-07-28, Multi Round-Trip Requests > Client Requirements
# (Basic Workflow)):
#
# > If a client receives an `InputRequiredResult` that contains the `inputRequests` field, the
# > client **MUST** construct the requested inputs before retrying the original request.
#
# > If an `InputRequiredResult` contains the `requestState` field, the client **MUST** echo back
# > the exact value of that field when retrying the original request. Clients **MUST NOT**
# > inspect, parse, modify, or make any assumptions about the `requestState` contents. If the
# > `InputRequiredResult` does not contain a `requestState` field, the client **MUST NOT** include
# > one in the retry.
#
# > The JSON-RPC `id` **MUST** be different between the initial request and the retry, as they are
# > independent requests.
#
# The answers go in `inputResponses` (Core Types > InputResponses): "Keys correspond to the keys in
# the `InputRequests` map". An `input_required` result without `inputRequests` asks nothing: retry
# at once, with its `requestState`. And the server may ask again after your retry, with new
# questions and a new state: each retry answers the *last* result, built from the original params.

# %% [markdown] id="task"
# ### Your turn: `mcp_client.py`
#
# Fill in each part marked `YOUR CODE HERE`:
#
# - `launch(argv)`: start the server as described in part 1; return the `subprocess.Popen`.
# - `Client.__init__`: after `launch`, start two daemon threads running `pump`: stdout into
#   `self.lines.put`, stderr into `self.stderr.append`.
# - `envelope()`: the three `_meta` keys of part 7, for `MODERN` and `self.capabilities`.
# - `send_request(method, params=None)`: a request with a fresh id, sent; return the id at once. When
#   `self.era` is `"modern"`, its params carry `_meta` with the envelope (and the caller's own
#   `_meta` keys); never change the caller's `params` dict.
# - `notify(method, params=None)`: a notification, sent; return at once.
# - `next_message(timeout)`: the next line that is a JSON object, decoded (skip any other line);
#   raise `ClientError` if none comes within `timeout` seconds, or at once if stdout has closed.
# - `on_server_message(message)`: a message from the server that has a `method`: keep a
#   notification in `self.notifications`; answer a `ping` with `{}` and any other request with
#   error -32601 (legacy servers send them).
# - `wait_for(request_id, timeout=None)`: the whole reply to `request_id` (a dict with `result` or
#   `error`): from `self.early` if it came already, otherwise read messages until it comes, within
#   `timeout` (default `self.timeout`) in all.
# - `initialize(version="2025-11-25")`: the legacy handshake of part 6; return the server's result.
# - `connect(probe_timeout=2.0)`: part 6. Probe with `server/discover` (its `_meta`, the
#   envelope), waiting at most `probe_timeout` seconds. A result: set `self.era = "modern"` and
#   `self.version = MODERN`, return it. A modern error (`MODERN_ERRORS`): raise `ClientError`. Any
#   other error or none: `self.era = "legacy"`, run `initialize()`, set `self.version` to the
#   revision it agreed, and return its result.
# - `round_trip(method, params=None)`: part 8. `request` it; while the result is `input_required`,
#   answer each of its `inputRequests` with `self.on_input(key, request)` and send the retry; return
#   the complete result. Give up with `ClientError` after `MAX_ROUNDS` results that asked.
# - `close(grace=2.0)`: part 5's order; return the exit status.
#
# `params` is left out of a message when it is `None`. `send` and `request` are given; `request`
# raises `ClientError` for an error reply, with the reply's `error` object in `.error`.

# %% id="mcp_client" nbgrader={"grade": false, "grade_id": "mcp_client", "locked": false, "schema_version": 3, "solution": true, "task": false}
%%module mcp_client
import collections
import json
import os
import queue
import subprocess
import threading
import time

MODERN = "2026-07-28"  # the modern version this client speaks
LEGACY = "2025-11-25"  # the legacy revision it proposes to old servers
PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
CLIENT_INFO = {"name": "mcp-wire-lab-learner", "version": "1.0"}
MODERN_ERRORS = (-32020, -32021, -32022)  # the error codes 2026-07-28 defines: only a modern server sends them
MAX_ROUNDS = 8  # input_required results a request may get before round_trip gives up


class ClientError(Exception):
    """The session cannot go on: no reply in time, the server gone, or an error reply (``error``)."""

    def __init__(self, message, error=None):
        super().__init__(message)
        self.error = error  # the reply's error object, when the server answered with one


def launch(argv):
    """Start ``argv`` as the server: three pipes, no shell, no PYTHONUNBUFFERED."""
    ### BEGIN SOLUTION
    env = {key: value for key, value in os.environ.items() if key != "PYTHONUNBUFFERED"}
    return subprocess.Popen(
        list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    ### END SOLUTION


def pump(stream, sink):
    """Hand each line of ``stream`` to ``sink``; then ``b""``: the stream has closed."""
    for line in iter(stream.readline, b""):
        sink(line)
    sink(b"")


def same_id(a, b):
    """Ids are equal when their values *and* JSON types are: "2" is not 2."""
    return type(a) is type(b) and a == b


class Client:
    def __init__(self, argv, timeout=5.0, on_input=None):
        self.timeout = timeout  # seconds to wait for a reply, by default
        self.next_id = 1
        self.early = []  # replies that came before anyone waited for them
        self.notifications = []  # notifications the server sent
        self.stderr = collections.deque(maxlen=200)  # the last lines of the server's stderr
        self.lines = queue.Queue()  # the server's stdout lines, from the pump thread
        self.era = None  # "modern" or "legacy", once connect() has found out
        self.version = None  # the version this connection speaks
        # on_input(key, request) -> result answers what a server asks of the user (part 8); a
        # client that has one can answer elicitation forms, and says so in its capabilities.
        self.on_input = on_input
        self.capabilities = {"elicitation": {"form": {}}} if on_input is not None else {}
        self.process = launch(argv)
        ### BEGIN SOLUTION
        for stream, sink in ((self.process.stdout, self.lines.put), (self.process.stderr, self.stderr.append)):
            threading.Thread(target=pump, args=(stream, sink), daemon=True).start()
        ### END SOLUTION

    def send(self, message):
        """Write one message to the server, as one line, flushed."""
        self.process.stdin.write((json.dumps(message) + "\n").encode("utf-8"))
        self.process.stdin.flush()

    def envelope(self):
        ### BEGIN SOLUTION
        return {PROTOCOL_VERSION: MODERN, CLIENT_CAPABILITIES: self.capabilities, CLIENT_INFO_KEY: CLIENT_INFO}
        ### END SOLUTION

    def send_request(self, method, params=None):
        ### BEGIN SOLUTION
        request_id = self.next_id
        self.next_id += 1
        if self.era == "modern":
            params = dict(params or {})
            params["_meta"] = {**params.get("_meta", {}), **self.envelope()}
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return request_id
        ### END SOLUTION

    def notify(self, method, params=None):
        ### BEGIN SOLUTION
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        ### END SOLUTION

    def next_message(self, timeout):
        ### BEGIN SOLUTION
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise ClientError(f"no message from the server within {timeout:.1f} s") from None
            if line == b"":
                self.lines.put(b"")  # still closed for the next reader
                raise ClientError("the server closed its stdout (has it exited?)")
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if isinstance(message, dict):
                return message
        ### END SOLUTION

    def on_server_message(self, message):
        ### BEGIN SOLUTION
        if "id" not in message:
            self.notifications.append(message)
        elif message["method"] == "ping":
            self.send({"jsonrpc": "2.0", "id": message["id"], "result": {}})
        else:
            error = {"code": -32601, "message": f"Method not found: {message['method']}"}
            self.send({"jsonrpc": "2.0", "id": message["id"], "error": error})
        ### END SOLUTION

    def wait_for(self, request_id, timeout=None):
        ### BEGIN SOLUTION
        for reply in self.early:
            if same_id(reply["id"], request_id):
                self.early.remove(reply)
                return reply
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            message = self.next_message(deadline - time.monotonic())
            if "method" in message:
                self.on_server_message(message)
            elif "id" in message:
                if same_id(message["id"], request_id):
                    return message
                self.early.append(message)
        ### END SOLUTION

    def request(self, method, params=None, timeout=None):
        """Send a request and return its result; an error reply raises ClientError (its error in .error)."""
        reply = self.wait_for(self.send_request(method, params), timeout)
        if "error" in reply:
            raise ClientError(f"{method} failed: {reply['error']}", reply["error"])
        return reply.get("result")

    def initialize(self, version=LEGACY):
        ### BEGIN SOLUTION
        params = {"protocolVersion": version, "capabilities": {}, "clientInfo": CLIENT_INFO}
        result = self.request("initialize", params)
        self.notify("notifications/initialized")
        return result
        ### END SOLUTION

    def connect(self, probe_timeout=2.0):
        ### BEGIN SOLUTION
        try:
            result = self.request("server/discover", {"_meta": self.envelope()}, probe_timeout)
        except ClientError as exc:
            code = exc.error.get("code") if isinstance(exc.error, dict) else None
            if code in MODERN_ERRORS:
                raise ClientError(f"a modern server that does not speak {MODERN}: {exc.error}", exc.error) from None
            # Any other error, or no answer in time: a legacy server.
            self.era = "legacy"
            result = self.initialize()
            self.version = result.get("protocolVersion")
            return result
        self.era, self.version = "modern", MODERN
        return result
        ### END SOLUTION

    def round_trip(self, method, params=None):
        ### BEGIN SOLUTION
        original = dict(params or {})
        retry = original
        for _ in range(MAX_ROUNDS):
            result = self.request(method, retry)
            if not isinstance(result, dict) or result.get("resultType") != "input_required":
                return result
            retry = dict(original)
            asked = result.get("inputRequests")
            if asked:
                if self.on_input is None:
                    raise ClientError(f"{method}: the server asks for input and this client has no on_input")
                retry["inputResponses"] = {key: self.on_input(key, request) for key, request in asked.items()}
            if "requestState" in result:
                retry["requestState"] = result["requestState"]
        raise ClientError(f"{method}: still input_required after {MAX_ROUNDS} rounds")
        ### END SOLUTION

    def close(self, grace=2.0):
        ### BEGIN SOLUTION
        self.process.stdin.close()
        try:
            return self.process.wait(grace)
        except subprocess.TimeoutExpired:
            self.process.terminate()
        try:
            return self.process.wait(grace)
        except subprocess.TimeoutExpired:
            self.process.kill()
        return self.process.wait()
        ### END SOLUTION


# %% id="try-it"
with lab.time_limit(15):  # your client against the course's server; a hang ends after 15 s
    client = Client(lab.reference())
    print(client.connect()["_meta"])
    print(client.era, client.version)
    print([tool["name"] for tool in client.request("tools/list")["tools"]])
    print(client.request("tools/call", {"name": "count_orders", "arguments": {"status": "paid"}}))
    print("exit status:", client.close())

# %% id="try-it-legacy"
with lab.time_limit(15):  # a legacy-only server: the probe fails, the client falls back
    client = Client(lab.adversary("legacy"))
    print(client.connect()["protocolVersion"], client.era)
    print(client.request("tools/call", {"name": "count_orders", "arguments": {"status": "paid"}})["structuredContent"])
    print("exit status:", client.close())

# %% [markdown] id="try-input"
# The course's server on a fresh copy of the shop, with writes allowed: cancel order 9. Your
# `on_input` stands in for the user here: it prints the question and says yes.

# %% id="try-it-input"
import shutil
import tempfile


def agree(key, request):
    print(f"asked ({key}): {request['params']['message']}")
    return {"action": "accept", "content": {"confirm": True}}


copy = shutil.copy(lab.shop_db(), tempfile.mkdtemp() + "/shop.db")
with lab.time_limit(15):
    client = Client([*lab.reference(), "--allow-writes", "--db", copy], on_input=agree)
    client.connect()
    result = client.round_trip("tools/call", {"name": "cancel_order", "arguments": {"order_id": 9, "reason": "asked by phone"}})
    print(result["structuredContent"])
    print("exit status:", client.close())

# %% id="test_launch" nbgrader={"grade": true, "grade_id": "test_launch", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# Launch: a list of arguments (no shell), three pipes, no PYTHONUNBUFFERED for the child.
lab.check("test_launch")

# %% id="test_handshake" nbgrader={"grade": true, "grade_id": "test_handshake", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 3}
# The legacy handshake: initialize (2025-11-25), initialized, tools/list, tools/call; notify() never waits.
# Hidden when graded: the same checks on other values.
lab.check("test_handshake")

# %% id="test_ids" nbgrader={"grade": true, "grade_id": "test_ids", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 3}
# Replies out of order and forged string ids: ping, tools/list, ping, waited for in order; then a
# request of id 0 (0 is an id).
# Hidden when graded: the same checks on other values.
lab.check("test_ids")

# %% id="test_server_messages" nbgrader={"grade": true, "grade_id": "test_server_messages", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 3}
# A legacy server that sends a log, a ping and a sampling request before its reply.
lab.check("test_server_messages")

# %% id="test_timeouts" nbgrader={"grade": true, "grade_id": "test_timeouts", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# A server that never answers (timeout 1 s) and one that exits: ClientError, soon.
# Hidden when graded: the same checks on other values.
lab.check("test_timeouts")

# %% id="test_stderr" nbgrader={"grade": true, "grade_id": "test_stderr", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# A server that writes 1 MiB to stderr before it answers.
lab.check("test_stderr")

# %% id="test_close" nbgrader={"grade": true, "grade_id": "test_close", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 3}
# Close(): stdin first (status 0), then SIGTERM, then SIGKILL for servers that stay.
lab.check("test_close")

# %% id="test_probe" nbgrader={"grade": true, "grade_id": "test_probe", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 3}
# Connect(): the server/discover probe with its _meta; modern on a DiscoverResult; legacy (initialize)
# on -32601, -32602 and on silence; a -32022 raises ClientError and sends no initialize.
# Hidden when graded: the same checks on other codes and probe timeouts.
lab.check("test_probe")

# %% id="test_envelope" nbgrader={"grade": true, "grade_id": "test_envelope", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# Modern era: every request after the probe carries the three _meta keys (the caller's own _meta kept);
# legacy era after a fallback: none.
# Hidden when graded: the same checks on other values.
lab.check("test_envelope")

# %% id="test_input_required" nbgrader={"grade": true, "grade_id": "test_input_required", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 3}
# Round_trip(): three input_required results in a row (two questions and a state; a state alone; a
# question and no state): answers under the server's keys, the state echoed exactly or left out, a new id.
# Hidden when graded: the same checks on other keys and states.
lab.check("test_input_required")

# %% [markdown] id="recall"
# ## Recall
#
# 1. Your probe gets `{"code": -32602, "message": "Invalid params"}`. Which era is the server, and
#    what do you send next? And for `{"code": -32022, ...}`?
# 2. The probe gets no answer at all. What does your client do, and after how long?
# 3. Which three `_meta` keys go on every 2026-07-28 request, and which two of them are required?
# 4. A server answers `input_required` with a `requestState` and no `inputRequests`. What do you
#    send, and what do you leave out? And when the next result has `inputRequests` but no
#    `requestState`?
# 5. Why must the retry have an id of its own?

# %% [markdown] id="end"
# ## What you have now
#
# A client that a misbehaving server cannot hang, and that speaks both eras: it launches without a
# shell, drains both pipes, bounds every wait, matches replies by id, probes for the server's era
# and falls back to the handshake for old servers, sends the envelope on every modern request,
# carries a request through the user's answers, and shuts down in the spec's order. Point it at
# any stdio server, yours or someone else's:
#
# ```python
# client = Client(["npx", "-y", "@modelcontextprotocol/server-everything"], timeout=60)
# client.connect(probe_timeout=10)
# ```
#
# Stage 07 turns to the most common reason a real server fails to connect: something else on its
# stdout.

# %% [markdown] id="read-next"
# ## Read next in the spec
#
# The pages this stage relies on, in the spec repository (`docs/specification/...`, `schema/...`):
#
# - `docs/specification/2026-07-28/basic/transports/stdio.mdx`: the opening rules, Receiving
#   Messages, Shutdown, Backward Compatibility (the probe and the fallback).
# - `docs/specification/2026-07-28/basic/versioning.mdx`: Backward Compatibility with
#   Initialization-Based Versions (the era is the server's; how a dual-era server reads a request;
#   the compatibility matrix).
# - `docs/specification/2026-07-28/basic/index.mdx`: Responses (ids), Notifications, the `_meta`
#   of General fields (Per-request protocol fields), Error Codes.
# - `docs/specification/2026-07-28/basic/patterns/mrtr.mdx`: Client Requirements (`inputRequests`,
#   `requestState`, a new id), and `schema/2026-07-28/schema.ts` `InputRequiredResult`,
#   `InputResponses`.
# - `docs/specification/2026-07-28/basic/patterns/cancellation.mdx`: Timeouts.
# - `docs/specification/2026-07-28/server/utilities/logging.mdx`: Per-request log level
#   (`notifications/message` only for a request with `io.modelcontextprotocol/logLevel`).
# - The legacy era: `docs/specification/2025-11-25/basic/lifecycle.mdx` (Initialization) and
#   `docs/specification/2025-11-25/basic/utilities/ping.mdx`.
