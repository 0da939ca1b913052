"""The checks of stage 01 (framing), called from its graded cells.

Pure functions are checked in the kernel (fast, with exact inputs); the learner's framing inside
the reference server is checked as a real process through :class:`grader.course.lab.Server`.
"""

from __future__ import annotations

import io
import json
import random
from collections.abc import Callable
from typing import Any

from .expect import Failure, call, outcome, same_json, show
from .lab import Server, request

# Messages with everything framing must survive: newlines in text, non-ASCII, nesting, 0 and "".
MESSAGES: list[Any] = [
    {"jsonrpc": "2.0", "id": 1, "result": {}},
    {"jsonrpc": "2.0", "id": "7", "result": {"text": "line one\nline two\r\n"}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 0, "result": {"text": "café ☕ 東京 🚀", "n": [1, 2.5, True, None]}},
]
NOT_JSON: list[bytes] = [
    b"hello",
    b'{"x": NaN}',
    b'{"x": Infinity}',
    b"[-Infinity]",
    b'{"jsonrpc": "2.0",',
    b"\xff\xfe{}",
    b'{"t": "caf\xe9"}',  # café in Latin-1, not UTF-8
    b"",
]
_ALPHABET = "abcxyz \n\t\"\\/é☕東🚀\u2028\x00'{}[]:,"


def random_messages(n: int) -> list[Any]:
    rng = random.Random()

    def text() -> str:
        return "".join(rng.choice(_ALPHABET) for _ in range(rng.randrange(0, 12)))

    def value(depth: int) -> Any:
        kind = rng.randrange(7 if depth < 3 else 5)
        if kind == 0:
            return rng.randrange(-(10**12), 10**12)
        if kind == 1:
            return text()
        if kind == 2:
            return rng.choice([True, False, None])
        if kind == 3:
            return rng.uniform(-1e6, 1e6)
        if kind == 4:
            return text()
        if kind == 5:
            return [value(depth + 1) for _ in range(rng.randrange(4))]
        return {text(): value(depth + 1) for _ in range(rng.randrange(4))}

    return [{"jsonrpc": "2.0", "id": rng.randrange(10**6), "result": {"v": value(0)}} for _ in range(n)]


def check_encode(encode: Callable[[Any], Any], messages: list[Any] | None) -> None:
    for message in MESSAGES if messages is None else messages:
        data = call(encode, "framing-encode", message)
        newlines = data.count(b"\n") if isinstance(data, bytes) else 0
        if not isinstance(data, bytes):
            raise Failure("framing-encode", f"encode returned {type(data).__name__}, not bytes", sent=show(message))
        if not data.endswith(b"\n") or data.count(b"\n") != 1:
            raise Failure(
                "framing-encode",
                f"the encoded message must end in one newline and contain no other (it has {newlines})",
                sent=show(message),
                received=repr(data[:200]),
            )
        if data.endswith(b"\r\n"):
            raise Failure("stdout-line-ending", "the encoded message ends in \\r\\n", received=repr(data[-40:]))
        try:
            back = json.loads(data.decode("utf-8"))
        except ValueError as exc:
            raise Failure("framing-encode", f"the bytes are not UTF-8 JSON: {exc}", received=repr(data[:200])) from None
        if not same_json(back, message):
            raise Failure(
                "framing-encode",
                "decoding the bytes does not give the message back",
                sent=show(message),
                received=show(back),
            )
    for bad in ({"x": float("nan")}, {"x": [float("inf")]}):
        data, error = outcome(encode, "framing-encode", bad)
        if isinstance(error, ValueError):
            continue
        raise Failure(
            "stdout-strict-json",
            "encode accepted a NaN or Infinity: the host's JSON parser would fail on the line"
            if error is None
            else f"encode raised {type(error).__name__} for NaN; expected ValueError",
            received=repr(data),
        )


def check_decode(decode: Callable[[bytes], Any], messages: list[Any] | None) -> None:
    for message in MESSAGES if messages is None else messages:
        line = json.dumps(message, ensure_ascii=False).encode("utf-8")
        got = call(decode, "framing-decode", line)
        if not same_json(got, message):
            raise Failure(
                "framing-decode",
                "decode did not return the JSON value on the line",
                sent=repr(line[:200]),
                received=show(got),
            )
    for line in NOT_JSON:
        got, error = outcome(decode, "framing-decode", line)
        if isinstance(error, ValueError):
            continue
        if error is not None:
            raise Failure("framing-decode", f"decode({line!r}) raised {type(error).__name__}; expected ValueError")
        raise Failure("framing-decode", f"decode({line!r}) returned {show(got)}; it must raise ValueError")


def random_lines(n: int) -> list[bytes]:
    return [json.dumps(m, ensure_ascii=False).encode("utf-8") for m in random_messages(n)]


def check_read_frame(read_frame: Callable[[Any], Any], lines: list[bytes] | None) -> None:
    if lines is None:
        lines = [b'{"jsonrpc":"2.0","id":1,"method":"ping"}', b"", b'{"jsonrpc":"2.0","id":2,"method":"ping"}']
    endings = [b"\n", b"\r\n"]
    stream_bytes = b"".join(line + endings[i % 2] for i, line in enumerate(lines)) + b"last line, no newline"
    stream = io.BytesIO(stream_bytes)
    expected = [*lines, b"last line, no newline", None, None]
    got = []
    for _ in expected:
        got.append(call(read_frame, "framing-read", stream))
    if got != expected:
        first = next(i for i, (a, b) in enumerate(zip(got, expected, strict=True)) if a != b)
        raise Failure(
            "framing-read",
            f"call number {first + 1} of read_frame returned {got[first]!r}; expected {expected[first]!r}",
            sent=repr(stream_bytes[:300]),
            hint="strip b'\\n' and then b'\\r'; return b'' for an empty line and None only at the end of input",
        )


# -- as a process -------------------------------------------------------------------------------
def check_replies(argv: list[str], ids: list[Any] | None) -> None:
    ids = [1, "abc", 42] if ids is None else ids
    with Server(argv) as server:
        for id in ids:
            server.expect(request("ping", id), {"jsonrpc": "2.0", "id": id, "result": {}}, "stdout-flush")


def check_unicode(argv: list[str]) -> None:
    """Non-ASCII text both ways, also when the platform's encoding is cp1252 (as on Windows)."""
    status = "café ☕ 東京"
    sent = request("tools/call", params={"name": "count_orders", "arguments": {"status": status}})
    for env in ({}, {"PYTHONIOENCODING": "cp1252"}):
        with Server(argv, env=env) as server:
            reply = server.expect(sent, {"jsonrpc": "2.0", "id": sent["id"]}, "encoding-utf8")
            text = json.dumps(reply.get("result"), ensure_ascii=False)
            if status not in text:
                raise Failure(
                    "encoding-utf8",
                    "the status sent came back changed" + (" under PYTHONIOENCODING=cp1252" if env else ""),
                    sent=show(sent),
                    received=show(reply),
                )


def check_bad_lines(argv: list[str]) -> None:
    """A line that is not JSON gets -32700 with a null id, and the server goes on serving."""
    with Server(argv) as server:
        for line in (b"hello?\n", b'{"jsonrpc":"2.0","id":1,"method":"ping"\n', b'{"x": NaN}\n', b"\xff\xfe\n"):
            server.expect(line, {"jsonrpc": "2.0", "id": None, "error": {"code": -32700}}, "parse-error")
            ping = request("ping")
            server.expect(ping, {"jsonrpc": "2.0", "id": ping["id"], "result": {}}, "survives-bad-input")
