"""What the guard refused the learner's code while a cell was graded, read from a pipe the grader owns.

The guard (:mod:`grader.course.lab_runtime.guard`) of every learner's process writes each refusal,
one JSON line, to a FIFO the grader made and reads; the guard opens it before the learner's code
runs, and refuses that code any open of it. Nothing written down a pipe can be erased or rewritten
afterwards, so a learner can add lines (which only flag them) but never remove the guard's. What
comes back is still the learner's process's bytes: each line is validated as data, cut to size, and
stripped of control characters before it reaches a flag.

    >>> import tempfile, os, pathlib
    >>> with Channel(pathlib.Path(tempfile.mkdtemp()) / "guard.pipe") as channel:
    ...     fd = os.open(channel.path, os.O_WRONLY)
    ...     _ = os.write(fd, b'{"event":"import","why":"import grader: \\\\u001b[2Jno"}\\nnot json\\n')
    ...     os.close(fd)
    >>> channel.lines()
    ['import grader: [2Jno', 'not json']
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import threading
from pathlib import Path

from .text import printable

MAX_LINES = 200  # refusals kept from one cell (a flood of forged ones is a flag, not a memory leak)
MAX_WHY = 300  # characters of one refusal shown


class Channel:
    """A FIFO at ``path`` drained by a thread from creation to :meth:`close` (a context manager)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        os.mkfifo(self.path, 0o600)
        self._read = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
        self._keep = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)  # no end-of-file while no guard writes
        self._buffer = b""
        self._lines: list[str] = []
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
            except BlockingIOError:
                return
            except OSError:
                return
            if not data:
                return
            self._buffer += data
            *whole, self._buffer = self._buffer.split(b"\n")
            for line in whole:
                if len(self._lines) < MAX_LINES:
                    self._lines.append(_why(line))
            self._buffer = self._buffer[-4096:]  # a line longer than one guard write is not the guard's

    def close(self) -> None:
        if self._stop.is_set():
            return
        self._stop.set()
        self._thread.join(5)
        for fd in (self._keep, self._read):
            with contextlib.suppress(OSError):
                os.close(fd)

    def lines(self) -> list[str]:
        """The refusals read so far, each as one printable line."""
        return [line for line in self._lines if line]


def _why(raw: bytes) -> str:
    text = raw.decode("utf-8", "replace")
    try:
        data = json.loads(text) if len(text) < 8192 else None
    except (ValueError, RecursionError):
        data = None
    why = data.get("why") if isinstance(data, dict) else None
    return printable(why if isinstance(why, str) else text)[:MAX_WHY]
