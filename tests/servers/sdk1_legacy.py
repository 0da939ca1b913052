"""The official SDK 1.x's ``FastMCP`` (PyPI ``mcp`` 1.30, in build/sdk1): a legacy-only server.

    build/sdk1/bin/python sdk1_legacy.py

Code no one here wrote, of the legacy era only: it answers ``server/discover`` with -32602
(not -32601), so a client's fallback to ``initialize`` must not be keyed on one error code.
"""

from mcp.server.fastmcp import FastMCP

app = FastMCP("sdk1-legacy")


@app.tool()
def echo(text: str) -> str:
    """Echo the text."""
    return text


if __name__ == "__main__":
    app.run()
