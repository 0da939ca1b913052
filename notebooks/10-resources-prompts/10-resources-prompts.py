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
# # Stage 10: resources and prompts
#
# Tools are one of three things a server can offer. A tool is the model's choice: the model reads
# the list and decides to call one. MCP has two more, chosen by someone else:
#
# - a **resource** is data a host reads by its URI, chosen by the application (or its user): the
#   shop's schema, one order, one product;
# - a **prompt** is a ready-made message a user picks, often as a slash command, filled in with
#   arguments: "summarise order 7".
#
# In this stage you serve both from the shop: the schema, every order and every product as
# resources, and a prompt that embeds an order for a model to summarise. The course's server then
# serves what you wrote, and the checker and the official SDK client use it. The wire is MCP
# 2026-07-28's; short notes say where the legacy era (2025-11-25 and before) differs.

# %% id="setup" nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false, "task": false}
from grader.course import lab

lab.setup("10")

# %% [markdown] id="who-chooses"
# ## 1. Who chooses
#
# The spec (MCP 2026-07-28) says who is in control of each. Of resources (Resources > User
# Interaction Model):
#
# > Resources in MCP are designed to be **application-driven**, with host applications
# > determining how to incorporate context based on their needs.
#
# and of prompts (Prompts > User Interaction Model):
#
# > Prompts are designed to be **user-controlled**, meaning they are exposed from servers to
# > clients with the intention of the user being able to explicitly select them for use.
#
# That decides what a server writes for each. A tool's description is written for a model. A
# resource's name and title are written for a person browsing a list of attachments, and a
# prompt's for a person choosing a command.
#
# A server says what it offers in its answer to `server/discover` (stage 03). Each feature has its
# MUST:
#
# > Servers that support resources **MUST** declare the `resources` capability
#
# > Servers that support prompts **MUST** declare the `prompts` capability in their
# > `DiscoverResult`
#
# The course's server declares all three. `listChanged: false` says it will send no notification
# when a list changes (the shop's lists are fixed); `subscribe: true` says it supports update
# notifications for resources a client watches (through `subscriptions/listen`, which this stage
# does not need):
#
# ```text
# -> {"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}
# <- {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":false},"resources":{"subscribe":true,"listChanged":false},"prompts":{"listChanged":false}},...}}
# ```
#
# *Before 2026-07-28:* the capabilities came in the `initialize` result, and there the course's
# server says `subscribe: false` (it does not serve the legacy `resources/subscribe`):
#
# ```text
# -> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"lesson","version":"1.0"}}}
# <- {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":false},"resources":{"subscribe":false,"listChanged":false},"prompts":{"listChanged":false}},...}}
# ```

