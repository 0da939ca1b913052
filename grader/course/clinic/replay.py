"""A learner's reproducer, replayed: the lines sent to a server at once, and what came back.

The replay is the same for the case and for the reference, so that the two can be compared
(:func:`grader.checker.transcript.broken`): start the server, wait a moment (a banner shows
here), write every line at once (two requests are then in flight together), wait until every
request is answered or the server has been quiet for a second, close stdin, and collect what
comes after that (a reply that arrives only now was held in a buffer). "Quiet" means idle: no output and no
CPU used, so that a busy machine's slow start-up is not taken for silence.

    >>> import sys
    >>> session = replay([sys.executable, "-m", "reference.server"], ['{"jsonrpc":"2.0","id":1,"method":"ping"}'])
    >>> [item.data for item in session.received]
    [b'{"jsonrpc":"2.0","id":1,"result":{}}']
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence

from grader.checker.transcript import Received, Session
from reference.child import ChildProcess

EARLY = 0.3  # seconds to listen before anything is sent
QUIET = 1.0  # seconds of silence after which the server is done answering
MOST = 20.0  # seconds at most to wait for the replies while stdin is open (only a server still on the CPU,
# or still writing, is waited for that long: an idle one is done after QUIET)
AFTER = 2.0  # seconds to collect what comes after stdin is closed
MAX_LINES = 12  # lines a reproducer may hold: it is meant to be small
MAX_LINE = 8192  # characters of one line


def as_bytes(line: str | bytes) -> bytes:
    data = line if isinstance(line, bytes) else line.encode("utf-8", "surrogateescape")
    return data.rstrip(b"\n")


def _requests(lines: list[bytes]) -> int:
    count = 0
    for line in lines:
        try:
            message = json.loads(line)
        except (ValueError, UnicodeDecodeError):
            count += 1  # a bad line is owed an error too
            continue
        items = message if isinstance(message, list) else [message]
        count += sum(1 for m in items if not (isinstance(m, dict) and "method" in m and "id" not in m))
    return count


def replay(argv: Sequence[str], lines: Sequence[str | bytes]) -> Session:
    """Run ``argv``, send ``lines`` at once, and return the session (every wait bounded)."""
    sent = [as_bytes(line) for line in lines]
    child = ChildProcess(list(argv))
    received: list[Received] = []
    died = False
    try:
        started = time.monotonic()
        while time.monotonic() - started < EARLY:
            line = child.read_line(EARLY - (time.monotonic() - started))
            if line is None:
                break
            received.append(Received(line.data, early=True))
        child.send(b"".join(line + b"\n" for line in sent))
        owed = _requests(sent)
        deadline = time.monotonic() + MOST
        while time.monotonic() < deadline:
            # Quiet means idle: a server still starting up on a busy machine is given the time (up to
            # MOST), so that the reference's slow start never reads as a silence the case shares.
            line = child.read_line_patient(QUIET, deadline - time.monotonic())
            if line is None:
                died = child.stdout_closed.is_set() or child.process.poll() is not None
                break
            received.append(Received(line.data))
            if len([r for r in received if not r.early]) >= owed and owed:
                # Every request has something back; a short last look for more (an extra reply).
                more = child.read_line(0.3)
                if more is not None:
                    received.append(Received(more.data))
                break
        if not died:
            died = child.process.poll() is not None
        # What is read from here on may have come long before: the reader thread stamps each line as it
        # arrives, and only a line stamped after this moment came "only once stdin was closed".
        closed_at = child.elapsed()
        child.close_stdin()
        end = time.monotonic() + AFTER
        while time.monotonic() < end:
            line = child.read_line(end - time.monotonic())
            if line is None:
                break
            received.append(Received(line.data, after_close=line.at >= closed_at))
        code = child.wait(1.0)
        stderr = child.stderr_tail()
    finally:
        child.kill()
    return Session(sent, received, died=died, exit_code=code, stderr=stderr)
