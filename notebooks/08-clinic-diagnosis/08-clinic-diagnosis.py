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
# # Stage 08: the clinic, diagnosis
#
# Ten bug reports are waiting for you. Behind each is the course's shop server with exactly one
# defect, of the kind real servers ship with. Some come with the server: you can run it and talk
# to it. Some come with nothing but the log a host wrote while it went wrong.
#
# The rules are those of MCP 2026-07-28, the current revision, and of the legacy era (2025-11-25
# and before) that old hosts still speak: a case may break either. Section 2 shows the new wire.
#
# For each case you find the rule that is broken, and you bring evidence: the few lines that make
# the server break it, or the line of the log where it shows. That is what a good bug report to a
# server's author looks like, and what this stage grades.
#
# The cases are yours alone: they are drawn from your student id (printed below) and the course's
# salt (`clinic.json` beside this notebook). Another learner has other cases.

# %% id="setup" nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false, "task": false}
from grader.course import clinic, lab

lab.setup("08")
print(f"your cases are drawn for: {clinic.student()}")
diagnosis = {}  # your answers: the cell under "Your turn" fills it

# %% [markdown] id="method"
# ## 1. How a senior engineer reads a broken server
#
# **Start from the symptom.** What did the host do: hang, print a parser's complaint, attach an
# answer to the wrong question, disconnect? Each points at a layer: framing and flushing, ids,
# the error table, the lifecycle, the tools.
#
# **Run the checker.** `mcp-lab check` probes every rule in one session of its own. Its first
# failure is a strong lead. But the checker is one client with one script: when it reports no
# failure, the defect lives on a path it never took (a tool with a certain argument, two requests
# at once, an id it never uses). Then the symptom is your guide.
#
# **Build the smallest failing input.** Take a session that shows the defect and remove lines
# until it stops showing; put the last one back. A reproducer of one or two lines is proof that
# anyone can run, and it says where to look in the code.
#
# **Read the timing.** A reply that arrives only when stdin is closed was sitting in a buffer: a
# missing flush. A reply that arrives late but while stdin is open is a slow server. `lab.watch`
# prints the time of every line and the moment stdin closed.
#
# **Compare with the healthy server, frame by frame.** `clinic.reference()` runs the same shop
# server with no defect. `lab.inspect(case, frames, against=clinic.reference())` shows the first
# frame where the two differ.
#
# **Read the host's log by line number.** A desktop host writes one line per message:
# `Message from client: ...`, `Message from server: ...`, and when a stdout line is not JSON, the
# parser's complaint (`Unexpected token 'S', "Server rea"... is not valid JSON`).

