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
# # Stage 05: tools/call
#
# Now the tools do their work. A client calls one with `tools/call`, the name and the arguments;
# the server runs it against the shop and answers with a result the model can read. Or it does not:
# the tool may fail, or the request itself may be wrong, and those are two different kinds of
# error that end up in two different places.
#
# This stage teaches MCP **2026-07-28**, the current revision: every request carries its envelope
# in `params._meta` (stage 03), and every result says what kind of result it is. At the end of the
# stage your server is complete: it passes `mcp-lab check` in both eras with no failure, the
# official SDK client uses it, and you can open it in the MCP Inspector.

# %% id="setup" nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false, "task": false}
from grader.course import lab

lab.setup("05")

# %% [markdown] id="result"
# ## 1. A result
#
# A `tools/call` request names the tool and its `arguments`, beside the envelope every 2026-07-28
# request carries. Its result holds `content`: a list of typed blocks, here one text block. A tool
# that declared an `outputSchema` (stage 04) also sends the same data in `structuredContent`. What
# that member may hold depends on the revision. MCP 2026-07-28 (Server Features > Tools > Tool
# Result > Structured Content):
#
# > **Structured** content is returned as a JSON value in the `structuredContent` field of a result.
# > This can be any JSON value (object, array, string, number, boolean, or null) that conforms to
# > the tool's `outputSchema` if one is defined.
#
# In 2025-06-18 and 2025-11-25 it is a JSON object (`schema.ts`, `CallToolResult`: "An optional
# JSON object that represents the structured result of the tool call"). The shop's tools return
# objects, so one answer fits both eras. And, in every revision that has it:
#
# > For backwards compatibility, a tool that returns structured content SHOULD also return the
# > serialized JSON in a TextContent block.
#
# `isError: false` says the tool ran and succeeded. And, as for every result of this revision
# (Base Protocol > Responses):
#
# > The `result` **MUST** include a `resultType` field to indicate the type of the result.
#
# A tool that has finished says `"resultType": "complete"`, whether it succeeded or failed.
# (`"input_required"`, a result that asks the user something first, comes in stage 11.) On the
# wire, against the course's reference server:
#
# ```text
# -> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"count_orders","arguments":{"status":"paid"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"lesson","version":"1.0"}}}}
# <- {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"{\"status\": \"paid\", \"count\": 341}"}],"structuredContent":{"status":"paid","count":341},"isError":false}}
# ```
#
# The reference also names itself in each 2026-07-28 result's `_meta` (left out above), as the spec
# asks (MCP 2026-07-28, Base Protocol > General fields > `_meta`, Per-response protocol fields):
#
# > Servers **SHOULD** include the following `io.modelcontextprotocol/*` field in
# > every result's `_meta`, unless specifically configured not to do so, to
# > identify themselves without relying on any prior connection state:
#
# That field is `io.modelcontextprotocol/serverInfo`, the server's name and version:
# `"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"...","version":"..."}}`. A SHOULD, not a
# MUST. The `call_tool` you write returns the result without it, and the course's server adds it
# to every 2026-07-28 result it sends. `my_server.py`, at the end of this stage, puts it on its
# `server/discover` result; on its other results it is yours to add (the checks do not grade a
# SHOULD). No caching hints either: a call is not one of the six operations whose results carry them
# (Server > Utilities > Caching).
#
# *Before 2026-07-28.* A legacy client shook hands first (stage 03) and its requests carry no
# `_meta`; the result is the same without `resultType` (legacy results never carry one, and a
# client of 2026-07-28 takes a result without it as complete). Under 2025-03-26 or 2024-11-05
# there is no `structuredContent` either: the text block alone.
#
# ```text
# -> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"lesson","version":"1.0"}}}
# <- {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}
# -> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"count_orders","arguments":{"status":"paid"}}}
# <- {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{\"status\": \"paid\", \"count\": 341}"}],"structuredContent":{"status":"paid","count":341},"isError":false}}
# ```

# %% [markdown] id="two-errors"
# ## 2. Two kinds of error
#
# The spec names them (MCP 2026-07-28, Server Features > Tools, Error Handling):
#
# > 1. **Protocol Errors** indicate issues with the request structure itself that models are less likely to be able to fix:
# >    - Unknown tool
# >    - Malformed requests (requests that fail to satisfy CallToolRequest schema)
# >    - Server errors
# > [...]
# > 2. **Tool Execution Errors** contain actionable feedback that language models can use to self-correct and retry with adjusted parameters:
# >    - API failures
# >    - Input validation errors (e.g., date in wrong format, value out of range)
# >    - Business logic errors
#
# A *protocol error* is a JSON-RPC error; it goes to the host, and the model usually never sees
# it. A *tool execution error* is a normal result with `isError: true` (and `resultType`, as every
# result) that the model reads. So its text says what to do:
#
# ```text
# -> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"count_orders","arguments":{"status":"lost"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}
# <- {"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","content":[{"type":"text","text":"unknown status 'lost'. Valid statuses: pending, paid, shipped, delivered, cancelled, refunded."}],"isError":true}}
# -> {"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"refund_order","arguments":{"order_id":7},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}
# <- {"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"Invalid params: unknown tool 'refund_order'; tools/list shows count_orders, list_orders, get_order, search_products"}}
# ```
#
# Which is which, for the shop:
#
# | what went wrong | kind | answer |
# |---|---|---|
# | a tool name that is not in `tools/list` | protocol | -32602 |
# | `arguments` that is not an object (`[]`, `"x"`) | protocol (a malformed request) | -32602 |
# | arguments that break the tool's `inputSchema` (`"limit": 500`) | tool execution | `isError: true`, text naming the problem |
# | an unknown status, an order id that does not exist | tool execution | `isError: true`, text saying what is valid |
# | a bug in the tool (an exception you did not expect) | tool execution | `isError: true`, a short text; details to stderr |
#
# The spec's two lists carry no MUST: the table is the course's contract, built on them, and the
# checks grade it. The last row is the schema's advice, not an item of the page's lists, which
# put "Server errors" under protocol errors: `schema.ts` (`CallToolResult.isError`) says "Any
# errors that originate from the tool SHOULD be reported inside the result object, with `isError`
# set to true". A crash inside a tool originates from the tool, so the course answers it with
# `isError: true` and grades that. No error result of the course's carries `structuredContent`:
# the spec says nothing of it there, and an error has no data for the `outputSchema` to describe.
#
# *Before 2026-07-28.* The row about the inputSchema differs by revision. 2025-11-25 lists "Input
# validation errors" under tool execution errors, as 2026-07-28 does. 2025-06-18 lists "Invalid
# arguments" under protocol errors and "Invalid input data" under tool execution errors, with no
# MUST either way; the course chooses -32602 for a session that negotiated 2025-06-18 or older
# (the checks and the checker accept an `isError` result there too). What is a MUST in every
# revision since 2025-03-26 (Tools > Security Considerations): "Servers **MUST**: [...] Validate
# all tool inputs". A server answers by the rules of the revision the request is served under.

