"""A full scripted session against any stdio server, printed as a transcript.

This is what ``mcp-lab session -- COMMAND`` runs: the handshake, a ping, tools/list, a few
calls, then the shutdown in the spec's order. One line per frame: ``->`` sent, ``<-`` received,
``!!`` a stdout line that is not a JSON-RPC message (a bug in the server).

    $ mcp-lab session -- mcp-lab serve
    -> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{...}}
    <- {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25",...}}
    ...
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, TextIO

from .client import Client, ClientError

# Calls made when the server offers the shop's tools: one of each kind of answer.
SHOP_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("count_orders", {"status": "pending"}),
    ("count_orders", {"status": "lost"}),  # a tool execution error: isError, the model can retry
    ("list_orders", {"status": "shipped", "limit": 2}),
    ("get_order", {"order_id": 1}),
    ("search_products", {"query": "mug", "limit": 2}),
    ("no_such_tool", {}),  # a protocol error: -32602
]


def run_session(argv: Sequence[str], out: TextIO = sys.stdout, timeout: float = 5.0) -> int:
    """Run the scripted session; return 0 if it completed, 1 if the server failed it.

    A command that cannot be started raises ``OSError``.
    """

    def show(direction: str, text: str) -> None:
        out.write(f"{direction} {text}\n")
        out.flush()

    client = Client(argv, timeout=timeout, on_frame=show)
    failure = ""
    client.start()  # OSError (no such command) is the caller's usage error
    try:
        client.initialize()
        client.request("ping")
        tools = {tool["name"] for tool in client.request("tools/list").get("tools", [])}
        for name, arguments in SHOP_CALLS:
            if name in tools or name == "no_such_tool":
                try:
                    client.request("tools/call", {"name": name, "arguments": arguments})
                except ClientError as exc:
                    if exc.code is None:
                        raise  # a timeout or a dead server, not an error reply
    except ClientError as exc:
        failure = str(exc)
    finally:
        child = client.child
        code = client.close()
    for line in child.stderr_tail(4000).splitlines() if child else []:
        out.write(f"## stderr: {line}\n")
    out.write(f"## server exited with status {code}\n")
    if client.noise:
        out.write(f"## {len(client.noise)} stdout line(s) were not JSON-RPC messages (marked !!)\n")
    if failure:
        out.write(f"## session failed: {failure}\n")
        return 1
    return 0
