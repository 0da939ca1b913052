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
- ``stubborn``: as ``deaf``, and ignores SIGTERM too (only SIGKILL ends it).

Each also answers `lab/received` with every message it has read (so a test can see what the client
sent), and ends itself after ``LIFETIME`` seconds whatever happens: an adversary never outlives a
test run.

    $ python -S adversaries.py reverse     # the stage's runtime as the import path
"""

from __future__ import annotations

import json
import os
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


ADVERSARIES: dict[str, Callable[[], Adversary]] = {
    "polite": Adversary,
    "reverse": Reverse,
    "chatty": Chatty,
    "mute": Mute,
    "babbler": Babbler,
    "vanish": Vanish,
    "noisy": Noisy,
    "deaf": Deaf,
    "stubborn": Stubborn,
}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0] not in ADVERSARIES:
        print(f"usage: python -S adversaries.py {{{','.join(ADVERSARIES)}}}", file=sys.stderr)
        return 2
    signal.alarm(LIFETIME)
    try:
        return ADVERSARIES[args[0]]().run()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
