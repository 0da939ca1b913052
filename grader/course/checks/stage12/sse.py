"""Stage 12's server-sent events (cell ``test_sse``): ``sse_event`` writes one event per message, and
a client that accepts only ``text/event-stream`` gets its response so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from grader.checker.http_probe import SSE_TYPE, sse_state
from reference.framing import encode

from ...calls import call
from ...expect import Failure, same_json, show
from ...work import Work
from .. import public
from .client import MODULE, Client, _json, failure, message, reply_to, running


def check_sse_event(work: Work, messages: Sequence[Any]) -> None:
    """sse_event(message): one event whose data, read as a client reads it, is the message."""
    sse_event = work.module(MODULE).sse_event
    for sent in messages:
        event = call(sse_event, "http-sse", sent)
        if not isinstance(event, bytes):
            raise Failure("http-sse", "sse_event returns bytes (the body's bytes)", received=show(repr(event)))
        events, problems, ignored = sse_state(event, ended=True)
        data = [_json(e["data"]) for e in events]
        right = len(events) == 1 and same_json(data[0], sent) and events[0].get("event", "message") == "message"
        if problems or ignored or not right:
            raise Failure(
                "http-sse",
                f"sse_event({show(sent)}) is not one event whose data is the message",
                expected=f"event: message\\ndata: {encode(sent).decode().rstrip()}\\n\\n",
                received=show(event.replace(b"\n", b"\\n")),
                problems="; ".join(problems + [f"a line no client reads: {x!r}" for x in ignored[:3]]) or "-",
            )


def check_sse_stream(work: Work, requests: Sequence[dict[str, Any]]) -> None:
    """Requests that accept only text/event-stream get their response in a well-formed SSE stream."""
    with running(work) as bridge:
        client = Client(bridge)
        client.initialize("http-sse")
        for sent in requests:
            got = client.post(sent, "http-sse", Accept=SSE_TYPE)
            if got.status != 200 or not got.is_sse:
                raise failure(
                    "http-sse",
                    f"a client that accepts only {SSE_TYPE} gets the response as an SSE stream",
                    got,
                    f"HTTP/1.1 200 OK, Content-Type: {SSE_TYPE}, one event with the response",
                )
            reply_to(got, sent, "http-sse")


SSE_MESSAGES: list[Any] = [
    {"jsonrpc": "2.0", "id": 1, "result": {}},
    {"jsonrpc": "2.0", "id": "a", "result": {"text": "two\nlines, and ü"}},
]


@public("12", "test_sse", "sse_event: one event per message; a client that accepts only SSE gets its response so")
def sse_cell(work: Work) -> None:
    check_sse_event(work, SSE_MESSAGES)
    check_sse_stream(work, [message("ping", 5), message("tools/list", "list")])
