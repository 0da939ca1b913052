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
# # Stage 04: tools/list
#
# A model cannot see your code. Everything it knows about a tool comes from one reply: the
# answer to `tools/list`. The tool's name, its description, and the JSON Schema of its arguments
# are the manual the model reads before it calls anything. A vague description makes a model guess;
# a loose schema lets it send nonsense; a name with a dot in it makes some model APIs refuse the
# whole list.
#
# In this stage you describe the shop's four tools: `count_orders`, `list_orders`, `get_order`
# and `search_products`. The course then serves your descriptions from its server, and runs the
# checker over them.
#
# This stage teaches MCP **2026-07-28**, the current revision: every request carries its envelope
# in `params._meta` (stage 03), every result says `"resultType": "complete"`, and a tool list says
# how long a client may keep it. Where the legacy wire (2025-11-25 and before) differs, a short
# "Before 2026-07-28" note says how.

# %% id="setup" nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false, "task": false}
from grader.course import lab

lab.setup("04")

# %% [markdown] id="capability"
# ## 1. Declaring tools
#
# A server that has tools says so in its capabilities, which a client reads in the
# `server/discover` result (stage 03). The spec (MCP 2026-07-28, Server Features > Tools):
#
# > Servers that support tools **MUST** declare the `tools` capability
#
# `"capabilities": {"tools": {}}` is enough; the course's server also says it will not announce
# changes to the list (`"listChanged": false`). A client that sees no `tools` capability may never
# ask for the list, and a server that declares it must serve `tools/list`.
#
# The list itself, in the course's server (shortened: the real reply holds four tools, and the
# caching hints you meet at the end of section 4):
#
# ```text
# -> {"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}
# <- {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","tools":[{"name":"count_orders","title":"Count orders",...,"annotations":{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false}},...],"ttlMs":300000,"cacheScope":"public",...}}
# ```
#
# *Before 2026-07-28.* The capabilities came in the `initialize` result, and a `tools/list` of an
# initialized session carries no `_meta`. The course's server answers it with the list alone,
# without `resultType` or caching hints (neither exists before 2026-07-28):
#
# ```text
# -> {"jsonrpc":"2.0","id":1,"method":"tools/list"}
# <- {"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"count_orders","title":"Count orders",...,"annotations":{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false}},...]}}
# ```

# %% id="show-reference-tool"
import json

from reference.database import open_readonly
from reference.shop import shop_toolbox

reference_tools = shop_toolbox(open_readonly(lab.shop_db())).list({})["tools"]
print(json.dumps(reference_tools[0], indent=2))

# %% [markdown] id="names"
# ## 2. Names
#
# The spec's rule for names is a SHOULD (MCP 2026-07-28, Server Features > Tools > Tool Names, the
# same in 2025-11-25; 2025-06-18 and older have no naming rule):
#
# > - Tool names **SHOULD** be between 1 and 128 characters in length (inclusive).
# > [...]
# > - The following **SHOULD** be the only allowed characters: uppercase and lowercase ASCII letters (A-Z, a-z), digits
# >   (0-9), underscore (\_), hyphen (-), and dot (.)
# > [...]
# > - Tool names **SHOULD** be unique within a server.
#
# Hosts are stricter. Several model APIs accept only `^[a-zA-Z0-9_-]{1,64}$` for a
# function name, and a host that forwards your list to such an API fails on the first name with a
# dot or a space, taking every other tool down with it. The course uses the strict form:
# letters, digits, `_` and `-`, 1 to 64 characters, and unique within the server.
#
# ## 3. The input schema
#
# Each tool has an `inputSchema`: a JSON Schema that its `arguments` must fit (MCP 2026-07-28,
# Server Features > Tools > Tool):
#
# > - `inputSchema`: JSON Schema defining expected parameters
# > [...]
# >   - Defaults to 2020-12 if no `$schema` field is present
# >   - **MUST** be a valid JSON Schema object (not `null`)
#
# Its `type` is `"object"`; the schema (`schema.ts`, `Tool.inputSchema`) says why: "Tool arguments
# are always JSON objects, so `type: "object"` is required at the root." Then say everything you
# know:
#
# - `properties`: each argument, with its `type` and a `description`;
# - `required`: the arguments that must be there;
# - bounds: `minimum`/`maximum` for numbers, `minLength`/`maxLength` for text;
# - `additionalProperties: false`: an argument the tool does not know is an error, not silently
#   ignored. (A model that misspells `limit` as `limt` learns about it instead of getting 20 rows.)
#
# A tool with no arguments at all has the schema `{"type": "object", "additionalProperties": false}`.
#
# Take care with types. JSON Schema's `"integer"` accepts `7` and `7.0` (a number with no
# fraction) and refuses `"7"` and `true`. The shop's ids are integers from 1; `limit` for
# `list_orders` runs from 1 to 100 (default 20), `offset` from 0; the search `query` has 1 to 100
# characters and its `limit` runs from 1 to 50 (default 10).
#
# The status is a string, and the schema does **not** list the six statuses. A wrong status is
# answered by the tool itself, with a text that lists the valid ones (stage 05): the model reads
# it and tries again.

