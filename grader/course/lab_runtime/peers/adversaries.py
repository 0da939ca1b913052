"""Servers with hard habits, for testing a client (stage 06): each is the shop server plus one habit.

Every one answers with the reference's own replies (so a result is always right) and differs only
in *how* and *when* it answers, the way real servers do:

- ``polite``: none; the shop server as it should be (a baseline);
- ``reverse``: holds the replies to requests that come close together, then writes them last
  first; before each reply to a numeric id it writes a forged reply with that id as a string;
- ``chatty``: a log notification before every reply; before answering ``tools/list`` it sends a
  ``ping`` (the first with the id 0) and a request the client does not serve, and answers only
  once the ping has ``{}`` and the other -32601;
- ``mute``: reads everything, answers nothing;
- ``babbler``: answers ``initialize``, then sends a log notification every 0.3 s and answers
  nothing else (a timeout that restarts at every message never ends);
- ``vanish``: answers ``initialize``, then exits at the next request;
- ``noisy``: writes 1 MiB to stderr before each reply;
- ``deaf``: answers, but stays running after its stdin closes (SIGTERM ends it);
- ``stubborn``: as ``deaf``, and ignores SIGTERM too (only SIGKILL ends it);

and, for the eras of MCP 2026-07-28 (``polite`` is dual-era: it answers ``server/discover`` and
``initialize`` alike):

- ``legacy``: a server of 2025-11-25 and before: a request before ``initialize`` (the
  ``server/discover`` probe) gets an error, -32601 by default; ``legacy:CODE`` answers with CODE
  instead (legacy servers differ: -32602, -32600, -32000...), ``legacy:silent`` not at all;
- ``future``: a modern server of a later revision: ``server/discover`` gets -32022 listing only
  versions the client does not speak (it would still answer ``initialize``: a client must not ask);
- ``asker``: a modern server whose ``tools/call`` asks for input (``input_required``) three times
  before it completes: two questions and a ``requestState``; then a ``requestState`` alone; then
  a question and no ``requestState``. ``asker:SEED`` draws other keys and states. It refuses (-32602,
  saying why) a retry whose ``requestState`` or ``inputResponses`` is not what it asked for.

Each also answers `lab/received` with every message it has read (so a test can see what the client
sent), and ends itself after ``LIFETIME`` seconds whatever happens: an adversary never outlives a
test run.

    $ python -S adversaries.py reverse     # the stage's runtime as the import path
    $ python -S adversaries.py legacy:silent --ready /tmp/x/ready   # that file made once it reads stdin
"""

from __future__ import annotations

import json
import os
import random
import select
import signal
import sys
import time
from collections.abc import Callable
from typing import Any

from reference.framing import decode, encode
from reference.server import make_server

LIFETIME = 60  # seconds; SIGALRM's default action ends even a stubborn adversary
WINDOW = 0.3  # seconds the reverse adversary waits for another request before it answers
ANSWER_WAIT = 3.0  # seconds the chatty adversary waits for the client's answers to its requests


class Wire:
    """The adversary's side of the pipes: lines in with a timeout, frames out, flushed."""

    def __init__(self) -> None:
        self.fd = sys.stdin.buffer.fileno()
        self.buffer = b""
        self.eof = False
        self.received: list[Any] = []

    def read(self, timeout: float | None) -> Any:
        """The next message (decoded; a bad line as its text), or None on timeout or at EOF."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self.buffer and not self.eof:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self.fd], [], [], left)
            if not ready:
                return None
            chunk = os.read(self.fd, 65536)
            if not chunk:
                self.eof = True
            self.buffer += chunk
        if b"\n" not in self.buffer:
            line, self.buffer = self.buffer, b""
            if not line:
                return None
        else:
            line, _, self.buffer = self.buffer.partition(b"\n")
        try:
            message = decode(line)
        except ValueError:
            message = line.decode("utf-8", "replace")
        self.received.append(message)
        return message

    def write(self, message: Any) -> None:
        sys.stdout.buffer.write(encode(message))
        sys.stdout.buffer.flush()


def is_request(message: Any) -> bool:
    return isinstance(message, dict) and "method" in message and "id" in message


def log_notification(text: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": text}}


class Adversary:
    def __init__(self) -> None:
        self.wire = Wire()
        self.server = make_server()

    def answer(self, message: Any) -> Any:
        """The reference's reply to ``message`` (None when nothing is owed)."""
        if is_request(message) and message["method"] == "lab/received":
            return {"jsonrpc": "2.0", "id": message["id"], "result": {"messages": self.wire.received[:-1]}}
        if isinstance(message, dict) and "method" not in message:
            return None  # a client's reply to one of our requests
        line = message.encode() if isinstance(message, str) else json.dumps(message).encode()
        return self.server.handle_line(line)

    def run(self) -> int:
        while (message := self.wire.read(None)) is not None:
            self.on_message(message)
        return self.at_eof()

    def on_message(self, message: Any) -> None:
        reply = self.answer(message)
        if reply is not None:
            self.wire.write(reply)

    def at_eof(self) -> int:
        return 0


