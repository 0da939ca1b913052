"""reference.framing: one JSON message per line, strict UTF-8 and JSON, a flush per message.

Unit tests on in-memory streams (io.BytesIO), plus a real OS pipe to prove that write_frame
flushes, and a property test that encode/decode round-trip any JSON value on one line.
"""

from __future__ import annotations

import io
import json
import os
import select
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference.framing import MAX_LINE_BYTES, FrameError, decode, encode, read_frame, write_frame

# A net only: every wait on a child here is bounded in seconds by the test (the slowest test takes
# about 3 s); this stops a hang in code under test (a mutant) in a minute, not pytest's 300 s.
pytestmark = pytest.mark.timeout(60)


def frames(data: bytes, limit: int = MAX_LINE_BYTES) -> list[bytes | str]:
    """Every frame read from ``data`` until the end; a FrameError shows as the string "error"."""
    stream = io.BytesIO(data)
    found: list[bytes | str] = []
    while True:
        try:
            line = read_frame(stream, limit)
        except FrameError:
            found.append("error")
            continue
        if line is None:
            return found
        found.append(line)


# -- read_frame -----------------------------------------------------------------------------
def test_read_frame_splits_on_newline() -> None:
    assert frames(b'{"a":1}\n{"b":2}\n') == [b'{"a":1}', b'{"b":2}']


def test_read_frame_accepts_crlf_and_a_last_line_without_newline() -> None:
    assert frames(b'{"a":1}\r\n{"b":2}') == [b'{"a":1}', b'{"b":2}']


def test_read_frame_strips_one_cr_only_and_keeps_inner_cr() -> None:
    assert frames(b"a\rb\r\r\n") == [b"a\rb\r"]


def test_read_frame_reports_blank_lines_as_empty() -> None:
    assert frames(b"\n\r\n  \n") == [b"", b"", b"  "]


def test_read_frame_end_of_input() -> None:
    assert read_frame(io.BytesIO(b"")) is None


def test_oversized_line_is_skipped_whole_and_reading_goes_on() -> None:
    limit = 16
    data = b"x" * 50 + b"\n" + b"ok\n" + b"y" * 17 + b"\n" + b"z" * 16 + b"\n"
    assert frames(data, limit) == ["error", b"ok", "error", b"z" * 16]


def test_oversized_last_line_without_newline() -> None:
    assert frames(b"a\n" + b"b" * 40, limit=8) == [b"a", "error"]


def test_line_of_exactly_the_limit_is_accepted_with_lf_or_crlf() -> None:
    # The limit counts the message, not its line ending: CRLF and LF are served alike.
    assert frames(b"c" * 8, limit=8) == [b"c" * 8]
    assert frames(b"c" * 8 + b"\n", limit=8) == [b"c" * 8]
    assert frames(b"c" * 8 + b"\r\n", limit=8) == [b"c" * 8]
    assert frames(b"c" * 7 + b"\r\n", limit=8) == [b"c" * 7]


@pytest.mark.parametrize("ending", [b"\n", b"\r\n"], ids=["lf", "crlf"])
def test_line_of_the_limit_plus_one_is_refused_and_skipped(ending: bytes) -> None:
    assert frames(b"c" * 9 + ending + b"next" + ending, limit=8) == ["error", b"next"]
    assert frames(b"c" * 9, limit=8) == ["error"]  # at the end of input too


@pytest.mark.parametrize("ending", [b"\n", b"\r\n"], ids=["lf", "crlf"])
def test_limit_boundaries_in_one_stream(ending: bytes) -> None:
    sizes = [7, 8, 9, 10, 8, 30, 8]
    data = b"".join(b"x" * n + ending for n in sizes)
    assert frames(data, limit=8) == [b"x" * 7, b"x" * 8, "error", "error", b"x" * 8, "error", b"x" * 8]


def test_cr_alone_at_the_limit_is_part_of_the_message() -> None:
    # Only a "\r" right before "\n" is a line ending; 8 bytes and a "\r" at the end of input are 9.
    assert frames(b"c" * 8 + b"\r", limit=8) == ["error"]
    assert frames(b"c" * 7 + b"\r", limit=8) == [b"c" * 7 + b"\r"]


def test_oversized_line_longer_than_one_skip_chunk() -> None:
    # The skip loop reads 1 MiB at a time: a 3 MiB line needs several reads.
    data = b"q" * (3 << 20) + b"\n" + b"after\n"
    assert frames(data, limit=1024) == ["error", b"after"]