# %% [markdown] id="resources"
# ## 2. Resources and templates
#
# A resource is named by a URI. The shop has one fixed resource, its schema, listed by
# `resources/list` with the type of its text:
#
# ```text
# -> {"jsonrpc":"2.0","id":2,"method":"resources/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}
# <- {"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","resources":[{"uri":"shop://schema","name":"schema","title":"The shop's database schema","description":"The SQL that made the shop's tables (customers, products, orders, order_items) and indexes: what every tool and resource reads. Money is in integer cents.","mimeType":"application/sql"}],"ttlMs":300000,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{...}}}}
# ```
#
# Around the list, the result carries three more members:
#
# - `"resultType": "complete"`: every 2026-07-28 result says what kind it is (Base Protocol >
#   Messages > Responses > ResultType: the `result` **MUST** include a `resultType` field);
#   `complete` is a final answer.
# - `ttlMs` and `cacheScope`: how long a client may keep the answer, and whether it may share it
#   between users. The spec (Server Utilities > Caching > Cacheable Results):
#
#   > Servers MUST include caching hints on results with `resultType: "complete"` returned by
#   > the following operations:
#
#   and the list names six: `server/discover`, `tools/list`, `prompts/list`, `resources/list`,
#   `resources/templates/list` and `resources/read`. So of this stage's results, the three lists
#   and `resources/read` carry them; `prompts/get` is not in the list, and carries none.
#   The spec says when `"public"` fits (Caching > Cache Scope Field > Choosing a Cache Scope):
#   for "lists of tools, prompts, and resource templates when they are identical for all users",
#   and `"private"` for "`resources/read` results that depend on the authenticated user". The
#   shop is the same for everyone, so the course's server chooses `"public"`, and five minutes
#   for its lists.
# - `_meta` with the server's name and version, `io.modelcontextprotocol/serverInfo`: servers
#   **SHOULD** put it in every result's `_meta` (Base Protocol > General fields > `_meta`,
#   Per-response protocol fields).
#
# In stage 04 your `list_tools` added the caching hints itself. Here the lists and
# `read_resource` are yours or given, and return only the body (`{"resources": [...]}`,
# `{"contents": [...]}`): the course's server adds these members to a 2026-07-28 answer.
#
# Three thousand orders are not listed one by one. A server lists a *template* instead, a URI with
# a gap in it, in `resources/templates/list`:
#
# ```text
# -> {"jsonrpc":"2.0","id":3,"method":"resources/templates/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}
# <- {"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","resourceTemplates":[{"uriTemplate":"shop://orders/{order_id}","name":"order",...},{"uriTemplate":"shop://products/{product_id}","name":"product",...}],"ttlMs":300000,"cacheScope":"public",...}}
# ```
#
# *Before 2026-07-28:* the same lists, without `resultType`, `ttlMs`, `cacheScope` and `_meta`.
#
# The spec (Resources > Resource Templates):
#
# > Resource templates allow servers to expose parameterized resources using
# > [URI templates](https://datatracker.ietf.org/doc/html/rfc6570).
#
# The shop's templates use the simplest level of RFC 6570, level 1: `{order_id}` stands for one
# value, percent-encoded. So a value is one path segment made of letters, digits, `-`, `.`, `_`,
# `~` and `%XX` escapes; it never holds a `/`, a `?` or a space. The client fills the gap
# (`shop://orders/7`) and the server, reading the URI, finds the value again: that is *matching*.
#
# | template | URI | match |
# |---|---|---|
# | `shop://orders/{order_id}` | `shop://orders/7` | `{"order_id": "7"}` |
# | `shop://orders/{order_id}` | `shop://orders/%37` | `{"order_id": "7"}` (decoded) |
# | `shop://orders/{order_id}` | `shop://orders/7/items` | `None`: two segments |
# | `shop://orders/{order_id}` | `shop://orders/` | `None`: no value |
# | `shop://orders/{order_id}` | `shop://products/7` | `None`: another template |
#
# Matching knows nothing about orders: `shop://orders/abc` matches, with the value `"abc"`.
# Whether an order `abc` exists is the next step's question.

