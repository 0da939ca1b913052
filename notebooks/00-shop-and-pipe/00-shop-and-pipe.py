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
# # Stage 00: the shop and the pipe
#
# In this course you build an MCP server with nothing but the Python standard library. It serves a
# small online shop to a language model: how many orders are paid, what is in order 7, which
# products are mugs. You build it the way the protocol sees it, one line on a pipe at a time.
#
# Everything here follows one revision of the protocol: **MCP 2026-07-28**, the current one. When
# a lesson says "the spec", it means that revision. Where the wire of the older revisions (2025-11-25
# and before, the *legacy era*) differs, a short note "Before 2026-07-28" says how: servers in the
# field still speak it, and the course's server speaks both.
#
# This stage has two parts. First the shop: a SQLite database, opened so that nothing can change
# it, and queried so that nothing a model sends can become SQL. Then the pipe: what it means that
# an MCP server "speaks stdio", shown on a real server.
#
# **How this notebook works.** Cells marked *your turn* are yours to write. Each starts with a line
# `%%module NAME`: running the cell saves it as the file `NAME.py` beside this notebook (and runs
# it, so the next cells can try your functions). The cells after it check your work: they run
# `NAME.py` in a process of its own, so a loop or a crash in your code costs that check, never
# this notebook. A failure tells you which rule was broken, what was sent, what was expected and
# what came back. Some checks are hidden until grading; they try other values than the ones you
# see, so write code that follows the rule, not code that passes one example.
#
# Your grade is computed from your `%%module` cells alone, by the same checks, outside this
# notebook: code in other cells is yours to experiment with and is not graded.
#
# To debug, print to stderr: `print("got", line, file=sys.stderr)`. What your code writes there
# shows up in a failing check's message and never costs a point, in any stage; it is where a server's
# logs belong anyway (section 2 says why). Printing to stdout is another matter, as you will see.

# %% id="setup" nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false, "task": false}
from grader.course import lab

lab.setup("00")

# %% [markdown] id="shop-intro"
# ## 1. The shop
#
# The shop has four tables: `customers`, `products`, `orders` (each with a `status`) and
# `order_items`. Money is stored in integer cents, so sums are exact. Here is its schema:

# %% id="schema"
import sqlite3

path = lab.shop_db()
with sqlite3.connect(path) as peek:
    for (sql,) in peek.execute("SELECT sql FROM sqlite_master WHERE type = 'table'"):
        print(sql, end="\n\n")
peek.close()

# %% [markdown] id="readonly"
# ### Opening it read-only
#
# A model will call your tools, and a model can be talked into anything. So the server opens the
# database in a way that makes every write fail, whatever the code above it does.
#
# SQLite accepts a *URI filename* when you pass `uri=True`. The query parameter `mode=ro` opens the
# file read-only, and a missing file is an error instead of a new empty database:
#
# ```python
# sqlite3.connect("file:/home/me/shop.db?mode=ro", uri=True)
# ```
#
# Build the URI with `Path(path).resolve().as_uri()`: `resolve()` makes the path absolute (`as_uri()`
# refuses a relative one), and `as_uri()` escapes characters such as a space, a `?` or a `#`, which
# would otherwise end the path early (`?` starts the query, `#` a fragment).

# %% [markdown] id="task-open"
# ### Your turn: `open_shop`
#
# Write `open_shop(path)`. It returns a connection to the database at `path` that can read and
# cannot write. A path to a file that does not exist must raise `sqlite3.OperationalError`.

# %% id="open_shop" nbgrader={"grade": false, "grade_id": "open_shop", "locked": false, "schema_version": 3, "solution": true, "task": false}
%%module shop
import sqlite3
from pathlib import Path


def open_shop(path):
    """A read-only connection to the shop database at ``path``."""
    ### BEGIN SOLUTION
    uri = Path(path).resolve().as_uri() + "?mode=ro"
    return sqlite3.connect(uri, uri=True)
    ### END SOLUTION


# %% id="test_open_shop" nbgrader={"grade": true, "grade_id": "test_open_shop", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 3}
# reads the shop; an INSERT fails; a missing file raises sqlite3.OperationalError and is not created.
# Hidden: paths with a space, "#", "?" and "%" in them.
lab.check("test_open_shop")