class Reverse(Adversary):
    def run(self) -> int:
        while (message := self.wire.read(None)) is not None:
            held = [message]
            while (more := self.wire.read(WINDOW)) is not None:
                held.append(more)
            for item in reversed(held):
                reply = self.answer(item)
                if reply is None:
                    continue
                if isinstance(reply.get("id"), int) and not isinstance(reply.get("id"), bool):
                    forged = {"jsonrpc": "2.0", "id": str(reply["id"]), "result": {"forged": True}}
                    self.wire.write(forged)
                self.wire.write(reply)
        return 0


class Chatty(Adversary):
    def __init__(self) -> None:
        super().__init__()
        self.asked = 0

    def on_message(self, message: Any) -> None:
        reply = self.answer(message)
        if reply is None:
            return
        if is_request(message) and message["method"] == "tools/list":
            missed = self.ask_back()
            if missed:
                reply = {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32603, "message": missed}}
        self.wire.write(log_notification(f"answering {message.get('method')}"))
        self.wire.write(reply)

    def ask_back(self) -> str:
        """Send the client a ping and a request it does not serve; '' if both got a fitting reply."""
        self.asked += 1
        # The first ping's id is 0: a valid id, which `if message.get("id"):` takes for no id at all.
        ping = {"jsonrpc": "2.0", "id": 0 if self.asked == 1 else f"srv-{self.asked}-ping", "method": "ping"}
        other = {
            "jsonrpc": "2.0",
            "id": f"srv-{self.asked}-sampling",
            "method": "sampling/createMessage",
            "params": {"messages": [], "maxTokens": 1},
        }
        self.wire.write(ping)
        self.wire.write(other)
        waiting = {ping["id"]: "result", other["id"]: "error"}
        deadline = time.monotonic() + ANSWER_WAIT
        while waiting and (message := self.wire.read(max(0.0, deadline - time.monotonic()))) is not None:
            if isinstance(message, dict) and "method" not in message and message.get("id") in waiting:
                want = waiting.pop(message["id"])
                if want not in message or (want == "result" and message["result"] != {}):
                    return f"the client answered my {message['id']} request wrongly: {json.dumps(message)}"
                code = (message.get("error") or {}).get("code") if want == "error" else -32601
                if code != -32601:
                    return (
                        f"the client answered my sampling/createMessage request with the code {code}: a request it "
                        "does not serve gets -32601 (Method not found)"
                    )
            elif message is not None:
                self.on_message(message)
        if waiting:
            return f"the client never answered my requests {sorted(waiting)} (a ping needs a reply)"
        return ""


class Babbler(Adversary):
    """Answers initialize, then logs a line every 0.3 s and answers nothing else."""

    def run(self) -> int:
        while True:
            message = self.wire.read(0.3)
            if message is None and self.wire.eof:
                return 0
            if is_request(message) and message.get("method") == "initialize":
                self.wire.write(self.answer(message))
            elif message is None:
                self.wire.write(log_notification("still working"))


class Mute(Adversary):
    def on_message(self, message: Any) -> None:
        pass


class Vanish(Adversary):
    def on_message(self, message: Any) -> None:
        if is_request(message) and message["method"] != "initialize":
            sys.stderr.write("vanish: leaving without a word\n")
            os._exit(3)
        super().on_message(message)


