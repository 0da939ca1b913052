Stage 05 of MCP Wire Lab, as text (see grader/course/notebook.py for the cell syntax).

# %% [markdown] id=title
# # Stage 05: tools/call
#
# Now the tools do their work. A client calls one with `tools/call`, the name and the arguments;
# the server runs it against the shop and answers with a result the model can read. Or it does not:
# the tool may fail, or the request itself may be wrong, and those are two different kinds of
# error that end up in two different places.
#
# At the end of this stage your server is complete: it passes `mcp-lab check` with no failure, the
# official SDK client uses it, and you can open it in the MCP Inspector.

# %% setup id=setup
from grader.course import lab

lab.setup("05")

# %% [markdown] id=result
# ## 1. A result
#
# A `tools/call` result holds `content`: a list of typed blocks, here one text block. Since
# 2025-06-18 a tool that declared an `outputSchema` (stage 04) also sends the same data as a JSON
# object in `structuredContent`; the spec (MCP 2025-11-25, Tools):
#
# > For backwards compatibility, a tool that returns structured content SHOULD also return the
# > serialized JSON in a TextContent block.
#
# `isError: false` says the tool ran and succeeded.
#
# ```text
# -> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"lesson","version":"1.0"}}}
# <- {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}
# -> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"count_orders","arguments":{"status":"paid"}}}
# <- {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{\"status\": \"paid\", \"count\": 341}"}],"structuredContent":{"status":"paid","count":341},"isError":false}}
# ```
#
# A client that negotiated 2025-03-26 or 2024-11-05 knows nothing of `structuredContent`: it gets
# the text block alone.

# %% [markdown] id=two-errors
# ## 2. Two kinds of error
#
# The spec names them:
#
# > 1. **Protocol Errors**: Standard JSON-RPC errors for issues like: Unknown tools, Malformed
# >    requests (requests that fail to satisfy CallToolRequest schema), Server errors
# > 2. **Tool Execution Errors**: Reported in tool results with `isError: true`: API failures,
# >    Input validation errors (e.g., date in wrong format, value out of range), Business logic errors
#
# and says why they differ:
#
# > **Tool Execution Errors** contain actionable feedback that language models can use to
# > self-correct and retry with adjusted parameters.
#
# A *protocol error* goes to the host; the model usually never sees it. A *tool execution error*
# is a normal result that the model reads. So a tool execution error's text says what to do:
#
# ```text
# -> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"count_orders","arguments":{"status":"lost"}}}
# <- {"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"unknown status 'lost'. Valid statuses: pending, paid, shipped, delivered, cancelled, refunded."}],"isError":true}}
# -> {"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"refund_order","arguments":{"order_id":7}}}
# <- {"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"Invalid params: unknown tool 'refund_order'; tools/list shows count_orders, list_orders, get_order, search_products"}}
# ```
#
# Which is which, for the shop:
#
# | what went wrong | kind | answer |
# |---|---|---|
# | a tool name that is not in `tools/list` | protocol | -32602 |
# | `arguments` that is not an object (`[]`, `"x"`) | protocol (a malformed request) | -32602 |
# | arguments that break the tool's `inputSchema` (`"limit": 500`) | tool execution, from 2025-11-25 | `isError: true`, text naming the problem |
# | the same, in a session that negotiated 2025-06-18 or older | protocol | -32602 |
# | an unknown status, an order id that does not exist | tool execution | `isError: true`, text saying what is valid |
# | a bug in the tool (an exception you did not expect) | tool execution | `isError: true`, a short text; details to stderr |
#
# The row about the inputSchema changed in 2025-11-25: earlier revisions listed invalid arguments
# among the protocol errors. A server that negotiates a revision answers by that revision's rules.
# And no tool ever has a structuredContent in an error result: there is no data to conform.

# %% [markdown] id=readonly
# ## 3. Never written
#
# The server opens the shop with the read-only URI of stage 00 and runs parameterised queries
# only. The tests below also prove it: they hash the database file, run a session of calls, some
# of them with SQL in their arguments, and hash it again.

