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
# # Stage 07: stdout hygiene
#
# The most common reason a stdio server will not connect is not a bug in its protocol code. It is
# one line of something else on its stdout: a banner, a log line, a library's progress message, a
# child process's output. The spec (MCP 2026-07-28, Transports > stdio) leaves no room:
#
# > The server **MUST NOT** write anything to its `stdout` that is not a valid MCP message.
#
# The rule is word for word the one of 2025-11-25 (Transports > stdio): stdout hygiene is the same in
# both eras. Logs have their place on the same page:
#
# > The server **MAY** write UTF-8 strings to `stderr` for any logging purposes
# > including informational, debug, and error messages.
#
# In this stage you make a polluted server quiet, in a way that survives code you do not control,
# and then write a check of your own that tells a clean stdout from a dirty one.

# %% id="setup" nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false, "task": false}
from grader.course import lab

lab.setup("07")

# %% [markdown] id="field"
# ## 1. What the field sees
#
# Each of these is a server in the course's gallery, with the symptom a host reports:
#
# | polluter | what lands on stdout | what the host says |
# |---|---|---|
# | a banner | `Shop server started, waiting for requests on stdin` | Node hosts: `Unexpected token 'S', "Shop serve"... is not valid JSON` |
# | logging to stdout | `2026-12-03 10:00:00 INFO shop: ...` | every tool call: `Unexpected non-whitespace character after JSON` |
# | a child process | `audit: tool call on ...` (it inherited the server's stdout) | tool calls fail with a parse error; ping and tools/list work |
# | a library that prints | `warming the shop cache... done` | the same, from code you never wrote |
#
# A client reads stdout line by line and hands each line to its JSON parser, so one such line
# breaks the message it sits in, or the whole session. Here is the banner server, frame by frame
# (the gallery's servers are of the legacy era, so the client opens with `initialize`; the banner
# would break a 2026-07-28 session the same way):

# %% id="watch-banner"
lab.watch(lab.exhibit("banner"), [lab.initialize(id=1), lab.request("ping", id=2)])

# %% [markdown] id="why-hard"
# ## 2. Why "just use stderr" is not enough
#
# The direct fixes are known: `print(..., file=sys.stderr)`, `logging.basicConfig(stream=sys.stderr)`.
# They fix the lines you wrote. They do not fix a library that calls `print()`, a C extension that
# writes to file descriptor 1, or a child process that inherited descriptor 1 from you: those never
# look at `sys.stdout`'s name, they write to the descriptor.
#
# The robust fix works at the descriptor level, once, at start-up:
#
# 1. `os.dup(1)` makes a second descriptor for the real stdout. Keep it for the protocol, and for
#    nothing else: `os.fdopen(fd, "wb")` gives a binary stream on it.
# 2. `os.dup2(2, 1)` points descriptor 1 at stderr. From now on, everything written to "stdout" by
#    anyone (`print`, a library, a C extension, every child process) goes to stderr.
# 3. `sys.stdout.flush()`, now and not before: whatever was printed earlier and still sits in
#    Python's buffer goes out through descriptor 1, which is stderr now. Flushed *before* step 2,
#    it would land in the protocol stream, the one place it must not go. Not flushed at all, it
#    waits in the buffer until the process exits cleanly, and is lost when it does not: a host
#    that ends a server the spec's way (Transports > stdio > Shutdown: "forced termination
#    typically escalates from `SIGTERM` to `SIGKILL`") leaves Python no time to flush. The spec's
#    word for stderr is a MAY; that nothing you print is lost is the course's demand, and its tests
#    end a server without clean-up to see it.
# 4. `sys.stdout = sys.stderr`, so that Python-level writes follow, without buffering surprises.
#
# The protocol messages go to the saved stream; everything else is a log line on stderr, where the
# spec puts logs.
#
# A child process has a second trap: it inherits your **stdin** too, which is the client's protocol
# stream. A child that reads its stdin (many tools do, when they see it is not a terminal) eats the
# client's next request. Give it `stdin=subprocess.DEVNULL`, and capture its output if you want it.

