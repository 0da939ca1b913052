"""A test server that flushes every other reply: the reference server with one defect, in its stdout.

The reference writes each message and flushes it; here every second flush does nothing, so that
reply waits in the buffer until the next message's flush pushes both out. Everything else is the
reference's (both eras, the course's era lock), so every finding but stdout-flush is a consequence
of the held replies, in whichever era the checker met them.

    python tests/servers/flushes_every_other.py
"""

from __future__ import annotations

import sys
from typing import BinaryIO

from reference.server import make_server


class EveryOtherFlush:
    """A binary stdout whose odd flushes go through and whose even ones are forgotten."""

    def __init__(self, raw: BinaryIO) -> None:
        self.raw = raw
        self.flushes = 0

    def write(self, data: bytes) -> int:
        return self.raw.write(data)

    def flush(self) -> None:
        self.flushes += 1
        if self.flushes % 2:
            self.raw.flush()


if __name__ == "__main__":
    sys.exit(make_server().serve(sys.stdin.buffer, EveryOtherFlush(sys.stdout.buffer)))  # type: ignore[arg-type]