# %% [markdown] id="params"
# ### Values are never SQL
#
# Here is the query behind the shop's `count_orders` tool, written the wrong way:
#
# ```python
# conn.execute(f"SELECT count(*) FROM orders WHERE status = '{status}'")
# ```
#
# If `status` is `paid`, that counts the paid orders. If a model sends `x' OR '1'='1`, the query
# becomes `... WHERE status = 'x' OR '1'='1'`, and it counts every order. A status with an
# apostrophe in it breaks the query outright. The text a client sends has become code.
#
# The fix is a *parameter*: a `?` in the SQL, and the value passed beside it. SQLite never parses
# the value as SQL, whatever it contains:
#
# ```python
# conn.execute("SELECT count(*) FROM orders WHERE status = ?", (status,))
# ```
#
# ### Your turn: `count_orders`
#
# Write `count_orders(conn, status)`: the number of orders with that status, as an `int`. A status
# that no order has counts 0, including the one above.

# %% id="count_orders" nbgrader={"grade": false, "grade_id": "count_orders", "locked": false, "schema_version": 3, "solution": true, "task": false}
%%module queries
def count_orders(conn, status):
    """How many orders have ``status`` (a parameterised query)."""
    ### BEGIN SOLUTION
    (count,) = conn.execute("SELECT count(*) FROM orders WHERE status = ?", (status,)).fetchone()
    return count
    ### END SOLUTION


# %% id="test_count_orders" nbgrader={"grade": true, "grade_id": "test_count_orders", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 3}
# the counts for "paid" and for "x' OR '1'='1" (which no order has). Hidden: other statuses and
# other text a model might send.
lab.check("test_count_orders")

# %% [markdown] id="pipe-intro"
# ## 2. The pipe
#
# An MCP *host* (a chat app, an IDE) talks to an MCP *server* through a *transport*. MCP
# 2026-07-28 defines two standard transports, stdio and Streamable HTTP (Transports,
# `basic/transports/index.mdx`); this course starts with stdio (stage 12 adds HTTP). The spec
# (MCP 2026-07-28, Transports > stdio) says:
#
# > In the **stdio** transport, the client launches the MCP server as a subprocess.
#
# > The server reads JSON-RPC messages from `stdin` and writes JSON-RPC messages to `stdout`.
#
# and:
#
# > The server **MAY** write UTF-8 strings to `stderr` for any logging purposes including
# > informational, debug, and error messages.
#
# So a server is an ordinary program, started by the client, with two pipes that carry the
# protocol and a third that carries its logs. No network, no port. Each message is one line of
# JSON. Here is a first exchange on such a pipe, a `server/discover` request ("who are you, what
# do you serve?") and its reply (`->` is what the client writes to the server's stdin, `<-` is what
# the server writes to its stdout; `...` marks what is left out here):
#
# ```text
# -> {"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}
# <- {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],...}}
# ```
#
# Every request carries `params._meta`: the revision it speaks and what the client can do. Stage 03
# is about that envelope; here, only the pipe matters.
#
# *Before 2026-07-28:* the three sentences quoted above read almost word for word the same in
# 2025-11-25 (Transports > stdio), and so did the framing (stage 01). What changed is who may send
# what. MCP 2026-07-28 says "The client **MUST NOT** write JSON-RPC _responses_." and "The server
# **MUST NOT** write JSON-RPC _requests_ to `stdout`." (stdio, Sending Messages and Receiving
# Messages); in the legacy era either side could send requests, and answer them. A legacy request
# carried no `_meta`, and the connection began with an `initialize` handshake instead (stage 03).
#
# The next cell runs the course's finished server (the *reference*) and a small client that walks
# through a whole session: the discovery, the list of tools, a few calls, and the shutdown.
# Read it line by line; every stage of the course explains some of these lines.

# %% id="demo-session"
lab.demo_session()

