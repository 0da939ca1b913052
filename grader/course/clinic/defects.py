"""The clinic's defects: the course's shop server with one rule broken, in one of many ways.

A *family* is a kind of defect (ids that change type, replies not flushed, a notification
answered...) and the rule it breaks, named by a check id of ``mcp-lab check``. Each family draws
its *parameters* (which id type, which method, which tool, after how many) and a symptom in the
words a host or a user would use: no table maps a symptom to an answer, and two learners with the
same family get different servers.

Some families break a rule on the first session any client runs (``visible``: the checker's first
failure names it); the others only on a path the checker never takes (a tool with a particular
argument, two requests in flight, an id of nineteen digits): there the learner must form a
hypothesis from the symptom and test it on the wire.

    >>> import random
    >>> defect = FAMILIES["ids_typed"](random.Random(3))
    >>> defect.rule, defect.visible
    ('id-echo', True)
    >>> defect.reply_id(42) if defect.params["variant"] == "num_to_str" else "42"
    '42'
"""

from __future__ import annotations

import json
import os
import random
import select
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from reference.framing import encode
from reference.server import Server
from reference.stateless import CLIENT_CAPABILITIES, MODERN, PROTOCOL_VERSION, is_modern


@dataclass
class Defect:
    """One defect with its parameters; the server calls its hooks around the reference's own work."""

    family: str
    rule: str  # the check id of the rule broken
    symptom: str  # what a host or user reports
    params: dict[str, Any] = field(default_factory=dict)
    visible: bool = True  # the checker's first failure names the rule
    also: frozenset[str] = frozenset()  # other rules the defect truly breaks (also a right answer)
    loggable: bool = False  # it shows in a host's log of an ordinary session
    era: str = "legacy"  # "modern": a rule of MCP 2026-07-28 (the per-request _meta era)

    # -- hooks (the default: behave as the reference does) --------------------------------------
    def start(self, server: CaseServer, stdout: BinaryIO) -> None:
        """Before the first line is read."""

    def dies_on(self, server: CaseServer, line: bytes, message: Any) -> bool:
        """Whether this line ends the process (a crash)."""
        return False

    def reply(self, server: CaseServer, message: Any, reply: Any) -> Any:
        """The reply to ``message`` (the reference's own is ``reply``)."""
        return reply

    def write(self, server: CaseServer, stdout: BinaryIO, reply: Any, message: Any) -> None:
        stdout.write(encode(reply))
        stdout.flush()

    def finish(self, server: CaseServer, stdout: BinaryIO) -> None:
        """After the loop ends (stdin closed): what a process's exit writes out."""

    def reply_id(self, id: Any) -> Any:
        return id


class Holding(Defect):
    """A defect that leaves some replies in a buffer: they go out only with the next flushed write, or
    at exit (as Python flushes its buffers on the way out), whatever their size."""

    def held(self, message: Any, reply: Any) -> bool:
        raise NotImplementedError

    def write(self, server: CaseServer, stdout: BinaryIO, reply: Any, message: Any) -> None:
        pending = server.__dict__.setdefault("pending", [])
        pending.append(encode(reply))
        if not self.held(message, reply):
            stdout.write(b"".join(pending))
            stdout.flush()
            pending.clear()

    def finish(self, server: CaseServer, stdout: BinaryIO) -> None:
        stdout.write(b"".join(server.__dict__.get("pending", [])))
        stdout.flush()


