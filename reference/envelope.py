"""The JSON-RPC 2.0 envelope: what a request, a notification and a response are, and replies.

A request has an ``id``; a notification has *no* ``id`` member at all (test ``"id" in msg``: an
explicit ``"id": null`` is an invalid request, not a notification). MCP ids are strings or
integers, echoed back with the same value and the same JSON type.

    >>> classify({"jsonrpc": "2.0", "id": 0, "method": "ping"})
    Request(id=0, method='ping', params={})
    >>> classify({"jsonrpc": "2.0", "method": "notifications/initialized"})
    Notification(method='notifications/initialized', params={})
    >>> result_message("7", {})
    {'jsonrpc': '2.0', 'id': '7', 'result': {}}
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .errors import INVALID_REQUEST, ErrorCode, RpcError

JSONRPC = "2.0"
Id = int | str


@dataclass
class Request:
    id: Id
    method: str
    params: Any = field(default_factory=dict)


@dataclass
class Notification:
    method: str
    params: Any = field(default_factory=dict)


@dataclass
class Response:
    """A reply from the other side (a client answering a server's request)."""

    id: Id | None
    result: Any = None
    error: dict[str, Any] | None = None


Message = Request | Notification | Response


def is_valid_id(value: Any) -> bool:
    """MCP ids: a string or an integer. Not null, not 1.5, and not ``true`` (a bool is no int)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def id_of(message: Any) -> Id | None:
    """The id to answer an invalid message with: its own if it is a usable id, else null."""
    if isinstance(message, dict) and is_valid_id(message.get("id")):
        return message["id"]
    return None


def classify(message: Any) -> Message:
    """Sort one decoded JSON value into a Request, a Notification or a Response.

    Anything else raises :class:`RpcError` (-32600); the caller answers it with :func:`id_of`.
    """
    if not isinstance(message, dict):
        raise RpcError(INVALID_REQUEST, f"expected a JSON object, got {type(message).__name__}")
    if message.get("jsonrpc") != JSONRPC:
        raise RpcError(INVALID_REQUEST, 'the "jsonrpc" member must be the string "2.0"')
    method = message.get("method")
    if method is None and "id" in message and ("result" in message or "error" in message):
        return Response(message["id"], message.get("result"), message.get("error"))
    if not isinstance(method, str):
        raise RpcError(INVALID_REQUEST, 'the "method" member must be a string')
    params = message.get("params", {})
    if not isinstance(params, dict | list):
        raise RpcError(INVALID_REQUEST, '"params" must be an object')
    if "id" not in message:
        return Notification(method, params)
    if not is_valid_id(message["id"]):
        raise RpcError(INVALID_REQUEST, "the id must be a string or an integer (not null, not a float)")
    return Request(message["id"], method, params)


def result_message(id: Id, result: Any) -> dict[str, Any]:
    return {"jsonrpc": JSONRPC, "id": id, "result": result}


def error_message(id: Id | None, error: RpcError | ErrorCode, detail: str = "") -> dict[str, Any]:
    """An error reply. ``id`` is null when the request's id could not be read."""
    if isinstance(error, ErrorCode):
        error = RpcError(error, detail)
    return {"jsonrpc": JSONRPC, "id": id, "error": error.to_error()}