# %% [markdown] id="output"
# ## 4. The output schema, and annotations
#
# Since revision 2025-06-18 a tool may also declare an `outputSchema`: the shape of the value its
# result carries in `structuredContent` (MCP 2026-07-28, Server Features > Tools > Output Schema):
#
# > If an output schema is provided:
# >
# > - Servers **MUST** provide structured results that conform to this schema.
# > - Clients **SHOULD** validate structured results against this schema.
#
# What that value may be depends on the revision. In 2026-07-28 `structuredContent` "can be any
# JSON value (object, array, string, number, boolean, or null)" (Tools > Structured Content), and
# an `outputSchema` any JSON Schema 2020-12. In 2025-06-18 and 2025-11-25 (`schema.ts`) it is a JSON
# object, and an `outputSchema` has `type: "object"` at its root. The course's server gives the same
# declarations to both eras, so the shop's output schemas are objects: valid in every revision.
#
# Write each from what the tool really returns (run the cell below to see), with `type: "object"`,
# `properties` and `required`. A client that validates results against it (a SHOULD) refuses your
# own results if the schema is too strict; one that says nothing (`{}`) tells the client nothing.
#
# *Annotations* describe what calling a tool does. Every shop tool only reads:
#
# - `readOnlyHint: true`: it changes nothing;
# - `destructiveHint: false`, `idempotentHint: true`: nothing to destroy, and calling twice is the
#   same as calling once;
# - `openWorldHint: false`: it talks to the shop's database only, not to the internet.
#
# Hosts use them to decide what needs the user's confirmation. They are hints (MCP 2026-07-28,
# Server Features > Tools > Tool):
#
# > For trust & safety and security, clients **MUST** consider tool annotations to
# > be untrusted unless they come from trusted servers.
#
# So your schema and your code must still refuse what they should.

# %% id="real-results"
from reference.shop import shop_tools

tools = {tool.name: tool for tool in shop_tools(open_readonly(lab.shop_db()))}
print(tools["count_orders"].run({}))
print(tools["count_orders"].run({"status": "paid"}))
print(json.dumps(tools["list_orders"].run({"limit": 1}), indent=1))
print(json.dumps(tools["search_products"].run({"query": "mug", "limit": 1}), indent=1))

# %% [markdown] id="task"
# ### Your turn: the four tools
#
# Fill in the module `tool_list`. Each `..._tool()` function returns one tool's description: a
# dict with `name`, `title`, `description`, `inputSchema`, `outputSchema` and `annotations`. Write
# each description as the manual a model reads: what the tool does, when to use it, what it
# returns, and what an error means. Give every argument a `description` too.
#
# Much of this is the course's contract for the shop, not the spec's rule: in MCP 2026-07-28
# `title`, `description` and `annotations` are optional, and a schema looser than the tool breaks
# no MUST (only an invalid one does). The checks grade it as the shop's contract, and their
# failures say so.
#
# Then `valid_tool_name(name)` (the strict rule above) and `list_tools(params)`, the handler of
# `tools/list`. The list has a single page: a `cursor` is an opaque string the server handed out
# in `nextCursor`, and this server hands none out. MCP 2026-07-28 (Server > Utilities >
# Pagination, Error Handling): "Invalid cursors **SHOULD** result in an error with code -32602
# (Invalid params)." A SHOULD, which the course holds you to: a `cursor` that is not a string is
# refused with -32602 (`RpcError(INVALID_PARAMS, ...)`), and so is any string cursor.
#
# ### How long a client may keep the list (2026-07-28)
#
# A client asks for the tool list often: before every conversation, sometimes before every turn.
# MCP 2026-07-28 lets it keep the answer (Server > Utilities > Caching):
#
# > Servers MUST include caching hints on results with `resultType: "complete"` returned by
# > the following operations:
# >
# > - `server/discover`
# > - `tools/list`
# > - `prompts/list`
# > - `resources/list`
# > - `resources/templates/list`
# > - `resources/read`
#
# Two hints: `ttlMs`, how many milliseconds the client may consider the list fresh (an integer, 0
# or more: "Servers **MUST** provide a `ttlMs` value that is `>= 0`"), and `cacheScope`,
# `"public"` when the answer is the same for every user (the shop's tools are) or `"private"`. The
# list should also come in the same order every time, so that a cached copy and a fresh one
# compare equal (Server Features > Tools > Capabilities):
#
# > Servers **SHOULD** return tools in a deterministic order (i.e., the same ordering across
# > requests when the underlying set of tools has not changed).
#
# So when the request is a 2026-07-28 one (its `params._meta` carries
# `"io.modelcontextprotocol/protocolVersion"`), `list_tools` adds `"ttlMs": TTL_MS` and
# `"cacheScope": "public"` to its result. The course's server adds `"resultType": "complete"`
# around it, as your stage 03 server did.
#
# *Before 2026-07-28* there were no caching hints, and a legacy client reads none. The 2025-11-25
# schema lets a result carry members it does not name (`Result` has `[key: string]: unknown`), so
# hints on a legacy result break no rule of that revision; they only mean nothing there. The
# course's server sends a legacy request the list alone, and so does the solution; the checks do
# not take points for hints on a legacy list.

