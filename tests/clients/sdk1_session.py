"""A session with the official Python SDK's 1.x client, run by tests/test_sdk1_interop.py.

It runs under a separate virtual environment that holds ``mcp`` 1.x (build/sdk1, made by
bench/install_corpus.sh), since the project's own environment has 2.x. It prints one JSON object:
what the client saw, or the error it raised, for the test to judge.

    build/sdk1/bin/python tests/clients/sdk1_session.py -- python -m reference.server
    build/sdk1/bin/python tests/clients/sdk1_session.py --ping -- python3 server.py   # a server with no tools yet
"""

import json
import sys
from datetime import timedelta

import anyio
import mcp
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def session(argv: list[str], ping_only: bool = False) -> dict:
    seen: dict = {"sdk": mcp.__version__ if hasattr(mcp, "__version__") else "1.x"}
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=None)
    with anyio.fail_after(60):
        async with (
            stdio_client(params, errlog=sys.stderr) as (read, write),
            ClientSession(read, write, read_timeout_seconds=timedelta(seconds=15)) as client,
        ):
            init = await client.initialize()
            seen["protocolVersion"] = init.protocolVersion
            if ping_only:
                seen["ping"] = (await client.send_ping()).model_dump()
                return seen
            tools = await client.list_tools()
            seen["outputSchemas"] = {t.name: t.outputSchema is not None for t in tools.tools}
            seen["calls"] = []
            for name, args in [
                ("count_orders", {"status": "shipped"}),
                ("list_orders", {"limit": 2}),
                ("get_order", {"order_id": 7}),
                ("search_products", {"query": "mug"}),
            ]:
                try:
                    result = await client.call_tool(name, args)
                except Exception as exc:  # the 1.x client raises when validation fails
                    seen["calls"].append({"tool": name, "refused": f"{type(exc).__name__}: {exc}"})
                else:
                    seen["calls"].append(
                        {"tool": name, "structured": result.structuredContent, "isError": result.isError}
                    )
    return seen


def main() -> int:
    argv = sys.argv[sys.argv.index("--") + 1 :]
    print(json.dumps(anyio.run(session, argv, "--ping" in sys.argv[: sys.argv.index("--")])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