class CaseServer(Server):
    """The reference shop server with a defect's hooks around its reading, answering and writing."""

    def __init__(self, defect: Defect, toolbox: Any) -> None:
        super().__init__(toolbox)
        self.defect = defect
        self.lines = 0
        self.calls: Counter[str] = Counter()
        self._current: Any = None

    def handle_line(self, line: bytes) -> Any:
        self.lines += 1
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        self._current = message  # what the next write answers
        if self.defect.dies_on(self, line, message):
            raise SystemExit(1)
        if isinstance(message, dict) and message.get("method") == "tools/call":
            params = message.get("params")
            self.calls[str(params.get("name")) if isinstance(params, dict) else "?"] += 1
        reply = super().handle_line(line)
        return self.defect.reply(self, message, reply)

    def serve(self, stdin: BinaryIO, stdout: BinaryIO) -> int:
        self.defect.start(self, stdout)
        serve = getattr(self.defect, "serve", None)
        code = serve(self, stdin, stdout) if serve else super().serve(stdin, stdout)
        self.defect.finish(self, stdout)
        return code

    def write_frame(self, stdout: BinaryIO, reply: Any) -> None:  # type: ignore[override]
        self.defect.write(self, stdout, reply, getattr(self, "_current", None))

    def answer(self, stdout: BinaryIO, line: bytes) -> None:
        """Handle one line and write its reply (the loop's body)."""
        reply = self.handle_line(line)
        if reply is not None:
            self.write_frame(stdout, reply)


def _tool_of(message: Any) -> str:
    if isinstance(message, dict) and message.get("method") == "tools/call" and isinstance(message.get("params"), dict):
        return str(message["params"].get("name"))
    return ""


def _arguments(message: Any) -> dict[str, Any]:
    params = message.get("params") if isinstance(message, dict) else None
    arguments = params.get("arguments") if isinstance(params, dict) else None
    return arguments if isinstance(arguments, dict) else {}


def _is_error(reply: Any) -> bool:
    return isinstance(reply, dict) and "error" in reply


# -- visible families: the first session a client runs breaks the rule ---------------------------
class IdsTyped(Defect):
    def reply_id(self, id: Any) -> Any:
        variant = self.params["variant"]
        if variant == "num_to_str" and isinstance(id, int) and not isinstance(id, bool):
            return str(id)
        if variant == "digits_to_num" and isinstance(id, str) and id.isdigit():
            return int(id)
        if variant == "zero_to_null" and id == 0 and not isinstance(id, bool):
            return None
        return id

    def reply(self, server: CaseServer, message: Any, reply: Any) -> Any:
        if isinstance(reply, dict) and "id" in reply:
            reply = {**reply, "id": self.reply_id(reply["id"])}
        return reply


def ids_typed(rng: random.Random) -> Defect:
    variant = rng.choice(["num_to_str", "digits_to_num", "zero_to_null"])
    symptom = {
        "num_to_str": rng.choice(
            [
                "Hosts that number their requests wait forever for every reply; a test client with string ids works.",
                "Every request from a Rust-based host times out, though the server's log shows each one answered.",
            ]
        ),
        "digits_to_num": rng.choice(
            [
                'A host whose request ids are strings of digits ("17") times out; ids with letters work.',
                "One host works, another that sends ids as text never sees a reply, though the server answers.",
            ]
        ),
        "zero_to_null": rng.choice(
            [
                "The very first request of some hosts never gets its reply; every later one does.",
                "Hosts that count their requests from zero hang on their very first request; hosts that count from "
                "one work.",
            ]
        ),
    }[variant]
    return IdsTyped("ids_typed", "id-echo", symptom, {"variant": variant}, loggable=variant != "zero_to_null")


class Unflushed(Holding):
    def held(self, message: Any, reply: Any) -> bool:
        which = self.params["which"]
        method = message.get("method") if isinstance(message, dict) else None
        return which == "all" or (which == "errors" and _is_error(reply)) or method == which


def unflushed(rng: random.Random) -> Defect:
    which = rng.choice(["all", "tools/list", "errors"])
    symptom = {
        "all": rng.choice(
            [
                "Hangs on connect with every host; typed into a terminal by hand, it answers.",
                "`echo '{...}' | python server.py` prints the right reply, but no host ever gets an answer to its "
                "first request.",
            ]
        ),
        "tools/list": "The host connects, then shows no tools; after the user's first request they suddenly appear.",
        "errors": "A call that should fail shows no error in the host; the error turns up one call later, attached to "
        "nothing.",
    }[which]
    return Unflushed("unflushed", "stdout-flush", symptom, {"which": which})


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