# %% [markdown] id="reading"
# ## 3. Reading, and the error for a URI that names nothing
#
# `resources/read` gets a URI and answers with `contents`: a list of items, each with the `uri`,
# its `mimeType` and the `text` (or a base64 `blob` for bytes). An order reads as JSON, the same
# object the `get_order` tool answers (stage 05):
#
# ```text
# -> {"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"shop://orders/7","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}
# <- {"jsonrpc":"2.0","id":4,"result":{"resultType":"complete","contents":[{"uri":"shop://orders/7","mimeType":"application/json","text":"{\"id\": 7, \"status\": \"delivered\", ..."}],"ttlMs":...,"cacheScope":"public",...}}
# ```
#
# `resources/read` is one of the six cacheable operations: its complete result carries `ttlMs`
# and `cacheScope` as the lists do (the spec's cache key is the method and the `uri`). How long is
# the server's choice: the course's server says five minutes on the course's own database, and 0
# ("immediately stale") on a copy of the shop, which a write tool (stage 11) may change at any
# moment.
#
# A URI that names nothing is an error. The spec (Resources > Error Handling):
#
# > If the requested resource does not exist, servers **MUST** return a JSON-RPC error with
# > code `-32602` (Invalid Params).
#
# > Servers **MUST NOT** return an empty `contents` array for a non-existent resource.
#
# The spec gives the reason: an empty array "could mean the resource exists but has no content,
# or that it doesn't exist at all". The spec's example error sends the URI back in `data`; the
# course's server does the same, and the course requires it of you: it is how a client tells "this
# URI names nothing" (`data.uri`) from a request that is malformed (no `data`). The spec itself
# asks no `data` (its example is an example):
#
# ```text
# -> {"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"shop://orders/0","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}
# <- {"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"Invalid params: resource not found: shop://orders/0","data":{"uri":"shop://orders/0"}}}
# -> {"jsonrpc":"2.0","id":6,"method":"resources/read","params":{"uri":"shop://orders/007","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}
# <- {"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"Invalid params: resource not found: shop://orders/007","data":{"uri":"shop://orders/007"}}}
# -> {"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}
# <- {"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"Invalid params: resources/read needs a \"uri\" string, got null"}}
# ```
#
# *Before 2026-07-28:* an unknown resource was `-32002` ("Resource not found"; 2025-11-25,
# Resources > Error Handling: servers **SHOULD** return it), and the example error had the same
# `data`. 2026-07-28 changed the code (its changelog, minor change 6: "to align with JSON-RPC
# specification"): implementations of 2026-07-28 **MUST NOT** emit -32002 (Base Protocol >
# Error Codes), and clients **SHOULD** still accept it from servers of earlier versions. A
# legacy session with the course's server:
#
# ```text
# -> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"lesson","version":"1.0"}}}
# <- {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25",...}}
# -> {"jsonrpc":"2.0","method":"notifications/initialized"}
# -> {"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"shop://orders/0"}}
# <- {"jsonrpc":"2.0","id":5,"error":{"code":-32002,"message":"Resource not found","data":{"uri":"shop://orders/0"}}}
# ```
#
# **One handler, both eras.** Which code a request gets depends on its era: a request with the
# 2026-07-28 `_meta` is judged by 2026-07-28's rule (-32602, a MUST), a request in a session that
# began with `initialize` by its revision's (-32002 at 2025-11-25, a SHOULD the course holds you
# to). Your `read_resource` does not know which era a request speaks, so it does not pick the code: it raises `RpcError(RESOURCE_NOT_FOUND, data={"uri": uri})`, the
# course's name for "not found", and the course's server writes it on the wire as the request's
# era wants it: `-32602` with the same `data` for a 2026-07-28 request, `-32002` for a legacy one.
# A plain `RpcError(INVALID_PARAMS, ...)` would be right on the 2026-07-28 wire only: the server
# could not tell it from a malformed request, and a legacy client would get -32602.
#
# Why is `shop://orders/007` not order 7? The spec (Resources > Security Considerations):
#
# > Servers **MUST** validate all resource URIs
#
# The server reads only the URIs it hands out itself: `expand(ORDER_TEMPLATE, order_id=7)` gives
# `shop://orders/7`, and nothing else names order 7. `007`, `%37` and `+7` name nothing, so one
# order has one URI and a client can compare URIs as text. A request with no `uri` string at all
# is malformed: `RpcError(INVALID_PARAMS, ...)`, -32602 with no `data`, in both eras.

# %% [markdown] id="task-resources"
# ### Your turn: `shop_resources.py` (4 points)
#
# The declarations, the lists and the helpers are given: `schema_sql(conn)` (the SQL of the shop's
# tables), `order(conn, order_id)` and `product(conn, product_id)` (the object, or `None` when
# there is none), `expand(template, **values)` and `contents(uri, mime_type, text)`. Write:
#
# - `match(template, uri)`: the dict of the template's variables that `uri` fills, each value
#   percent-decoded (`urllib.parse.unquote`), or `None` when `uri` does not fit. A regular
#   expression built from the template does it: `re.escape` for the fixed parts, a named group of
#   `[A-Za-z0-9._~%-]+` for each `{name}`, and `re.fullmatch`.
# - `read_resource(conn, params)`: the `resources/read` handler. The schema, an order or a product,
#   as `contents(...)`; an order or a product as JSON text (`json.dumps(value, ensure_ascii=False)`,
#   the tools' text). A missing `uri` string is `RpcError(INVALID_PARAMS, ...)`; anything that is
#   not a resource of the shop, in the form the server writes, is
#   `RpcError(RESOURCE_NOT_FOUND, data={"uri": uri})` (never an empty `contents`): the server makes
#   it -32602 or -32002 by the request's era.

# %% id="shop_resources" nbgrader={"grade": false, "grade_id": "shop_resources", "locked": false, "schema_version": 3, "solution": true, "task": false}
%%module shop_resources
import json
import re
from urllib.parse import quote, unquote

