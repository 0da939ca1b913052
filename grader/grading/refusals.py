"""What the guard refused the learner's code while a cell was graded, read from a pipe the grader owns.

The guard (:mod:`grader.course.lab_runtime.guard`) of every learner's process writes each refusal
to a FIFO the grader made and reads; the guard opens it before the learner's code runs, and refuses
that code any open of it. Nothing written down a pipe can be erased or rewritten afterwards, but the
learner's process holds the guard's descriptor and can write down it too: empty lines, a flood,
lines made to look like the guard's. So each of the guard's records is one whole write (under
PIPE_BUF, never interleaved), starts with a newline (a partial line before it ends there), and
carries its process's token (random, made before the learner's code ran, written nowhere that code
can read) and a number counting from 0, the record that opens the token. Here:

- a record with an opened token and the next number is the guard's: its refusal is kept, every
  distinct one (no cap drops a refusal: beyond :data:`MAX_KEPT` distinct ones, their count is);
- anything else is not the guard's and is flagged ``tampering``: a line that is no record (an empty
  line too, but the one newline that starts each record), a token never opened, a number repeated;
  a number skipped is a record lost, flagged too, as is a pipe the learner's code closed.

What comes back is still the learner's process's bytes: each line is validated as data, cut to size,
and stripped of control characters before it reaches a flag.

    >>> import tempfile, os, pathlib
    >>> token = "ab" * 16
    >>> opened, refused = f'{{"g":"{token}","n":0,"open":7}}', f'{{"g":"{token}","n":1,"why":"import grader"}}'
    >>> with Channel(pathlib.Path(tempfile.mkdtemp()) / "guard.pipe") as channel:
    ...     fd = os.open(channel.path, os.O_WRONLY)
    ...     _ = os.write(fd, f"\\n{opened}\\n".encode() + b"\\n\\nnot json\\x1b[2J\\n")  # the learner's lines
    ...     _ = os.write(fd, f"\\n{refused}\\n".encode())
    ...     os.close(fd)
    >>> channel.lines()[0]
    'import grader'
    >>> print(channel.lines()[1])
    tampering: the guard's pipe carried 3 lines the guard did not write (e.g. "(an empty line)", "not json[2J")
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import threading
from pathlib import Path

from .text import printable

MAX_KEPT = 2000  # distinct refusals kept from one cell (beyond, they are counted)
MAX_WHY = 300  # characters of one refusal shown
MAX_RECORD = 4096  # bytes of one guard record (one write under PIPE_BUF)
SAMPLES = 3  # foreign lines shown in the flag
TAMPERED = "tampering: "  # how a line of :meth:`Channel.lines` that is not a refusal starts
_TOKEN = re.compile(r"^[0-9a-f]{32}$")


class Channel:
    """A FIFO at ``path`` drained by a thread from creation to :meth:`close` (a context manager)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        os.mkfifo(self.path, 0o600)
        self._read = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
        self._keep = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)  # no end-of-file while no guard writes
        self._buffer = b""
        self._overlong = False  # the line being read is longer than a guard record: not the guard's
        self._blank = 0  # empty lines not yet known to be the newline that starts a record
        self._tokens: dict[str, int] = {}  # a guard process's token: the number its next record has
        self._refused: dict[str, None] = {}
        self._more = 0  # distinct refusals beyond MAX_KEPT
        self._foreign = 0  # lines the guard did not write
        self._samples: list[str] = []
        self._problems: dict[str, None] = {}  # what else the records show: numbers skipped or repeated
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._drain, name="guard-channel", daemon=True)
        self._thread.start()

    def __enter__(self) -> Channel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _drain(self) -> None:
        while not self._stop.is_set():
            ready, _, _ = select.select([self._read], [], [], 0.2)
            if ready:
                self._take()
        self._take()

    def _take(self) -> None:
        while True:
            try:
                data = os.read(self._read, 1 << 16)
            except OSError:  # BlockingIOError included: nothing more for now
                return
            if not data:
                return
            self._buffer += data
            *whole, self._buffer = self._buffer.split(b"\n")
            for line in whole:
                if self._overlong:
                    self._overlong = False
                    self._not_the_guards(b"(a line longer than any record of the guard's)")
                else:
                    self._line(line)
            if len(self._buffer) > MAX_RECORD:  # no record is this long: the line is not the guard's
                self._buffer, self._overlong = b"", True

    def _line(self, raw: bytes) -> None:
        if not raw:
            self._blank += 1
            return
        record = _record(raw)
        if record is None:
            self._not_the_guards(raw)
            return
        if self._blank:  # one empty line before a record is the newline the guard starts it with
            self._blank -= 1
        self._count_blanks()
        token, number = record["g"], record["n"]
        expected = self._tokens.get(token)
        if number == 0 and "open" in record and expected is None:
            self._tokens[token] = 1
            return
        if expected is None or number < expected:
            self._not_the_guards(raw)
            return
        if number > expected:
            self._problems[f"{number - expected} record(s) of the guard's were lost on its pipe"] = None
        self._tokens[token] = number + 1
        if record.get("reopened"):
            self._problems["your code closed or replaced the guard's pipe (the guard opened it again)"] = None
        why = record.get("why")
        if isinstance(why, str):
            shown = printable(why)[:MAX_WHY]
            if shown in self._refused or len(self._refused) < MAX_KEPT:
                self._refused[shown] = None
            else:
                self._more += 1

    def _count_blanks(self) -> None:
        if self._blank:
            self._foreign += self._blank
            if len(self._samples) < SAMPLES:
                self._samples.append("(an empty line)")
            self._blank = 0

    def _not_the_guards(self, raw: bytes) -> None:
        self._count_blanks()
        self._foreign += 1
        if len(self._samples) < SAMPLES:
            self._samples.append(printable(raw.decode("utf-8", "replace"))[:60])

    def close(self) -> None:
        if self._stop.is_set():
            return
        self._stop.set()
        self._thread.join(5)
        for fd in (self._keep, self._read):
            with contextlib.suppress(OSError):
                os.close(fd)
        if self._buffer or self._overlong:  # a last line without its newline: the guard ends each record
            self._not_the_guards(self._buffer or b"(a line longer than any record of the guard's)")
            self._buffer, self._overlong = b"", False
        self._count_blanks()

    def lines(self) -> list[str]:
        """The refusals read so far, each as one printable line, then what was on the pipe that the
        guard did not write (each starting with :data:`TAMPERED`)."""
        found = list(self._refused)
        if self._more:
            found.append(f"and {self._more} more refusals of other things")
        if self._foreign:
            shown = ", ".join(json.dumps(s, ensure_ascii=False) for s in self._samples)
            found.append(
                f"{TAMPERED}the guard's pipe carried {self._foreign} lines the guard did not write (e.g. {shown})"
            )
        found += [TAMPERED + problem for problem in self._problems]
        return found


def _record(raw: bytes) -> dict[str, object] | None:
    """A line read as a guard record (a JSON object with a token and a number), or None."""
    if len(raw) > MAX_RECORD:
        return None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    token, number = data.get("g"), data.get("n")
    if not isinstance(token, str) or not _TOKEN.match(token) or type(number) is not int or number < 0:
        return None
    return data