class StdoutNoise(Defect):
    def start(self, server: CaseServer, stdout: BinaryIO) -> None:
        if self.params["variant"] == "banner":
            stdout.write(self.params["text"].encode() + b"\n")
            stdout.flush()

    def write(self, server: CaseServer, stdout: BinaryIO, reply: Any, message: Any) -> None:
        variant = self.params["variant"]
        tool = _tool_of(message)
        if variant == "call_log" and tool:
            stdout.write(f"{self.params['text']} {tool}\n".encode())
        stdout.write(encode(reply))
        if variant == "blank" and tool:
            stdout.write(b"\n")
        stdout.flush()


def stdout_noise(rng: random.Random) -> Defect:
    variant = rng.choice(["banner", "call_log", "blank"])
    text = {
        "banner": rng.choice(["Server ready", "Shop MCP server started on stdio", "Loading shop database..."]),
        "call_log": rng.choice(["calling", "INFO:shop:tool call", "[shop] running"]),
        "blank": "",
    }[variant]
    first = text[:1]
    symptom = {
        "banner": f'Claude Desktop logs "Unexpected token \'{first}\', \\"{text[:10]}\\"... is not valid JSON" '
        "when the server starts.",
        "call_log": f"Every tool call shows an error in the host log (\"Unexpected token '{first}'\"); the calls "
        "still return.",
        "blank": 'After each tool call the host logs "Unexpected end of JSON input"; everything else is quiet.',
    }[variant]
    also = frozenset({"stdout-silent-at-start"}) if variant == "banner" else frozenset()
    return StdoutNoise(
        "stdout_noise", "stdout-json-lines", symptom, {"variant": variant, "text": text}, also=also, loggable=True
    )


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


class NullId(Defect):
    def reply(self, server: CaseServer, message: Any, reply: Any) -> Any:
        if isinstance(message, dict) and "id" in message and message["id"] is None and "method" in message:
            if self.params["variant"] == "silent":
                return None
            return {"jsonrpc": "2.0", "id": None, "result": {}}
        return reply


def null_id(rng: random.Random) -> Defect:
    variant = rng.choice(["silent", "result"])
    symptom = 'A client with a bug that sends `"id": null` gets no error back, so nobody notices the bug.'
    return NullId("null_id", "invalid-request", symptom, {"variant": variant})


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


class StructuredMissing(Defect):
    def reply(self, server: CaseServer, message: Any, reply: Any) -> Any:
        if _tool_of(message) == self.params["tool"] and isinstance(reply, dict):
            result = reply.get("result")
            if isinstance(result, dict) and "structuredContent" in result:
                return {**reply, "result": {k: v for k, v in result.items() if k != "structuredContent"}}
        return reply


def structured_missing(rng: random.Random) -> Defect:
    tool = rng.choice(["count_orders", "list_orders", "get_order", "search_products"])
    symptom = (
        f"A host that validates tool results against their schema rejects every {tool} call; the other tools work."
    )
    return StructuredMissing("structured_missing", "structured-output", symptom, {"tool": tool}, loggable=True)


class ResultShape(Defect):
    def reply(self, server: CaseServer, message: Any, reply: Any) -> Any:
        if _tool_of(message) == self.params["tool"] and isinstance(reply, dict):
            result = reply.get("result")
            if isinstance(result, dict) and isinstance(result.get("content"), list):
                text = "".join(c.get("text", "") for c in result["content"] if isinstance(c, dict))
                content: Any = text if self.params["variant"] == "string" else [{"text": text}]
                return {**reply, "result": {**result, "content": content}}
        return reply


def result_shape(rng: random.Random) -> Defect:
    tool = rng.choice(["count_orders", "list_orders", "get_order", "search_products"])
    variant = rng.choice(["string", "untyped"])
    symptom = f"The official SDK's client raises a validation error for CallToolResult whenever it calls {tool}."
    return ResultShape("result_shape", "tools-call-result", symptom, {"tool": tool, "variant": variant}, loggable=True)


# -- the 2026-07-28 era: every request carries _meta, every result says what it is -----------------
def _modern_params(message: Any) -> dict[str, Any] | None:
    """The params of a request that carries the 2026-07-28 _meta (``None`` for any other line)."""
    params = message.get("params") if isinstance(message, dict) else None
    return params if isinstance(message, dict) and "id" in message and is_modern(params) else None