# %% id="tool_list" nbgrader={"grade": false, "grade_id": "tool_list", "locked": false, "schema_version": 3, "solution": true, "task": false}
%%module tool_list
import re

from reference.errors import INVALID_PARAMS, RpcError

READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}
TTL_MS = 300000  # 2026-07-28: how long a client may keep the list (five minutes)
STATUSES = "pending, paid, shipped, delivered, cancelled, refunded"


def valid_tool_name(name):
    """1 to 64 of A-Z, a-z, 0-9, _ and -."""
    ### BEGIN SOLUTION
    return isinstance(name, str) and re.fullmatch(r"[A-Za-z0-9_-]{1,64}", name) is not None
    ### END SOLUTION


def count_orders_tool():
    ### BEGIN SOLUTION
    return {
        "name": "count_orders",
        "title": "Count orders",
        "description": "Count the shop's orders, all of them or only those with one status. Use it for "
        "questions such as 'how many orders are still pending?'. Returns {\"status\": ..., \"count\": N}. "
        f"An unknown status is reported as an error that lists the valid ones: {STATUSES}.",
        "inputSchema": {
            "type": "object",
            "properties": {"status": {"type": "string", "description": f"Only orders with this status: {STATUSES}."}},
            "additionalProperties": False,
        },
        "outputSchema": {
            "type": "object",
            "properties": {"status": {"type": "string"}, "count": {"type": "integer", "minimum": 0}},
            "required": ["count"],
            "additionalProperties": False,
        },
        "annotations": dict(READ_ONLY),
    }
    ### END SOLUTION


ORDER = {
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "status": {"type": "string"},
        "created_at": {"type": "string"},
        "customer_id": {"type": "integer"},
        "customer": {"type": "string"},
        "total_cents": {"type": "integer"},
    },
    "required": ["id", "status", "created_at", "customer_id", "customer", "total_cents"],
}


def list_orders_tool():
    ### BEGIN SOLUTION
    return {
        "name": "list_orders",
        "title": "List orders",
        "description": "List orders, oldest first, optionally only one status or one customer's. Each order "
        "has its id, status, created_at (UTC), customer_id, customer name and total_cents (money in "
        "integer cents). Returns {\"total\": N, \"offset\": N, \"orders\": [...]}; page through long lists "
        "with offset. Use get_order for an order's line items.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "status": {"type": "string", "description": f"Only orders with this status: {STATUSES}."},
                "customer_id": {"type": "integer", "minimum": 1, "description": "Only this customer's orders."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20,
                          "description": "At most this many orders (1-100, default 20)."},
                "offset": {"type": "integer", "minimum": 0, "default": 0,
                           "description": "Skip this many orders first (default 0)."},
            },
            "additionalProperties": False,
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "total": {"type": "integer", "minimum": 0},
                "offset": {"type": "integer", "minimum": 0},
                "orders": {"type": "array", "items": ORDER},
            },
            "required": ["total", "offset", "orders"],
        },
        "annotations": dict(READ_ONLY),
    }
    ### END SOLUTION


def get_order_tool():
    ### BEGIN SOLUTION
    return {
        "name": "get_order",
        "title": "Get one order",
        "description": "Get one order by its numeric id: status, created_at (UTC), the customer's name and "
        "email, the line items (product, quantity, unit price in cents) and total_cents. An id that "
        "does not exist is reported as an error that says which ids exist.",
        "inputSchema": {
            "type": "object",
            "properties": {"order_id": {"type": "integer", "minimum": 1, "description": "The order's id."}},
            "required": ["order_id"],
            "additionalProperties": False,
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                **ORDER["properties"],
                "email": {"type": "string"},
                "items": {"type": "array", "items": {"type": "object"}},
            },
            "required": [*ORDER["required"], "email", "items"],
        },
        "annotations": dict(READ_ONLY),
    }
    ### END SOLUTION