# %% [markdown] id="readonly"
# ## 3. Never written
#
# The server opens the shop with the read-only URI of stage 00 (`mode=ro`: every write fails, and a
# missing file is an error, never a new empty database) and runs parameterised queries only. This
# is the course's contract for the shop, not a rule of MCP. The tests below prove it: they hash the
# database file, run a session of calls, some of them with SQL in their arguments, and hash it
# again. `my_server.py` at the end of the stage opens the shop itself, and its test tries a write
# on the connection `open_shop` returns (`mode=rw` or `mode=rwc` would let it through).

# %% [markdown] id="task"
# ### Your turn: `shop_server.py`
#
# Write the four tools and the `tools/call` handler. Everything else comes from the course's
# finished server (stages 01 to 04, both eras): `main()` at the bottom starts it with your
# `call_tool` in it.
#
# - Each tool is a function of the connection and the (already validated) arguments, and returns
#   a dict, shaped exactly like the ones the reference returns (stage 04 printed them): `count_orders` →
#   `{"count": N}`, or `{"status": s, "count": N}` with a status; `list_orders` → `{"total", "offset",
#   "orders"}` with each order's `id, status, created_at, customer_id, customer, total_cents`, oldest
#   first; `get_order` → the order plus `email`, `items` (each `product_id, sku, name, quantity,
#   unit_price_cents`, by product id) and `total_cents`; `search_products` → `{"query", "products"}`
#   with `id, sku, name, category, price_cents, stock`, by id.
# - A tool that cannot answer raises `ToolError` with a text a model can act on: an unknown status
#   lists the six valid ones; an order id that does not exist says which ids exist.
# - `run_tool(conn, schemas, params, version)` runs one call: `schemas` maps each tool name to its
#   inputSchema; `problems(schema, arguments)` (from the course's `reference.schema`) lists every way
#   the arguments break it; `version` is the revision the request is served under (`"2026-07-28"`
#   for a request with the envelope, else the one its session negotiated). Return the result dict
#   (`content`, `isError`, `structuredContent` where due), or raise `RpcError(INVALID_PARAMS, ...)`
#   for a protocol error.
# - `call_tool(conn, schemas, params, version)` is the handler: `run_tool`'s result, with
#   `"resultType": "complete"` under 2026-07-28 and without it before.

# %% id="shop_server" nbgrader={"grade": false, "grade_id": "shop_server", "locked": false, "schema_version": 3, "solution": true, "task": false}
%%module shop_server
import json
import sys
import traceback

from reference import catalog
from reference.database import ensure_default, open_readonly
from reference.errors import INVALID_PARAMS, RpcError
from reference.schema import problems
from reference.server import Server

STATUSES = ("pending", "paid", "shipped", "delivered", "cancelled", "refunded")
MODERN = "2026-07-28"


class ToolError(Exception):
    """The tool ran and failed: the model reads this text."""


def rows(cursor):
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row)) for row in cursor]


def check_status(status):
    ### BEGIN SOLUTION
    if status is not None and status not in STATUSES:
        raise ToolError(f"unknown status {status!r}. Valid statuses: {', '.join(STATUSES)}.")
    ### END SOLUTION


def count_orders(conn, args):
    ### BEGIN SOLUTION
    status = args.get("status")
    check_status(status)
    if status is None:
        (count,) = conn.execute("SELECT count(*) FROM orders").fetchone()
        return {"count": count}
    (count,) = conn.execute("SELECT count(*) FROM orders WHERE status = ?", (status,)).fetchone()
    return {"status": status, "count": count}
    ### END SOLUTION


def list_orders(conn, args):
    ### BEGIN SOLUTION
    status = args.get("status")
    check_status(status)
    limit, offset = int(args.get("limit", 20)), int(args.get("offset", 0))
    customer_id = args.get("customer_id")
    # One fixed query: a filter that is not given is a NULL parameter, so no SQL is ever built.
    where = "WHERE (? IS NULL OR o.status = ?) AND (? IS NULL OR o.customer_id = ?)"
    values = (status, status, customer_id, customer_id)
    orders = rows(conn.execute(
        "SELECT o.id, o.status, o.created_at, o.customer_id, c.name AS customer, "
        "(SELECT sum(quantity * unit_price_cents) FROM order_items WHERE order_id = o.id) AS total_cents "
        "FROM orders o JOIN customers c ON c.id = o.customer_id "
        + where + " ORDER BY o.id LIMIT ? OFFSET ?",
        (*values, limit, offset),
    ))
    (total,) = conn.execute("SELECT count(*) FROM orders o " + where, values).fetchone()
    return {"total": total, "offset": offset, "orders": orders}
    ### END SOLUTION


def get_order(conn, args):
    ### BEGIN SOLUTION
    order_id = int(args["order_id"])
    found = rows(conn.execute(
        "SELECT o.id, o.status, o.created_at, o.customer_id, c.name AS customer, c.email "
        "FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.id = ?",
        (order_id,),
    ))
    if not found:
        low, high = conn.execute("SELECT min(id), max(id) FROM orders").fetchone()
        raise ToolError(f"no order with id {order_id}. Order ids run from {low} to {high}.")
    order = found[0]
    order["items"] = rows(conn.execute(
        "SELECT p.id AS product_id, p.sku, p.name, i.quantity, i.unit_price_cents "
        "FROM order_items i JOIN products p ON p.id = i.product_id WHERE i.order_id = ? ORDER BY p.id",
        (order_id,),
    ))
    order["total_cents"] = sum(i["quantity"] * i["unit_price_cents"] for i in order["items"])
    return order
    ### END SOLUTION


def search_products(conn, args):
    ### BEGIN SOLUTION
    query = args["query"]
    limit = int(args.get("limit", 10))
    pattern = "%" + query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    products = rows(conn.execute(
        "SELECT id, sku, name, category, price_cents, stock FROM products "
        "WHERE name LIKE ? ESCAPE '\\' OR category LIKE ? ESCAPE '\\' OR sku LIKE ? ESCAPE '\\' "
        "ORDER BY id LIMIT ?",
        (pattern, pattern, pattern, limit),
    ))
    return {"query": query, "products": products}
    ### END SOLUTION


TOOLS = {"count_orders": count_orders, "list_orders": list_orders, "get_order": get_order,
         "search_products": search_products}


def text_result(text, is_error):
    return {"content": [{"type": "text", "text": text}], "isError": is_error}


def run_tool(conn, schemas, params, version):
    """One call's result (content, isError, structuredContent where due), or RpcError."""
    ### BEGIN SOLUTION
    name = params.get("name")
    if not isinstance(name, str) or name not in TOOLS:
        raise RpcError(INVALID_PARAMS, f"unknown tool {name!r}; tools/list shows {', '.join(TOOLS)}")
    arguments = params.get("arguments")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise RpcError(INVALID_PARAMS, f'"arguments" for {name} must be an object')
    found = problems(schemas[name], arguments)
    if found:
        message = f"invalid arguments for {name}: {'; '.join(found)}"
        if version >= "2025-11-25":
            return text_result(message + ". Check the tool's inputSchema and call again.", True)
        raise RpcError(INVALID_PARAMS, message)
    try:
        value = TOOLS[name](conn, arguments)
    except ToolError as exc:
        return text_result(str(exc), True)
    except Exception as exc:
        traceback.print_exc(file=sys.stderr)
        return text_result(f"{name} failed: {type(exc).__name__}", True)
    result = text_result(json.dumps(value, ensure_ascii=False), False)
    if version >= "2025-06-18":
        result["structuredContent"] = value
    return result
    ### END SOLUTION