def _served_as_modern(server: CaseServer, message: dict[str, Any], meta: dict[str, Any]) -> Any:
    """The reference's reply to ``message`` with its _meta replaced by ``meta`` (a check skipped)."""
    patched = {**message, "params": {**message["params"], "_meta": meta}}
    return Server.handle_line(server, json.dumps(patched).encode())


class ResultType(Defect):
    """Results that do not say what they are: no ``resultType``, or one no client knows."""

    def reply(self, server: CaseServer, message: Any, reply: Any) -> Any:
        result = reply.get("result") if isinstance(reply, dict) else None
        if _modern_params(message) is None or not isinstance(result, dict):
            return reply
        variant = self.params["variant"]
        if variant == "calls" and message.get("method") != "tools/call":
            return reply
        if variant == "value":
            return {**reply, "result": {**result, "resultType": self.params["value"]}}
        return {**reply, "result": {k: v for k, v in result.items() if k != "resultType"}}


def result_type(rng: random.Random) -> Defect:
    variant = rng.choice(["all", "calls", "value"])
    value = rng.choice(["done", "ok", "success"])
    # A missing resultType is read as "complete" by a client that follows 2026-07-28 (Base Protocol > Result
    # Responses), so only a validating client notices it; an unknown value MUST be taken as invalid.
    symptom = {
        "all": rng.choice(
            [
                "A 2026-07-28 client library in its strict validation mode rejects every result of the server as "
                "malformed; hosts in their normal mode work with it.",
                "The 2026-07-28 conformance run of a host vendor rejects even the discovery answer; the same server "
                "works with a 2025 host.",
            ]
        ),
        "calls": "A validating 2026-07-28 client lists the tools fine, then rejects every tool call's result as "
        "malformed.",
        "value": f"A new host logs \"unknown result type '{value}'\" for every answer and shows nothing.",
    }[variant]
    return ResultType(
        "result_type", "modern-result-type", symptom, {"variant": variant, "value": value}, loggable=True, era="modern"
    )


class CacheHints(Defect):
    """The list results lose their caching hints, or carry ones no client can use."""

    def reply(self, server: CaseServer, message: Any, reply: Any) -> Any:
        result = reply.get("result") if isinstance(reply, dict) else None
        method = message.get("method") if isinstance(message, dict) else None
        if _modern_params(message) is None or not isinstance(result, dict) or method != self.params["method"]:
            return reply
        variant = self.params["variant"]
        if variant == "missing":
            result = {k: v for k, v in result.items() if k not in ("ttlMs", "cacheScope")}
        elif variant == "seconds":
            result = {**result, "ttlMs": "300s"}
        else:
            result = {**result, "cacheScope": "shared"}
        return {**reply, "result": result}


def cache_hints(rng: random.Random) -> Defect:
    method = rng.choice(["tools/list", "server/discover"])
    variant = rng.choice(["missing", "seconds", "scope"])
    what = "tool list" if method == "tools/list" else "discovery answer"
    # Without ttlMs a 2026-07-28 client assumes 0 (Utilities > Caching): it re-fetches rather than refusing.
    first = (
        f"A new host asks for the server's {what} again every time it needs it, where it caches other servers'."
        if variant == "missing"
        else f"A new host refuses the server's {what} as malformed; with a 2025 host the server works."
    )
    symptom = rng.choice(
        [first, f"The MCP Inspector in 2026-07-28 mode shows the {what} in red: 'invalid cacheable result'."]
    )
    return CacheHints(
        "cache_hints",
        "modern-cacheable",
        symptom,
        {"method": method, "variant": variant},
        loggable=True,
        era="modern",
    )


class VersionRefusal(Defect):
    """A version the server does not serve, refused the wrong way (or served)."""

    def reply(self, server: CaseServer, message: Any, reply: Any) -> Any:
        error = reply.get("error") if isinstance(reply, dict) else None
        if not isinstance(error, dict) or error.get("code") != -32022 or _modern_params(message) is None:
            return reply
        variant = self.params["variant"]
        if variant == "no_data":
            return {**reply, "error": {k: v for k, v in error.items() if k != "data"}}
        if variant == "invalid_params":
            return {**reply, "error": {"code": -32602, "message": "Invalid params: unsupported protocol version"}}
        meta = {**message["params"]["_meta"], PROTOCOL_VERSION: MODERN}
        return _served_as_modern(server, message, meta)