def search_products_tool():
    ### BEGIN SOLUTION
    return {
        "name": "search_products",
        "title": "Search products",
        "description": "Find products whose name, category or SKU contains the query text. Returns "
        "{\"query\": ..., \"products\": [...]} with id, sku, name, category, price_cents and stock. An "
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
        "outputSchema": {
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "products": {"type": "array", "items": {"type": "object", "required": ["id", "sku", "name"]}},
            },
            "required": ["query", "products"],
        },
        "annotations": dict(READ_ONLY),
    }
    ### END SOLUTION


def all_tools():
    return [count_orders_tool(), list_orders_tool(), get_order_tool(), search_products_tool()]


def list_tools(params):
    """The tools/list handler: one page holds every tool."""
    ### BEGIN SOLUTION
    cursor = params.get("cursor")
    if cursor is not None:
        if not isinstance(cursor, str):
            raise RpcError(INVALID_PARAMS, "cursor must be a string (an opaque token from nextCursor)")
        raise RpcError(INVALID_PARAMS, "unknown cursor: tools/list has a single page")
    result = {"tools": all_tools()}
    meta = params.get("_meta")
    if isinstance(meta, dict) and "io.modelcontextprotocol/protocolVersion" in meta:
        result["ttlMs"] = TTL_MS
        result["cacheScope"] = "public"
    return result
    ### END SOLUTION


# %% id="test_names" nbgrader={"grade": true, "grade_id": "test_names", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 1}
# Valid_tool_name on six good names and nine bad ones.
# Hidden when graded: the same checks on other values.
lab.check("test_names")

# %% id="test_count_orders" nbgrader={"grade": true, "grade_id": "test_count_orders", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# Count_orders_tool(): name, description, both schemas (on fixed arguments), annotations.
# Hidden when graded: the same checks on other values.
lab.check("test_count_orders")

# %% id="test_list_orders" nbgrader={"grade": true, "grade_id": "test_list_orders", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 3}
# List_orders_tool(): name, description, both schemas (on fixed arguments), annotations.
# Hidden when graded: the same checks on other values.
lab.check("test_list_orders")

# %% id="test_get_order" nbgrader={"grade": true, "grade_id": "test_get_order", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# Get_order_tool(): name, description, both schemas (on fixed arguments), annotations.
# Hidden when graded: the same checks on other values.
lab.check("test_get_order")

# %% id="test_search_products" nbgrader={"grade": true, "grade_id": "test_search_products", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# Search_products_tool(): name, description, both schemas (on fixed arguments), annotations.
# Hidden when graded: the same checks on other values.
lab.check("test_search_products")

# %% id="test_list_tools" nbgrader={"grade": true, "grade_id": "test_list_tools", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# List_tools({}) is {"tools": all_tools()}, with no nextCursor; cursors refused.
lab.check("test_list_tools")

# %% id="test_caching" nbgrader={"grade": true, "grade_id": "test_caching", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# List_tools with a 2026-07-28 _meta: ttlMs (an integer, 0 or more) and cacheScope, the same list,
# in the same order every time.
lab.check("test_caching")

# %% [markdown] id="process"
# ## 5. Your list, served and checked
#
# The course's server now answers `tools/list` with your `list_tools`, and the checker
# `mcp-lab check` examines the result as it would any server's: the checks `tools-list` (the
# shape, every schema a valid JSON Schema of an object) and `tool-names`.

# %% id="test_served" nbgrader={"grade": true, "grade_id": "test_served", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# Your list in the course's server: tools/list, then mcp-lab check's tools checks.
lab.check("test_served")

# %% [markdown] id="end"
# ## What you have now
#
# A list a model can read and a host can trust. Stage 05 makes the tools do what their
# descriptions promise: answers from the shop, and the two kinds of error.

# %% [markdown] id="read-next"
# ## Read next in the spec
#
# The pages this stage relies on, in the spec repository (`docs/specification/...`, `schema/...`):
#
# - `docs/specification/2026-07-28/server/tools.mdx`: Capabilities (the `tools` capability,
#   deterministic order), Listing Tools, Data Types > Tool (`inputSchema`, `outputSchema`,
#   annotations), Tool Names, Output Schema, Structured Content.
# - `docs/specification/2026-07-28/server/utilities/caching.mdx`: Cacheable Results, Cacheable Model
#   (`ttlMs`, `cacheScope`).
# - `docs/specification/2026-07-28/server/utilities/pagination.mdx`: Error Handling (invalid
#   cursors).
# - `schema/2026-07-28/schema.ts`: `Tool`, `ListToolsResult`, `CacheableResult`, `ToolAnnotations`.
# - The legacy era: `docs/specification/2025-11-25/server/tools.mdx` (Tool Names, Output Schema) and
#   `schema/2025-11-25/schema.ts` (`Result`, `Tool.outputSchema`,
#   `CallToolResult.structuredContent`).