def call_tool(conn, schemas, params, version):
    """The tools/call handler: run_tool's result, with resultType under 2026-07-28."""
    ### BEGIN SOLUTION
    result = run_tool(conn, schemas, params, version)
    if version == MODERN:  # every 2026-07-28 result says what kind it is; legacy results never do
        return {"resultType": "complete", **result}
    return result
    ### END SOLUTION


def main():
    server = Server(None)  # the course's server (framing, messages, lifecycle) with no tools of its own
    conn = open_readonly(ensure_default())
    schemas = {tool["name"]: tool["inputSchema"] for tool in catalog.TOOLS}  # stage 04's declarations
    methods = server.dispatcher.methods
    # server.context: the revision of the request being served (its own _meta's, or its session's).
    methods["tools/list"] = lambda params: catalog.listing(params, server.context.structured_output)
    methods["tools/call"] = lambda params: call_tool(conn, schemas, params, server.context.version)
    return server.serve(sys.stdin.buffer, sys.stdout.buffer)


if __name__ == "__main__":
    sys.exit(main())

# %% id="try-it"
conn = open_readonly(ensure_default())
print(count_orders(conn, {"status": "paid"}))
print(get_order(conn, {"order_id": 7})["total_cents"])
schemas = {tool["name"]: tool["inputSchema"] for tool in catalog.TOOLS}
print(call_tool(conn, schemas, {"name": "count_orders", "arguments": {"status": "lost"}}, "2026-07-28"))
print(call_tool(conn, schemas, {"name": "count_orders", "arguments": {"status": "lost"}}, "2025-11-25"))

# %% id="test_count_orders" nbgrader={"grade": true, "grade_id": "test_count_orders", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# Count_orders(conn, args) against the shop: all, paid, an unknown status, a status that is SQL.
# Hidden when graded: the same checks on other values.
lab.check("test_count_orders")

# %% id="test_list_orders" nbgrader={"grade": true, "grade_id": "test_list_orders", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 3}
# List_orders(conn, args) against the shop: filters, a page, a customer with no orders, an unknown
# status.
# Hidden when graded: the same checks on other values.
lab.check("test_list_orders")

# %% id="test_get_order" nbgrader={"grade": true, "grade_id": "test_get_order", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# Get_order(conn, args) against the shop: the first and the last order, one that does not exist.
# Hidden when graded: the same checks on other values.
lab.check("test_get_order")

# %% id="test_search_products" nbgrader={"grade": true, "grade_id": "test_search_products", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# Search_products(conn, args) against the shop: mug, "100%", a non-ASCII query, no match.
# Hidden when graded: the same checks on other values.
lab.check("test_search_products")

# %% id="test_call_tool" nbgrader={"grade": true, "grade_id": "test_call_tool", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 4}
# Call_tool: protocol errors, tool execution errors, structuredContent and resultType by revision
# (2026-07-28 and the legacy ones); a tool that crashes.
lab.check("test_call_tool")

# %% [markdown] id="whole"
# ## 4. The whole server
#
# `shop_server.py` is now a complete MCP server, in both eras (the course's server routes each
# request by its era, as your stage 03 server did, and hands `call_tool` the revision the request
# is served under). The next tests run it as a process: a session of calls that must leave the
# database untouched, then the official SDK client in its default mode (2026-07-28), then the
# checker with every one of its checks, in both eras. The same checker runs from a terminal:
#
# ```sh
# .venv/bin/mcp-lab check -- .venv/bin/python workspace/05-tools-call/shop_server.py
# ```

# %% id="test_read_only" nbgrader={"grade": true, "grade_id": "test_read_only", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# Your server: calls with SQL in their arguments leave the database byte-identical.
lab.check("test_read_only")

# %% id="test_sdk_client" nbgrader={"grade": true, "grade_id": "test_sdk_client", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# The official MCP SDK's client in its default mode (2026-07-28) lists your tools and calls count_orders.
lab.check("test_sdk_client")

# %% id="test_mcp_lab_check" nbgrader={"grade": true, "grade_id": "test_mcp_lab_check", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 3}
# Mcp-lab check on your server, both eras: no check fails.
lab.check("test_mcp_lab_check")

# %% [markdown] id="inspector"
# ## 5. In the MCP Inspector
#
# The MCP Inspector is the protocol's own debugging UI: it starts a server, shows its tools, and
# lets you call them by hand. It runs with Node.js (`npx` downloads it on first use). The cell
# below prints the one command that opens your server in it:

# %% id="inspector-command"
print(lab.inspector_command("shop_server"))

# %% [markdown] id="capstone"
# ## 6. Your own server
#
# Every server you ran in this course so far stood on the course's pieces: `shop_server.py` has
# your tools in it, but its framing, its messages and its two eras are the course's finished
# ones. A host on another machine has no such pieces. It has one command, `python3 my_server.py`,
# and the spec says what it does with it (MCP 2026-07-28, Transports > stdio):
#
# > In the **stdio** transport, the client launches the MCP server as a subprocess. [...] The
# > server reads JSON-RPC messages from `stdin` and writes JSON-RPC messages to `stdout`.
#
# So the last part of the stage takes the scaffolding away. You put what you wrote in stages 00 to
# 05 into one file, `my_server.py`, that runs on its own: the Python standard library and your
# code, nothing else.

# %% [markdown] id="capstone-pieces"
# ### What each stage gave you
#
# You have written every piece already; here is where each one goes.
#
# | stage | you wrote | in `my_server.py` |
# |---|---|---|
# | 00 | the shop opened through a `mode=ro` URI, parameterised SQL | `open_shop(path)` |
# | 01 | one JSON message per line, UTF-8, strict JSON, a flush | `encode`, `decode`, `read_frame`, `write_frame` |
# | 02 | the three branches, the error table, ids echoed with their type | `handle_message`, `handle_line` |
# | 03 | the 2026-07-28 envelope, `server/discover`, one era per connection (the course's choice); for old clients `initialize`, version negotiation, `ping`, batches in 2025-03-26 only; exit at end of input | `Session`, `read_meta`, `discover`, `route`, `initialize`, `serve` |
# | 04 | the four tools' names, schemas, descriptions and annotations; `tools/list`, its caching hints in 2026-07-28 | `tool_declarations`, `list_tools` |
# | 05 | the four tools and `tools/call`, by revision | `count_orders` ... `search_products`, `call_tool` |
#
# One piece is new. Stage 05's `call_tool` checked the arguments with the course's
# `problems(schema, arguments)`; here you write it yourself, as `argument_problems`, for the parts
# of JSON Schema the shop's declarations use: `required`, `additionalProperties: false`, `type`
# (string or integer), `minimum`/`maximum` and `minLength`/`maxLength`.
#
# The pieces fit as one loop. A line comes in on stdin; `read_frame` cuts it, `handle_line`
# decodes it and sorts it into one of the three branches. A request goes to `route`, which finds
# its handler by its era, as your stage 03 `route` did: a request with the 2026-07-28 envelope has
# it checked by `read_meta`, is served `server/discover`, `tools/list` or `tools/call`, and gets a
# result with `"resultType": "complete"` (added in one place, `route`, for all three); a request
# without it goes to its handler in `methods` (`initialize`, `ping`, `tools/list`, `tools/call`)
# and gets a legacy result, never with `resultType`. The reply goes out through `write_frame`. A
# notification goes to its handler in `notifications`, and nothing goes out. When `read_frame`
# returns `None`, the loop returns 0 and the program exits.
#
# One more rule from stage 03 matters here: a 2026-07-28 request is served by its own `_meta`, never
# by what an earlier request said. So `list_tools` and `call_tool` ask `revision(session, params)`
# (given) which revision *this* request is served under: `"2026-07-28"` when it carries the envelope,
# else the revision its connection negotiated. Under 2026-07-28 a tool list carries the caching
# hints of stage 04 (`ttlMs`, `cacheScope`), and bad arguments and `structuredContent` follow the
# rules of 2025-11-25.

