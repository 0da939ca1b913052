"""The live line of a class being graded: done/total, failed, seconds per submission, the ETA.

Only on a terminal: piped output, logs and ``summary.json`` get none of it. The line is redrawn in
place (a carriage return) and cleared when grading ends, so the table starts on a clean line.

    >>> import io
    >>> line = Progress(4, io.StringIO())
    >>> line.done(); line.done(failed=True); line.text().split(",")[:2]
    ['2/4 done', ' 1 failed']
"""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO


class Progress:
    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.live = bool(getattr(self.stream, "isatty", lambda: False)())
        self.total = total
        self.count = 0
        self.skipped = 0  # already graded, kept from an earlier run: not in the time per submission
        self.failed = 0
        self.started = time.monotonic()
        self.lock = threading.Lock()
        self.shown = 0
        self.draw()

    def text(self) -> str:
        graded = self.count - self.skipped
        took = time.monotonic() - self.started
        per = took / graded if graded else 0.0
        left = (self.total - self.count) * per
        eta = f"ETA {int(left // 60)}:{int(left % 60):02d}" if graded else "ETA -"
        return f"{self.count}/{self.total} done, {self.failed} failed, {per:.1f} s per submission, {eta}"

    def done(self, failed: bool = False, kept: bool = False) -> None:
        with self.lock:
            self.count += 1
            self.skipped += kept
            if kept and self.count == self.skipped:
                self.started = time.monotonic()  # the time per submission counts from the first one graded
            self.failed += failed
            self.draw()

    def draw(self) -> None:
        if not self.live:
            return
        line = self.text()
        self.stream.write("\r" + line.ljust(self.shown))
        self.stream.flush()
        self.shown = len(line)

    def close(self) -> None:
        """Clear the line (the table that follows starts where it was)."""
        if self.live and self.shown:
            self.stream.write("\r" + " " * self.shown + "\r")
            self.stream.flush()
            self.shown = 0
