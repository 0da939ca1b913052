"""The shop server again, written on the official MCP Python SDK (2.x, high-level ``MCPServer``).

This is the comparison point for the benchmark and, for the tests, "a server written on the
official SDK". It exposes the same four tools as the reference server (``count_orders``,
``list_orders``, ``get_order``, ``search_products``) with the same names, titles, descriptions,
annotations, arguments and output schemas, and it answers with the same bytes of text and the
same ``structuredContent`` (the SDK client validates it against the schema): every tool delegates to
the reference :class:`reference.tools.Toolbox` over the same read-only database, so the two
servers cannot drift apart. Only the plumbing differs: here the SDK does the framing, the
JSON-RPC envelope, the handshake (2025-11-25 over stdio) and the argument parsing (pydantic).

    $ .venv/bin/python bench/sdk_shop_server.py                     # the embedded shop
    $ .venv/bin/python bench/sdk_shop_server.py --db /tmp/shop.db   # or another database
    $ .venv/bin/mcp-lab session -- .venv/bin/python bench/sdk_shop_server.py

    >>> import asyncio
    >>> server = build_server()
    >>> sorted(tool.name for tool in asyncio.run(server.list_tools()))
    ['count_orders', 'get_order', 'list_orders', 'search_products']

Differences that remain (all in the SDK's own layer, before a tool runs): arguments of the
wrong JSON type are refused by pydantic with its own message (the reference's schema checker
words it differently), pydantic's lax mode accepts ``"5"`` for an integer, unknown arguments are
ignored rather than reported, and an explicit ``"status": null`` means "no status". Bounds
(``minimum``, ``maxLength`` ...) are published in the schema and enforced by the shared Toolbox,
so their error texts are the reference's, word for word.

The tools are ``async def`` on purpose: the SDK runs a plain ``def`` tool on a worker thread,
and a ``sqlite3`` connection may only be used by the thread that opened it. The queries take
well under a millisecond, so running them on the event loop blocks nothing noticeable.
"""

# No ``from __future__ import annotations`` here: the tool signatures below use ``Annotated``
# metadata built at run time from the reference schemas, and the SDK reads the signatures.

import argparse
import sys
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from reference import database
from reference.server import INSTRUCTIONS, SERVER_INFO
from reference.shop import shop_toolbox
from reference.tools import Toolbox

SERVER_NAME = "mcp-wire-lab-shop-sdk"
_BOUNDS = ("minimum", "maximum", "minLength", "maxLength")


def _field(spec: dict[str, Any]) -> Any:
    """A pydantic ``Field`` carrying one argument's description and bounds from the reference schema.

    The bounds are published (``json_schema_extra``) but not checked by pydantic: the Toolbox
    checks them, so an out-of-range value gets exactly the reference's tool error.
    """
    extra = {key: spec[key] for key in _BOUNDS if key in spec}
    return Field(description=spec.get("description"), json_schema_extra=extra or None)


def build_server(db: Path | str | None = None) -> MCPServer:
    """The SDK server over the shop database at ``db`` (default: the embedded shop, built on first use)."""
    path = Path(db) if db is not None else database.ensure_default()
    toolbox: Toolbox = shop_toolbox(database.open_readonly(path))
    tools: list[Tool] = []

    def answer(name: str, **arguments: Any) -> CallToolResult:
        """Run the reference tool and hand its result to the SDK unchanged (``None`` = not given)."""
        given = {key: value for key, value in arguments.items() if value is not None}
        result = toolbox.call({"name": name, "arguments": given}, tool_errors_for_bad_arguments=True)
        return CallToolResult(
            content=[TextContent(type="text", text=block["text"]) for block in result["content"]],
            structured_content=result.get("structuredContent"),
            is_error=result["isError"],
        )

    def register(name: str) -> Any:
        """A tool with the reference tool's title, description, annotations and outputSchema."""
        tool = toolbox.tools[name]

        def add(fn: Any) -> Any:
            sdk_tool = Tool.from_function(
                fn,
                name=name,
                title=tool.title,
                description=tool.description,
                annotations=ToolAnnotations.model_validate(tool.annotations),
            )
            # The SDK derives no schema from a CallToolResult return; it publishes one set here as
            # it is (and leaves checking the result against it to the client, as the spec says).
            sdk_tool.fn_metadata.output_schema = tool.output_schema
            tools.append(sdk_tool)
            return fn

        return add

    def properties(name: str) -> dict[str, Any]:
        return toolbox.tools[name].input_schema["properties"]

    count = properties("count_orders")
    listing = properties("list_orders")
    one = properties("get_order")
    search = properties("search_products")

    @register("count_orders")
    async def count_orders(status: Annotated[str | None, _field(count["status"])] = None) -> CallToolResult:
        return answer("count_orders", status=status)

    @register("list_orders")
    async def list_orders(
        status: Annotated[str | None, _field(listing["status"])] = None,
        customer_id: Annotated[int | None, _field(listing["customer_id"])] = None,
        limit: Annotated[int, _field(listing["limit"])] = listing["limit"]["default"],
        offset: Annotated[int, _field(listing["offset"])] = listing["offset"]["default"],
    ) -> CallToolResult:
        return answer("list_orders", status=status, customer_id=customer_id, limit=limit, offset=offset)

    @register("get_order")
    async def get_order(order_id: Annotated[int, _field(one["order_id"])]) -> CallToolResult:
        return answer("get_order", order_id=order_id)

    @register("search_products")
    async def search_products(
        query: Annotated[str, _field(search["query"])],
        limit: Annotated[int, _field(search["limit"])] = search["limit"]["default"],
    ) -> CallToolResult:
        return answer("search_products", query=query, limit=limit)

    return MCPServer(
        SERVER_NAME,
        title=SERVER_INFO["title"] + " (official SDK)",
        instructions=INSTRUCTIONS,
        version=SERVER_INFO["version"],
        tools=tools,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The shop on the official MCP Python SDK, over stdio.")
    parser.add_argument("--db", help="the shop database (default: the embedded shop, built on first use)")
    args = parser.parse_args(argv)
    if args.db is not None and not Path(args.db).is_file():
        print(f"sdk_shop_server: no database at {args.db}", file=sys.stderr)
        return 2
    build_server(args.db).run("stdio")
    return 0


if __name__ == "__main__":
    sys.exit(main())