# %% [markdown] id="capstone-rule"
# ### Nothing from the course
#
# `my_server.py` imports the standard library only: `json`, `sys`, `os`, `sqlite3`, `pathlib`,
# `traceback`. Not `reference` (the course's answer key), not `grader`, and not your own
# `shop_server.py` either (it stands on `reference`): paste what you need. The tests read the file
# before they run it, and run it where `import reference` fails.
#
# The rest of the rules are the ones you already know. Two matter most in a file of your own,
# because nothing catches them for you any more. Stdout is the protocol's (MCP 2026-07-28,
# Transports > stdio):
#
# > The server **MUST NOT** write anything to its `stdout` that is not a valid MCP message.
#
# and stderr is yours:
#
# > The server **MAY** write UTF-8 strings to `stderr` for any logging purposes including
# > informational, debug, and error messages.
#
# So `log()` writes to stderr, a traceback goes to stderr, and `print()` never appears.

# %% [markdown] id="capstone-db"
# ### Where the shop is
#
# When the course runs your server (the tests, `lab.program`), it says where the database is in the
# environment variable `MCP_LAB_DB`. A host, or you in a terminal, starts it without one, and the
# MCP Inspector passes on none of yours. So the server reads `os.environ.get("MCP_LAB_DB")`, and
# falls back on the course's own database when it is not set. The cell below prints that path.
# In the course's workspace it is two folders above this stage's folder, in `data/build/shop.db`,
# and that is how `DEFAULT_DB` finds it; if the printed path is somewhere else, write it into
# `DEFAULT_DB` instead.

# %% id="capstone-db-path"
print(lab.shop_db())

# %% [markdown] id="capstone-task"
# ### Your turn: `my_server.py`
#
# Fill in each function with your own code from stages 00 to 05. The rest is given: the
# constants, the classes, the small helpers (`log`, `result_reply`, `error_reply`, `valid_id`,
# `is_modern`, `revision`, `exact`, `rows`, `tool_result`) and `main`. A few signatures differ from
# the stages' ones: `handle_message` and `handle_line` get `route(method, params)` (it returns the
# request's handler, `None` for a method not served, or raises `RpcError`) and the notifications
# apart; `route` gets the session, the method, the params and the legacy `methods`; `call_tool`
# gets the session and the declarations.
#
# Here is how the official MCP SDK's client (Python, version 2.3) opens a connection to the
# finished server in its default mode: these are its first three requests, recorded on the wire
# from a real run, with the server's replies (the tool list shortened). It probes with
# `server/discover`, as the spec asks of a client that speaks both eras (Transports > stdio,
# Backward Compatibility); a `DiscoverResult` tells it the server is modern, and from then on
# every request carries the envelope and every result `resultType`:
#
# ```text
# $ python3 my_server.py
# -> {"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"mcp","version":"0.1.0"},"io.modelcontextprotocol/clientCapabilities":{}}}}
# <- {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":false}},"instructions":"A read-only view of a small shop: orders, customers and products. Money is in cents.","ttlMs":300000,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"my-shop","title":"My shop server","version":"1.0.0"}}}}
# -> {"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"mcp","version":"0.1.0"},"io.modelcontextprotocol/clientCapabilities":{}}}}
# <- {"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","tools":[{"name":"count_orders",...}],"ttlMs":300000,"cacheScope":"public"}}
# -> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"count_orders","arguments":{"status":"paid"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"mcp","version":"0.1.0"},"io.modelcontextprotocol/clientCapabilities":{}}}}
# <- {"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","content":[{"type":"text","text":"{\"status\": \"paid\", \"count\": 341}"}],"isError":false,"structuredContent":{"status":"paid","count":341}}}
# ```
#
# *Before 2026-07-28.* An old client (or the same SDK in its legacy mode) shakes hands instead, and
# the same server answers it the old way: no envelope, no `resultType`. The handshake, a call, and
# a `limit` out of range, which under 2025-11-25 is a tool execution error:
#
# ```text
# $ python3 my_server.py
# -> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"lesson","version":"1.0"}}}
# <- {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":false}},"serverInfo":{"name":"my-shop","title":"My shop server","version":"1.0.0"},"instructions":"A read-only view of a small shop: orders, customers and products. Money is in cents."}}
# -> {"jsonrpc":"2.0","method":"notifications/initialized"}
# -> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"count_orders","arguments":{"status":"pending"}}}
# <- {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{\"status\": \"pending\", \"count\": 210}"}],"isError":false,"structuredContent":{"status":"pending","count":210}}}
# -> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_orders","arguments":{"limit":500}}}
# <- {"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"invalid arguments for list_orders: limit must be at most 100. Check the tool's inputSchema and call again."}],"isError":true}}
# ```
#
# The cell after yours sends four other messages, in a 2025-06-18 session, then three on a new
# connection in 2026-07-28. Predict each reply before you run it: which revision comes back, which
# ids, which kind of error for each call, which results carry `resultType`, and which message gets
# no reply at all.

# %% id="my_server" nbgrader={"grade": false, "grade_id": "my_server", "locked": false, "schema_version": 3, "solution": true, "task": false}
%%module my_server
# my_server.py: the shop's MCP server in one file, standard library only (stages 00 to 05).

import json
import os
import sqlite3
import sys
import traceback
from pathlib import Path

# The shop (stage 00). Run by the course, your server finds the database in $MCP_LAB_DB; run from
# a terminal, it falls back on the course's own, two folders above the stage folder (the path that
# lab.shop_db() printed: write that path here instead if your folder is elsewhere).
DEFAULT_DB = Path(__file__).resolve().parent.parent.parent / "data" / "build" / "shop.db"
STATUSES = ("pending", "paid", "shipped", "delivered", "cancelled", "refunded")

# The error table (stage 02).
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

# The revisions this server speaks (stage 03): 2026-07-28 per request, the older ones by handshake.
MODERN = "2026-07-28"
PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
UNSUPPORTED_VERSION = -32022
LATEST = "2025-11-25"
SUPPORTED = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
SERVER_INFO = {"name": "my-shop", "title": "My shop server", "version": "1.0.0"}
INSTRUCTIONS = "A read-only view of a small shop: orders, customers and products. Money is in cents."
TTL_MS = 300000  # 2026-07-28 (stage 04): how long a client may keep the tool list and the discover result


