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
# # Stage 09: the clinic, repair
#
# Five servers, five bug reports, and this time the source. Each `repair_N.py` beside this
# notebook is a whole MCP shop server, written by someone else in a style of their own: a thread
# per request, asyncio, a dispatcher class, a server leaning on a library, framing done by hand.
# Each has one defect. You find it from the symptom and the wire, make the smallest repair, and
# prove it with the checker. Four speak MCP 2025-11-25 (the handshake era, which older hosts
# still speak); `repair_5.py` speaks the current revision, MCP 2026-07-28.
#
# Open the files in JupyterLab's file browser (double-click), edit, save (Ctrl+S). Each has a
# pristine copy, `repair_N.py.orig`, to compare against.

# %% id="setup" nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false, "task": false}
from grader.course import clinic, lab

lab.setup("09")

# %% [markdown] id="reading"
# ## 1. Reading a server you did not write
#
# Do not read a strange server from the top down. Follow a message through it:
#
# 1. **In.** Where are lines read? By one loop, by a coroutine, by raw `os.read()` calls?
# 2. **Out.** Where is stdout written? Find *every* place: a server often has two or three, and a
#    defect hides in the one you did not look at.
# 3. **At the same time.** What runs beside the main loop: threads, tasks, a worker pool, a
#    heartbeat? Anything that runs at the same time can write at the same time, or keep the
#    process alive.
#
# The first line of each file is its symptom, what a host or a user reported:

# %% id="symptoms"
from pathlib import Path

for number in range(1, 6):
    name = f"repair_{number}.py"
    symptom = Path(name).read_text().splitlines()[0].lstrip('"')
    print(f"{name}: {symptom}")

# %% [markdown] id="method"
# ## 2. The method
#
# 1. **The checker first.** `clinic.report(...)` runs `mcp-lab check` and prints its report.
#    Read the first failure, and the warnings: a rule that is only a SHOULD shows as WARN.
# 2. **A targeted session.** The checker talks to a server the way a careful client does: one
#    request at a time, waiting for each reply. A host does not always. Send the frames that the
#    symptom points at, with `lab.watch(command, frames)`: a frame is a message (a dict) or a raw
#    line (a `str` or `bytes`, sent as it is, even one holding several lines).
# 3. **The smallest repair.** Change the lines that break the rule, and nothing else.
# 4. **The checker again**, and the targeted session again.
#
# The rest of this lesson walks the method through the five kinds of defect you will meet. It
# never shows a fix: that is your part.

# %% [markdown] id="flush"
# ## 3. When the checker sees it: a reply held back
#
# The checker on `repair_2.py`:

# %% id="flush-report"
clinic.report(lab.program("repair_2"))

# %% [markdown] id="flush-frames"
# `stdout-flush`: the replies held back are all errors. Stdout to a pipe is block-buffered, so a
# reply written and not flushed waits in the process's buffer, and the host waits for it. The
# rule is the one every request relies on (JSON-RPC 2.0, which MCP builds on, section 5; MCP
# 2025-11-25, Base Protocol > Messages: all messages "**MUST** follow the JSON-RPC 2.0
# specification"):
#
# > When a rpc call is made, the Server **MUST** reply with a Response, except for in the case of
# > Notifications.
#
# Now a targeted session: a line that is not JSON, sent alone.

# %% id="flush-watch"
lab.watch(lab.program("repair_2"), [lab.initialize(id=1), "this is not json"])

# %% [markdown] id="flush-why"
# Read the two `<-` lines. The `initialize` reply came at once, while stdin was open. The line
# that is not JSON got nothing in the half second `lab.watch` waited with stdin open: its error,
# `-32700`, is printed below `(stdin closed)`, stamped no earlier than that moment. It had sat in
# the buffer until the process exited and Python flushed it on the way out. Yet the report said
# `parse-error` PASS: the checker sends a ping after every bad line, and the ping's reply is
# flushed, pushing the error out with it. So the checker cannot see every path: once you have
# repaired what it reports, send each kind of line alone and watch each reply come.

# %% [markdown] id="ids"
# ## 4. When the checker sees nothing: ids
#
# `repair_3.py`'s symptom: hosts list the tools, then every tool call spins until it times out.
# The checker passes it:

# %% id="ids-report"
clinic.report(lab.program("repair_3"))

# %% [markdown] id="ids-frames"
# So ask what a host does that the checker did not. The checker's tool calls carry string ids
# (`"call-count_orders-3"`); Claude Desktop, the Inspector and the SDKs number their requests
# `1, 2, 3`. The rule (MCP 2025-11-25, Base Protocol > Messages > Responses; error responses
# likewise):
#
# > Result responses **MUST** include the same ID as the request they correspond to.
#
# The same ID means the same JSON value *and* type: `2` and `"2"` are two different ids. A tool
# call with an integer id:

# %% id="ids-watch"
call = lab.request("tools/call", id=2, params={"name": "count_orders", "arguments": {}})
lab.watch(lab.program("repair_3"), [lab.initialize(id=1), lab.notification("notifications/initialized"), call])