# %% [markdown] id="modern-wire"
# ## 2. The wire a host of MCP 2026-07-28 writes
#
# Many host logs in the clinic come from a host of the current revision, MCP 2026-07-28. Its
# traffic looks different from the handshake you may know, and every difference is a rule a server
# can break. There is no `initialize`: each request says for itself which revision it speaks.
#
# **The `_meta` envelope.** Every request carries its revision and the client's capabilities in
# `params._meta`. The spec (MCP 2026-07-28, Base Protocol > General fields > `_meta`):
#
# > A request missing any required field is malformed; the server **MUST** reject it with
# > JSON-RPC error code `-32602` (Invalid params).
#
# The required fields are `io.modelcontextprotocol/protocolVersion` and
# `io.modelcontextprotocol/clientCapabilities`; `io.modelcontextprotocol/clientInfo` says who the
# client is. So `"protocolVersion":"2026-07-28"` in a log is the revision of that one request.
#
# **Every result says what it is.** The spec (MCP 2026-07-28, Base Protocol > Messages > Responses >
# Result Responses):
#
# > The `result` **MUST** include a `resultType` field to indicate the type of the result.
#
# `"complete"` for a finished answer. The results of `server/discover`, `tools/list`,
# `prompts/list`, `resources/list`, `resources/templates/list` and `resources/read` also carry
# caching hints, `ttlMs` and `cacheScope` (MCP 2026-07-28, Utilities > Caching: servers **MUST**
# include them), and a server **SHOULD** name itself in each result's `_meta`
# (`io.modelcontextprotocol/serverInfo`, changelog item 2). A host of both eras opens with the probe
# `server/discover` (on stdio such a client **SHOULD** send it before any other request: Transports >
# stdio > Backward Compatibility); then it lists the tools and calls them:
#
# ```text
# -> {"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"claude-ai","version":"1.4.2"}}}}
# <- {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","tools":[...],"ttlMs":300000,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcp-wire-lab-shop","title":"MCP Wire Lab shop","version":"0.1.0"}}}}
# ```
#
# **A revision the server does not speak.** The spec (MCP 2026-07-28, Versioning): if the server
# does not implement the requested version, "it **MUST** respond with an
# `UnsupportedProtocolVersionError` listing the versions it does support". That is `-32022`, and
# `data.supported` is the list the client picks from; a request that lacks its version is
# `-32602`:
#
# ```text
# -> {"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}}
# <- {"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Invalid params: params._meta lacks \"io.modelcontextprotocol/protocolVersion\" (required on every 2026-07-28 request)"}}
# -> {"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2027-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}
# <- {"jsonrpc":"2.0","id":3,"error":{"code":-32022,"message":"Unsupported protocol version: 2027-01-01 (...)","data":{"supported":["2026-07-28"],"requested":"2027-01-01"}}}
# ```
#
# **Two eras on one connection.** A server may speak both eras. The spec (MCP 2026-07-28,
# Versioning > Backward Compatibility with Initialization-Based Versions):
#
# > A dual-era server **MAY** serve both eras concurrently on the same endpoint or process.
#
# It does not require a server to hold a connection to one era. The course's server chooses to, as
# the official SDKs do: on stdio, the first request that carries the 2026-07-28 `_meta` fixes the
# process to the new era, and an `initialize` fixes it to the legacy one (a plain `ping` or
# `tools/list` before either is served the legacy way and fixes nothing). After that, a request of
# the other era gets an error that says why: `-32022` with `data.supported` for an `initialize` on a
# 2026-07-28 process, `-32600` for a request with `_meta` on an initialized one. Serving it and
# refusing it are both allowed; silence is not, for every request is owed a response (JSON-RPC 2.0,
# section 5):
#
# > When a rpc call is made, the Server **MUST** reply with a Response, except for in the case of
# > Notifications.
#
# The check ids of these rules start with `modern-` (and `era-mixing`); the catalogue below lists
# them with the others. In your cases, the lines you send may carry `_meta` like the ones above.
#
# **Before 2026-07-28.** An older host (2025-11-25) opens with `initialize`, then
# `notifications/initialized`, and sends plain requests without `_meta`; its results carry no
# `resultType`. Some of your logs are such a host's: a defect that only that session shows (a
# `ping`, say, which 2026-07-28 removed) is logged there.

# %% [markdown] id="example"
# ## 3. A worked example
#
# Not one of your cases: a gallery server whose report reads *"Works with most hosts; with the
# official Python SDK 1.x client the very first request times out."* The checker's report:

# %% id="example-check"
clinic.report(lab.exhibit("id_not_echoed"))

# %% [markdown] id="example-frames"
# `id-echo` fails. The rule (MCP 2026-07-28, Base Protocol > Messages > Responses > Result Responses):
#
# > Result responses **MUST** include the same ID as the request they correspond to.
#
# The SDK 1.x client numbers its requests from 0. So the smallest input to try is one ping with
# id 0, and beside it one with id 7 to see the difference. Watch them:

# %% id="example-watch"
lab.watch(
    lab.exhibit("id_not_echoed"),
    ['{"jsonrpc":"2.0","id":0,"method":"ping"}', '{"jsonrpc":"2.0","id":7,"method":"ping"}'],
)

# %% [markdown] id="example-answer"
# One reply comes back, `{"jsonrpc":"2.0","id":7,"result":{}}`; the ping with id 0 gets nothing at
# all. The server tests `if not id:`, meant for a missing id, and 0 is falsy. The line with id 0
# alone is the whole evidence, and the answer for that server would be:
#
# ```python
# "case-xx": {"rule": "id-echo", "reproduce": ['{"jsonrpc":"2.0","id":0,"method":"ping"}']},
# ```
#
# A line in `reproduce` is sent exactly as written (text, or bytes for a line that is not valid
# UTF-8), with a newline added; all the lines go to the server at once, then stdin stays open
# until the server has been quiet for a second, then it is closed. The rules and what each
# requires:

# %% id="catalogue"
clinic.catalogue()

# %% [markdown] id="cases"
# ## 4. Your cases
#
# Each line: the case, what you get (a live server, or a host's log) and the bug report.

# %% id="list-cases"
clinic.symptoms()

# %% [markdown] id="live-tools"
# For a live case, `clinic.command("case-01")` is the command that runs it. Try, in cells of your
# own:
#
# - `clinic.report(clinic.command("case-01"))`: the checker's report;
# - `lab.watch(clinic.command("case-01"), [...lines...])`: your lines, and each reply with its time;
# - `lab.inspect(clinic.command("case-01"), [...], against=clinic.reference())`: side by side;
# - `clinic.compare("case-01", [...lines...])`: your evidence replayed exactly as grading will
#   replay it, against the healthy server: both sessions, where the first reply differs (the
#   region around the first differing byte, and each length), and whether the case broke a rule
#   there; add `rule="..."` for the visible check's verdict on your lines as evidence of that rule.
#
# In a terminal in this folder, `mcp-lab clinic list` lists your cases and
# `mcp-lab check -- mcp-lab clinic run case-01` checks one.

# %% id="first-live"
first_live = next(name for name, case in clinic.cases().items() if case.kind == "live")
clinic.report(clinic.command(first_live))

# %% [markdown] id="log-tools"
# For a log case, `clinic.show_log("case-02")` prints the log with line numbers (and writes it
# beside this notebook as `case-02.log`). The line you give is the first one where the defect shows.

# %% id="first-log"
first_log = next(name for name, case in clinic.cases().items() if case.kind == "log")
clinic.show_log(first_log)

# %% [markdown] id="task"
# ### Your turn: `diagnosis`
#
# One entry per case. A live case: the rule, and the lines that make the server break it. A log
# case: the rule, and the number of the line where it first shows.
#
# ```python
# diagnosis = {
#     "case-01": {"rule": "stdout-flush", "reproduce": ['{"jsonrpc":"2.0","id":1,"method":"ping"}']},
#     "case-02": {"rule": "notification-silence", "line": 9},
#     "case-03": {"rule": "modern-cacheable", "reproduce": [
#         '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
#     ]},
#     ...
# }
# ```
#
# Write it as data: a dict of strings, lists and numbers, exactly as above. When your work is
# graded, this cell is *read*, not run: a dict built by code (a loop, a call) is not an answer.
#
# Each case is worth one point. The visible check replays your lines and asks for evidence of the
# rule you name: the case must break that rule on them while the healthy server keeps it, and the
# lines must be a reproducer of it, not a kitchen sink. A line whose replies are the healthy
# server's own shows nothing; if the case still breaks the rule without such lines, the check names
# them for you to remove. It does not tell you whether the rule you name is the case's defect (a
# rule can break as a consequence of another): the grader checks that. `clinic.compare("case-01",
# [...], rule="id-echo")` gives the visible check's verdict before you hand in.

# %% id="diagnosis" nbgrader={"grade": false, "grade_id": "diagnosis", "locked": false, "schema_version": 3, "solution": true, "task": false}
### BEGIN SOLUTION
from grader.grading.clinic_key import solution_value

diagnosis = solution_value(clinic.salt(), clinic.student())
### END SOLUTION

# %% id="test_case_01" nbgrader={"grade": true, "grade_id": "test_case_01", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 1}
# case-01: the answer's form, and whether its evidence shows a defect. Hidden: the rule.
lab.check("test_case_01")

# %% id="test_case_02" nbgrader={"grade": true, "grade_id": "test_case_02", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 1}
# case-02: the answer's form, and whether its evidence shows a defect. Hidden: the rule.
lab.check("test_case_02")

# %% id="test_case_03" nbgrader={"grade": true, "grade_id": "test_case_03", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 1}
# case-03: the answer's form, and whether its evidence shows a defect. Hidden: the rule.
lab.check("test_case_03")