def log(text):
    """One line for a human, on stderr: stdout carries protocol messages only."""
    sys.stderr.write(f"[my_server] {text}\n")
    sys.stderr.flush()


# -- 0. The shop, read-only ---------------------------------------------------------------------
def open_shop(path):
    """A connection on which every write fails: the mode=ro URI of stage 00."""
    ### BEGIN SOLUTION
    return sqlite3.connect(Path(path).resolve().as_uri() + "?mode=ro", uri=True)
    ### END SOLUTION


# -- 1. Framing: one JSON message per line, UTF-8, a flush per message ----------------------------
def encode(message):
    """One message as one line of UTF-8 JSON, ending in a single newline."""
    ### BEGIN SOLUTION
    try:
        text = json.dumps(message, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:  # a lone surrogate ("\ud800") came in: send it back escaped, as it came
        return json.dumps(message, allow_nan=False, separators=(",", ":")).encode("ascii") + b"\n"
    ### END SOLUTION


def _no_constants(name):
    raise ValueError(f"{name} is not JSON")


def decode(line):
    """The JSON value of one line; ValueError for anything that is not strict JSON in UTF-8."""
    ### BEGIN SOLUTION
    try:
        return json.loads(line.decode("utf-8"), parse_constant=_no_constants)
    except RecursionError:  # valid JSON nested too deep for the parser: still not a message
        raise ValueError("JSON nested too deeply") from None
    ### END SOLUTION


def read_frame(stream):
    """One line without its line ending; None at the end of the input."""
    ### BEGIN SOLUTION
    line = stream.readline()
    if not line:
        return None
    if line.endswith(b"\n"):
        line = line[:-1]
        if line.endswith(b"\r"):
            line = line[:-1]
    return line
    ### END SOLUTION


def write_frame(stream, message):
    """Write one message and flush: a pipe holds what you write until you do."""
    ### BEGIN SOLUTION
    stream.write(encode(message))
    stream.flush()
    ### END SOLUTION


# -- 2. Messages: three branches, one error table ------------------------------------------------
class RpcError(Exception):
    """A protocol error: raise it in a handler and the reply is a JSON-RPC error (with data, if given)."""

    def __init__(self, code, message, data=None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


def result_reply(id, result):
    return {"jsonrpc": "2.0", "id": id, "result": result}


def error_reply(id, code, message, data=None):
    error = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": id, "error": error}


def valid_id(value):
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def handle_message(message, route, notifications):
    """The reply to one decoded message, or None when nothing must be sent. ``route(method, params)``
    returns the handler of a request (a function of its params), None for a method not served, or
    raises RpcError."""
    ### BEGIN SOLUTION
    if isinstance(message, dict) and "method" not in message and ("result" in message or "error" in message):
        return None  # a response to a request of the other side's: never answered
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or not isinstance(message.get("method"), str):
        id = message.get("id") if isinstance(message, dict) and valid_id(message.get("id")) else None
        return error_reply(id, INVALID_REQUEST, "Invalid Request")
    method, params = message["method"], message.get("params", {})
    if "id" not in message:  # a notification: act on it, answer nothing, not even an error
        handler = notifications.get(method)
        if handler is not None:
            try:
                handler(params)
            except Exception:
                traceback.print_exc()
        return None
    id = message["id"]
    if not valid_id(id):
        return error_reply(None, INVALID_REQUEST, "Invalid Request: the id must be a string or an integer")
    try:
        handler = route(method, params)
        if handler is None:
            return error_reply(id, METHOD_NOT_FOUND, f"Method not found: {method}")
        if not isinstance(params, dict):
            return error_reply(id, INVALID_PARAMS, "Invalid params: params must be an object")
        return result_reply(id, handler(params))
    except RpcError as exc:
        return error_reply(id, exc.code, exc.message, exc.data)
    except Exception as exc:
        traceback.print_exc()
        return error_reply(id, INTERNAL_ERROR, f"Internal error: {type(exc).__name__}")
    ### END SOLUTION


def handle_line(line, route, notifications, batches_allowed):
    """The reply to one line: a message, a list of them (a batch), or None."""
    ### BEGIN SOLUTION
    try:
        message = decode(line)
    except ValueError as exc:
        return error_reply(None, PARSE_ERROR, f"Parse error: {exc}")
    if not isinstance(message, list):
        return handle_message(message, route, notifications)
    if not batches_allowed:
        return error_reply(None, INVALID_REQUEST, "Invalid Request: batches exist only in revision 2025-03-26")
    if not message:
        return error_reply(None, INVALID_REQUEST, "Invalid Request: an empty batch")
    replies = [r for r in (handle_message(m, route, notifications) for m in message) if r is not None]
    return replies or None  # a batch of notifications gets no reply at all
    ### END SOLUTION


# -- 3. Eras: the 2026-07-28 envelope, and the handshake for old clients ------------------------
class Session:
    """What one connection has agreed on; before initialize, the latest revision applies."""

    def __init__(self):
        self.version = LATEST
        self.initialize_seen = False
        self.initialized = False
        self.modern = False  # a 2026-07-28 request chose this connection's era


def is_modern(params):
    """Whether a request's params carry the 2026-07-28 envelope (one of its two required keys)."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and (PROTOCOL_VERSION in meta or CLIENT_CAPABILITIES in meta)


def revision(session, params):
    """The revision one request is served under: its own in 2026-07-28, else the one negotiated."""
    return MODERN if is_modern(params) else session.version


def read_meta(params):
    """The version a 2026-07-28 request names, once its _meta is checked (-32602, or -32022 with data)."""
    ### BEGIN SOLUTION
    if not isinstance(params, dict) or not isinstance(params.get("_meta"), dict):
        raise RpcError(INVALID_PARAMS, "Invalid params: a 2026-07-28 request needs params._meta")
    meta = params["_meta"]
    version = meta.get(PROTOCOL_VERSION)
    if not isinstance(version, str):
        raise RpcError(INVALID_PARAMS, f'Invalid params: params._meta needs the string "{PROTOCOL_VERSION}"')
    if not isinstance(meta.get(CLIENT_CAPABILITIES), dict):
        raise RpcError(INVALID_PARAMS, f'Invalid params: params._meta needs the object "{CLIENT_CAPABILITIES}"')
    if version != MODERN:
        data = {"supported": [MODERN], "requested": version}
        raise RpcError(UNSUPPORTED_VERSION, f"Unsupported protocol version: {version[:40]}", data)
    return version
    ### END SOLUTION


def discover():
    """The server/discover result: the versions, the capabilities, the caching hints, serverInfo."""
    ### BEGIN SOLUTION
    return {
        "resultType": "complete",
        "supportedVersions": [MODERN],
        "capabilities": {"tools": {"listChanged": False}},
        "instructions": INSTRUCTIONS,
        "ttlMs": TTL_MS,
        "cacheScope": "public",
        "_meta": {SERVER_INFO_KEY: SERVER_INFO},
    }
    ### END SOLUTION


def route(session, method, params, methods):
    """The handler that serves one request in its era: None for a method not served, or RpcError."""
    ### BEGIN SOLUTION
    if is_modern(params):
        if session.initialize_seen:
            raise RpcError(INVALID_REQUEST, "Invalid Request: this connection was initialized; a 2026-07-28 "
                           "request needs a connection of its own")
        session.modern = True
        read_meta(params)
        if method == "server/discover":
            handler = lambda params: discover()  # noqa: E731
        elif method in ("tools/list", "tools/call"):
            handler = methods[method]
        else:  # initialize and ping do not exist in 2026-07-28
            raise RpcError(METHOD_NOT_FOUND, f"Method not found: {method} (2026-07-28 serves server/discover, "
                           "tools/list and tools/call here)")
        return lambda params: {"resultType": "complete", **handler(params)}  # every 2026-07-28 result says so
    if session.modern:
        raise RpcError(INVALID_PARAMS, "Invalid params: this connection speaks 2026-07-28: every request needs "
                       "params._meta")
    return methods.get(method)  # the legacy era: no resultType, ever
    ### END SOLUTION


def initialize(session, params):
    """The initialize result: the revision agreed, the capabilities, serverInfo. A second one is -32600."""
    ### BEGIN SOLUTION
    if session.initialize_seen:
        raise RpcError(INVALID_REQUEST, f"Invalid Request: initialize was already answered ({session.version})")
    requested = params.get("protocolVersion")
    if not isinstance(requested, str):
        raise RpcError(INVALID_PARAMS, 'Invalid params: "protocolVersion" must be a string such as "2025-11-25"')
    session.version = requested if requested in SUPPORTED else LATEST
    session.initialize_seen = True
    log(f"initialize: revision {session.version}")
    return {
        "protocolVersion": session.version,
        "capabilities": {"tools": {"listChanged": False}},
        "serverInfo": SERVER_INFO,
        "instructions": INSTRUCTIONS,
    }
    ### END SOLUTION


# -- 4. tools/list: the manual a model reads ------------------------------------------------------
READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}


def exact(properties, optional=()):
    """An object schema: these members, each required unless optional, and no others."""
    required = [name for name in properties if name not in optional]
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def tool_declarations():
    """The four tools as tools/list shows them from 2025-06-18 on (earlier: without outputSchema)."""
    ### BEGIN SOLUTION
    status = {"type": "string", "description": f"Only orders with this status: {', '.join(STATUSES)}."}
    order = {
        "id": {"type": "integer"},
        "status": {"type": "string", "enum": list(STATUSES)},
        "created_at": {"type": "string", "description": "When it was placed (ISO 8601, UTC)."},
        "customer_id": {"type": "integer"},
        "customer": {"type": "string", "description": "The customer's name."},
    }
    tools = [
        {
            "name": "count_orders",
            "title": "Count orders",
            "description": "Count the shop's orders, all of them or those with one status. Returns "
            '{"status": ..., "count": N}. An unknown status is an error that lists the valid ones.',
            "inputSchema": {"type": "object", "properties": {"status": status}, "additionalProperties": False},
            "outputSchema": exact(
                {"status": {"type": "string", "enum": list(STATUSES)}, "count": {"type": "integer", "minimum": 0}},
                optional=("status",),
            ),
        },
        {
            "name": "list_orders",
            "title": "List orders",
            "description": "List orders, oldest first, optionally one status or one customer's only. Returns "
            '{"total": N, "offset": N, "orders": [...]} with each order\'s id, status, created_at, '
            "customer_id, customer and total_cents; page with offset. Use get_order for the items.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "status": status,
                    "customer_id": {"type": "integer", "minimum": 1, "maximum": 2**31 - 1,
                                    "description": "Only this customer's orders."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20,
                              "description": "At most this many orders (1-100, default 20)."},
                    "offset": {"type": "integer", "minimum": 0, "maximum": 2**31 - 1, "default": 0,
                               "description": "Skip this many orders first (default 0)."},
                },
                "additionalProperties": False,
            },
            "outputSchema": exact({
                "total": {"type": "integer", "minimum": 0},
                "offset": {"type": "integer", "minimum": 0},
                "orders": {"type": "array", "items": exact(
                    {**order, "total_cents": {"type": ["integer", "null"], "minimum": 0}}
                )},
            }),
        },
        {
            "name": "get_order",
            "title": "Get one order",
            "description": "Get one order by its id: status, created_at, the customer's name and email, the "
            "items (product, quantity, unit price in cents) and total_cents. An id that does not exist "
            "is an error that says which ids exist.",
            "inputSchema": {
                "type": "object",
                "properties": {"order_id": {"type": "integer", "minimum": 1, "maximum": 2**31 - 1,
                                            "description": "The order's id."}},
                "required": ["order_id"],
                "additionalProperties": False,
            },
            "outputSchema": exact({
                **order,
                "email": {"type": "string"},
                "items": {"type": "array", "items": exact({
                    "product_id": {"type": "integer"},
                    "sku": {"type": "string"},
                    "name": {"type": "string"},
                    "quantity": {"type": "integer", "minimum": 1},
                    "unit_price_cents": {"type": "integer", "minimum": 1},
                })},
                "total_cents": {"type": "integer", "minimum": 0},
            }),
        },
        {
            "name": "search_products",
            "title": "Search products",
            "description": "Find products whose name, category or SKU contains the query. Returns "
            '{"query": ..., "products": [...]} with id, sku, name, category, price_cents and stock. An '
            "empty list means nothing matched: try a shorter or more general word.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "minLength": 1, "maxLength": 100,
                              "description": "Text to look for, e.g. 'mug' or 'garden'."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10,
                              "description": "At most this many products (1-50, default 10)."},
                },
                "required": ["query"],
                "additionalProperties": False,
            },
            "outputSchema": exact({
                "query": {"type": "string"},
                "products": {"type": "array", "items": exact({
                    "id": {"type": "integer"},
                    "sku": {"type": "string"},
                    "name": {"type": "string"},
                    "category": {"type": "string"},
                    "price_cents": {"type": "integer", "minimum": 1},
                    "stock": {"type": "integer", "minimum": 0},
                })},
            }),
        },
    ]
    for tool in tools:  # every shop tool only reads; twice is the same as once
        tool["annotations"] = dict(READ_ONLY)
    return tools
    ### END SOLUTION


def list_tools(session, declarations, params):
    """The tools/list result: one page (any cursor is -32602), no outputSchema before 2025-06-18, the
    caching hints in 2026-07-28."""
    ### BEGIN SOLUTION
    if "cursor" in params:  # one page holds every tool: no cursor was ever handed out
        raise RpcError(INVALID_PARAMS, "Invalid params: tools/list has a single page (no cursor)")
    version = revision(session, params)
    if version == MODERN:
        return {"tools": declarations, "ttlMs": TTL_MS, "cacheScope": "public"}
    if version >= "2025-06-18":
        return {"tools": declarations}
    return {"tools": [{k: v for k, v in tool.items() if k != "outputSchema"} for tool in declarations]}
    ### END SOLUTION


# -- 5. tools/call: answers from the shop ----------------------------------------------------------
class ToolError(Exception):
    """The tool ran and failed: the model reads this text."""


def rows(cursor):
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row)) for row in cursor]


def check_status(status):
    """ToolError for a status the shop does not have, listing the valid ones (None: no status given)."""
    ### BEGIN SOLUTION
    if status is not None and status not in STATUSES:
        raise ToolError(f"unknown status {status!r}. Valid statuses: {', '.join(STATUSES)}.")
    ### END SOLUTION


def count_orders(conn, args):
    """{"count": N}, or {"status": s, "count": N} with a status."""
    ### BEGIN SOLUTION
    status = args.get("status")
    check_status(status)
    if status is None:
        return {"count": conn.execute("SELECT count(*) FROM orders").fetchone()[0]}
    count = conn.execute("SELECT count(*) FROM orders WHERE status = ?", (status,)).fetchone()[0]
    return {"status": status, "count": count}
    ### END SOLUTION


def list_orders(conn, args):
    """{"total", "offset", "orders"}: id, status, created_at, customer_id, customer, total_cents; oldest first."""
    ### BEGIN SOLUTION
    status, customer_id = args.get("status"), args.get("customer_id")
    check_status(status)
    limit, offset = int(args.get("limit", 20)), int(args.get("offset", 0))
    # A filter that is not given is a NULL parameter: one fixed query, no SQL built from text.
    where = "WHERE (? IS NULL OR o.status = ?) AND (? IS NULL OR o.customer_id = ?)"
    values = (status, status, customer_id, customer_id)
    orders = rows(conn.execute(
        "SELECT o.id, o.status, o.created_at, o.customer_id, c.name AS customer, "
        "(SELECT sum(quantity * unit_price_cents) FROM order_items WHERE order_id = o.id) AS total_cents "
        "FROM orders o JOIN customers c ON c.id = o.customer_id " + where + " ORDER BY o.id LIMIT ? OFFSET ?",
        (*values, limit, offset),
    ))
    total = conn.execute("SELECT count(*) FROM orders o " + where, values).fetchone()[0]
    return {"total": total, "offset": offset, "orders": orders}
    ### END SOLUTION


def get_order(conn, args):
    """The order with the customer's email, its items (by product id) and total_cents."""
    ### BEGIN SOLUTION
    order_id = int(args["order_id"])
    found = rows(conn.execute(
        "SELECT o.id, o.status, o.created_at, o.customer_id, c.name AS customer, c.email "
        "FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.id = ?",
        (order_id,),
    ))
    if not found:
        low, high = conn.execute("SELECT min(id), max(id) FROM orders").fetchone()
        raise ToolError(f"no order with id {order_id}. Order ids run from {low} to {high}.")
    order = found[0]
    order["items"] = rows(conn.execute(
        "SELECT p.id AS product_id, p.sku, p.name, i.quantity, i.unit_price_cents "
        "FROM order_items i JOIN products p ON p.id = i.product_id WHERE i.order_id = ? ORDER BY p.id",
        (order_id,),
    ))
    order["total_cents"] = sum(item["quantity"] * item["unit_price_cents"] for item in order["items"])
    return order
    ### END SOLUTION


def search_products(conn, args):
    """{"query", "products"}: id, sku, name, category, price_cents, stock; by id."""
    ### BEGIN SOLUTION
    query, limit = args["query"], int(args.get("limit", 10))
    # % and _ in the query are letters to look for, not LIKE's wildcards: escape them.
    pattern = "%" + query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    products = rows(conn.execute(
        "SELECT id, sku, name, category, price_cents, stock FROM products "
        "WHERE name LIKE ? ESCAPE '\\' OR category LIKE ? ESCAPE '\\' OR sku LIKE ? ESCAPE '\\' "
        "ORDER BY id LIMIT ?",
        (pattern, pattern, pattern, limit),
    ))
    return {"query": query, "products": products}
    ### END SOLUTION


TOOLS = {"count_orders": count_orders, "list_orders": list_orders, "get_order": get_order,
         "search_products": search_products}


def argument_problems(schema, args):
    """Every way ``args`` breaks the tool's inputSchema (the parts of JSON Schema the shop uses)."""
    ### BEGIN SOLUTION
    found = [f"missing required argument {name}" for name in schema.get("required", []) if name not in args]
    for name, value in args.items():
        rule = schema["properties"].get(name)
        if rule is None:
            found.append(f"unexpected argument {name}")
        elif rule["type"] == "string" and not isinstance(value, str):
            found.append(f"{name} must be a string")
        elif rule["type"] == "integer" and (
            isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value)
        ):
            found.append(f"{name} must be an integer")
        else:
            size = len(value) if isinstance(value, str) else value
            low, high = rule.get("minimum", rule.get("minLength")), rule.get("maximum", rule.get("maxLength"))
            unit = " characters long" if isinstance(value, str) else ""
            if low is not None and size < low:
                found.append(f"{name} must be at least {low}{unit}")
            if high is not None and size > high:
                found.append(f"{name} must be at most {high}{unit}")
    return found
    ### END SOLUTION


def tool_result(text, is_error):
    return {"content": [{"type": "text", "text": text}], "isError": is_error}


def call_tool(conn, session, declarations, params):
    """The tools/call result, or RpcError for a protocol error; bad arguments by the request's revision."""
    ### BEGIN SOLUTION
    version = revision(session, params)
    tool = params.get("name")
    if not isinstance(tool, str) or tool not in TOOLS:
        raise RpcError(INVALID_PARAMS, f"Invalid params: unknown tool {tool!r}; tools/list shows {', '.join(TOOLS)}")
    args = params.get("arguments")
    if args is None:
        args = {}
    if not isinstance(args, dict):  # the request itself is malformed: a protocol error in every revision
        raise RpcError(INVALID_PARAMS, f'Invalid params: "arguments" for {tool} must be an object')
    schema = next(d["inputSchema"] for d in declarations if d["name"] == tool)
    problems = argument_problems(schema, args)
    if problems:
        text = f"invalid arguments for {tool}: {'; '.join(problems)}"
        if version >= "2025-11-25":  # a tool execution error the model can correct (2026-07-28 too)
            return tool_result(text + ". Check the tool's inputSchema and call again.", True)
        raise RpcError(INVALID_PARAMS, f"Invalid params: {text}")  # 2025-06-18 and before
    try:
        value = TOOLS[tool](conn, args)
    except ToolError as failed:
        return tool_result(str(failed), True)
    except Exception as exc:  # a bug, or a shop without its tables: the model gets a short text
        traceback.print_exc()
        return tool_result(f"{tool} failed: {type(exc).__name__}", True)
    result = tool_result(json.dumps(value, ensure_ascii=False), False)
    if version >= "2025-06-18":
        result["structuredContent"] = value
    return result
    ### END SOLUTION


# -- The loop ------------------------------------------------------------------------------------
def make_handlers(session, conn):
    """(methods, notifications): what this server answers in the legacy era (route picks from them in
    2026-07-28), and what it acts on without answering."""
    ### BEGIN SOLUTION
    declarations = tool_declarations()

    def initialized(params):
        session.initialized = True

    methods = {
        "initialize": lambda params: initialize(session, params),
        "ping": lambda params: {},
        "tools/list": lambda params: list_tools(session, declarations, params),
        "tools/call": lambda params: call_tool(conn, session, declarations, params),
    }
    # notifications/cancelled needs nothing: every request is answered before the next line is read.
    notifications = {"notifications/initialized": initialized, "notifications/cancelled": lambda params: None}
    return methods, notifications
    ### END SOLUTION


def serve(stdin, stdout, conn):
    """Serve one session until stdin ends; return the exit status."""
    ### BEGIN SOLUTION
    session = Session()
    methods, notifications = make_handlers(session, conn)

    def serving(method, params):
        return route(session, method, params, methods)

    while True:
        line = read_frame(stdin)
        if line is None:
            return 0
        if not line.strip():
            continue
        reply = handle_line(line, serving, notifications, session.version == "2025-03-26")
        if reply is not None:
            write_frame(stdout, reply)
    ### END SOLUTION


def main():
    path = os.environ.get("MCP_LAB_DB") or DEFAULT_DB
    try:
        conn = open_shop(path)
    except sqlite3.Error as exc:
        log(f"cannot open the shop at {path}: {exc}")
        return 1
    log(f"serving the shop at {path}; stdin closed ends the server")
    try:
        return serve(sys.stdin.buffer, sys.stdout.buffer, conn)
    except BrokenPipeError:  # the client is gone: no second error from the final flush
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())

