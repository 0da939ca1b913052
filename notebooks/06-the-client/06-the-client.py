Stage 06 of MCP Wire Lab, as text (see grader/course/notebook.py for the cell syntax).

# %% [markdown] id=title
# # Stage 06: the client
#
# Until now you wrote the server and the course played the client. Now you write the other end:
# the host's side of the pipe. A client starts the server, shakes hands, lists and calls tools,
# and shuts the server down again, and it must stay in charge the whole time, whatever the server
# does. Real servers answer late, answer out of order, talk when nobody asked, flood their stderr
# and ignore the end of their input. The tests in this stage are servers that do exactly that.
#
# You write one class, `Client`, in a file `mcp_client.py`, one method at a time.

# %% setup id=setup
from grader.course import lab

lab.setup("06")

# %% [markdown] id=launch
# ## 1. Launching the server
#
# The spec (MCP 2025-11-25, Transports > stdio):
#
# > In the **stdio** transport: The client launches the MCP server as a subprocess.
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

# %% [markdown] id=reading
# ## 2. Reading without waiting forever
#
# `process.stdout.readline()` blocks until a line comes. If the server never writes one, your
# program waits forever. The spec (MCP 2025-11-25, Lifecycle > Timeouts):
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

# %% [markdown] id=ids
# ## 3. Matching replies by id
#
# Each request carries an id, and the spec (MCP 2025-11-25, Base Protocol) says:
#
# > Responses **MUST** include the same ID as the request they correspond to.
#
# It does not say that replies come in the order of the requests. A server that works on several
# requests at once answers whichever finishes first. So a client never takes "the next line" as the
# answer: it reads until the reply *with its id* comes, and keeps the others (in `self.early`) for
# whoever waits for them. Compare ids as stage 02 taught: by value *and* JSON type. The string
# `"2"` is not the number `2`.
#
# Your ids are yours to choose; a counter from 1 is the usual choice. This is the handshake your
# client will send, and what the course's server answers:
#
# ```text
# -> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcp-wire-lab-learner","version":"1.0"}}}
# <- {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":false},...},"serverInfo":{"name":"mcp-wire-lab-shop",...},...}}
# -> {"jsonrpc":"2.0","method":"notifications/initialized"}
# -> {"jsonrpc":"2.0","id":2,"method":"tools/list"}
# <- {"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"count_orders",...}]}}
# ```
#
# The third line is a notification. It has no id, and the spec says of notifications:
#
# > The receiver **MUST NOT** send a response.
#
# So `notify()` sends and returns. A client that waits for a reply to a notification waits until
# its timeout, every time.

# %% [markdown] id=inspect-reverse
# The wire inspector shows why the JSON type matters. The course's "reverse" test server (the one
# the tests use for out-of-order replies) writes, before each true reply, a forged one whose id is
# the right number as a string. The inspector links each request to its true reply and marks the
# forged ones: a client that compared `str(id)`, or kept replies in a dict keyed by `str(id)`,
# would have taken them.

# %% id=inspect-reverse-run
lab.inspect(lab.adversary("reverse"), [lab.initialize(id=1), lab.request("ping", id=2), lab.request("ping", id=3)])

# %% [markdown] id=server-speaks
# ## 4. When the server speaks first
#
# Messages go both ways. While you wait for your reply, the server may send:
#
# - a **notification**, such as a log message (`notifications/message`). Keep it; answer nothing.
# - a **request** of its own: it has a `method` *and* an `id`. The server waits for your answer,
#   and may hold back yours until it gets it. A `ping` (MCP 2025-11-25, Utilities > Ping):
#
#   > The receiver **MUST** respond promptly with an empty response.
#
#   A request you do not serve (your client declared no `sampling` capability, say) gets error
#   -32601, Method not found. Either way, answer with the server's id, then go on waiting.
#
# This is a server's ping, and the reply your client must write:
#
# ```json
# {"jsonrpc":"2.0","id":"srv-1-ping","method":"ping"}
# {"jsonrpc":"2.0","id":"srv-1-ping","result":{}}
# ```
#
# Watch a server that does all of this. The cell runs the course's "chatty" test server and shows
# every line it writes:

# %% id=watch-chatty
lab.watch(
    lab.adversary("chatty"),
    [
        lab.initialize(id=1),
        lab.notification("notifications/initialized"),
        lab.request("tools/list", id=2),
    ],
)

# %% [markdown] id=watch-explained
# It answered `initialize` after a log notification; then, asked for `tools/list`, it sent a
# `ping` and a `sampling/createMessage` request and waited. Nobody answered them (the course's
# `watch` is not a client), so after three seconds it answered `tools/list` with an error that says
# so. Your client will answer them.

# %% [markdown] id=shutdown
# ## 5. Shutting down
#
# The spec (MCP 2025-11-25, Lifecycle > Shutdown):
#
# > For the stdio transport, the client **SHOULD** initiate shutdown by:
# > 1. First, closing the input stream to the child process (the server)
# > 2. Waiting for the server to exit, or sending `SIGTERM` if the server does not exit within a
# >    reasonable time
# > 3. Sending `SIGKILL` if the server does not exit within a reasonable time after `SIGTERM`
#
# A well-made server exits with status 0 as soon as its stdin closes (you wrote that in stage 03).
# Killing it first would cut off whatever it was still writing. The signals are for servers that do
# not listen: `process.terminate()` sends SIGTERM, `process.kill()` sends SIGKILL, and
# `process.wait(timeout)` raises `subprocess.TimeoutExpired` when the time is up. A process ended by
# a signal has a negative exit status (`-15`, `-9`).