# %% [markdown] id="session-read"
# A few things to notice, each a later stage:
#
# - Every line is one complete JSON object. Nothing else ever appears on stdout (stage 01).
# - Each reply carries the `id` of its request (stage 02). A message with no id, a
#   *notification*, would get no reply at all.
# - This client starts with `server/discover`, and every request names its revision in
#   `params._meta` (stage 03). MCP 2026-07-28 lets a client call `server/discover` before any
#   other request, and asks a client that also speaks the legacy era to probe with it first
#   (Transports > stdio > Backward Compatibility; stage 06).
# - The lines marked `stderr` are the server's logs. They travel on their own pipe and never mix
#   with the protocol.
# - At the end the client closes the server's stdin, and the server exits. That is the shutdown
#   MCP 2026-07-28 asks for (Transports > stdio > Shutdown): the client **SHOULD** close the
#   server's input first, and a server **SHOULD** exit promptly when its stdin is closed. The exit
#   status 0 is the course's server's choice; the spec names none.
#
# ### Your turn: `talk`
#
# Write `talk(argv, lines, timeout=5.0)`. It starts the program `argv` (a list such as
# `["python3", "server.py"]`) with pipes for stdin, stdout and stderr, writes every line of `lines`
# (each is `bytes` ending in `\n`) to its stdin, closes stdin, and returns the list of stdout lines
# parsed as JSON. Rules:
#
# - never run it through a shell, and keep stderr on its own pipe: logs are not messages;
# - if the program has not finished `timeout` seconds after you closed its stdin, kill it and raise
#   `TimeoutError`.
#
# `subprocess.Popen(...).communicate(input=..., timeout=...)` does most of this: it writes the
# input, closes stdin, reads both pipes to the end and waits. (In stage 06 you will see why a real
# client cannot work this way: it must read replies while stdin stays open.)

# %% id="talk" nbgrader={"grade": false, "grade_id": "talk", "locked": false, "schema_version": 3, "solution": true, "task": false}
%%module pipe
import json
import subprocess


def talk(argv, lines, timeout=5.0):
    """Run ``argv``, send ``lines``, close stdin; return its stdout lines as JSON values."""
    ### BEGIN SOLUTION
    process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out, _ = process.communicate(b"".join(lines), timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise TimeoutError(f"{argv[0]} did not finish within {timeout} s") from None
    return [json.loads(line) for line in out.splitlines() if line.strip()]
    ### END SOLUTION


# %% id="try-talk"
with lab.time_limit(15):  # your talk against the course's server; a hang ends after 15 s
    print(talk(lab.reference(), [lab.frame_bytes(lab.modern("server/discover", id=1))]))

# %% id="test_talk" nbgrader={"grade": true, "grade_id": "test_talk", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# two pings (ids 1 and "abc") with a notification between them, to a small server that logs to
# stderr: one reply per ping, in order. Hidden: other ids, 0 among them. (They are legacy messages,
# `ping` and `notifications/initialized`: talk carries lines of either era alike.)
lab.check("test_talk")

# %% id="test_talk_timeout" nbgrader={"grade": true, "grade_id": "test_talk_timeout", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# a server that never exits after its input ends: talk(..., timeout=1.0) raises TimeoutError.
lab.check("test_talk_timeout")

# %% [markdown] id="end"
# ## What you have now
#
# A database that nothing can write to, a query that no input can rewrite, and a client that
# speaks to a server over pipes. In stage 01 you write the layer under every message: framing.

# %% [markdown] id="read-next"
# ## Read next in the spec
#
# - `docs/specification/2026-07-28/basic/transports/index.mdx`: the opening (the standard
#   transports) and "Messages".
# - `docs/specification/2026-07-28/basic/transports/stdio.mdx`: the opening list, "Sending
#   Messages", "Receiving Messages", "Shutdown", "Backward Compatibility".
# - `docs/specification/2026-07-28/basic/index.mdx`: "`_meta`" (under "General fields"): the
#   per-request fields every request carries.
# - The legacy era: `docs/specification/2025-11-25/basic/transports.mdx`, "stdio".
# - Not MCP, but this stage's other half: SQLite's "URI Filenames" page
#   (https://www.sqlite.org/uri.html, `mode=ro`), and Python's `sqlite3` documentation on
#   placeholders (`?`).