from reference.errors import INVALID_PARAMS, ErrorCode, RpcError
from reference.shop import answers
from reference.tools import ToolError

# "Not found", as the handler says it: the course's server writes it as -32602 on a 2026-07-28 request and
# as -32002 (2025-11-25's code, Resources > Error Handling) on a legacy one.
RESOURCE_NOT_FOUND = ErrorCode(-32002, "Resource not found", "resources/read of a URI the server does not have")

SCHEMA_URI = "shop://schema"
ORDER_TEMPLATE = "shop://orders/{order_id}"
PRODUCT_TEMPLATE = "shop://products/{product_id}"
JSON_TYPE = "application/json"
SQL_TYPE = "application/sql"

RESOURCES = [
    {
        "uri": SCHEMA_URI,
        "name": "schema",
        "title": "The shop's database schema",
        "description": "The SQL that made the shop's tables (customers, products, orders, order_items) "
        "and indexes: what every tool and resource reads. Money is in integer cents.",
        "mimeType": SQL_TYPE,
    }
]
TEMPLATES = [
    {
        "uriTemplate": ORDER_TEMPLATE,
        "name": "order",
        "title": "One order",
        "description": "One order by its numeric id, as JSON: status, created_at (UTC), the customer's name "
        "and email, the line items and total_cents (the same answer as the get_order tool).",
        "mimeType": JSON_TYPE,
    },
    {
        "uriTemplate": PRODUCT_TEMPLATE,
        "name": "product",
        "title": "One product",
        "description": "One product by its numeric id, as JSON: sku, name, category, price_cents and stock.",
        "mimeType": JSON_TYPE,
    },
]


def one_page(key, items, params):
    """A list that fits on one page (stage 04): no nextCursor, so every cursor is refused."""
    if params.get("cursor") is not None:
        raise RpcError(INVALID_PARAMS, "unknown cursor: this list has a single page")
    return {key: items}


def list_resources(params):
    return one_page("resources", RESOURCES, params)


def list_templates(params):
    return one_page("resourceTemplates", TEMPLATES, params)


def schema_sql(conn):
    """The SQL that made the shop's tables and indexes, one statement after another."""
    rows = conn.execute(
        "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY rowid"
    )
    return "".join(f"{sql};\n" for (sql,) in rows)


def order(conn, order_id):
    """One order as the get_order tool answers it (stage 05), or None when there is no such order."""
    try:
        return answers(conn)["get_order"]({"order_id": order_id})
    except ToolError:
        return None


def product(conn, product_id):
    """One product as a dict, or None when there is no such product."""
    cursor = conn.execute(
        "SELECT id, sku, name, category, price_cents, stock FROM products WHERE id = ?", (product_id,)
    )
    row = cursor.fetchone()
    return None if row is None else dict(zip([column[0] for column in cursor.description], row))


def expand(template, **values):
    """A level-1 template with its variables filled in, each value percent-encoded."""
    return re.sub(r"\{(\w+)\}", lambda m: quote(str(values[m.group(1)]), safe=""), template)


def contents(uri, mime_type, text):
    """A resources/read result with one text item."""
    return {"contents": [{"uri": uri, "mimeType": mime_type, "text": text}]}


def match(template, uri):
    """The values of the template's variables that uri fills ({"order_id": "7"}), or None."""
    ### BEGIN SOLUTION
    pattern = ""
    for i, part in enumerate(re.split(r"\{(\w+)\}", template)):
        pattern += f"(?P<{part}>[A-Za-z0-9._~%-]+)" if i % 2 else re.escape(part)
    found = re.fullmatch(pattern, uri)
    if found is None:
        return None
    return {name: unquote(value) for name, value in found.groupdict().items()}
    ### END SOLUTION