# %% [markdown] id=task
# ### Your turn: `shop_server.py`
#
# Write the four tools and the `tools/call` handler. Everything else comes from the course's
# finished server (stages 01 to 04): `main()` at the bottom starts it with your `call_tool` in it.
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
# - `call_tool(conn, schemas, params, version)` is the handler: `schemas` maps each tool name to its
#   inputSchema; `problems(schema, arguments)` (from the course's `reference.schema`) lists every way
#   the arguments break it; `version` is the negotiated revision. Return the result dict, or raise
#   `RpcError(INVALID_PARAMS, ...)` for a protocol error.

# %% solution id=shop_server
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


def call_tool(conn, schemas, params, version):
    """The tools/call handler."""
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


def main():
    server = Server(None)  # the course's server (framing, messages, lifecycle) with no tools of its own
    conn = open_readonly(ensure_default())
    schemas = {tool["name"]: tool["inputSchema"] for tool in catalog.TOOLS}  # stage 04's declarations
    methods = server.dispatcher.methods
    methods["tools/list"] = lambda params: catalog.listing(params, server.session.structured_output)
    methods["tools/call"] = lambda params: call_tool(conn, schemas, params, server.session.version)
    return server.serve(sys.stdin.buffer, sys.stdout.buffer)


if __name__ == "__main__":
    sys.exit(main())

# %% id=try-it
conn = open_readonly(ensure_default())
print(count_orders(conn, {"status": "paid"}))
print(get_order(conn, {"order_id": 7})["total_cents"])

# %% test id=test_count_orders points=2
# Count_orders(conn, args) against the shop: all, paid, an unknown status, a status that is SQL.
# Hidden when graded: the same checks on other values.
lab.check("test_count_orders")

# %% test id=test_list_orders points=3
# List_orders(conn, args) against the shop: filters, a page, a customer with no orders, an unknown
# status.
# Hidden when graded: the same checks on other values.
lab.check("test_list_orders")

# %% test id=test_get_order points=2
# Get_order(conn, args) against the shop: the first and the last order, one that does not exist.
# Hidden when graded: the same checks on other values.
lab.check("test_get_order")

# %% test id=test_search_products points=2
# Search_products(conn, args) against the shop: mug, "100%", a non-ASCII query, no match.
# Hidden when graded: the same checks on other values.
lab.check("test_search_products")

# %% test id=test_call_tool points=4
# Call_tool: protocol errors, tool execution errors, structuredContent by revision.
lab.check("test_call_tool")

# %% [markdown] id=whole
# ## 4. The whole server
#
# `shop_server.py` is now a complete MCP server. The next tests run it as a process: a session of
# calls that must leave the database untouched, then the official SDK client, then the checker with
# every one of its checks. The same checker runs from a terminal:
#
# ```sh
# .venv/bin/mcp-lab check -- .venv/bin/python workspace/05-tools-call/shop_server.py
# ```

# %% test id=test_read_only points=2
# Your server: calls with SQL in their arguments leave the database byte-identical.
lab.check("test_read_only")

# %% test id=test_sdk_client points=2
# The official MCP SDK's client lists your tools and calls count_orders.
lab.check("test_sdk_client")

# %% test id=test_mcp_lab_check points=3
# Mcp-lab check on your server: no check fails.
lab.check("test_mcp_lab_check")

# %% [markdown] id=inspector
# ## 5. In the MCP Inspector
#
# The MCP Inspector is the protocol's own debugging UI: it starts a server, shows its tools, and
# lets you call them by hand. It runs with Node.js (`npx` downloads it on first use). The cell
# below prints the one command that opens your server in it:

# %% id=inspector-command
print(lab.inspector_command("shop_server"))

# %% [markdown] id=end
# ## What you have now
#
# An MCP server that a real host can use: it frames, answers, negotiates, lists and calls, and
# it cannot change the shop. Stage 06 turns around: you write the client.
