"""The checks of stage 01 (framing).

The learner's ``framing.py`` is checked twice: its four functions one by one (called in the
learner's own process through the harness, with exact inputs), and inside the course's server as
a real process (:meth:`~grader.course.work.Work.host`), where the runtime's ``reference.framing``
*is* the learner's module.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

from ..calls import call, outcome
from ..drive import Server, request
from ..expect import Failure, same_json, show
from ..work import Work
from . import public


@public("01", "test_encode", 'encode: four messages (newlines in text, non-ASCII, 0 and ""); NaN refused')
def encode_cell(work: Work) -> None:
    check_encode(work.module("framing").encode, MESSAGES)


@public("01", "test_decode", "decode: the same four messages back; eight lines that are not strict JSON refused")
def decode_cell(work: Work) -> None:
    check_decode(work.module("framing").decode, MESSAGES)


@public(
    "01", "test_read_frame", "read_frame: \\n and \\r\\n endings, an empty line, a last line with no newline, the end"
)
def read_frame_cell(work: Work) -> None:
    check_read_frame(work, None)


@public("01", "test_flush", 'your framing in the course\'s server: three pings (ids 1, "abc", 42) answered at once')
def flush_cell(work: Work) -> None:
    check_replies(work.host("framing"), [1, "abc", 42])


@public("01", "test_unicode_process", "non-ASCII both ways through the server, also under PYTHONIOENCODING=cp1252")
def unicode_cell(work: Work) -> None:
    check_unicode(work.host("framing"))


@public("01", "test_bad_lines", "four lines that are not JSON: -32700 each, and the server answers the next ping")
def bad_lines_cell(work: Work) -> None:
    check_bad_lines(work.host("framing"))


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


def random_messages(rng: random.Random, n: int) -> list[Any]:
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


def check_encode(encode: Callable[[Any], Any], messages: list[Any]) -> None:
    for message in messages:
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


def check_decode(decode: Callable[[bytes], Any], messages: list[Any]) -> None:
    for message in messages:
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


def random_lines(rng: random.Random, n: int) -> list[bytes]:
    return [json.dumps(m, ensure_ascii=False).encode("utf-8") for m in random_messages(rng, n)]


def check_read_frame(work: Work, lines: list[bytes] | None) -> None:
    read_frame = work.module("framing").read_frame
    if lines is None:
        lines = [b'{"jsonrpc":"2.0","id":1,"method":"ping"}', b"", b'{"jsonrpc":"2.0","id":2,"method":"ping"}']
    endings = [b"\n", b"\r\n"]
    stream_bytes = b"".join(line + endings[i % 2] for i, line in enumerate(lines)) + b"last line, no newline"
    stream = work.stdlib("io.BytesIO")(stream_bytes)  # in the learner's process, where read_frame runs
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
def check_replies(argv: list[str], ids: list[Any]) -> None:
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
