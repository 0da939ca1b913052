"""Defects in the server's errors: the wrong code for an unknown method, no "Parse error" reply, the
error envelope broken, or a crash on bad input (not UTF-8, a message with no method).

    >>> import random
    >>> defect = error_codes(random.Random(0))
    >>> defect.reply(None, {"method": "prompts/list"}, {"jsonrpc": "2.0", "id": 3, "error": {"code": -32601}})
    {'jsonrpc': '2.0', 'id': 3, 'error': {'code': -32600, 'message': 'Invalid Request: prompts/list'}}
"""

from __future__ import annotations

import random
from typing import Any

from .base import CaseServer, Defect, _is_error


class ErrorCodes(Defect):
    def reply(self, server: CaseServer, message: Any, reply: Any) -> Any:
        if isinstance(reply, dict) and isinstance(reply.get("error"), dict):
            error = reply["error"]
            if error.get("code") == -32601 and reply.get("id") is not None:
                code = self.params["code"]
                text = {-32602: "Invalid params", -32600: "Invalid Request", -32603: "Internal error"}[code]
                return {**reply, "error": {**error, "code": code, "message": f"{text}: {message.get('method')}"}}
        return reply


def error_codes(rng: random.Random) -> Defect:
    code = rng.choice([-32602, -32600, -32603])
    symptom = rng.choice(
        [
            "A host that asks for optional features (prompts/list, resources/list) treats the answer as a broken "
            "server instead of a feature that is not there.",
            "The MCP Inspector shows a red error for every method the server does not serve, instead of 'not "
            "supported'.",
        ]
    )
    return ErrorCodes("error_codes", "method-not-found", symptom, {"code": code}, loggable=True)


class ParseReply(Defect):
    def reply(self, server: CaseServer, message: Any, reply: Any) -> Any:
        if isinstance(reply, dict) and isinstance(reply.get("error"), dict) and reply["error"].get("code") == -32700:
            if self.params["variant"] == "silent":
                return None
            return {**reply, "error": {"code": -32600, "message": "Invalid Request"}}
        return reply


def parse_reply(rng: random.Random) -> Defect:
    variant = rng.choice(["silent", "invalid_request"])
    symptom = {
        "silent": "A client that sends a truncated line by mistake waits for an answer until it times out.",
        "invalid_request": "A client library that retries on 'Parse error' never retries against this server.",
    }[variant]
    return ParseReply("parse_reply", "parse-error", symptom, {"variant": variant})


class DiesOn(Defect):
    def dies_on(self, server: CaseServer, line: bytes, message: Any) -> bool:
        variant = self.params["variant"]
        if variant == "utf8":
            try:
                line.decode("utf-8")
            except UnicodeDecodeError:
                return True
            return False
        if variant == "array":
            return isinstance(message, list)
        return (
            isinstance(message, dict) and "method" not in message and "result" not in message and "error" not in message
        )


def dies_on(rng: random.Random) -> Defect:
    variant = rng.choice(["utf8", "no_method"])
    symptom = rng.choice(
        [
            "Works until a client sends one malformed line; then the host says the server disconnected.",
            "Every few days a host reports 'Server transport closed unexpectedly'; restarting fixes it.",
        ]
    )
    also = frozenset({"parse-error"}) if variant == "utf8" else frozenset({"invalid-request"})
    return DiesOn("dies_on", "survives-bad-input", symptom, {"variant": variant}, also=also)


class ErrorEnvelope(Defect):
    def reply(self, server: CaseServer, message: Any, reply: Any) -> Any:
        if _is_error(reply):
            if self.params["variant"] == "result_null":
                return {**reply, "result": None}
            return {k: v for k, v in reply.items() if k != "jsonrpc"}
        return reply


def error_envelope(rng: random.Random) -> Defect:
    variant = rng.choice(["result_null", "no_jsonrpc"])
    symptom = (
        "Strict hosts reject every error reply ('unrecognized keys' or 'expected \"2.0\"'); successful calls work."
    )
    return ErrorEnvelope("error_envelope", "envelope", symptom, {"variant": variant}, loggable=True)