def version_refusal(rng: random.Random) -> Defect:
    variant = rng.choice(["no_data", "invalid_params", "served"])
    symptom = {
        "no_data": "A host that tries a newer revision first gives up on the server instead of falling back to "
        "2026-07-28: 'the server named no version it supports'.",
        "invalid_params": "Hosts that ask for a revision the server does not know report a malformed request and "
        "never retry with another version.",
        "served": "A preview host that speaks a revision from the future connects and then misreads every answer: "
        "the server never told it that it speaks another version.",
    }[variant]
    return VersionRefusal("version_refusal", "modern-unsupported-version", symptom, {"variant": variant}, era="modern")


class MetaUnchecked(Defect):
    """A request whose _meta lacks a required field is served anyway, with a default filled in."""

    def reply(self, server: CaseServer, message: Any, reply: Any) -> Any:
        params = _modern_params(message)
        error = reply.get("error") if isinstance(reply, dict) else None
        if params is None or not isinstance(error, dict) or error.get("code") != -32602:
            return reply
        if self.params.get("method") and message.get("method") != self.params["method"]:
            return reply
        meta = params["_meta"]
        if not isinstance(meta, dict):
            return reply
        missing = self.params["missing"]
        other = CLIENT_CAPABILITIES if missing == PROTOCOL_VERSION else PROTOCOL_VERSION
        if missing in meta or other not in meta:
            return reply  # only the one field this server forgets to check
        default = MODERN if missing == PROTOCOL_VERSION else {}
        return _served_as_modern(server, message, {**meta, missing: default})


def meta_unchecked(rng: random.Random) -> Defect:
    missing = rng.choice([PROTOCOL_VERSION, CLIENT_CAPABILITIES])
    what = "protocol version" if missing == PROTOCOL_VERSION else "client capabilities"
    symptom = rng.choice(
        [
            f"A client that forgot the {what} in its requests' _meta got answers anyway, shipped, and broke "
            "against every other server.",
            f"Requests that lack the {what} are served as if they had it; another server refuses the same client.",
        ]
    )
    return MetaUnchecked("meta_unchecked", "modern-envelope-errors", symptom, {"missing": missing}, era="modern")


# -- invisible families: a path the checker never takes ------------------------------------------------
class IdsHuge(Defect):
    """Ids read through a float, as a JavaScript-minded parser does: above 2**53 they change."""

    def reply_id(self, id: Any) -> Any:
        if isinstance(id, int) and not isinstance(id, bool) and abs(id) > 2**53:
            return int(float(id))
        return id

    def reply(self, server: CaseServer, message: Any, reply: Any) -> Any:
        if isinstance(reply, dict) and "id" in reply:
            reply = {**reply, "id": self.reply_id(reply["id"])}
        return reply


def ids_huge(rng: random.Random) -> Defect:
    symptom = rng.choice(
        [
            "A host that uses nanosecond timestamps as request ids (19 digits) never matches a reply; hosts with "
            "small ids work.",
            "Requests from one agent framework, whose ids are 64-bit random numbers, time out; all other hosts work.",
        ]
    )
    return IdsHuge("ids_huge", "id-echo", symptom, visible=False)