# %% [markdown] id="ids-why"
# Look at the `id` of each reply. Then find where the id of a tool call turns into something else,
# and *why* the author did it: the repair must keep what they wanted (cancelling a call) and give
# every reply its own id back. `int(...)` is not a repair: a client may send `"17"`, a string.

# %% [markdown] id="race"
# ## 5. What a careful client never sees: several requests at once
#
# `repair_1.py` answers each request on a thread of its own. Its symptom: now and then, when the
# assistant runs several tool calls at once, the host drops the connection. The checker, one
# request at a time, passes it. The rules it breaks now and then (MCP 2025-11-25, Transports >
# stdio):
#
# > Messages are delimited by newlines, and **MUST NOT** contain embedded newlines.
#
# > The server **MUST NOT** write anything to its `stdout` that is not a valid MCP message.
#
# A busy host sends twelve big calls in one write, and the cell below checks each line that comes
# back. A race shows now and then, not every time: run the cell a few times.

# %% id="race-burst"
import json
import subprocess

calls = [
    lab.request("tools/call", id=n, params={"name": "list_orders", "arguments": {"limit": 100, "offset": 100 * n}})
    for n in range(2, 14)
]
session = "".join(json.dumps(message) + "\n" for message in [lab.initialize(id=1), *calls])
done = subprocess.run(lab.program("repair_1"), input=session.encode(), capture_output=True, timeout=30)
for number, line in enumerate(done.stdout.split(b"\n")[:-1], 1):
    try:
        json.loads(line)
        verdict = "one message"
    except ValueError:
        verdict = "NOT one JSON message: " + line[:60].decode(errors="replace") + " ..."
    print(f"line {number:2}: {len(line):6} bytes  {verdict}")

# %% [markdown] id="race-why"
# A broken line is two replies written into each other, and an empty line follows it: the
# newline of the one that was cut. Every message must leave in one piece. Find every place that
# writes to stdout, and ask of each: can another thread write while this one is half-way?

# %% [markdown] id="library"
# ## 6. A dependency that writes to stdout
#
# `repair_4.py` keeps statistics with a small library, `tally`, vendored at the bottom of the
# file. Treat it as a dependency you cannot change. The checker sees the damage at once:

# %% id="library-report"
clinic.report(lab.program("repair_4"))

# %% [markdown] id="library-how"
# Read `tally` to see *how* it writes: one way Python's `sys.stdout` knows about (`print`), and
# one it does not (`os.write(1, ...)`, straight to the file descriptor). So
# `print(..., file=sys.stderr)` is no repair here: the lines are not yours to change. Stage 07's
# repair works below both, at the file descriptor, in your server's own code. A host can also
# show a server's logs, if the server sends them as messages (MCP 2025-11-25, Utilities >
# Logging):
#
# > Servers that emit log message notifications **MUST** declare the `logging` capability[...]
#
# Either repair is accepted, as long as stdout carries protocol messages only.

# %% [markdown] id="modern"
# ## 7. A server of MCP 2026-07-28: every request stands alone
#
# `repair_5.py` speaks the current revision only. There is no `initialize`: each request carries
# its revision and the client's capabilities in `params._meta`, and the server reads them from
# that request. The spec (MCP 2026-07-28, Base Protocol > General fields > `_meta`, Per-request
# protocol fields):
#
# > A request missing any required field is malformed; the server **MUST** reject it with
# > JSON-RPC error code `-32602` (Invalid params).
#
# And on where the server may look (MCP 2026-07-28, Base Protocol > Statelessness):
#
# > Servers **MUST NOT** rely on prior requests over the same connection to establish context
# > (e.g., capabilities, protocol version, client identity).
#
# Its symptom: a client that dropped `_meta` after its first request worked with this server, and
# failed with every other one. The checker names the rule. Then a targeted session: one good
# request, then the same request without its `_meta`:

# %% id="modern-report"
clinic.report(lab.program("repair_5"))

# %% id="modern-watch"
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
lab.watch(
    lab.program("repair_5"),
    [lab.request("tools/list", id=1, params={"_meta": META}), lab.request("tools/list", id=2, params={})],
)


# %% [markdown] id="modern-why"
# Request 2 gets a result, where the healthy server answers `-32602`. Swap the two lines and
# request 2, now the first, is refused: what the server says depends on what came before. Find
# where it remembers the first request, and make every request be judged by its own `_meta`
# (the missing fields, and a revision it does not speak: `-32022` with `data.supported`).
#
# **Before 2026-07-28.** A client negotiated its revision once, with `initialize`, and a server
# kept it for the whole connection: remembering was right then. A server of 2025-11-25 (the other
# four files) still does.

