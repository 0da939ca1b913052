"""Multi round-trip requests (MCP 2026-07-28, ``basic/patterns/mrtr``): ask the client, then hear the retry.

In the modern era a server never sends a request of its own. When a ``tools/call``,
``prompts/get`` or ``resources/read`` needs something from the user, the server answers
``{"resultType": "input_required", "inputRequests": {...}, "requestState": "..."}``; the client
gathers the answers and sends the *same* request again under a new id, with
``params.inputResponses`` (the same keys) and the ``requestState`` echoed byte for byte.

The retry carries all the server knows: ``requestState`` passed through the client, so it is
attacker-controlled input. It is sealed here (HMAC-SHA256 with a key drawn at random when the process
starts), bound to the request it was issued for and short-lived; :meth:`Sealer.open` refuses a state
that was changed, issued by another process, issued for another request or expired. Nothing here
depends on the transport: stdio and HTTP share one key per process, so any instance can open what
another sealed.

    >>> sealer = Sealer(key=b"k" * 32, clock=lambda: 1000.0)
    >>> bound = binding("tools/call", "cancel_order", {"order_id": 7, "reason": "asked"})
    >>> state = sealer.seal(bound, ask="confirm")
    >>> sealer.open(state, bound)["ask"]
    'confirm'
    >>> sealer.open(state, binding("tools/call", "cancel_order", {"order_id": 8, "reason": "asked"}))
    Traceback (most recent call last):
    ...
    reference.errors.RpcError: Invalid params: requestState was issued for another request (another tool or \
other arguments): send it only with the request it came back on, unchanged
    >>> read_retry({"name": "x"})
    Retry(responses=None, state=None)
    >>> read_retry({"inputResponses": []})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    reference.errors.RpcError: Invalid params: "inputResponses" must be an object ... got array
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .errors import INVALID_PARAMS, MISSING_CAPABILITY, RpcError, json_type

STATE_TTL_S = 300  # five minutes to answer: long enough for a person, short enough to bound a replay
MAX_STATE = 4096  # a state this server issues is ~200 characters; a longer one is not ours
ACTIONS = ("accept", "decline", "cancel")  # an ElicitResult's three answers (client/elicitation)
PAGE = "2026-07-28 basic/patterns/mrtr"

# One key per process, never written anywhere: a restarted server cannot open an older state, and
# the client is then asked afresh. Every Server of the process (stdio's one, HTTP's many) shares it.
_PROCESS_KEY = secrets.token_bytes(32)


@dataclass(frozen=True)
class Retry:
    """What a request brings back from an earlier ``input_required`` (both ``None`` on a first try)."""

    responses: dict[str, Any] | None
    state: str | None

    @property
    def first(self) -> bool:
        return self.responses is None and self.state is None


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def canonical(value: Any) -> str:
    """One spelling of a JSON value: the same arguments always give the same text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def binding(method: str, name: str, arguments: Any) -> str:
    """What a state is bound to: the method, the tool (or prompt, or URI) and its arguments, digested.

    There is no principal to bind: a stdio process serves one client, and the HTTP endpoint's one
    bearer token names no user (mrtr's "SHOULD bind the authenticated principal" has nothing to hold).
    """
    return hashlib.sha256(canonical([method, name, arguments]).encode("utf-8")).hexdigest()


class Sealer:
    """Seals a ``requestState`` (HMAC-SHA256) and opens it again, or refuses it with -32602."""

    def __init__(
        self, key: bytes | None = None, ttl_s: float = STATE_TTL_S, clock: Callable[[], float] = time.time
    ) -> None:
        self.key = _PROCESS_KEY if key is None else key
        self.ttl_s = ttl_s
        self.clock = clock  # tests move it to see a state expire

    def _mac(self, payload: str) -> str:
        return _b64(hmac.new(self.key, payload.encode("ascii"), hashlib.sha256).digest())

    def seal(self, bound: str, **fields: Any) -> str:
        """An opaque state for the request ``bound`` names, carrying ``fields`` (JSON values)."""
        body = {**fields, "for": bound, "exp": int(self.clock() + self.ttl_s)}
        payload = _b64(canonical(body).encode("utf-8"))
        return f"{payload}.{self._mac(payload)}"

    def open(self, state: Any, bound: str) -> dict[str, Any]:
        """The fields sealed in ``state``, once it is shown to be ours, for ``bound``, and fresh.

        Every refusal is -32602 (Invalid params): ``requestState`` is a parameter of the retried
        request and this one is unusable. mrtr sends a malformed retry to a JSON-RPC error "with an
        appropriate code", and -32602 is JSON-RPC's for bad params; none of 2026-07-28's own codes
        (-32020..-32022: headers, capabilities, versions) is about a parameter's value.
        """
        if not isinstance(state, str):
            raise RpcError(
                INVALID_PARAMS,
                f'"requestState" must be the string an input_required result gave, got {json_type(state)}',
            )
        payload, dot, mac = state.partition(".")
        if not dot or len(state) > MAX_STATE or not hmac.compare_digest(self._mac(payload).encode(), mac.encode()):
            raise RpcError(
                INVALID_PARAMS,
                "requestState failed verification: it was changed, or another server process issued it "
                "(each process signs with its own key). Echo the requestState of the last input_required "
                "result byte for byte, or send the request again without inputResponses and requestState "
                f"to be asked afresh ({PAGE}: a server MUST reject state that fails verification)",
            )
        try:
            body = json.loads(_unb64(payload))
        except (binascii.Error, ValueError):  # unreachable with our key; refused all the same
            raise RpcError(INVALID_PARAMS, "requestState failed verification") from None
        if not isinstance(body, dict) or body.get("for") != bound:
            raise RpcError(
                INVALID_PARAMS,
                "requestState was issued for another request (another tool or other arguments): send it "
                "only with the request it came back on, unchanged",
            )
        late = self.clock() - body.get("exp", 0)
        if late > 0:
            raise RpcError(
                INVALID_PARAMS,
                f"requestState expired {late:.0f} s ago (it lasts {self.ttl_s:.0f} s): send the request again "
                "without inputResponses and requestState to be asked afresh",
            )
        return body