class ReadSizes(io.BytesIO):
    """A real in-memory stream that records the size each readline() call asks for."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.asked: list[int | None] = []

    def readline(self, size: int | None = -1, /) -> bytes:
        self.asked.append(size)
        return super().readline(size)


def test_read_frame_never_asks_for_an_unbounded_line() -> None:
    # A peer that never sends "\n" must not make us hold its whole line: every read is bounded,
    # by the limit plus a CRLF for the message, by 1 MiB for each chunk of a line being skipped.
    stream = ReadSizes(b"q" * (3 << 20) + b"\n" + b"{}\n")
    with pytest.raises(FrameError):
        read_frame(stream, limit=1000)
    assert read_frame(stream, limit=1000) == b"{}"
    assert stream.asked[0] == 1002 and stream.asked[-1] == 1002
    skips = stream.asked[1:-1]
    assert len(skips) >= 3 and all(size == 1 << 20 for size in skips), stream.asked


# -- decode ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("line", "value"),
    [
        (b'{"jsonrpc":"2.0","id":7,"method":"ping"}', {"jsonrpc": "2.0", "id": 7, "method": "ping"}),
        (b"  [1, 2.5, null, true]  ", [1, 2.5, None, True]),
        ('"caf\u00e9 \u2615"'.encode(), "caf\u00e9 \u2615"),
        (b'"\\ud83d\\ude00"', "\U0001f600"),
        (b"0", 0),
    ],
)
def test_decode_valid(line: bytes, value: Any) -> None:
    assert decode(line) == value


@pytest.mark.parametrize(
    "line",
    [
        b"",
        b"not json",
        b'{"a": 1',
        b'{"a": 1} {"b": 2}',
        b'{"a": 1}\n{"b": 2}',
        b"{'a': 1}",
        b"NaN",
        b'{"x": Infinity}',
        b"[-Infinity]",
        b'"\xff"',  # invalid UTF-8
        b'"\xc3\x28"',  # a broken two-byte sequence
        b'"\xed\xa0\x80"',  # a UTF-8-encoded surrogate is not UTF-8
        b'"\xc0\xaf"',  # an overlong encoding
        b"\xef\xbb\xbf{}",  # a byte order mark
        b"[" * 100_000,  # valid nesting but too deep to parse
        b"9" * 5000,  # more digits than Python converts
    ],
)
def test_decode_rejects_with_frame_error(line: bytes) -> None:
    with pytest.raises(FrameError):
        decode(line)


def test_frame_error_for_utf8_names_the_byte() -> None:
    with pytest.raises(FrameError, match="byte 3"):
        decode(b'"ab\xff"')


def test_frame_error_is_a_value_error() -> None:
    assert issubclass(FrameError, ValueError)


# -- encode ---------------------------------------------------------------------------------
def test_encode_is_one_compact_utf8_line() -> None:
    data = encode({"jsonrpc": "2.0", "id": 1, "result": {"text": "caf\u00e9 \u2615"}})
    assert data == '{"jsonrpc":"2.0","id":1,"result":{"text":"caf\u00e9 \u2615"}}\n'.encode()
    assert data.count(b"\n") == 1 and not data.endswith(b"\r\n")


def test_encode_escapes_newlines_inside_strings() -> None:
    value = {"text": "one\ntwo\r\nthree\u2028four\u2029"}
    data = encode(value)
    assert data.count(b"\n") == 1 and b"\r" not in data
    assert decode(data[:-1]) == value


def test_encode_refuses_nan() -> None:
    with pytest.raises(ValueError):
        encode({"x": float("nan")})
    with pytest.raises(ValueError):
        encode([float("inf")])


def test_encode_keeps_lone_surrogates_as_escapes() -> None:
    # No UTF-8 form and no substitution: the whole message is written in ASCII, escapes kept.
    value = decode(b'{"m": "a\\ud800b", "t": "caf\xc3\xa9"}')
    data = encode(value)
    assert data == b'{"m":"a\\ud800b","t":"caf\\u00e9"}\n'
    assert data.isascii() and data.count(b"\n") == 1
    assert decode(data[:-1]) == value  # the same text comes back, surrogate and all
    assert decode(data[:-1])["m"] == "a\ud800b"


def test_encode_without_a_lone_surrogate_stays_raw_utf8() -> None:
    # A surrogate *pair* is one character: raw UTF-8 as usual.
    assert encode(decode(b'"\\ud83d\\ude00 \xc3\xa9"')) == '"\U0001f600 \u00e9"\n'.encode()


def test_encode_with_a_lone_surrogate_still_refuses_nan() -> None:
    with pytest.raises(ValueError):
        encode({"m": "\udc00", "x": float("nan")})


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b'{"a": "abc', "Unterminated string starting at column 7"),
        (b"hello?", "Expecting value at column 1"),
        (b'{"a" 1}', "Expecting ':' delimiter at column 6"),
        (b'"a\tb"', "Invalid control character at column 3"),
        (b'{"x": NaN}', "NaN is not JSON"),
        (b"[-Infinity]", "-Infinity is not JSON"),
        (b"\xef\xbb\xbf{}", "a UTF-8 byte-order mark before the JSON"),
        pytest.param(b"[" * 100_000, "JSON nested too deeply", id="nested-too-deeply"),
    ],
)
def test_frame_error_messages_read_naturally(line: bytes, message: str) -> None:
    with pytest.raises(FrameError) as caught:
        decode(line)
    assert str(caught.value) == message
    assert " at at " not in str(caught.value)


def test_write_frame_flushes_through_a_real_pipe() -> None:
    read_end, write_end = os.pipe()
    try:
        # A large buffer: without a flush nothing would reach the pipe.
        with open(write_end, "wb", buffering=1 << 20, closefd=True) as stream:
            write_frame(stream, {"jsonrpc": "2.0", "id": "x", "result": {}})
            ready, _, _ = select.select([read_end], [], [], 5.0)
            assert ready, "write_frame did not flush"
            assert os.read(read_end, 4096) == b'{"jsonrpc":"2.0","id":"x","result":{}}\n'
    finally:
        os.close(read_end)


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(exclude_categories=["Cs"])),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(JSON)
def test_encode_decode_round_trip(value: Any) -> None:
    data = encode(value)
    assert data.endswith(b"\n") and data.count(b"\n") == 1
    assert not data.endswith(b"\r\n")
    assert decode(data[:-1]) == value
    assert read_frame(io.BytesIO(data + data)) == data[:-1]
    assert json.loads(data.decode("utf-8")) == value  # plain json agrees
