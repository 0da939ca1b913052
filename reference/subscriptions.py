"""``subscriptions/listen`` (MCP 2026-07-28, ``basic/patterns/subscriptions``): a stream of change notices.

A client that wants to hear about changes opens a stream with ``subscriptions/listen`` and a
``notifications`` filter. The request stays open: there is no reply until the stream ends. The
server first acknowledges it (``notifications/subscriptions/acknowledged``, carrying the part of
the filter it will honour), then sends only the notifications asked for; every message on the
stream carries the listen request's id in ``_meta["io.modelcontextprotocol/subscriptionId"]``, so
that a client with several streams on one stdio channel can tell them apart.

What the shop honours: ``resourceSubscriptions`` for the URIs it serves (an order changes when
``cancel_order`` cancels it; the schema when a write makes its first table). Its lists of tools,
resources and prompts never change while it runs, so it declares ``listChanged: false`` and leaves
the three list flags out of the acknowledgement: a client must not wait for what will never come.

How a stream ends: the client sends ``notifications/cancelled`` for it (stdio) or closes it
(HTTP); the server then sends nothing more for it (``basic/transports/stdio``, Cancellation).
When the server ends a stream itself (its input closed: shutdown), it answers the listen request
with ``{"resultType": "complete"}`` tagged with the id, the graceful close of
``subscriptions``, and then sends ``notifications/cancelled`` for that id, which
``basic/patterns/cancellation`` asks of a server tearing a stream down. A client reads the
response as the end; the notification comes after it, for a request already answered, which
``cancellation`` tells a receiver to ignore: both pages are obeyed, and neither reading is hurt.

:class:`Hub` is transport-neutral: a :class:`Subscription` hands its messages to a ``deliver``
function (stdio: the server's outbox, written after each message; HTTP: the listen request's
own SSE stream), and one hub serves every connection of the process.

    >>> sent = []
    >>> hub = Hub()
    >>> wanted = read_filter({"notifications": {"toolsListChanged": True, "resourceSubscriptions": ["shop://orders/7"]}})
    >>> stream = hub.open(7, wanted.honoured(lambda uri: uri.startswith("shop://")), sent.append)
    >>> sent[0]["method"], sent[0]["params"]
    ('notifications/subscriptions/acknowledged', {'notifications': {'resourceSubscriptions': ['shop://orders/7']}, \
'_meta': {'io.modelcontextprotocol/subscriptionId': 7}})
    >>> hub.resource_updated("shop://orders/7"); sent[-1]["params"]["uri"]
    'shop://orders/7'
    >>> hub.resource_updated("shop://orders/8"); len(sent)
    2
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .errors import INVALID_PARAMS, RpcError, json_type
from .stateless import SUBSCRIPTION_ID

FLAGS = ("toolsListChanged", "promptsListChanged", "resourcesListChanged")
URIS = "resourceSubscriptions"
MAX_URIS = 100  # URIs one stream may watch; a client that wants more opens another stream
MAX_URI = 2048
MAX_STREAMS = 64  # open streams one connection keeps: each costs a little on every write

Deliver = Callable[[dict[str, Any]], None]


@dataclass(frozen=True)
class Filter:
    """A ``SubscriptionFilter``: the list-changed flags asked for and the URIs to watch."""

    flags: frozenset[str] = frozenset()
    uris: tuple[str, ...] = ()

    def honoured(self, serves: Callable[[str], bool], lists_change: bool = False) -> Filter:
        """The part this server honours: the URIs it serves; the list flags only if its lists change."""
        flags = self.flags if lists_change else frozenset()
        return Filter(flags, tuple(uri for uri in self.uris if serves(uri)))

    def wire(self) -> dict[str, Any]:
        """As the acknowledgement carries it: true flags only, the URI list only when not empty."""
        out: dict[str, Any] = {flag: True for flag in FLAGS if flag in self.flags}
        if self.uris:
            out[URIS] = list(self.uris)
        return out


def read_filter(params: dict[str, Any]) -> Filter:
    """``params.notifications`` of a listen request, checked (-32602 says what is wrong).

    Keys this revision does not define are ignored: a later revision may add kinds, and a kind
    the server does not know is one it does not honour (the acknowledgement leaves it out).
    """
    where = "subscriptions/listen"
    wanted = params.get("notifications")
    if not isinstance(wanted, dict):
        raise RpcError(
            INVALID_PARAMS,
            f'{where} needs params.notifications, an object such as {{"resourceSubscriptions": ["shop://orders/7"]}} '
            f"(2026-07-28 basic/patterns/subscriptions), got {json_type(wanted)}",
        )
    flags = set()
    for flag in FLAGS:
        value = wanted.get(flag)
        if value is not None and not isinstance(value, bool):
            raise RpcError(
                INVALID_PARAMS, f"{where}: notifications.{flag} must be true or false, got {json_type(value)}"
            )
        if value:
            flags.add(flag)
    uris = wanted.get(URIS)
    if uris is None:
        uris = []
    if not isinstance(uris, list) or not all(isinstance(uri, str) for uri in uris):
        raise RpcError(INVALID_PARAMS, f"{where}: notifications.{URIS} must be an array of URI strings")
    if len(uris) > MAX_URIS:
        raise RpcError(
            INVALID_PARAMS,
            f"{where}: notifications.{URIS} lists {len(uris)} URIs; one stream watches at most {MAX_URIS}",
        )
    if any(not uri or len(uri) > MAX_URI for uri in uris):
        raise RpcError(INVALID_PARAMS, f"{where}: every URI in notifications.{URIS} must be 1 to {MAX_URI} characters")
    return Filter(frozenset(flags), tuple(dict.fromkeys(uris)))  # a URI asked twice is watched once


class Subscription:
    """One open stream: its id (the listen request's), what it honours, and where its messages go."""

    def __init__(self, subscription_id: Any, honoured: Filter, deliver: Deliver) -> None:
        self.id = subscription_id
        self.honoured = honoured
        self.deliver = deliver

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """One notification on the stream, tagged with its id."""
        tagged = {**(params or {}), "_meta": {SUBSCRIPTION_ID: self.id}}
        self.deliver({"jsonrpc": "2.0", "method": method, "params": tagged})

    def close(self, server_meta: dict[str, Any]) -> None:
        """The server ends the stream: the listen request's response, then the cancellation (see above)."""
        result = {"resultType": "complete", "_meta": {**server_meta, SUBSCRIPTION_ID: self.id}}
        self.deliver({"jsonrpc": "2.0", "id": self.id, "result": result})
        reason = "the server is shutting down"
        self.notify("notifications/cancelled", {"requestId": self.id, "reason": reason})


class Hub:
    """Every open stream of the process; a change is announced to the streams that asked for it."""

    def __init__(self, log: Callable[[str], None] | None = None) -> None:
        self._lock = threading.Lock()  # HTTP serves connections on threads
        self._open: list[Subscription] = []
        self.log = log or (lambda message: print(message, file=sys.stderr, flush=True))

    def open(self, subscription_id: Any, honoured: Filter, deliver: Deliver) -> Subscription:
        """Register a stream and acknowledge it: the acknowledgement is its first message."""
        stream = Subscription(subscription_id, honoured, deliver)
        stream.notify("notifications/subscriptions/acknowledged", {"notifications": honoured.wire()})
        with self._lock:
            self._open.append(stream)
        return stream

    def drop(self, stream: Subscription) -> None:
        """Forget a stream (cancelled, or closed): nothing more is sent on it."""
        with self._lock:
            if stream in self._open:
                self._open.remove(stream)

    def watched(self) -> set[str]:
        """Every URI some open stream watches."""
        with self._lock:
            return {uri for stream in self._open for uri in stream.honoured.uris}

    def resource_updated(self, uri: str) -> None:
        """``notifications/resources/updated`` to each stream watching ``uri``."""
        with self._lock:
            streams = [stream for stream in self._open if uri in stream.honoured.uris]
        for stream in streams:
            try:
                stream.notify("notifications/resources/updated", {"uri": uri})
            except Exception as exc:  # a stream whose reader is gone (HTTP) must not stop the others
                self.log(f"[mcp-lab serve] subscription {stream.id!r} dropped: {type(exc).__name__}: {exc}")
                self.drop(stream)
