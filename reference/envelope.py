"""The JSON-RPC 2.0 envelope: what a request, a notification and a response are, and replies.

A request has an ``id``; a notification has *no* ``id`` member at all (test ``"id" in msg``: an
explicit ``"id": null`` is an invalid request, not a notification). MCP ids are strings or
integers, echoed back with the same value and the same JSON type. JSON itself has no integer
type, only numbers: ``1e3`` and ``1.0`` are numbers without a fractional part, which is what the
schema's ``integer`` means, so they are ids too, echoed as the integers 1000 and 1.

A message with no ``method`` and a ``result`` or ``error`` is a response, well formed or not: it
answers a request of the *other* side, so it is never answered, not even with an error (its id
belongs to the other side's requests, not to ours).

    >>> classify({"jsonrpc": "2.0", "id": 0, "method": "ping"})
    Request(id=0, method='ping', params={})
    >>> classify({"jsonrpc": "2.0", "id": 1e3, "method": "ping"})
    Request(id=1000, method='ping', params={})
    >>> classify({"jsonrpc": "2.0", "method": "notifications/initialized"})
    Notification(method='notifications/initialized', params={})
    >>> classify({"jsonrpc": "1.0", "id": 99, "result": {}}).problem
    'the "jsonrpc" member must be the string "2.0"'
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
    """A reply from the other side (a client answering a server's request).

    ``problem`` says what is wrong with it when it is malformed (empty when it is well formed):
    worth a line in the log, never a reply.
    """

    id: Any
    result: Any = None
    error: Any = None
    problem: str = ""


Message = Request | Notification | Response


def request_id(value: Any) -> Id | None:
    """``value`` as an MCP id (a string or an integer), or ``None`` when it is not one.

    A number without a fractional part is an integer (``1e3`` is 1000, ``1.0`` is 1): JSON does not
    tell ``1.0`` from ``1``, and Python's ``json`` reads them as different types. Not null, not
    1.5, and not ``true`` (in Python a bool is an int; in JSON it is not a number).
    """
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    if isinstance(value, float) and value.is_integer():  # NaN and Infinity never get this far
        return int(value)
    return None


def is_valid_id(value: Any) -> bool:
    """Whether ``value`` is usable as an MCP id (see :func:`request_id`)."""
    return request_id(value) is not None


def id_of(message: Any) -> Id | None:
    """The id to answer an invalid message with: its own if it is a usable id, else null."""
    return request_id(message.get("id")) if isinstance(message, dict) else None


def is_response(message: Any) -> bool:
    """Shaped like a response: an object with no method and with a result or an error.

    (A ``"method": null`` counts as no method.)
    """
    return isinstance(message, dict) and message.get("method") is None and ("result" in message or "error" in message)


def response_problem(message: dict[str, Any]) -> str:
    """What is wrong with a response-shaped message, or "" when it is a valid JSON-RPC response."""
    if message.get("jsonrpc") != JSONRPC:
        return 'the "jsonrpc" member must be the string "2.0"'
    if "id" not in message:
        return "it has no id"
    if "result" in message and "error" in message:
        return "it has both a result and an error"
    if "result" in message:
        return "" if is_valid_id(message["id"]) else "the id must be a string or an integer"
    if message["id"] is not None and not is_valid_id(message["id"]):
        return "the id must be a string, an integer or null"
    error = message["error"]
    if not isinstance(error, dict):
        return '"error" must be an object'
    code = error.get("code")
    if not isinstance(code, int) or isinstance(code, bool) or not isinstance(error.get("message"), str):
        return '"error" needs an integer "code" and a string "message"'
    return ""


def classify(message: Any) -> Message:
    """Sort one decoded JSON value into a Request, a Notification or a Response.

    Anything else raises :class:`RpcError` (-32600); the caller answers it with :func:`id_of`.
    A malformed response is still a :class:`Response` (with its ``problem``): never answered.
    """
    if is_response(message):
        return Response(message.get("id"), message.get("result"), message.get("error"), response_problem(message))
    if not isinstance(message, dict):
        raise RpcError(INVALID_REQUEST, f"expected a JSON object, got {type(message).__name__}")
    if message.get("jsonrpc") != JSONRPC:
        raise RpcError(INVALID_REQUEST, 'the "jsonrpc" member must be the string "2.0"')
    method = message.get("method")
    if not isinstance(method, str):
        raise RpcError(INVALID_REQUEST, 'the "method" member must be a string')
    params = message.get("params", {})
    if not isinstance(params, dict | list):
        raise RpcError(INVALID_REQUEST, '"params" must be an object')
    if "id" not in message:
        return Notification(method, params)
    found = request_id(message["id"])
    if found is None:
        raise RpcError(INVALID_REQUEST, "the id must be a string or an integer (not null, not 1.5, not true)")
    return Request(found, method, params)


def result_message(id: Id, result: Any) -> dict[str, Any]:
    return {"jsonrpc": JSONRPC, "id": id, "result": result}


def error_message(id: Id | None, error: RpcError | ErrorCode, detail: str = "") -> dict[str, Any]:
    """An error reply. ``id`` is null when the request's id could not be read."""
    if isinstance(error, ErrorCode):
        error = RpcError(error, detail)
    return {"jsonrpc": JSONRPC, "id": id, "error": error.to_error()}
