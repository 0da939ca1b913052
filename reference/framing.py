"""Framing: one JSON-RPC message per line on stdin/stdout, UTF-8, a flush after every message.

Read and write the *binary* buffers and do the UTF-8 work yourself: the text layer uses the
platform's code page (cp1252 on many Windows machines) and crashes on the first emoji.

    >>> encode({"jsonrpc": "2.0", "id": 1, "result": {"text": "café ☕"}})
    b'{"jsonrpc":"2.0","id":1,"result":{"text":"caf\\xc3\\xa9 \\xe2\\x98\\x95"}}\\n'
    >>> decode(b'{"jsonrpc": "2.0", "method": "ping", "id": 7}')
    {'jsonrpc': '2.0', 'method': 'ping', 'id': 7}
    >>> decode(b'{"x": NaN}')
    Traceback (most recent call last):
    ...
    reference.framing.FrameError: NaN is not JSON
    >>> decode(b'{"x": "abc')
    Traceback (most recent call last):
    ...
    reference.framing.FrameError: Unterminated string starting at column 7

A lone surrogate (``"\\ud800"`` in the input) has no UTF-8 form: such a message is written with
``\\u`` escapes instead, so that the text, an id above all, comes back exactly as it came in.

    >>> encode({"id": decode(b'"\\\\ud800"')})
    b'{"id":"\\\\ud800"}\\n'
"""

from __future__ import annotations

import json
from typing import Any, BinaryIO

# A line longer than this is refused (and skipped) rather than read into memory whole.
MAX_LINE_BYTES = 10 * 1024 * 1024


class FrameError(ValueError):
    """The bytes of one line are not one JSON value: the server answers -32700 and goes on."""


def _no_constants(name: str) -> Any:
    raise FrameError(f"{name} is not JSON")


# One decoder and one encoder for the whole process: json.loads/json.dumps with options other
# than the defaults build a new one on every call, which is a measurable share of a round trip.
_DECODER = json.JSONDecoder(parse_constant=_no_constants)
_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))
# For the rare message holding a lone surrogate: pure ASCII, every non-ASCII character escaped.
_ASCII_ENCODER = json.JSONEncoder(ensure_ascii=True, allow_nan=False, separators=(",", ":"))


def read_frame(stream: BinaryIO, limit: int = MAX_LINE_BYTES) -> bytes | None:
    """Read one line; return it without its ``\\n`` (or ``\\r\\n``), or ``None`` at end of input.

    ``limit`` counts the message's bytes, not its line ending, so a message of exactly ``limit``
    bytes is served whether it ends in LF or CRLF. A longer line is consumed to its end and
    reported with :class:`FrameError`, so the next line is read normally.
    """
    # limit + 2: room for the message and a CRLF, and still a bounded read.
    line = stream.readline(limit + 2)
    if not line:
        return None
    if line.endswith(b"\n"):
        line = line[:-1]
        if line.endswith(b"\r"):  # accept CRLF input; we never write it
            line = line[:-1]
    elif len(line) == limit + 2:  # no newline within reach: skip the rest, a chunk at a time
        while True:
            rest = stream.readline(1 << 20)
            if not rest or rest.endswith(b"\n"):
                break
    if len(line) > limit:
        raise FrameError(f"line longer than {limit} bytes")
    return line


def _where(msg: str, column: int) -> str:
    """``json``'s message with its column, read naturally.

    Some of its messages already end in "at" ("Unterminated string starting at"), which a plain
    ``" at column"`` would double into "starting at at column 25".
    """
    return f"{msg} column {column}" if msg.endswith(" at") else f"{msg} at column {column}"


def decode(line: bytes) -> Any:
    """Parse one line: strict UTF-8, strict JSON (no NaN or Infinity)."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FrameError(f"not valid UTF-8 at byte {exc.start}") from None
    try:
        if text.startswith("\ufeff"):  # json.loads refuses a byte-order mark too
            raise FrameError("a UTF-8 byte-order mark before the JSON")
        return _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        raise FrameError(_where(exc.msg, exc.colno)) from None
    except RecursionError:  # e.g. 100 000 nested "[": valid JSON, but too deep for the parser
        raise FrameError("JSON nested too deeply") from None
    except ValueError as exc:  # e.g. an integer of more than 4300 digits (sys.int_info)
        raise FrameError(str(exc)) from None


def encode(message: Any) -> bytes:
    """Serialise one message as a single UTF-8 line ending in ``\\n`` (never ``\\r\\n``).

    ``json.dumps`` escapes newlines inside strings, so the message cannot break the framing; only
    ``indent=`` would. ``allow_nan=False`` keeps NaN out of the stream.

    A lone surrogate (which JSON input can smuggle in as ``"\\ud800"``) has no UTF-8 form. Such a
    message is written all in ASCII, ``\\u`` escapes included, rather than with a replacement
    character: a reply must carry the request's id exactly, and ``"\\ud800"`` is that id.
    """
    text = _ENCODER.encode(message)
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        data = _ASCII_ENCODER.encode(message).encode("ascii")
    return data + b"\n"


def write_frame(stream: BinaryIO, message: Any) -> None:
    """Write one message and flush: stdout is block-buffered when it is a pipe."""
    stream.write(encode(message))
    stream.flush()