class InFlight(Defect):
    """Two requests in flight at once: their replies go out with each other's ids."""

    def serve(self, server: CaseServer, stdin: BinaryIO, stdout: BinaryIO) -> int:
        fd = stdin.fileno()
        buffer = b""
        eof = False
        while True:
            while b"\n" not in buffer and not eof:
                chunk = os.read(fd, 65536)
                eof = not chunk
                buffer += chunk
            if b"\n" not in buffer:
                return 0
            line, buffer = buffer.split(b"\n", 1)
            if not line.strip():
                continue
            ready = b"\n" in buffer or bool(select.select([fd], [], [], 0.05)[0])
            while ready and b"\n" not in buffer and not eof:
                chunk = os.read(fd, 65536)
                eof = not chunk
                buffer += chunk
            if b"\n" not in buffer:
                server.answer(stdout, line.rstrip(b"\r"))
                continue
            second, buffer = buffer.split(b"\n", 1)
            first_reply = server.handle_line(line.rstrip(b"\r"))
            second_reply = server.handle_line(second.rstrip(b"\r"))
            if isinstance(first_reply, dict) and isinstance(second_reply, dict):
                ids = first_reply.get("id"), second_reply.get("id")
                first_reply, second_reply = {**first_reply, "id": ids[1]}, {**second_reply, "id": ids[0]}
            for reply in (first_reply, second_reply):
                if reply is not None:
                    stdout.write(encode(reply))
                    stdout.flush()


def in_flight(rng: random.Random) -> Defect:
    symptom = rng.choice(
        [
            "Hosts that send several requests at once get answers attached to the wrong request; one at a time works.",
            "Under load, a tool's result sometimes shows up as the answer to a different tool call.",
        ]
    )
    return InFlight("in_flight", "id-echo", symptom, visible=False)


class FlushPath(Holding):
    def held(self, message: Any, reply: Any) -> bool:
        tool, arguments = _tool_of(message), _arguments(message)
        if tool != self.params["tool"]:
            return False
        value = arguments.get(self.params["argument"])
        return isinstance(value, int) and not isinstance(value, bool) and value >= self.params["above"]


def flush_path(rng: random.Random) -> Defect:
    tool, argument, above = rng.choice(
        [("search_products", "limit", rng.choice([20, 25, 30])), ("list_orders", "offset", rng.choice([50, 100, 200]))]
    )
    symptom = {
        "search_products": "Product searches that ask for many results hang in the host; short searches work.",
        "list_orders": "Paging through orders works for the first pages, then the host hangs on the next page.",
    }[tool]
    params = {"tool": tool, "argument": argument, "above": above}
    return FlushPath("flush_path", "stdout-flush", symptom, params, visible=False)


class ErrorPathPrint(Defect):
    def write(self, server: CaseServer, stdout: BinaryIO, reply: Any, message: Any) -> None:
        result = reply.get("result") if isinstance(reply, dict) else None
        if _tool_of(message) == self.params["tool"] and isinstance(result, dict) and result.get("isError"):
            stdout.write(f"{self.params['text']}: {result['content'][0].get('text', '')[:40]}\n".encode())
        stdout.write(encode(reply))
        stdout.flush()


def error_path_print(rng: random.Random) -> Defect:
    tool = rng.choice(["get_order", "count_orders"])
    text = rng.choice(["WARNING", "tool error", "Traceback (most recent call last)"])
    symptom = {
        "get_order": "Asking for an order that does not exist shows a JSON error in the host's log instead of the "
        "tool's message.",
        "count_orders": "When the model misspells an order status, the host logs 'is not valid JSON' and the "
        "model never sees the list of valid statuses.",
    }[tool]
    return ErrorPathPrint("error_path_print", "stdout-json-lines", symptom, {"tool": tool, "text": text})


class BigResult(Defect):
    def write(self, server: CaseServer, stdout: BinaryIO, reply: Any, message: Any) -> None:
        data = encode(reply)
        if len(data) > self.params["bytes"]:
            data = json.dumps(reply, indent=1, ensure_ascii=False).encode() + b"\n"
        stdout.write(data)
        stdout.flush()


def big_result(rng: random.Random) -> Defect:
    size = rng.choice([8000, 10000, 12000])
    symptom = (
        "Listing many orders at once makes the host log 'Expected property name or '}' in JSON'; short lists work."
    )
    return BigResult("big_result", "stdout-json-lines", symptom, {"bytes": size}, visible=False)


