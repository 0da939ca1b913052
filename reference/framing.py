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


def read_frame(stream: BinaryIO, limit: int = MAX_LINE_BYTES) -> bytes | None:
    """Read one line; return it without its ``\\n`` (or ``\\r\\n``), or ``None`` at end of input.

    A line over ``limit`` bytes is consumed to its end and reported with :class:`FrameError`, so
    the next line is read normally.
    """
    line = stream.readline(limit + 1)
    if not line:
        return None
    if len(line) > limit and not line.endswith(b"\n"):
        while True:  # skip the rest of the oversized line, a chunk at a time
            rest = stream.readline(1 << 20)
            if not rest or rest.endswith(b"\n"):
                break
        raise FrameError(f"line longer than {limit} bytes")
    if line.endswith(b"\n"):
        line = line[:-1]
        if line.endswith(b"\r"):  # accept CRLF input; we never write it
            line = line[:-1]
    return line


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
        raise FrameError(f"{exc.msg} at column {exc.colno}") from None
    except RecursionError:  # e.g. 100 000 nested "[": valid JSON, but too deep for the parser
        raise FrameError("JSON nested too deeply") from None
    except ValueError as exc:  # e.g. an integer of more than 4300 digits (sys.int_info)
        raise FrameError(str(exc)) from None


def encode(message: Any) -> bytes:
    """Serialise one message as a single UTF-8 line ending in ``\\n`` (never ``\\r\\n``).

    ``json.dumps`` escapes newlines inside strings, so the message cannot break the framing; only
    ``indent=`` would. ``allow_nan=False`` keeps NaN out of the stream.
    """
    text = _ENCODER.encode(message)
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (which JSON input can smuggle in as "\\ud800") has no UTF-8 form:
        # replace it with U+FFFD rather than write invalid bytes or die.
        data = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode("utf-8")
    return data + b"\n"


def write_frame(stream: BinaryIO, message: Any) -> None:
    """Write one message and flush: stdout is block-buffered when it is a pipe."""
    stream.write(encode(message))
    stream.flush()