# %% id="test_case_04" nbgrader={"grade": true, "grade_id": "test_case_04", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 1}
# case-04: the answer's form, and whether its evidence shows a defect. Hidden: the rule.
lab.check("test_case_04")

# %% id="test_case_05" nbgrader={"grade": true, "grade_id": "test_case_05", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 1}
# case-05: the answer's form, and whether its evidence shows a defect. Hidden: the rule.
lab.check("test_case_05")

# %% id="test_case_06" nbgrader={"grade": true, "grade_id": "test_case_06", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 1}
# case-06: the answer's form, and whether its evidence shows a defect. Hidden: the rule.
lab.check("test_case_06")

# %% id="test_case_07" nbgrader={"grade": true, "grade_id": "test_case_07", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 1}
# case-07: the answer's form, and whether its evidence shows a defect. Hidden: the rule.
lab.check("test_case_07")

# %% id="test_case_08" nbgrader={"grade": true, "grade_id": "test_case_08", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 1}
# case-08: the answer's form, and whether its evidence shows a defect. Hidden: the rule.
lab.check("test_case_08")

# %% id="test_case_09" nbgrader={"grade": true, "grade_id": "test_case_09", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 1}
# case-09: the answer's form, and whether its evidence shows a defect. Hidden: the rule.
lab.check("test_case_09")

# %% id="test_case_10" nbgrader={"grade": true, "grade_id": "test_case_10", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 1}
# case-10: the answer's form, and whether its evidence shows a defect. Hidden: the rule.
lab.check("test_case_10")

# %% [markdown] id="end"
# ## What you have now
#
# A method for a server that will not connect, or that misbehaves only sometimes: the symptom, the
# checker's lead, the smallest input that shows the defect, its timing, the healthy server beside
# it, and the host's own log. In stage 09 you go one step further and repair servers from their
# source.
#
# **Recall.**
#
# 1. The checker reports no failure, but a host hangs on some searches. Where do you look next?
# 2. A reply turns up only when you close the server's stdin. What is missing, and in which line of
#    code would you expect to find the gap?
# 3. Why is one line that shows a defect better evidence than the checker's whole report?
# 4. In a host's log, a `Message from server` line carries `"id":null` right after a client's
#    `notifications/initialized`. Which rule, and why does a strict host disconnect?
# 5. A host asks with `"io.modelcontextprotocol/protocolVersion":"2027-01-01"` and gets `-32022`
#    without `data.supported`. What can the host not do next, and which rule is broken?

# %% [markdown] id="read-next"
# ## Read next in the spec
#
# The rules this stage's cases break, in the spec repository (`docs/specification/...`):
#
# - `2026-07-28/basic/index.mdx`: Messages > Requests (ids), Responses > Result Responses (the same
#   id, `resultType`), Error Responses and Error Codes; Notifications (no response); General fields >
#   `_meta` (the per-request fields, `-32602` for a missing one).
# - `2026-07-28/basic/versioning.mdx`: the requested version and `UnsupportedProtocolVersionError`
#   (`-32022`, `data.supported`); Backward Compatibility with Initialization-Based Versions (the
#   dual-era server and its **MAY**, the compatibility matrix).
# - `2026-07-28/basic/transports/stdio.mdx`: the stdio binding (one message per line, nothing else on
#   stdout), Backward Compatibility (the `server/discover` probe).
# - `2026-07-28/server/utilities/caching.mdx`: Cacheable Results (`ttlMs`, `cacheScope`).
# - `2026-07-28/server/tools.mdx`: Calling Tools, Structured Content and Output Schema.
# - `2026-07-28/changelog.mdx`: Major changes 2, 3, 5 and 8 (what the legacy hosts of the logs
#   still send).
# - `2025-11-25/basic/lifecycle.mdx` (Initialization, Version Negotiation) and
#   `2025-11-25/basic/utilities/ping.mdx`: the legacy handshake and `ping` of the older hosts' logs.
# - JSON-RPC 2.0 (<https://www.jsonrpc.org/specification>), sections 4 and 5: requests,
#   notifications, responses, and the error codes `-32700` to `-32603`.
