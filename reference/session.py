"""A full scripted session against any stdio server, printed as a transcript.

This is what ``mcp-lab session -- COMMAND`` runs: the era probe and the handshake it calls for
(``server/discover``, and ``initialize`` for a legacy server), a ping (legacy only: 2026-07-28
removed it), tools/list, a few calls, then the shutdown in the spec's order. One line per frame:
``->`` sent, ``<-`` received, ``!!`` a stdout line that is not a JSON-RPC message (a bug in the
server), ``##`` the session's own remarks (the era it chose and why, a question it answered).

    $ mcp-lab session -- mcp-lab serve
    -> {"jsonrpc":"2.0","id":0,"method":"server/discover","params":{"_meta":{...}}}
    <- {"jsonrpc":"2.0","id":0,"error":{"code":-32601,"message":"Method not found: server/discover"}}
    -> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{...}}
    ...
    ## era: legacy (2025-11-25): server/discover got -32601 ...

With ``yes=True`` (``--yes``) the client declares elicitation, answers every confirmation a
server asks for with yes, and also calls the shop's ``cancel_order`` if the server offers it
(a write: only a server run with ``--allow-writes`` on a copy of the shop offers it).

    >>> confirm_all("k", {"method": "elicitation/create", "params": {"message": "Cancel order 9?",
    ...     "requestedSchema": {"type": "object", "properties": {"confirm": {"type": "boolean"}}}}})
    {'action': 'accept', 'content': {'confirm': True}}
    >>> confirm_all("k", {"method": "elicitation/create", "params": {"message": "Your name?",
    ...     "requestedSchema": {"properties": {"name": {"type": "string"}}, "required": ["name"]}}})
    {'action': 'decline'}
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
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
YES_WORDS = frozenset({"yes", "y", "confirm", "confirmed", "ok", "true"})
# With --yes only: a write that asks the user to confirm first (order 9 is paid, so cancellable).
CONFIRMED_CALL = ("cancel_order", {"order_id": 9, "reason": "confirmed with mcp-lab session --yes"})


def confirm_all(key: str, request: dict[str, Any]) -> dict[str, Any]:
    """Answer an elicitation that only asks for a confirmation: yes to every yes/no field.

    A form that wants more than yes/no (a name, a number with no default) is declined: ``--yes``
    consents, it does not make answers up. A request of another kind was never declared.
    """
    if request.get("method") != "elicitation/create":
        raise ClientError(f"the server asks for {request.get('method')!r} ({key}), which this client never declared")
    params = request.get("params") if isinstance(request.get("params"), dict) else {}
    schema = params.get("requestedSchema") if isinstance(params.get("requestedSchema"), dict) else {}
    fields = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    if params.get("mode", "form") != "form":
        return {"action": "decline"}
    content: dict[str, Any] = {}
    for name, field in fields.items():
        field = field if isinstance(field, dict) else {}
        choices = field.get("enum") if isinstance(field.get("enum"), list) else []
        agreeing = [c for c in choices if isinstance(c, str) and c.lower() in YES_WORDS]
        if field.get("type") == "boolean":
            content[name] = True
        elif agreeing:  # a yes/no question asked as a choice of words
            content[name] = agreeing[0]
        elif "default" in field:
            content[name] = field["default"]
        elif name in (schema.get("required") or []):
            return {"action": "decline"}
    return {"action": "accept", "content": content}


def run_session(
    argv: Sequence[str],
    out: TextIO = sys.stdout,
    timeout: float = 5.0,
    era: str = "auto",
    yes: bool = False,
) -> int:
    """Run the scripted session; return 0 if it completed, 1 if the server failed it.

    A command that cannot be started raises ``OSError``.
    """

    def show(direction: str, text: str) -> None:
        out.write(f"{direction} {text}\n")
        out.flush()

    def answer(key: str, request: dict[str, Any]) -> dict[str, Any]:
        reply = confirm_all(key, request)
        message = (request.get("params") or {}).get("message", "")
        show(
            "##",
            f"the server asks ({request.get('method')}, {key}): {json.dumps(message)}; --yes answers "
            f"{json.dumps(reply)}",
        )
        return reply

    on_input: Callable[[str, dict[str, Any]], dict[str, Any]] | None = answer if yes else None
    client = Client(argv, timeout=timeout, on_frame=show, era=era, on_input=on_input)
    failure = ""
    client.start()  # OSError (no such command) is the caller's usage error
    try:
        client.connect()
        show("##", f"era: {client.era} ({client.version}): {client.era_reason}")
        if client.era == "legacy":
            client.request("ping")
        tools = {tool["name"] for tool in client.request("tools/list").get("tools", [])}
        calls = [*SHOP_CALLS, CONFIRMED_CALL] if yes else SHOP_CALLS
        for name, arguments in calls:
            if name in tools or name == "no_such_tool":
                try:
                    client.request("tools/call", {"name": name, "arguments": arguments})
                except ClientError as exc:
                    if exc.code is None:
                        raise  # a timeout, a dead server or an invalid result, not an error reply
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