def read_resource(conn, params):
    """The resources/read handler: the schema, an order or a product; RESOURCE_NOT_FOUND for anything else."""
    ### BEGIN SOLUTION
    uri = params.get("uri")
    if not isinstance(uri, str):
        raise RpcError(INVALID_PARAMS, 'resources/read needs a "uri" string')
    if uri == SCHEMA_URI:
        return contents(uri, SQL_TYPE, schema_sql(conn))
    for template, read in ((ORDER_TEMPLATE, order), (PRODUCT_TEMPLATE, product)):
        found = match(template, uri)
        if found is not None:
            (value,) = found.values()
            # Only the form this server writes itself: shop://orders/7, never 007, %37 or +7.
            if re.fullmatch(r"[1-9][0-9]{0,9}", value) and expand(template, **found) == uri:
                answer = read(conn, int(value))
                if answer is not None:
                    return contents(uri, JSON_TYPE, json.dumps(answer, ensure_ascii=False))
    raise RpcError(RESOURCE_NOT_FOUND, data={"uri": uri})
    ### END SOLUTION


# %% id="try-resources"
from reference.database import open_readonly

conn = open_readonly(lab.shop_db())
print(match(ORDER_TEMPLATE, "shop://orders/7"), match(ORDER_TEMPLATE, "shop://orders/7/items"))
print(read_resource(conn, {"uri": "shop://products/3"}))
try:
    read_resource(conn, {"uri": "shop://orders/007"})
except RpcError as error:
    print(error.to_error())

# %% [markdown] id="try-resources-expected"
# The cell prints `{'order_id': '7'} None`, then product 3 as one text item (a Nordic mug, 19449
# cents), then `{'code': -32002, 'message': 'Resource not found', 'data': {'uri':
# 'shop://orders/007'}}`: your handler's "not found", which the server sends as -32602 with the same
# `data` to a 2026-07-28 client.

# %% id="test_match" nbgrader={"grade": true, "grade_id": "test_match", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 1}
# Match() on twelve template and URI pairs: a value is one path segment, percent-decoded.
# Hidden when graded: the same checks on other values.
lab.check("test_match")

# %% id="test_read_resource" nbgrader={"grade": true, "grade_id": "test_read_resource", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 3}
# Read_resource(): the schema, orders and products as the shop holds them; RESOURCE_NOT_FOUND with
# the URI for URIs that name nothing (007, %37, another scheme, ...); INVALID_PARAMS without a uri.
# Hidden when graded: the same checks on other values.
lab.check("test_read_resource")

# %% [markdown] id="prompts"
# ## 4. Prompts
#
# A prompt is listed with its arguments, each with a name, a description and whether it is
# required. The shop has two: `summarise_order(order_id)` and `status_report(status?)`. The list
# is cacheable too:
#
# ```text
# -> {"jsonrpc":"2.0","id":9,"method":"prompts/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}
# <- {"jsonrpc":"2.0","id":9,"result":{"resultType":"complete","prompts":[{"name":"summarise_order",...,"arguments":[{"name":"order_id","description":"The order's numeric id, e.g. 7.","required":true}]},{"name":"status_report",...,"arguments":[{"name":"status",...,"required":false}]}],"ttlMs":300000,"cacheScope":"public",...}}
# ```
#
# `prompts/get` fills one in and returns `messages` for the model, each with a `role` (`user` or
# `assistant`) and one content block. A message may embed a resource: the URI, its type and its
# text, so the model gets the order itself and not a promise of it (Prompts > Embedded Resources):
#
# > Embedded resources enable prompts to seamlessly incorporate server-managed content like
# > documentation, code samples, or other reference materials directly into the conversation
# > flow.
#
# ```text
# -> {"jsonrpc":"2.0","id":10,"method":"prompts/get","params":{"name":"summarise_order","arguments":{"order_id":"7"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}
# <- {"jsonrpc":"2.0","id":10,"result":{"resultType":"complete","description":"Summarise order 7","messages":[{"role":"user","content":{"type":"text","text":"Summarise order 7 for a reply to its customer: ..."}},{"role":"user","content":{"type":"resource","resource":{"uri":"shop://orders/7","mimeType":"application/json","text":"{\"id\": 7, \"status\": \"delivered\", ..."}}}],...}}
# ```
#
# The embedded item is exactly what `resources/read` gives for `shop://orders/7`.
#
# Prompt arguments are **strings**, always: the schema types them `{ [key: string]: string }`, as
# a user types them into a box. So `"7"` is an order id and `7` (a number) is an invalid argument.
# What a server answers to a bad request is in Prompts > Error Handling, the same in both eras:
#
# > Servers **SHOULD** return standard JSON-RPC errors for common failure cases:
# > - Invalid prompt name: `-32602` (Invalid params)
# > - Missing required arguments: `-32602` (Invalid params)
# > - Internal errors: `-32603` (Internal error)
#
# and Prompts > Implementation Considerations adds that servers **SHOULD** validate prompt
# arguments before processing. The course treats an argument the prompt does not declare, an
# argument that is not a string, and a value that names nothing (`"order_id": "seven"`, or an
# order that does not exist) the same way: -32602, with a text that says what to send instead.
#
# ```text
# -> {"jsonrpc":"2.0","id":11,"method":"prompts/get","params":{"name":"summarise_order","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}
# <- {"jsonrpc":"2.0","id":11,"error":{"code":-32602,"message":"Invalid params: missing required argument order_id for summarise_order"}}
# -> {"jsonrpc":"2.0","id":12,"method":"prompts/get","params":{"name":"summarise_order","arguments":{"order_id":7},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}
# <- {"jsonrpc":"2.0","id":12,"error":{"code":-32602,"message":"Invalid params: argument order_id for summarise_order must be a string (prompt arguments are), got number"}}
# -> {"jsonrpc":"2.0","id":14,"method":"prompts/get","params":{"name":"refund","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}
# <- {"jsonrpc":"2.0","id":14,"error":{"code":-32602,"message":"Invalid params: unknown prompt 'refund'; prompts/list shows summarise_order, status_report"}}
# ```
#
# A missing `arguments`, or `null`, is no arguments at all.

