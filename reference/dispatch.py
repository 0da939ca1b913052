"""Dispatch: every line takes one of three branches.

1. It is not JSON: answer -32700 with ``id: null`` (the id could not be read) and go on.
2. It is a request (it has an ``id``): answer exactly once, with the same id.
3. It is a notification (no ``id``): act on it, and answer *nothing*, not even an error.

Responses from the other side (no method; a result or an error) are never answered, even when
malformed: their ids belong to the other side's requests, and an error with such an id would
look like an answer to a request we never sent. They get one line in the log instead. Batches
(JSON arrays) are accepted only where the negotiated revision allows them (2025-03-26).

    >>> d = Dispatcher({"ping": lambda params: {}}, {})
    >>> d.handle_line(b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}')
    {'jsonrpc': '2.0', 'id': 1, 'result': {}}
    >>> d.handle_line(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}') is None
    True
    >>> d.handle_line(b'garbage')["error"]["code"]
    -32700
    >>> d.handle_line(b'{"jsonrpc": "1.0", "id": 99, "result": {}}') is None
    True
    >>> later = Dispatcher({"subscriptions/listen": lambda params: LATER}, {})  # the handler answers itself
    >>> later.handle_line(b'{"jsonrpc": "2.0", "id": 2, "method": "subscriptions/listen", "params": {}}') is None
    True
"""

from __future__ import annotations

import json
import sys
import traceback
from collections.abc import Callable
from typing import Any

from . import envelope
from .errors import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, RpcError
from .framing import FrameError, decode

Handler = Callable[[Any], Any]
NotificationHandler = Callable[[Any], None]


class Later:
    """What a handler returns for a request it answers later, itself: the dispatcher replies nothing now.

    Only ``subscriptions/listen`` (2026-07-28) does this: its response ends a stream that stays open
    while other requests are served, so the reply is written by whoever ends the stream.
    """

    def __repr__(self) -> str:
        return "LATER"


LATER = Later()


def _stderr_line(message: str) -> None:
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


def _shown(value: Any, width: int = 60) -> str:
    """A value as short ASCII JSON for a log line: an id from the wire may be anything, and long."""
    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= width else text[: width - 3] + "..."


class Dispatcher:
    def __init__(
        self,
        methods: dict[str, Handler],
        notifications: dict[str, NotificationHandler],
        batches_allowed: Callable[[], bool] = lambda: False,
        no_batch: frozenset[str] = frozenset({"initialize"}),
        log: Callable[[str], None] = _stderr_line,
        route: Callable[[envelope.Request], Handler | None] | None = None,
    ) -> None:
        self.methods = methods
        self.notifications = notifications
        self.batches_allowed = batches_allowed
        self.no_batch = no_batch
        self.log = log  # one line to stderr: stdout carries protocol messages only
        # Which handler serves a request: by default its method's, from the table. A server of two
        # eras routes by the request itself (reference.server); an RpcError raised here is the reply.
        self.route = route or (lambda request: self.methods.get(request.method))

    def handle_line(self, line: bytes) -> Any:
        """The reply to one line (a message, a list of them) or ``None`` when nothing is owed."""
        try:
            message = decode(line)
        except FrameError as exc:
            return envelope.error_message(None, PARSE_ERROR, str(exc))
        return self.handle_decoded(message)

    def handle_decoded(self, message: Any) -> Any:
        """The reply to one decoded JSON value: a batch (a list) or a single message."""
        if isinstance(message, list):
            return self.handle_batch(message)
        return self.handle_message(message)

    def handle_batch(self, batch: list[Any]) -> Any:
        if not self.batches_allowed():
            return envelope.error_message(
                None, INVALID_REQUEST, "batches (JSON arrays) exist only in revision 2025-03-26"
            )
        if not batch:
            return envelope.error_message(None, INVALID_REQUEST, "an empty batch")
        replies = []
        for message in batch:
            # Only a *request* (it has an id) is refused; a notification is never answered.
            # (The method may be any JSON value, even an unhashable one: compare it as a string.)
            method = message.get("method") if isinstance(message, dict) and "id" in message else None
            if isinstance(method, str) and method in self.no_batch:
                reply = envelope.error_message(envelope.id_of(message), INVALID_REQUEST, f"{method} may not be batched")
            else:
                reply = self.handle_message(message)
            if reply is not None:
                replies.append(reply)
        # A batch of notifications gets no reply at all, never an empty array.
        return replies or None

    def handle_message(self, message: Any) -> dict[str, Any] | None:
        try:
            kind = envelope.classify(message)
        except RpcError as exc:
            return envelope.error_message(envelope.id_of(message), exc)
        if isinstance(kind, envelope.Notification):
            handler = self.notifications.get(kind.method)
            if handler is not None:
                try:
                    handler(kind.params)
                except Exception:  # a notification can never be answered, not even with an error
                    traceback.print_exc(file=sys.stderr)
            return None
        if isinstance(kind, envelope.Response):
            self.ignore_response(kind)
            return None
        try:
            handler = self.route(kind)
        except RpcError as exc:
            return envelope.error_message(kind.id, exc)
        if handler is None:
            return envelope.error_message(kind.id, METHOD_NOT_FOUND, kind.method)
        if not isinstance(kind.params, dict):  # MCP params are always an object
            return envelope.error_message(kind.id, INVALID_PARAMS, f"{kind.method} params must be an object")
        try:
            result = handler(kind.params)
            return None if result is LATER else envelope.result_message(kind.id, result)
        except RpcError as exc:
            return envelope.error_message(kind.id, exc)
        except Exception as exc:
            traceback.print_exc(file=sys.stderr)
            return envelope.error_message(kind.id, INTERNAL_ERROR, type(exc).__name__)

    def ignore_response(self, response: envelope.Response) -> None:
        """Log a response from the other side; this server sends no requests, so none is expected."""
        shown = _shown(response.id)
        if response.problem:
            self.log(f"ignored a malformed response (id {shown}): {response.problem}")
        else:
            self.log(f"ignored a response (id {shown}): this server sends no requests")