class WrongCount(Defect):
    def reply(self, server: CaseServer, message: Any, reply: Any) -> Any:
        if _tool_of(message) == "count_orders" and _arguments(message).get("status") == self.params["status"]:
            result = reply.get("result") if isinstance(reply, dict) else None
            if isinstance(result, dict) and not result.get("isError"):
                count = result.get("structuredContent", {}).get("count")
                if count is None:
                    count = json.loads(result["content"][0]["text"])["count"]
                value = {"status": self.params["status"], "count": count + self.params["off_by"]}
                fixed = {**result, "content": [{"type": "text", "text": json.dumps(value)}]}
                if "structuredContent" in result:
                    fixed["structuredContent"] = value
                return {**reply, "result": fixed}
        return reply


def wrong_count(rng: random.Random) -> Defect:
    status = rng.choice(["shipped", "delivered", "cancelled", "refunded"])
    off = rng.choice([1, -1, 10])
    symptom = (
        f"The shop's manager says the count of {status} orders the assistant reports never matches the shop's own."
    )
    return WrongCount("wrong_count", "shop-contract", symptom, {"status": status, "off_by": off})


class StructuredFilter(Defect):
    def reply(self, server: CaseServer, message: Any, reply: Any) -> Any:
        if _tool_of(message) == "list_orders" and self.params["argument"] in _arguments(message):
            result = reply.get("result") if isinstance(reply, dict) else None
            if isinstance(result, dict) and "structuredContent" in result:
                return {**reply, "result": {k: v for k, v in result.items() if k != "structuredContent"}}
        return reply


def structured_filter(rng: random.Random) -> Defect:
    argument = rng.choice(["customer_id", "status"])
    symptom = {
        "customer_id": "A host that validates results rejects 'the orders of customer N', but lists all orders fine.",
        "status": "A host that validates results rejects 'the paid orders', but lists all orders fine.",
    }[argument]
    return StructuredFilter("structured_filter", "structured-output", symptom, {"argument": argument}, visible=False)


class EmptyResultPrint(Defect):
    def write(self, server: CaseServer, stdout: BinaryIO, reply: Any, message: Any) -> None:
        result = reply.get("result") if isinstance(reply, dict) else None
        value = result.get("structuredContent") if isinstance(result, dict) else None
        paging = _tool_of(message) == "list_orders" and "offset" in _arguments(message)
        if paging and isinstance(value, dict) and value.get("orders") == []:
            stdout.write(f"{self.params['text']} {json.dumps(_arguments(message))}\n".encode())
        stdout.write(encode(reply))
        stdout.flush()


def empty_result_print(rng: random.Random) -> Defect:
    text = rng.choice(["no results for", "WARNING empty result", "nothing found:"])
    symptom = rng.choice(
        [
            "Paging past the last order puts 'is not valid JSON' in the host's log instead of an empty page.",
            "When the model asks for one page too many, the host logs a JSON error; every other page is fine.",
        ]
    )
    return EmptyResultPrint("empty_result_print", "stdout-json-lines", symptom, {"text": text}, visible=False)


class PageSkip(Defect):
    def reply(self, server: CaseServer, message: Any, reply: Any) -> Any:
        offset = _arguments(message).get("offset")
        if _tool_of(message) != "list_orders" or not isinstance(offset, int) or offset < self.params["from"]:
            return reply
        result = reply.get("result") if isinstance(reply, dict) else None
        value = result.get("structuredContent") if isinstance(result, dict) else None
        if not isinstance(value, dict) or not value.get("orders"):
            return reply
        value = {**value, "orders": value["orders"][1:]}  # one order lost at the page's edge
        fixed = {**result, "content": [{"type": "text", "text": json.dumps(value, ensure_ascii=False)}]}
        fixed["structuredContent"] = value
        return {**reply, "result": fixed}


def page_skip(rng: random.Random) -> Defect:
    start = rng.choice([50, 100, 500])
    symptom = "Paging far through the order list, the assistant misses an order at the top of every page."
    return PageSkip("page_skip", "shop-contract", symptom, {"from": start}, visible=False)


class VersionNewer(Defect):
    """Versions compared as text: any version from 2026-07-28 onwards is taken for 2026-07-28."""

    def reply(self, server: CaseServer, message: Any, reply: Any) -> Any:
        params = _modern_params(message)
        error = reply.get("error") if isinstance(reply, dict) else None
        if params is None or not isinstance(error, dict) or error.get("code") != -32022:
            return reply
        version = params["_meta"].get(PROTOCOL_VERSION)
        if isinstance(version, str) and version > MODERN:
            return _served_as_modern(server, message, {**params["_meta"], PROTOCOL_VERSION: MODERN})
        return reply