# %% id="try-my-server"
lab.watch(
    lab.program("my_server"),
    [
        lab.initialize("2025-06-18", id=1),
        lab.notification("notifications/initialized"),
        lab.request("tools/call", id="7", params={"name": "get_order", "arguments": {"order_id": 999999}}),
        lab.request("tools/call", id=0, params={"name": "list_orders", "arguments": {"limit": 500}}),
    ],
)
# A new connection, the 2026-07-28 way: a call with the envelope, a ping (removed in 2026-07-28), and
# a call whose envelope names a version your server does not serve.
lab.watch(
    lab.program("my_server"),
    [
        lab.modern("tools/call", id=1, params={"name": "list_orders", "arguments": {"limit": 500}}),
        lab.modern("ping", id=2),
        lab.modern("tools/call", id=3, params={"name": "count_orders"}, protocolVersion="2099-01-01"),
    ],
)

# %% [markdown] id="capstone-terminal"
# ### From a terminal
#
# Your server is a program now, and the checker runs on it as on any other. Open a terminal in
# JupyterLab (File > New > Terminal), go to this stage's folder and run:
#
# ```sh
# cd 05-tools-call
# mcp-lab check -- python3 my_server.py
# ```
#
# The checker judges every era your server speaks: it probes with `server/discover` and runs a
# 2026-07-28 session, and it shakes hands in each legacy revision. The line before the last says
# which eras it found; the last line is the summary. A finished server has no failure and no
# warning; the eight skipped checks are for what this server does not offer (resources, prompts,
# subscriptions, tools that ask the user something first):
#
# ```text
# eras: modern spoken (server/discover answered a result); legacy spoken (initialize got a result); judged: modern, legacy
# checks: 39 pass, 0 fail, 0 warn, 8 skip (0.4 s, 6 server processes)
# ```
#
# `mcp-lab check --era modern -- python3 my_server.py` (or `--era legacy`) judges one era alone.
#
# The MCP Inspector runs the same way. It needs Node.js; `npx` fetches the Inspector the first time
# (version 2.12.0, the one the graded cell runs: without `@2.12.0` npx may pick an old cached copy,
# and without `-y` it stops to ask). Its CLI mode prints JSON:
#
# ```sh
# npx -y @modelcontextprotocol/inspector@2.12.0 --cli python3 my_server.py --method tools/list
# npx -y @modelcontextprotocol/inspector@2.12.0 --cli python3 my_server.py --method tools/call --tool-name count_orders --tool-arg status=paid
# ```
#
# Without `--cli` it opens its web page, where you can call the tools by hand.