# %% [markdown] id="task-prompts"
# ### Your turn: `shop_prompts.py` (3 points)
#
# The declarations, `list_prompts` and `status_report` are given. Write:
#
# - `check_arguments(prompt, arguments)`: raise `RpcError(INVALID_PARAMS, ...)` when `arguments`
#   is not an object, holds a name the prompt does not declare or a value that is not a string, or
#   lacks a required argument; return nothing when all is well.
# - `summarise_order(conn, arguments)`: the result for `summarise_order`: a `description`, and
#   `messages` with an instruction in a text block and the order embedded as a resource, the item
#   your `read_resource` gives for the order's URI. An `order_id` that names no order is -32602.
# - `get_prompt(conn, params)`: the `prompts/get` handler: find the prompt by `name` (-32602 for
#   one that does not exist), check its arguments, then build it (`BUILD[name]`).

# %% id="shop_prompts" nbgrader={"grade": false, "grade_id": "shop_prompts", "locked": false, "schema_version": 3, "solution": true, "task": false}
%%module shop_prompts
import json

from reference.errors import INVALID_PARAMS, RpcError

import shop_resources

STATUSES = ("pending", "paid", "shipped", "delivered", "cancelled", "refunded")
PROMPTS = [
    {
        "name": "summarise_order",
        "title": "Summarise an order",
        "description": "A short summary of one order for a reply to its customer: status, when it was "
        "placed, what was ordered and the total. The order's data is embedded in the prompt.",
        "arguments": [{"name": "order_id", "description": "The order's numeric id, e.g. 7.", "required": True}],
    },
    {
        "name": "status_report",
        "title": "Report on the orders",
        "description": "A short report on how the shop's orders stand, from the number of orders in each "
        "status (embedded in the prompt).",
        "arguments": [
            {
                "name": "status",
                "description": f"A status to look at more closely; one of: {', '.join(STATUSES)}.",
                "required": False,
            }
        ],
    },
]


def list_prompts(params):
    return shop_resources.one_page("prompts", PROMPTS, params)


def invalid(detail):
    return RpcError(INVALID_PARAMS, detail)


def user_text(text):
    return {"role": "user", "content": {"type": "text", "text": text}}


def status_report(conn, arguments):
    """The messages of status_report: the counts per status, as JSON, for a model to report on."""
    status = arguments.get("status")
    if status is not None and status not in STATUSES:
        raise invalid(f"unknown status {status!r}. Valid statuses: {', '.join(STATUSES)}.")
    counts = {name: 0 for name in STATUSES}
    counts.update(conn.execute("SELECT status, count(*) FROM orders GROUP BY status"))
    focus = f", looking closely at the {status} orders" if status else ""
    return {
        "description": "Report on the orders" + (f" ({status})" if status else ""),
        "messages": [
            user_text(f"Write a short report on the shop's orders from these counts per status{focus}."),
            user_text(json.dumps(counts, ensure_ascii=False)),
        ],
    }