# %% [markdown] id="task-server"
# ### Your turn: `quiet_server.py`
#
# The server below has every polluter of part 1: a banner, a log line per call, a library that
# prints, and an audit child process per call. Write the three functions that make it quiet:
#
# - `protocol_stdout()`: part 2's four steps, in that order; return the binary stream for protocol
#   messages.
# - `setup_logging()`: logging at level INFO, to stderr.
# - `run_quietly(argv)`: run a helper command with no stdin (`subprocess.DEVNULL`), capture its
#   stdout, and return it as text (give it a timeout: 10 s).
#
# `main()` is given: it calls them, then serves the shop on the stream `protocol_stdout()` returned.

# %% id="quiet_server" nbgrader={"grade": false, "grade_id": "quiet_server", "locked": false, "schema_version": 3, "solution": true, "task": false}
%%module quiet_server
import logging
import os
import subprocess
import sys

from lab_runtime.polluters import warm_cache
from reference.server import make_server


def protocol_stdout():
    """Keep the real stdout for protocol messages only; point everything else at stderr."""
    ### BEGIN SOLUTION
    protocol = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout.flush()
    sys.stdout = sys.stderr
    return protocol
    ### END SOLUTION


def setup_logging():
    ### BEGIN SOLUTION
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    ### END SOLUTION


def run_quietly(argv):
    """Run a helper command; return its stdout as text. It never sees our stdin or stdout."""
    ### BEGIN SOLUTION
    done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=10)
    return done.stdout
    ### END SOLUTION


AUDIT = [sys.executable, "-c", "print('audit: tool call recorded')"]


def main():
    protocol = protocol_stdout()
    setup_logging()
    print("Shop server started, waiting for requests on stdin")  # the banner: now on stderr
    log = logging.getLogger("shop")
    server = make_server()
    call_tool = server.dispatcher.methods["tools/call"]

    def audited_call(params):
        warm_cache()  # a library that prints
        log.info("tools/call %s: %s", params.get("name"), run_quietly(AUDIT).strip())
        return call_tool(params)

    server.dispatcher.methods["tools/call"] = audited_call
    return server.serve(sys.stdin.buffer, protocol)


if __name__ == "__main__":
    sys.exit(main())

# %% id="test_protocol_stdout" nbgrader={"grade": true, "grade_id": "test_protocol_stdout", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 3}
# Protocol_stdout(): a print from before it, then a print, os.system and a Python child all land on
# stderr, even when the process ends without clean-up.
lab.check("test_protocol_stdout")

# %% id="test_setup_logging" nbgrader={"grade": true, "grade_id": "test_setup_logging", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 1}
# Setup_logging(): an INFO line reaches stderr, nothing reaches stdout.
lab.check("test_setup_logging")

# %% id="test_run_quietly" nbgrader={"grade": true, "grade_id": "test_run_quietly", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# Run_quietly(argv): the child's output captured, our stdin left alone.
lab.check("test_run_quietly")

# %% id="test_quiet_server" nbgrader={"grade": true, "grade_id": "test_quiet_server", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# Your whole server under mcp-lab check's stdout and shop checks.
lab.check("test_quiet_server")

# %% [markdown] id="hygiene"
# ## 3. A hygiene check of your own
#
# When a server will not connect, the first question is always: what exactly is on its stdout?
# Write the check that answers it. `hygiene(stdout)` gets every byte a server wrote to stdout in a
# session, and returns a list of problems, one string each, in the order of the lines, each
# starting with `line N: ` (N counts from 1). An empty list means clean.
#
# A line is clean when it is one JSON object, encoded as UTF-8, strict JSON, ended by `\n`. So a
# line has a problem when:
#
# - it is empty (a blank line is not a message);
# - it ends in `\r` (the writer sent `\r\n`; strict clients reject the `\r`);
# - it is not valid UTF-8;
# - it is not JSON, or more than one JSON value (two messages on a line, a pretty-printed message
#   spread over several lines: each of its lines is broken);
# - it holds `NaN` or `Infinity` (Python's `json.loads` accepts them; JSON has no such values);
# - it is JSON but not an object (`"ok"`, `[1, 2]`);
# - it is the last line and has no `\n` after it.
#
# Only the line matters here, not what the message means: a reply with the wrong id is still a
# clean line. A clean exchange with the course's server, as the check sees it: one request, one
# line back, whatever it holds:
#
# ```text
# -> {"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}
# <- {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],...,"ttlMs":300000,"cacheScope":"public",...}}
# ```
#
# The test runs your check on the stdout of the reference server and of eleven gallery servers
# (seven dirty, four with other bugs but a clean stdout), then on transcripts made dirty at random.

