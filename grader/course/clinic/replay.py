"""A learner's reproducer, replayed: the lines sent to a server at once, and what came back.

The replay is the same for the case and for the reference, so that the two can be compared
(:func:`grader.checker.transcript.broken`): start the server and wait until it waits for input
(a banner shows here), write every line at once (two requests are then in flight together), wait
until every request is answered and the server waits for more input again, close stdin, and collect
what comes after that (a reply that arrives only now was held in a buffer).

Every moment is judged by what the server did, never by the clock: a server *waits for input* when
each of its threads sleeps, none has run once for a while (:data:`STILL` or :data:`QUIET` seconds),
it has read every byte sent and we every byte it wrote. A server still starting, still answering or
waiting for the CPU on a busy machine is waited for (up to :data:`MOST` seconds), so what came
before anything was sent, and what came only once stdin closed, is the same on any machine.

    >>> import sys
    >>> session = replay([sys.executable, "-m", "reference.server"], ['{"jsonrpc":"2.0","id":1,"method":"ping"}'])
    >>> [item.data for item in session.received]
    [b'{"jsonrpc":"2.0","id":1,"result":{}}']
"""

from __future__ import annotations

import array
import fcntl
import json
import termios
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO

from grader.checker.transcript import Received, Session
from reference.child import ChildProcess, Line

STILL = 0.3  # seconds a server must not run at all to be taken as waiting for input (at start, when answered)
QUIET = 1.0  # the same while a request is still owed a reply
MOST = 20.0  # seconds at most to wait for a server that is still working (starting, answering, exiting)
AFTER = 2.0  # seconds a server that lives on once stdin is closed, and does nothing, is watched
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


# -- what the server is doing: read from /proc, not from the clock -------------------------------------
@dataclass(frozen=True)
class Stance:
    """The server's process group at one moment."""

    asleep: bool  # every thread sleeps (none runs, waits for the CPU or for the disk)
    runs: int  # context switches of all its threads: it changes whenever one of them ran
    pending: int  # bytes sent that it has not read, and bytes it wrote that are not read yet


def _pipe_bytes(stream: IO[bytes] | None) -> int:
    """The bytes waiting in a pipe (either end)."""
    if stream is None or stream.closed:
        return 0
    found = array.array("i", [0])
    try:
        fcntl.ioctl(stream.fileno(), termios.FIONREAD, found)
    except (OSError, ValueError):
        return 0
    return found[0]


def _thread(folder: str) -> tuple[bool, int] | None:
    """(whether the thread sleeps, its context switches) from its /proc folder."""
    try:
        with open(f"{folder}/stat", "rb") as stat:
            state = stat.read().rsplit(b")", 1)[1].split()[0]
        with open(f"{folder}/status", "rb") as status:
            switches = sum(int(row.split()[1]) for row in status if row.split(b":")[0].endswith(b"ctxt_switches"))
    except (OSError, IndexError, ValueError):
        return None
    return state in (b"S", b"Z", b"X", b"I"), switches


def stance(child: ChildProcess) -> Stance | None:
    """What ``child``'s process group is doing now; None where /proc cannot tell (or it is gone)."""
    asleep, runs, seen = True, 0, False
    for thread in child.group_threads():
        found = _thread(thread)
        if found is not None:
            asleep, runs, seen = asleep and found[0], runs + found[1], True
    if not seen:
        return None
    pending = _pipe_bytes(child.process.stdin) + _pipe_bytes(child.process.stdout)
    return Stance(asleep, runs, pending)


def _still(before: Stance, after: Stance) -> bool:
    """Whether nothing of the group ran between the two moments and it sleeps now."""
    return before.asleep and after.asleep and before.runs == after.runs


def next_line(child: ChildProcess, still: float, deadline: float) -> Line | None:
    """The next line ``child`` writes; None once it waits for input (it slept all through ``still``
    seconds, not run once, with nothing sent left unread nor anything written left untaken), once its
    stdout closed, or at ``deadline``. Where /proc cannot tell, ``still`` seconds of silence."""
    while True:
        before = stance(child)
        line = child.read_line(min(still, deadline - time.monotonic()))
        if line is not None or child.stdout_closed.is_set() or time.monotonic() >= deadline or before is None:
            return line
        after = stance(child)
        if after is None or (_still(before, after) and not after.pending):
            return None


def replay(argv: Sequence[str], lines: Sequence[str | bytes]) -> Session:
    """Run ``argv``, send ``lines`` at once, and return the session (every wait bounded)."""
    sent = [as_bytes(line) for line in lines]
    child = ChildProcess(list(argv))
    received: list[Received] = []
    try:
        # Before anything is sent: what the server writes until it waits for its first line.
        deadline = time.monotonic() + MOST
        while (line := next_line(child, STILL, deadline)) is not None:
            received.append(Received(line.data, early=True))
        child.send(b"".join(line + b"\n" for line in sent))
        owed = _requests(sent)
        deadline = time.monotonic() + MOST
        while True:
            # While a request is owed a reply, a longer stillness is asked for; once every request has
            # something back, the server is read until it waits again (an extra reply comes first).
            answered = owed and len([r for r in received if not r.early]) >= owed
            line = next_line(child, STILL if answered else QUIET, deadline)
            if line is None:
                break
            received.append(Received(line.data))
        # The server now waits for input (or has ended, or MOST ran out): what it writes from here on
        # it wrote only because stdin closed. The reader thread stamps each line as it arrives.
        died = child.stdout_closed.is_set() or child.process.poll() is not None
        closed_at = child.elapsed()
        child.close_stdin()
        deadline = time.monotonic() + MOST
        while (line := next_line(child, AFTER, deadline)) is not None:
            received.append(Received(line.data, after_close=line.at >= closed_at))
        code = child.wait(1.0)
        while code is None and time.monotonic() < deadline and _working(child):
            code = child.wait(STILL)  # still exiting on a busy machine
        stderr = child.stderr_tail()
    finally:
        child.kill()
    return Session(sent, received, died=died, exit_code=code, stderr=stderr)


def _working(child: ChildProcess) -> bool:
    """Whether ``child`` ran during the last ``STILL`` seconds or is running now."""
    before = stance(child)
    time.sleep(STILL)
    after = stance(child)
    return before is not None and after is not None and not _still(before, after)
