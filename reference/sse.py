"""Server-Sent Events: how Streamable HTTP streams JSON-RPC messages in one HTTP response.

An SSE stream (``Content-Type: text/event-stream``) is UTF-8 text: each event is a few
``field: value`` lines (``id``, ``event``, ``data``, ``retry``) and ends with a blank line; a line
that starts with ``:`` is a comment. An MCP message is one event of type ``message`` whose ``data``
is the message's JSON (one line: JSON needs no raw newlines). A reader joins the ``data`` lines of
one event with ``\\n``.

    >>> event({"jsonrpc": "2.0", "id": 1, "result": {}})
    b'event: message\\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\\n\\n'
    >>> parse(b': a comment\\nid: 7\\nevent: message\\ndata: {"a":\\ndata: 1}\\n\\n')
    [{'event': 'message', 'data': '{"a":\\n1}', 'id': '7'}]
"""

from __future__ import annotations

import re
from typing import Any

from .framing import encode


def event(message: Any, event_id: str | None = None) -> bytes:
    """One MCP message as one SSE event of type ``message``."""
    data = encode(message).decode("utf-8").rstrip("\n")  # one line: JSON escapes every newline
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: message\ndata: {data}\n\n".encode()


def parse(stream: bytes) -> list[dict[str, Any]]:
    """The events of a stream, as the HTML standard's algorithm reads them (``retry`` as an int).

    An event with no ``data`` line is not dispatched; ``event`` defaults to ``message``. Text after
    the last blank line is an event not yet finished, and is not returned.
    """
    events: list[dict[str, Any]] = []
    data: list[str] = []
    current: dict[str, Any] = {}
    text = stream.decode("utf-8").removeprefix("\ufeff")
    lines = re.split(r"\r\n|\r|\n", text)
    for line in lines[:-1]:  # the last piece has no line ending yet
        if line == "":
            if data:
                events.append({"event": current.pop("event", "message"), "data": "\n".join(data), **current})
            data, current = [], {}
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            data.append(value)
        elif name == "event":
            current["event"] = value
        elif name == "id" and "\0" not in value:
            current["id"] = value
        elif name == "retry" and value.isdigit():
            current["retry"] = int(value)
    return events
