"""Defects in the session's own messages: notifications answered, a ping answered with a body, the
client's protocol version echoed whatever it is (``initialize``, the legacy era).

    >>> import random
    >>> defect = ping_body(random.Random(0))
    >>> defect.reply(None, {"method": "ping", "id": 1}, {"jsonrpc": "2.0", "id": 1, "result": {}})
    {'jsonrpc': '2.0', 'id': 1, 'result': {'status': 'ok'}}
"""

from __future__ import annotations

import random
from typing import Any

from .base import CaseServer, Defect


class AnswersNotifications(Defect):
    def reply(self, server: CaseServer, message: Any, reply: Any) -> Any:
        if reply is None and isinstance(message, dict) and isinstance(message.get("method"), str):
            method = message["method"]
            which = self.params["which"]
            answered = "id" not in message and (
                which == "all"
                or method == which
                or (which == "unknown" and method not in server.dispatcher.notifications)
            )
            if answered:
                return {
                    "jsonrpc": "2.0",
                    "id": None,
                    "error": {"code": -32601, "message": f"Method not found: {method}"},
                }
        return reply


def answers_notifications(rng: random.Random) -> Defect:
    which = rng.choice(["all", "notifications/initialized", "unknown", "notifications/cancelled"])
    symptom = {
        # Era-neutral: a 2026-07-28 host has no handshake, and its first notification may come late (a Stop).
        "all": "Strict hosts drop the connection the first time they send a notification: 'received a response "
        "for an unknown message id'.",
        "notifications/initialized": "Gemini CLI disconnects as soon as the handshake ends; Claude Desktop logs an "
        "error line and carries on.",
        "unknown": "Works until the host sends a notification the server has never heard of; then strict hosts "
        "disconnect.",
        "notifications/cancelled": "When the user presses Stop in the host, strict hosts drop the connection.",
    }[which]
    return AnswersNotifications(
        "answers_notifications", "notification-silence", symptom, {"which": which}, loggable=which != "unknown"
    )


class PingBody(Defect):
    def reply(self, server: CaseServer, message: Any, reply: Any) -> Any:
        is_ping = isinstance(message, dict) and message.get("method") == "ping"
        if is_ping and isinstance(reply, dict) and "result" in reply:
            return {**reply, "result": self.params["body"]}
        return reply


def ping_body(rng: random.Random) -> Defect:
    body = rng.choice([{"pong": True}, {"status": "ok"}, {"time": 1733230000}])
    symptom = "A host's keep-alive marks the server as unhealthy every few minutes, though every call works."
    return PingBody("ping_body", "ping", symptom, {"body": body}, loggable=True)


class VersionEcho(Defect):
    def reply(self, server: CaseServer, message: Any, reply: Any) -> Any:
        if isinstance(message, dict) and message.get("method") == "initialize" and isinstance(reply, dict):
            asked = (message.get("params") or {}).get("protocolVersion")
            result = reply.get("result")
            if isinstance(result, dict) and isinstance(asked, str):
                return {**reply, "result": {**result, "protocolVersion": asked}}
        return reply


def version_echo(rng: random.Random) -> Defect:
    symptom = rng.choice(
        [
            "A host released this month connects, then fails on the first call with messages the server does not "
            "understand.",
            "Every host says it connected, even one that asked for a protocol revision from 1999.",
        ]
    )
    # Not in a host's log: a host asks initialize for a revision the server serves, and an echo of it is right.
    return VersionEcho("version_echo", "version-negotiation", symptom)