# %% id="test_own_server_check" nbgrader={"grade": true, "grade_id": "test_own_server_check", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 3}
# My_server.py imports the standard library only; mcp-lab check on it, both eras: no check fails;
# a call in 2026-07-28 and one in 2025-11-25, resultType in the first only; open_shop's connection
# refuses a write.
# Hidden when graded: calls on other arguments, in 2026-07-28 and three legacy revisions, against
# the reference's answers.
lab.check("test_own_server_check")

# %% id="test_own_server_sdk" nbgrader={"grade": true, "grade_id": "test_own_server_sdk", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# The official MCP SDK's client in its default mode (server/discover, then 2026-07-28) and in its
# legacy mode (initialize): each lists your four tools and calls count_orders and get_order.
# Hidden when graded: other calls.
lab.check("test_own_server_sdk")

# %% id="test_own_server_inspector" nbgrader={"grade": true, "grade_id": "test_own_server_inspector", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 1}
# The MCP Inspector's CLI lists your tools and calls count_orders (Node.js needed).
# Hidden when graded: another call.
lab.check("test_own_server_inspector")

# %% [markdown] id="capstone-recall"
# ### Recall
#
# 1. Which line of `my_server.py` decides whether bad arguments are `isError: true` or -32602, and
#    what does it read to decide? Why not the session alone?
# 2. A tool execution error in 2026-07-28: which `resultType` does its result carry, and which one
#    does the same error carry in a 2025-11-25 session?
# 3. Why does the server read `MCP_LAB_DB` before its default, and why does the Inspector need the
#    default?
# 4. A `print("ready")` at the top of `main`: which check fails, and where should the line go?
# 5. What does your server answer to `{"jsonrpc":"2.0","method":"ping"}`, and why?