class Noisy(Adversary):
    def on_message(self, message: Any) -> None:
        block = ("noisy: " + "x" * 1017 + "\n").encode()
        for _ in range(1024):
            sys.stderr.buffer.write(block)
        sys.stderr.buffer.write(b"noisy: end of stderr\n")
        sys.stderr.buffer.flush()
        super().on_message(message)


class Deaf(Adversary):
    def at_eof(self) -> int:
        while True:  # stdin is closed and we stay: the client must end us
            time.sleep(0.1)


class Stubborn(Deaf):
    def run(self) -> int:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        return super().run()


MODERN = "2026-07-28"
PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"


def error_reply(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


class Legacy(Adversary):
    """A legacy-only server: nothing but initialize (and ping) before initialize; no modern era at all."""

    def __init__(self, how: str = "-32601") -> None:
        super().__init__()
        self.how = how
        self.initialized = False

    def on_message(self, message: Any) -> None:
        if not is_request(message) or message["method"] in ("lab/received", "initialize", "ping"):
            self.initialized |= is_request(message) and message["method"] == "initialize"
            super().on_message(message)
            return
        if self.initialized:  # the legacy era, as the reference serves it
            super().on_message(message)
            return
        if self.how == "silent":
            return  # some legacy servers ignore a request that comes before initialize
        code = int(self.how)
        said = {-32601: f"Method not found: {message['method']}", -32602: "Invalid params"}.get(
            code, "Server not initialized"
        )
        self.wire.write(error_reply(message["id"], code, said))


class Future(Adversary):
    """A modern server of a revision the client does not speak: its probe gets -32022."""

    def on_message(self, message: Any) -> None:
        if is_request(message) and message["method"] == "server/discover":
            params = message.get("params")
            meta = params.get("_meta") if isinstance(params, dict) else None
            asked = meta.get(PROTOCOL_VERSION) if isinstance(meta, dict) else None
            data = {"supported": ["2027-03-01"], "requested": asked}
            self.wire.write(error_reply(message["id"], -32022, "Unsupported protocol version", data))
            return
        super().on_message(message)


def draw_asker(seed: str) -> tuple[list[str], list[str]]:
    """The asker's three question keys and two requestStates for ``seed`` (the checks draw them too)."""
    rng = random.Random(seed)
    words = ["confirm", "reason", "approver", "note", "quantity", "github_login", "refund", "ticket"]
    keys = rng.sample(words, 3)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="
    # Opaque and unfriendly, as a sealed state may be: base64-like, a space, quotes and a non-ASCII letter.
    states = [
        "".join(rng.choice(alphabet) for _ in range(24)) + f' "v{rng.randint(1, 9)}" \u00e9 ' + "=" * rng.randint(1, 2)
        for _ in range(2)
    ]
    return keys, states


def asker_round(keys: list[str], states: list[str], number: int) -> tuple[list[str], str | None]:
    """Round ``number`` (1 to 3): the keys it asks about and the requestState it gives (None: none)."""
    return {1: (keys[:2], states[0]), 2: ([], states[1]), 3: (keys[2:], None)}[number]


def question(key: str, kind: str) -> dict[str, Any]:
    """An elicitation/create request with one field, named ``key``."""
    schema = {"type": "object", "properties": {key: {"type": kind}}, "required": [key]}
    message = f"Please answer {key}"
    return {"method": "elicitation/create", "params": {"mode": "form", "message": message, "requestedSchema": schema}}


def asker_result(keys: list[str], state: str | None) -> dict[str, Any]:
    """The input_required result that asks about ``keys`` and gives ``state``."""
    result: dict[str, Any] = {"resultType": "input_required"}
    if keys:
        kinds = ["boolean", "string"]
        result["inputRequests"] = {k: question(k, kinds[i % 2]) for i, k in enumerate(keys)}
    if state is not None:
        result["requestState"] = state
    return result


class Asker(Adversary):
    """A modern server whose tools/call needs three rounds of input (multi round-trip requests).

    Round 1 asks two questions and gives a requestState; round 2 gives a new requestState alone
    (no question: the client may retry at once); round 3 asks one question and gives no
    requestState (the retry must carry none). The fourth call completes. Every retry is checked
    against what the last input_required result said; a wrong one is refused with -32602.
    """

    def __init__(self, seed: str = "0") -> None:
        super().__init__()
        self.keys, self.states = draw_asker(seed)
        self.round = 0  # how many input_required results this call has had
        self.ids: list[str] = []
        self.original: Any = None

    def on_message(self, message: Any) -> None:
        if not is_request(message):
            return
        method, request_id = message["method"], message["id"]
        if method == "lab/received":
            super().on_message(message)
        elif method == "server/discover":
            result = {
                "resultType": "complete",
                "supportedVersions": [MODERN],
                "capabilities": {"tools": {"listChanged": False}},
                "ttlMs": 0,
                "cacheScope": "public",
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "asker", "version": "1.0"}},
            }
            self.wire.write({"jsonrpc": "2.0", "id": request_id, "result": result})
        elif method == "tools/call":
            reply = self.call(request_id, message.get("params"))
            self.wire.write(reply)
        else:
            self.wire.write(error_reply(request_id, -32601, f"Method not found: {method}"))

    def call(self, request_id: Any, params: Any) -> dict[str, Any]:
        params = params if isinstance(params, dict) else {}
        core = {k: v for k, v in params.items() if k not in ("_meta", "inputResponses", "requestState")}
        key = json.dumps(request_id)
        if key in self.ids:
            return error_reply(request_id, -32600, "a retry is a new request: it needs an id of its own")
        self.ids.append(key)
        if self.round == 0 or ("requestState" not in params and "inputResponses" not in params):
            self.round, self.original = 0, core
            return self.ask(request_id)
        if core != self.original:
            return error_reply(request_id, -32602, "a retry must send the original request's params again")
        wrong = self.wrong_retry(params)
        if wrong:
            return error_reply(request_id, -32602, wrong)
        if self.round < 3:
            return self.ask(request_id)
        rounds, self.round = self.round + 1, 0
        text = f"done after {rounds} calls"
        result = {"resultType": "complete", "content": [{"type": "text", "text": text}]}
        result.update(structuredContent={"rounds": rounds}, isError=False)
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    def asked(self) -> tuple[list[str], str | None]:
        """The keys and the requestState of the last input_required result."""
        return asker_round(self.keys, self.states, self.round)

    def wrong_retry(self, params: dict[str, Any]) -> str:
        keys, state = self.asked()
        if state is None and "requestState" in params:
            return "my last input_required result had no requestState: the retry MUST NOT carry one"
        if state is not None and params.get("requestState") != state:
            got = json.dumps(params.get("requestState"))
            return f"requestState must be echoed exactly: I gave {json.dumps(state)}, got {got}"
        if keys:
            answers = params.get("inputResponses")
            if not isinstance(answers, dict) or sorted(answers) != sorted(keys):
                got = sorted(answers) if isinstance(answers, dict) else answers
                return f"inputResponses must answer under the keys of my inputRequests, {keys}; got {json.dumps(got)}"
        return ""

    def ask(self, request_id: Any) -> dict[str, Any]:
        self.round += 1
        keys, state = self.asked()
        return {"jsonrpc": "2.0", "id": request_id, "result": asker_result(keys, state)}


ADVERSARIES: dict[str, Callable[..., Adversary]] = {
    "polite": Adversary,
    "reverse": Reverse,
    "chatty": Chatty,
    "mute": Mute,
    "babbler": Babbler,
    "vanish": Vanish,
    "noisy": Noisy,
    "deaf": Deaf,
    "stubborn": Stubborn,
    "legacy": Legacy,
    "future": Future,
    "asker": Asker,
}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    ready = args[2] if len(args) == 3 and args[1] == "--ready" else None
    name, _, option = args[0].partition(":") if len(args) == 1 or ready else ("", "", "")
    if name not in ADVERSARIES:
        print(f"usage: python -S adversaries.py {{{','.join(ADVERSARIES)}}}[:OPTION] [--ready FILE]", file=sys.stderr)
        return 2
    signal.alarm(LIFETIME)
    try:
        adversary = ADVERSARIES[name](option) if option else ADVERSARIES[name]()
        # A check waits for this before it lets a client's probe time out (a slow start is no
        # silence): a file, so that the wait does not depend on the client keeping stderr.
        if ready is not None:
            with open(ready, "x"):
                pass
        return adversary.run()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