def read_retry(params: dict[str, Any]) -> Retry:
    """``inputResponses`` and ``requestState`` as a request carries them, their types checked (-32602)."""
    responses, state = params.get("inputResponses"), params.get("requestState")
    if responses is not None and not isinstance(responses, dict):
        raise RpcError(
            INVALID_PARAMS,
            '"inputResponses" must be an object with one answer per key of the inputRequests it answers, '
            f"got {json_type(responses)}",
        )
    if state is not None and not isinstance(state, str):
        raise RpcError(
            INVALID_PARAMS, f'"requestState" must be the string an input_required result gave, got {json_type(state)}'
        )
    return Retry(responses, state)


def input_required(requests: dict[str, Any], state: str) -> dict[str, Any]:
    """The result that asks: ``resultType`` says so, and carries no caching hints (mrtr: never cached)."""
    return {"resultType": "input_required", "inputRequests": requests, "requestState": state}


def elicit_form(message: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """An ``elicitation/create`` request for ``inputRequests``: a form of flat primitive fields."""
    schema = {"type": "object", "properties": properties, "required": required}
    return {"method": "elicitation/create", "params": {"mode": "form", "message": message, "requestedSchema": schema}}


def require_form_elicitation(capabilities: dict[str, Any], why: str) -> None:
    """-32021 unless this request's ``clientCapabilities`` lets the server ask through a form.

    ``elicitation: {}`` means form mode (client/elicitation, Capabilities); a client that lists modes
    and leaves out ``form`` cannot show one.
    """
    declared = capabilities.get("elicitation")
    if isinstance(declared, dict) and (not declared or isinstance(declared.get("form"), dict)):
        return
    needed: dict[str, Any] = {"elicitation": {"form": {}}} if isinstance(declared, dict) else {"elicitation": {}}
    said = "declares elicitation without form mode" if isinstance(declared, dict) else "declares no elicitation"
    raise RpcError(
        MISSING_CAPABILITY,
        f"{why}, and this request's _meta clientCapabilities {said}: declare it on the request to be asked "
        f"({PAGE}: a server MUST NOT send an inputRequest the client has not declared)",
        {"requiredCapabilities": needed},
    )


def read_elicit_result(responses: dict[str, Any], key: str) -> tuple[str, dict[str, Any]] | None:
    """The action and content of the ElicitResult under ``key``; ``None`` when it is not there.

    A missing answer is not an error (mrtr: the server asks again); a malformed one is (-32602).
    """
    answer = responses.get(key)
    if answer is None:
        return None
    where = f'inputResponses["{key}"]'
    if not isinstance(answer, dict):
        raise RpcError(
            INVALID_PARAMS,
            f'{where} must be an ElicitResult object ({{"action": "accept", "content": {{...}}}}), '
            f"got {json_type(answer)}",
        )
    action = answer.get("action")
    if action not in ACTIONS:
        shown = json.dumps(action)[:30] if isinstance(action, str) else json_type(action)
        raise RpcError(INVALID_PARAMS, f'{where}.action must be "accept", "decline" or "cancel", got {shown}')
    content = answer.get("content")
    if action == "accept" and not isinstance(content, dict):
        raise RpcError(
            INVALID_PARAMS,
            f'{where}: an accepted form elicitation carries the form\'s answers in "content", an object; '
            f"got {json_type(content)}",
        )
    return action, content if isinstance(content, dict) else {}