# %% [markdown] id="end"
# ## What you have now
#
# An MCP server that a real host can use, of 2026-07-28 or older: it frames, answers, checks every
# request's envelope (or shakes hands with an old client), lists and calls, and it cannot change
# the shop. Stage 06 turns around: you write the client.

# %% [markdown] id="read-next"
# ## Read next in the spec
#
# The pages this stage relies on, in the spec repository (`docs/specification/...`, `schema/...`):
#
# - `docs/specification/2026-07-28/server/tools.mdx`: Calling Tools, Tool Result (Structured
#   Content, Output Schema), Error Handling, Security Considerations.
# - `docs/specification/2026-07-28/basic/index.mdx`: Responses (`resultType`), General fields >
#   `_meta` (Per-response protocol fields: `io.modelcontextprotocol/serverInfo`).
# - `docs/specification/2026-07-28/basic/transports/stdio.mdx`: the opening rules (stdout, stderr),
#   Backward Compatibility (the probe a dual-era client sends first).
# - `docs/specification/2026-07-28/basic/versioning.mdx`: Backward Compatibility with
#   Initialization-Based Versions (how a dual-era server reads a request).
# - `docs/specification/2026-07-28/server/utilities/caching.mdx`: Cacheable Results (the six
#   operations).
# - `schema/2026-07-28/schema.ts`: `CallToolResult`, `CallToolRequestParams`, `Result`.
# - The legacy era: `docs/specification/2025-11-25/server/tools.mdx` and
#   `docs/specification/2025-06-18/server/tools.mdx` (Error Handling, by revision),
#   `schema/2025-11-25/schema.ts` (`CallToolResult.structuredContent`, an object),
#   `docs/specification/2025-11-25/basic/lifecycle.mdx` (Initialization).