# %% id="hygiene_check" nbgrader={"grade": false, "grade_id": "hygiene_check", "locked": false, "schema_version": 3, "solution": true, "task": false}
%%module hygiene_check
import json


def refuse_constant(name):
    raise ValueError(f"{name} is not JSON")


def line_problem(line):
    """What is wrong with one line (bytes, without its \\n), or None."""
    ### BEGIN SOLUTION
    if line.endswith(b"\r"):
        return 'ends in "\\r\\n"'
    if not line:
        return "a blank line"
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"not valid UTF-8 (byte {exc.start})"
    try:
        value = json.loads(text, parse_constant=refuse_constant)
    except ValueError as exc:
        return f"not one JSON value: {exc}: {text[:60]!r}"
    if not isinstance(value, dict):
        return f"a JSON {type(value).__name__}, not an object"
    return None
    ### END SOLUTION


def hygiene(stdout):
    """Every problem in a server's stdout, as 'line N: ...' strings; [] when it is clean."""
    ### BEGIN SOLUTION
    problems = []
    lines = stdout.split(b"\n")
    for number, line in enumerate(lines, 1):
        last = number == len(lines)
        if last and not line:
            break  # the text ended with \n: nothing after it
        problem = line_problem(line)
        if last:
            problem = "the last line has no \\n" + (f"; {problem}" if problem else "")
        if problem:
            problems.append(f"line {number}: {problem}")
    return problems
    ### END SOLUTION


# %% id="try-hygiene"
print(hygiene(b'{"jsonrpc":"2.0","id":1,"result":{}}\n'))
print(hygiene(b'Server ready\n{"jsonrpc":"2.0","id":1,"result":{}}\r\n'))

# %% id="test_hygiene_gallery" nbgrader={"grade": true, "grade_id": "test_hygiene_gallery", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 3}
# Hygiene() on the transcripts of the reference and 11 gallery servers.
lab.check("test_hygiene_gallery")

# %% id="test_hygiene_random" nbgrader={"grade": true, "grade_id": "test_hygiene_random", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# Hygiene() on 10 transcripts with one defect each, put in at random.
# Hidden when graded: the same checks on other values.
lab.check("test_hygiene_random")

# %% [markdown] id="end"
# ## What you have now
#
# A server that stays clean whatever its libraries and children do, and a check you can point at
# any server's stdout. The course's checker does the same and more (`stdout-json-lines`,
# `stdout-line-ending`, `stdout-strict-json`); try it on a polluted server:
#
# ```sh
# .venv/bin/mcp-lab check -- .venv/bin/mcp-lab gallery run log_to_stdout
# ```
#
# The next two stages are the clinic: servers with one defect each, and no names to give it away.

# %% [markdown] id="read-next"
# ## Read next in the spec
#
# The pages this stage relies on, in the spec repository (`docs/specification/...`, `schema/...`):
#
# - `docs/specification/2026-07-28/basic/transports/stdio.mdx`: the opening rules (newline-delimited
#   messages, stdout for MCP messages only, stderr for logs), Shutdown.
# - `docs/specification/2026-07-28/basic/index.mdx`: the JSON-RPC message formats a clean line must
#   hold.
# - `docs/specification/2026-07-28/server/utilities/logging.mdx`: the deprecation note (log to
#   `stderr` on stdio).
# - The legacy era: `docs/specification/2025-11-25/basic/transports.mdx`, stdio (the same stdout and
#   stderr rules).