def version_newer(rng: random.Random) -> Defect:
    symptom = rng.choice(
        [
            "A preview build of a host, which asks for next year's revision first, never falls back to 2026-07-28: "
            "it gets answers it misreads. Hosts that ask for an old revision are told which one to use.",
            "A host that tries the newest revision it knows (2027) gets results in the old shape and no error.",
        ]
    )
    return VersionNewer("version_newer", "modern-unsupported-version", symptom, visible=False, era="modern")


def call_meta_unchecked(rng: random.Random) -> Defect:
    missing = rng.choice([PROTOCOL_VERSION, CLIENT_CAPABILITIES])
    what = "protocol version" if missing == PROTOCOL_VERSION else "client capabilities"
    symptom = (
        f"A client whose tool calls forget the {what} in _meta is served anyway; its other requests are refused "
        "as they should be, so nobody noticed the bug."
    )
    params = {"missing": missing, "method": "tools/call"}
    return MetaUnchecked("call_meta_unchecked", "modern-envelope-errors", symptom, params, visible=False, era="modern")


class EraMixed(Defect):
    """A request of the other era on a connection is dropped without a word."""

    def reply(self, server: CaseServer, message: Any, reply: Any) -> Any:
        if self.params["variant"] == "modern_after_initialize":
            dropped = server.session.initialize_seen and _modern_params(message) is not None
        else:
            legacy = _modern_params(message) is None  # an initialize without _meta: the legacy handshake
            dropped = server.modern and legacy and isinstance(message, dict) and message.get("method") == "initialize"
        return None if dropped else reply


def era_mixed(rng: random.Random) -> Defect:
    variant = rng.choice(["modern_after_initialize", "initialize_after_modern"])
    symptom = {
        "modern_after_initialize": rng.choice(
            [
                "A host that upgraded itself while connected (it started in 2025-11-25, then sent 2026-07-28 "
                "requests) hangs until it times out; a fresh start works.",
                "A client library that mixes eras on one connection by mistake waits forever instead of being told.",
            ]
        ),
        "initialize_after_modern": "A dual-era host whose discovery probe timed out falls back to initialize, "
        "and then hangs on connect; started again, it connects at once.",
    }[variant]
    return EraMixed("era_mixed", "era-mixing", symptom, {"variant": variant}, era="modern")


FAMILIES: dict[str, Callable[[random.Random], Defect]] = {
    "ids_typed": ids_typed,
    "unflushed": unflushed,
    "answers_notifications": answers_notifications,
    "stdout_noise": stdout_noise,
    "error_codes": error_codes,
    "parse_reply": parse_reply,
    "ping_body": ping_body,
    "version_echo": version_echo,
    "null_id": null_id,
    "dies_on": dies_on,
    "error_envelope": error_envelope,
    "structured_missing": structured_missing,
    "result_shape": result_shape,
    "result_type": result_type,
    "cache_hints": cache_hints,
    "version_refusal": version_refusal,
    "meta_unchecked": meta_unchecked,
    "ids_huge": ids_huge,
    "in_flight": in_flight,
    "flush_path": flush_path,
    "error_path_print": error_path_print,
    "big_result": big_result,
    "wrong_count": wrong_count,
    "structured_filter": structured_filter,
    "empty_result_print": empty_result_print,
    "page_skip": page_skip,
    "version_newer": version_newer,
    "call_meta_unchecked": call_meta_unchecked,
    "era_mixed": era_mixed,
}


def serve(defect: Defect) -> int:
    """Run the shop server with ``defect`` on this process's stdin and stdout."""
    from reference.database import ensure_default, open_readonly
    from reference.shop import shop_toolbox

    server = CaseServer(defect, shop_toolbox(open_readonly(ensure_default())))
    try:
        return server.serve(sys.stdin.buffer, sys.stdout.buffer)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
