"""The official SDK's ``MCPServer`` (PyPI ``mcp`` 2.x) as a stdio server of both eras.

    python sdk_dual_era.py

Code no one here wrote: it answers ``server/discover`` and enveloped requests (modern), or
``initialize`` (legacy), whichever comes first. ``cancel_order`` asks the user to confirm through
the SDK's resolver API: an ``input_required`` result to a modern client, an ``elicitation/create``
request to a legacy one.
"""

from typing import Annotated

from mcp.server.mcpserver import Elicit, MCPServer, Resolve
from pydantic import BaseModel

app = MCPServer("sdk-dual-era")


class Confirm(BaseModel):
    confirm: bool


def ask(order_id: int) -> Elicit[Confirm]:
    return Elicit(f"Cancel order {order_id}?", Confirm)


@app.tool()
def count_orders(status: str) -> str:
    """Count the orders of one status (a stand-in: always 3)."""
    return f"{status}: 3"


@app.tool()
def cancel_order(order_id: int, reason: str, answer: Annotated[Confirm, Resolve(ask)]) -> str:
    """Cancel an order once the user confirms."""
    return f"order {order_id} cancelled ({reason})" if answer.confirm else f"order {order_id} kept"


if __name__ == "__main__":
    app.run()