def check_arguments(prompt, arguments):
    """-32602 for arguments that are not an object of strings the prompt declares, or that lack a required one."""
    ### BEGIN SOLUTION
    name = prompt["name"]
    if not isinstance(arguments, dict):
        raise invalid(f'"arguments" for {name} must be an object of strings')
    declared = {argument["name"]: argument for argument in prompt["arguments"]}
    for key, value in arguments.items():
        if key not in declared:
            raise invalid(f"unexpected argument {key} for {name}; it takes {', '.join(declared)}")
        if not isinstance(value, str):
            raise invalid(f"argument {key} for {name} must be a string (prompt arguments are)")
    for key, argument in declared.items():
        if argument.get("required") and key not in arguments:
            raise invalid(f"missing required argument {key} for {name}")
    ### END SOLUTION


def summarise_order(conn, arguments):
    """The messages of summarise_order: an instruction, and the order itself as an embedded resource."""
    ### BEGIN SOLUTION
    order_id = arguments["order_id"]
    uri = shop_resources.expand(shop_resources.ORDER_TEMPLATE, order_id=order_id)
    try:
        (resource,) = shop_resources.read_resource(conn, {"uri": uri})["contents"]
    except RpcError:
        raise invalid(f"no order with id {order_id!r}: an order id is a whole number such as 7") from None
    return {
        "description": f"Summarise order {order_id}",
        "messages": [
            user_text(
                f"Summarise order {order_id} for a reply to its customer: its status, when it was placed, "
                "what was ordered and the total. Money is in integer cents (1999 is 19.99)."
            ),
            {"role": "user", "content": {"type": "resource", "resource": resource}},
        ],
    }
    ### END SOLUTION


BUILD = {"summarise_order": summarise_order, "status_report": status_report}


def get_prompt(conn, params):
    """The prompts/get handler."""
    ### BEGIN SOLUTION
    name = params.get("name")
    prompt = next((p for p in PROMPTS if p["name"] == name), None)
    if prompt is None:
        raise invalid(f"unknown prompt {name!r}; prompts/list shows {', '.join(p['name'] for p in PROMPTS)}")
    given = params.get("arguments")
    if given is None:  # absent or null: no arguments
        given = {}
    check_arguments(prompt, given)
    return BUILD[name](conn, given)
    ### END SOLUTION


# %% id="try-prompts"
print(json.dumps(get_prompt(conn, {"name": "summarise_order", "arguments": {"order_id": "7"}}), indent=1)[:600])
for params in ({"name": "summarise_order", "arguments": {}}, {"name": "status_report", "arguments": {"status": 7}}):
    try:
        get_prompt(conn, params)
    except RpcError as error:
        print(error.to_error())

# %% [markdown] id="try-prompts-expected"
# The first prompt's second message embeds order 7 (`"type": "resource"`); the two requests after
# it get -32602, one for the missing `order_id`, one for a `status` that is not a string.

# %% id="test_get_prompt" nbgrader={"grade": true, "grade_id": "test_get_prompt", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 3}
# Get_prompt(): summarise_order embeds the order as resources/read gives it, status_report with
# and without its argument; -32602 for an unknown prompt, a missing, extra or non-string argument,
# an order that does not exist.
# Hidden when graded: the same checks on other values.
lab.check("test_get_prompt")

# %% [markdown] id="served"
# ## 5. Served, checked, used
#
# The course's server now serves your resources and prompts beside its tools. The cell below
# starts it and sends a few 2026-07-28 frames: the discovery, a template list, a read that names
# nothing and a prompt with its argument missing. Predict each reply before you run it. Then try
# the legacy era: `lab.initialize(id=1)` first, and `lab.request(...)` in place of each
# `lab.modern(...)`; the same read gets -32002.

# %% id="watch-served"
lab.watch(
    lab.host("shop_resources"),
    [
        lab.modern("server/discover", id=1),
        lab.modern("resources/templates/list", id=2),
        lab.modern("resources/read", id=3, params={"uri": "shop://products/0"}),
        lab.modern("prompts/get", id=4, params={"name": "summarise_order"}),
    ],
)

