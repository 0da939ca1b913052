"""A modern-only (2026-07-28) stdio server, standard library only, with a few odd tools.

    python modern_only.py RECORD [--slow-start S]

Every request must carry the envelope in ``params._meta``; a version other than 2026-07-28 gets
-32022 with ``data.supported``, ``initialize`` gets -32601 (it names the supported version).
Every request it reads is appended to RECORD, one JSON line, so a test sees what came on the wire.
With ``--slow-start S`` it sleeps S seconds before it answers its first request (a slow start).

Tools (``tools/call``):

- ``confirm``: asks to confirm (an elicitation) with a requestState of odd characters; on a retry
  it answers with what came back: the state exactly as sent or not, and the answers;
- ``state_only``: an input_required result with a requestState and no inputRequests, once;
- ``task``: a result of an unknown resultType;
- ``forever``: input_required every time;
- ``plain``: a result without resultType (to be read as complete);
- ``rude``: asks to confirm even a client that declared no elicitation (a server bug);
- ``old_way``: asks by an ``elicitation/create`` request of its own, as only legacy servers may,
  and answers with the reply the client gave it.
"""

import json
import sys
import time

RECORD = sys.argv[1]
SLOW_START = float(sys.argv[3]) if sys.argv[2:3] == ["--slow-start"] else 0.0
MODERN = "2026-07-28"
PREFIX = "io.modelcontextprotocol/"
# Characters a careless client could alter: escapes, a non-BMP character, JSON-looking text.
STATE = 'st\u00e9t\u00e9 \U0001f600 "quoted" \\ {"not": "json to read"} \u2028end'
SERVER_INFO = {PREFIX + "serverInfo": {"name": "modern-only", "version": "1"}}
TOOLS = [
    {"name": n, "inputSchema": {"type": "object"}}
    for n in ("confirm", "state_only", "task", "forever", "plain", "rude", "old_way")
]
ASK = {
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "Really?",
        "requestedSchema": {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]},
    },
}


def send(message: dict) -> None:
    sys.stdout.buffer.write(json.dumps(message).encode() + b"\n")
    sys.stdout.buffer.flush()


def result(rid, body: dict) -> None:
    send({"jsonrpc": "2.0", "id": rid, "result": {**body, "_meta": SERVER_INFO}})


def error(rid, code: int, text: str, data=None) -> None:
    send({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": text, **({"data": data} if data else {})}})


def call(rid, params: dict, capabilities: dict) -> None:
    name = params.get("name")
    if name == "confirm":
        if "requestState" not in params:
            if "elicitation" not in capabilities:
                return error(rid, -32021, "elicitation required", {"requiredCapabilities": {"elicitation": {}}})
            return result(rid, {"resultType": "input_required", "inputRequests": {"ok?": ASK}, "requestState": STATE})
        text = json.dumps({"state_intact": params["requestState"] == STATE, "answers": params.get("inputResponses")})
        return result(rid, {"resultType": "complete", "content": [{"type": "text", "text": text}]})
    if name == "state_only":
        if "requestState" not in params:
            return result(rid, {"resultType": "input_required", "requestState": "s1"})
        text = json.dumps({"state": params["requestState"], "has_responses": "inputResponses" in params})
        return result(rid, {"resultType": "complete", "content": [{"type": "text", "text": text}]})
    if name == "task":
        return result(rid, {"resultType": "task", "taskId": "t1"})
    if name == "forever":
        return result(rid, {"resultType": "input_required", "requestState": "again"})
    if name == "rude":
        return result(rid, {"resultType": "input_required", "inputRequests": {"ok?": ASK}})
    if name == "old_way":
        send({"jsonrpc": "2.0", "id": "srv-1", "method": ASK["method"], "params": ASK["params"]})
        reply = sys.stdin.buffer.readline().decode()
        return result(rid, {"resultType": "complete", "content": [{"type": "text", "text": reply.strip()}]})
    if name == "plain":
        return send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "plain"}]}})
    return error(rid, -32602, f"unknown tool {name!r}")


for line in sys.stdin.buffer:
    time.sleep(SLOW_START)
    SLOW_START = 0.0
    message = json.loads(line)
    with open(RECORD, "a") as record:
        record.write(json.dumps(message) + "\n")
    if "id" not in message:
        continue
    rid, method = message["id"], message.get("method")
    params = message.get("params") or {}
    meta = params.get("_meta") or {}
    if method == "initialize":
        error(rid, -32601, f"initialize is not served: this server speaks {MODERN} (no handshake)")
        continue
    if PREFIX + "protocolVersion" not in meta or PREFIX + "clientCapabilities" not in meta:
        error(rid, -32602, "params._meta lacks the protocol version or the client capabilities")
        continue
    version = meta[PREFIX + "protocolVersion"]
    if version != MODERN:
        error(rid, -32022, "Unsupported protocol version", {"supported": [MODERN], "requested": version})
        continue
    capabilities = meta[PREFIX + "clientCapabilities"]
    if method == "server/discover":
        result(rid, {"resultType": "complete", "supportedVersions": [MODERN], "capabilities": {"tools": {}},
                     "ttlMs": 0, "cacheScope": "public"})  # fmt: skip
    elif method == "tools/list":
        result(rid, {"resultType": "complete", "tools": TOOLS, "ttlMs": 0, "cacheScope": "public"})
    elif method == "tools/call":
        call(rid, params, capabilities)
    elif method == "prompts/list":  # a result type on a method that may not take one
        result(rid, {"resultType": "input_required", "requestState": "x"})
    else:
        error(rid, -32601, f"Method not found: {method}")