# %% [markdown] id="task"
# ## Your turn: five repairs
#
# Repair each `repair_N.py` in place. Each test below grades one file, and runs it **alone**:
#
# - it must differ from the file handed out, by at most 30 lines (blank lines and comments do not
#   count): a repair, not a new server;
# - it must stay a server of its own: no course server imported or run (`reference.server`), no
#   other `repair_N.py`, no `runpy`, `subprocess` or `exec`; the shop's answers
#   (`reference.shop`, `reference.database`, `reference.errors`) stay allowed, as handed out;
# - `mcp-lab check` must report no failure (warnings are fine);
# - then a session aimed at the defect's own path: many calls at once, each error alone, ids of
#   every type, stdout at start and at exit, 2026-07-28 requests each with its own `_meta`, the
#   exit itself. It reads replies the way stage 06
#   taught a client to: matched by id, in any order, with your server's notifications (a log
#   message, say) let through.
#
# When graded, the same sessions run again with other ids, tools and orders.

# %% [markdown] id="by-code"
# The cell below is where the course's own solution applies its repairs. In your copy it does
# nothing: make your repairs in the files.

# %% id="instructor_repairs" nbgrader={"grade": false, "grade_id": "instructor_repairs", "locked": false, "schema_version": 3, "solution": true, "task": false}
def instructor_repairs():
    ### BEGIN SOLUTION
    from grader.grading.repairs import apply_solution

    apply_solution()
    ### END SOLUTION


try:
    instructor_repairs()
except NotImplementedError:
    pass

# %% id="test_repair_1" nbgrader={"grade": true, "grade_id": "test_repair_1", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# repair_1.py: mcp-lab check, then 40 big tool calls and bad lines sent at once, twice.
lab.check("test_repair_1")

# %% id="test_repair_2" nbgrader={"grade": true, "grade_id": "test_repair_2", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# repair_2.py: mcp-lab check, then each kind of reply and error to a line sent alone.
lab.check("test_repair_2")

# %% id="test_repair_3" nbgrader={"grade": true, "grade_id": "test_repair_3", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# repair_3.py: mcp-lab check, then tool calls with ids of every JSON type, alone and together; then a
# queued call cancelled by its id (a number, then a string): it must get no reply, the others must.
lab.check("test_repair_3")

# %% id="test_repair_4" nbgrader={"grade": true, "grade_id": "test_repair_4", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# repair_4.py: mcp-lab check, then stdout before the first request, during four calls, at exit.
lab.check("test_repair_4")

# %% id="test_repair_5" nbgrader={"grade": true, "grade_id": "test_repair_5", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# repair_5.py: mcp-lab check, then 2026-07-28 requests alone, each judged by its own _meta; then the exit.
lab.check("test_repair_5")

# %% [markdown] id="end"
# ## The end of the core course
#
# You have built an MCP server and a client from the wire up, kept stdout clean, diagnosed servers
# others broke, and repaired them from their source. The checker you used is yours to keep: point
# it at any stdio server you meet. Stages 10 to 12 follow: resources and prompts, audited writes,
# and the same server over Streamable HTTP.
#
# ```sh
# .venv/bin/mcp-lab check -- COMMAND [ARGS...]
# ```
#
# **Recall.**
#
# 1. The checker passes a server, and a host still fails with it. Name two things a host does that
#    the checker's session does not.
# 2. Why does a missing flush on the error path survive a checker that sends a ping after every
#    bad line?
# 3. A reply's id comes back as `"7"` for a request sent with `7`. Why is `int(id)` in the reply
#    the wrong repair?
# 4. A library you cannot change writes to stdout with `print()` and with `os.write(1, ...)`. Which
#    repair stops both, and why does `contextlib.redirect_stdout` stop only one?
# 5. A 2026-07-28 server keeps the `_meta` of a connection's first request "to save work". Name a
#    request it then serves that it must refuse, and the error that request should get.

# %% [markdown] id="read-next"
# ## Read next in the spec
#
# The rules the five repairs restore, in the spec repository (`docs/specification/...`):
#
# - `2025-11-25/basic/transports.mdx`: stdio (newline-delimited messages with no embedded
#   newlines; nothing on stdout that is not a valid MCP message).
# - `2025-11-25/basic/index.mdx`: Messages > Requests and Responses (the same id, its JSON type).
# - `2025-11-25/basic/utilities/cancellation.mdx`: `notifications/cancelled` and its `requestId`
#   (what `repair_3.py`'s author wanted to keep).
# - `2025-11-25/server/utilities/logging.mdx`: the `logging` capability, `notifications/message`.
# - `2026-07-28/basic/index.mdx`: Statelessness; General fields > `_meta` (the per-request fields,
#   `-32602` for a missing one).
# - `2026-07-28/basic/versioning.mdx`: `UnsupportedProtocolVersionError` (`-32022`,
#   `data.supported`).
# - `2026-07-28/basic/transports/stdio.mdx`: the same stdout rules in the current revision, and
#   shutdown by closing stdin.
# - JSON-RPC 2.0 (<https://www.jsonrpc.org/specification>), section 5: every request gets a
#   response.