# %% [markdown] id="served-checks"
# Then the checker examines it as it examines any server, in both eras: `resources-list` (every
# resource with a `uri` and a `name`, every template with a `uriTemplate`), `resources-read` (a
# listed resource reads; a URI that names nothing gets an error), `prompts-list`, `prompts-get`,
# `capabilities-match` (the capabilities declared are the methods served), and for 2026-07-28
# `modern-result-type`, `modern-cacheable` and `modern-resource-not-found` (-32602, never an empty
# `contents`). From a terminal, on the finished server:
#
# ```sh
# .venv/bin/mcp-lab check -- .venv/bin/mcp-lab serve
# ```
#
# Last, the official MCP SDK's client lists the templates, reads an order through its template
# and gets both prompts, twice: in its default mode (it probes with `server/discover` and must stay
# on 2026-07-28) and in its legacy mode (the `initialize` handshake). Its types are the spec's
# schema, so a result of the wrong shape fails there.

# %% id="test_served" nbgrader={"grade": true, "grade_id": "test_served", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 2}
# The course's server with your resources and prompts, in a 2026-07-28 session (server/discover, the
# lists and a read complete and cacheable, a read that names nothing: -32602 with the URI) and a
# legacy one (initialize, the same read: -32002); a prompt without its argument (-32602) in both;
# then mcp-lab check's resources, prompts and 2026-07-28 checks.
lab.check("test_served")

# %% id="test_sdk_client" nbgrader={"grade": true, "grade_id": "test_sdk_client", "locked": true, "schema_version": 3, "solution": false, "task": false, "points": 1}
# The official MCP SDK's client, in its default mode (2026-07-28) and its legacy mode, reads an
# order through its template and gets both prompts.
# Hidden when graded: other orders.
lab.check("test_sdk_client")

# %% [markdown] id="recall"
# ## Recall
#
# 1. Who chooses a tool, who a resource, who a prompt? What does that change in the text a server
#    writes for each?
# 2. `shop://orders/007`: why is it not order 7, and what does the server answer in 2026-07-28?
# 3. Why does 2026-07-28 answer -32602 where 2025-11-25 answered -32002, and how does a client
#    still tell "this URI names nothing" from a malformed request?
# 4. Why does your `read_resource` raise `RESOURCE_NOT_FOUND` and not -32602 itself?
# 5. A client asks for `prompts/get` with `"order_id": 7`. What is wrong, and which code comes back?
# 6. Which results of this stage carry `ttlMs` and `cacheScope`, which one does not, and why may
#    the shop's be `"public"`?

# %% [markdown] id="end"
# ## What you have now
#
# A server that offers data by URI and messages a user can pick, each declared in its
# capabilities and each refusing what it should with the code a client expects. Stage 11 lets the
# server change the shop, on a copy, and writes down every attempt.

# %% [markdown] id="read-next"
# ## Read next in the spec
#
# The pages this stage relies on, in the spec repository (`docs/specification/...`):
#
# - `2026-07-28/server/resources.mdx`: User Interaction Model, Capabilities, Resource Templates,
#   Reading Resources, Error Handling (-32602, no empty `contents`), Security Considerations
#   (validate all resource URIs).
# - `2026-07-28/server/prompts.mdx`: User Interaction Model, Capabilities, Getting a Prompt,
#   Embedded Resources, Error Handling, Implementation Considerations.
# - `2026-07-28/server/utilities/caching.mdx`: Cacheable Results (the six operations), Cache
#   Key, Time-to-Live (TTL) Field, Cache Scope Field.
# - `2026-07-28/basic/index.mdx`: Messages > Responses > ResultType; Error Codes (-32002 no
#   longer emitted); General fields > `_meta` (per-request and per-response fields).
# - `2026-07-28/server/discover.mdx`: the capabilities a server declares.
# - `2026-07-28/changelog.mdx`: Minor changes 5 (caching hints) and 6 (-32002 to -32602).
# - `2025-11-25/server/resources.mdx`: Error Handling (-32002), for the legacy era.
# - `schema/2026-07-28/schema.ts`: `CacheableResult`, `ReadResourceResult`,
#   `GetPromptRequestParams` (arguments are strings), `EmbeddedResource`.
# - RFC 6570 (URI Template), level 1, for the templates.