# %% [markdown] id=task
# ### Your turn: `mcp_client.py`
#
# Fill in each part marked `YOUR CODE HERE`:
#
# - `launch(argv)`: start the server as described in part 1; return the `subprocess.Popen`.
# - `Client.__init__`: after `launch`, start two daemon threads running `pump`: stdout into
#   `self.lines.put`, stderr into `self.stderr.append`.
# - `send_request(method, params=None)`: a request with a fresh id, sent; return the id at once.
# - `notify(method, params=None)`: a notification, sent; return at once.
# - `next_message(timeout)`: the next line that is a JSON object, decoded (skip any other line);
#   raise `ClientError` if none comes within `timeout` seconds, or at once if stdout has closed.
# - `on_server_message(message)`: a message from the server that has a `method`: keep a
#   notification in `self.notifications`; answer a `ping` with `{}` and any other request with
#   error -32601.
# - `wait_for(request_id, timeout=None)`: the whole reply to `request_id` (a dict with `result` or
#   `error`): from `self.early` if it came already, otherwise read messages until it comes, within
#   `timeout` (default `self.timeout`) in all.
# - `initialize(version="2025-11-25")`: the handshake above; return the server's result.
# - `close(grace=2.0)`: part 5's order; return the exit status.
#
# `params` is left out of a message when it is `None`. `send` and `request` are given.

# %% solution id=mcp_client
%%module mcp_client
import collections
import json
import os
import queue
import subprocess
import threading
import time

CLIENT_INFO = {"name": "mcp-wire-lab-learner", "version": "1.0"}


class ClientError(Exception):
    """The session cannot go on: no reply in time, the server gone, or an error reply."""


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
    def __init__(self, argv, timeout=5.0):
        self.timeout = timeout  # seconds to wait for a reply, by default
        self.next_id = 1
        self.early = []  # replies that came before anyone waited for them
        self.notifications = []  # notifications the server sent
        self.stderr = collections.deque(maxlen=200)  # the last lines of the server's stderr
        self.lines = queue.Queue()  # the server's stdout lines, from the pump thread
        self.process = launch(argv)
        ### BEGIN SOLUTION
        for stream, sink in ((self.process.stdout, self.lines.put), (self.process.stderr, self.stderr.append)):
            threading.Thread(target=pump, args=(stream, sink), daemon=True).start()
        ### END SOLUTION

    def send(self, message):
        """Write one message to the server, as one line, flushed."""
        self.process.stdin.write((json.dumps(message) + "\n").encode("utf-8"))
        self.process.stdin.flush()

    def send_request(self, method, params=None):
        ### BEGIN SOLUTION
        request_id = self.next_id
        self.next_id += 1
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
        """Send a request and return its result; an error reply raises ClientError."""
        reply = self.wait_for(self.send_request(method, params), timeout)
        if "error" in reply:
            raise ClientError(f"{method} failed: {reply['error']}")
        return reply.get("result")

    def initialize(self, version="2025-11-25"):
        ### BEGIN SOLUTION
        params = {"protocolVersion": version, "capabilities": {}, "clientInfo": CLIENT_INFO}
        result = self.request("initialize", params)
        self.notify("notifications/initialized")
        return result
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

# %% id=try-it
with lab.time_limit(15):  # your client against the course's server; a hang ends after 15 s
    client = Client(lab.reference())
    print(client.initialize()["serverInfo"])
    print([tool["name"] for tool in client.request("tools/list")["tools"]])
    print(client.request("tools/call", {"name": "count_orders", "arguments": {"status": "paid"}}))
    print("exit status:", client.close())

# %% test id=test_launch points=2
# Launch: a list of arguments (no shell), three pipes, no PYTHONUNBUFFERED for the child.
lab.check("test_launch")

# %% test id=test_handshake points=3
# Initialize (2025-11-25), initialized, tools/list, tools/call; notify() never waits.
# Hidden when graded: the same checks on other values.
lab.check("test_handshake")

# %% test id=test_ids points=3
# Replies out of order and forged string ids: ping, tools/list, ping, waited for in order.
# Hidden when graded: the same checks on other values.
lab.check("test_ids")

# %% test id=test_server_messages points=3
# A server that sends a log, a ping and a sampling request before its reply.
lab.check("test_server_messages")

# %% test id=test_timeouts points=2
# A server that never answers (timeout 1 s) and one that exits: ClientError, soon.
# Hidden when graded: the same checks on other values.
lab.check("test_timeouts")

# %% test id=test_stderr points=2
# A server that writes 1 MiB to stderr before it answers.
lab.check("test_stderr")

# %% test id=test_close points=3
# Close(): stdin first (status 0), then SIGTERM, then SIGKILL for servers that stay.
lab.check("test_close")

# %% [markdown] id=end
# ## What you have now
#
# A client that a misbehaving server cannot hang: it launches without a shell, drains both pipes,
# bounds every wait, matches replies by id, answers the server's own requests, and shuts down in
# the spec's order. Point it at any stdio server, yours or someone else's:
#
# ```python
# client = Client(["npx", "-y", "@modelcontextprotocol/server-everything"], timeout=60)
# ```
#
# Stage 07 turns to the most common reason a real server fails to connect: something else on its
# stdout.
