"""Defects in how the server treats request ids: one type turned into another, a 64-bit id read
through a float, two replies' ids swapped, a request with id null taken as a request.

Each family is a :class:`~.base.Defect` subclass (its hooks) and a function that draws one from a
random generator (its parameters and symptom). A JavaScript-minded parser rounds an id above 2**53:

    >>> import random
    >>> ids_huge(random.Random(0)).reply_id(9007199254740993)
    9007199254740992
"""

from __future__ import annotations

import os
import random
import select
from typing import Any, BinaryIO

from reference.framing import encode

from .base import CaseServer, Defect


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
