"""The SDK shop server (``bench/sdk_shop_server.py``) over the official SDK's own Streamable HTTP transport.

The same four tools, plus the shop's schema as a resource, one product per URI template and the
``summarise_order`` prompt, all registered through the SDK (``MCPServer.resource`` and
``MCPServer.prompt``) and answered by the reference's pieces, so that the checker over HTTP judges
the SDK's transport, session handling and resources and prompts, not a second shop. It is served by
``MCPServer.streamable_http_app`` under uvicorn with the SDK's defaults (SSE replies, stateful
sessions, DNS-rebinding protection on, as the SDK turns it on for a loopback host).

    $ .venv/bin/python bench/sdk_shop_http_server.py             # a free port on 127.0.0.1: stderr says which
    $ .venv/bin/python bench/sdk_shop_http_server.py --port 8000
    $ .venv/bin/mcp-lab check --url http://127.0.0.1:8000/mcp

It prints ``SDK Streamable HTTP on http://127.0.0.1:PORT/mcp`` on stderr once it listens, and ends
on Ctrl-C or SIGTERM.
"""

import argparse
import json
import socket
import sys
from pathlib import Path

import uvicorn
from sdk_shop_server import build_server

from reference import database
from reference.prompts import Prompts
from reference.resources import Resources

HOST = "127.0.0.1"


def add_resources_and_prompts(server, db: Path | str | None = None) -> None:
    """The shop's schema, products by URI template and one prompt, answered by the reference."""
    conn = database.open_readonly(Path(db) if db is not None else database.ensure_default())
    resources = Resources(conn)
    prompts = Prompts(conn, resources)

    @server.resource("shop://schema", name="schema", mime_type="application/sql")
    async def schema() -> str:
        return resources.schema()

    @server.resource("shop://products/{product_id}", name="product", mime_type="application/json")
    async def product(product_id: str) -> str:
        found = resources.read({"uri": f"shop://products/{product_id}"})
        return found["contents"][0]["text"]

    @server.prompt("summarise_order", description="A short summary of one order for a reply to its customer.")
    async def summarise_order(order_id: str) -> str:
        got = prompts.get({"name": "summarise_order", "arguments": {"order_id": order_id}})
        order = got["messages"][1]["content"]["resource"]["text"]
        return got["messages"][0]["content"]["text"] + "\n\n" + json.dumps(json.loads(order))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The shop on the official MCP Python SDK, over Streamable HTTP.")
    parser.add_argument("--port", type=int, default=0, help="the port on 127.0.0.1 (default: any free one)")
    parser.add_argument("--db", help="the shop database (default: the embedded shop, built on first use)")
    args = parser.parse_args(argv)
    server = build_server(args.db)
    add_resources_and_prompts(server, args.db)
    app = server.streamable_http_app(host=HOST)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, args.port))
    except OSError as exc:
        print(f"sdk_shop_http_server: cannot listen on {HOST}:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    port = sock.getsockname()[1]
    print(f"SDK Streamable HTTP on http://{HOST}:{port}/mcp", file=sys.stderr, flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])
    return 0


if __name__ == "__main__":
    sys.exit(main())
