"""Launching a server as a child process, with every read bounded by a timeout.

The rules a host must keep, each learned the hard way:

- start the command itself, never through a shell, in a session of its own so that closing it
  can also end whatever it forked;
- remove ``PYTHONUNBUFFERED`` from its environment: it hides a missing flush;
- read stdout as bytes split on ``\\n``, on a thread, and wait on a queue with a timeout: a
  server that never answers must not hang us;
- always drain stderr: a pipe holds only 4-64 KiB and a server blocked on a full stderr hangs;
- cap what is kept, so a server that floods cannot exhaust our memory;
- shut down in order: close its stdin, wait, SIGTERM, wait, SIGKILL.

    >>> import sys
    >>> child = ChildProcess([sys.executable, "-c", "print(input().upper())"])
    >>> child.send(b"hello\\n")
    True
    >>> child.read_line(timeout=5).data
    b'HELLO'
    >>> child.close()
    0
"""

from __future__ import annotations

import array
import collections
import contextlib
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import IO

from . import thread_state

try:  # POSIX only: without them, unread_bytes() cannot tell and says 0
    import fcntl
    import termios
except ImportError:  # pragma: no cover
    pass

MAX_LINE_KEPT = 1 << 20  # bytes of one stdout line kept; its full size is still counted
MAX_STDOUT_KEPT = 32 << 20  # bytes of stdout kept in all; past that lines are counted, not kept
STDERR_TAIL = 64 << 10  # bytes of stderr kept (the most recent)
KILL_WAIT = 5.0  # seconds to wait for the exit of a child sent SIGKILL
KILL_HELD_MOST = 60.0  # ... longer while one of its threads is in the kernel's I/O (SIGKILL waits for that)
LOOK_EVERY = 0.1  # seconds between looks at the threads of a child waited for (wait_patient)
BUSY_CPU = 0.02  # seconds of CPU used during a wait: the child was working then, not idle
_CHUNK = 1 << 16


def child_environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment without PYTHONUNBUFFERED, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    env.update(extra or {})
    return env


def _chunks(stream: IO[bytes] | None) -> Iterator[bytes]:
    """Whatever the pipe holds, as soon as it holds it, until it closes."""
    if stream is None:
        return
    fd = stream.fileno()
    while True:
        try:
            chunk = os.read(fd, _CHUNK)
        except OSError:
            return
        if not chunk:
            return
        yield chunk


def close_after_readers(pairs: Iterable[tuple[threading.Thread, IO[bytes] | None]], wait: float) -> None:
    """Close each pipe once the thread reading it has ended (waiting ``wait`` seconds for it).

    Readers read by file descriptor: a pipe closed under a reader still waiting (a writer that left
    the process group keeps it open) frees its number for the next pipe anyone opens, and the old
    reader then takes that pipe's lines. A pipe whose reader goes on is left open: a leak, harmless.
    """
    for thread, stream in pairs:
        thread.join(wait)
        if stream is not None and not thread.is_alive():
            with contextlib.suppress(OSError):
                stream.close()


@dataclass
class Line:
    """One line of the child's stdout, without its ``\\n`` (a ``\\r`` before it is kept)."""

    data: bytes
    at: float  # seconds since the child started, when the chunk that ended the line came off the pipe
    size: int  # the line's full length in bytes (``data`` may be cut to MAX_LINE_KEPT)
    complete: bool = True  # False for a last line that ended without ``\\n``
    # Seconds the reader had waited for a CPU when it took that chunk: with the starter's wait inside
    # Popen (``ChildProcess.spawn_wait``), the part of ``at`` that was the checking side's load.
    late: float = 0.0

    @property
    def cut(self) -> bool:
        return self.size > len(self.data)


def longest_wait(before: dict[str, float], now: dict[str, float]) -> float:
    """The longest wait for a CPU of a thread in both readings of :meth:`ChildProcess.thread_run_delays`,
    between them: what a busy machine held the slowest of those threads back.

    >>> longest_wait({"t1": 0.5, "t2": 1.0}, {"t1": 0.75, "t2": 1.0, "t3": 9.0})
    0.25
    """
    return max((now[t] - before[t] for t in before.keys() & now.keys()), default=0.0)


class ChildProcess:
    def __init__(
        self,
        argv: Sequence[str],
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        max_line: int = MAX_LINE_KEPT,
    ) -> None:
        self.argv = list(argv)
        self.max_line = max_line
        self.lines: queue.Queue[Line | None] = queue.Queue()
        self.stdout_bytes = 0
        self.stderr_bytes = 0
        self.stdout_closed = threading.Event()
        self._stderr_tail: collections.deque[bytes] = collections.deque()
        self._stderr_kept = 0
        self._lock = threading.Lock()
        self._seen_threads: list[str] | None = None  # the group's threads at the last full reading
        self.last_look: dict[str, thread_state.Thread] = {}  # its threads when wait_patient gave up
        self.started = time.monotonic()
        spawning = thread_state.own_wait()
        # OSError (no such command, not executable) reaches the caller: it is a usage problem.
        self.process = subprocess.Popen(
            self.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=child_environment(env),
            cwd=cwd,
            bufsize=0,
            start_new_session=os.name == "posix",
        )
        self.spawn_wait = thread_state.own_wait() - spawning  # the starter's own wait inside Popen
        self._threads = [
            threading.Thread(target=self._read_stdout, daemon=True),
            threading.Thread(target=self._read_stderr, daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    @property
    def pid(self) -> int:
        return self.process.pid

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    # -- reading ---------------------------------------------------------------------------
    def _read_stdout(self) -> None:
        kept_total = 0
        partial = bytearray()
        partial_size = 0
        for chunk in _chunks(self.process.stdout):
            at = self.elapsed()  # when the chunk came off the pipe: its lines' time
            self.stdout_bytes += len(chunk)
            late = thread_state.own_wait()  # one small read a chunk, not a line
            start = 0
            while True:
                end = chunk.find(b"\n", start)
                piece = chunk[start:] if end < 0 else chunk[start:end]
                room = self.max_line - len(partial)
                if room > 0:
                    partial += piece[:room]
                partial_size += len(piece)
                if end < 0:
                    break
                if kept_total < MAX_STDOUT_KEPT:
                    kept_total += len(partial)
                    self.lines.put(Line(bytes(partial), at, partial_size, late=late))
                partial.clear()
                partial_size = 0
                start = end + 1
        if partial_size:
            self.lines.put(
                Line(bytes(partial), self.elapsed(), partial_size, complete=False, late=thread_state.own_wait())
            )
        self.stdout_closed.set()
        self.lines.put(None)

    def _read_stderr(self) -> None:
        for chunk in _chunks(self.process.stderr):
            with self._lock:
                self.stderr_bytes += len(chunk)
                self._stderr_tail.append(chunk)
                self._stderr_kept += len(chunk)
                while self._stderr_kept - len(self._stderr_tail[0]) >= STDERR_TAIL:
                    self._stderr_kept -= len(self._stderr_tail.popleft())

    def read_line(self, timeout: float) -> Line | None:
        """The next stdout line, or ``None`` if none came within ``timeout`` or stdout closed."""
        try:
            line = self.lines.get(timeout=max(0.0, timeout))
        except queue.Empty:
            return None
        if line is None:
            self.lines.put(None)  # keep the end marker for later readers
        return line

    def group_stats(self) -> dict[str, list[bytes]]:
        """``/proc/PID/stat`` of every process in the child's process group (the child and what it
        started), by pid: the fields after the command's name (state, ppid, pgrp, ... utime is the
        12th, stime the 13th). Empty where ``/proc`` cannot tell (another system, the group gone)."""
        try:
            names = os.listdir("/proc")
        except OSError:
            return {}
        found = {}
        group = str(self.process.pid).encode()
        for name in names:
            if not name.isdigit():
                continue
            try:
                line = thread_state.read_proc(f"/proc/{name}/stat")
                rest = line[line.rindex(b")") + 2 :]  # the name, in parentheses, may hold anything
                if rest.split(b" ", 3)[2] == group:  # the group first: one process in hundreds is ours
                    found[name] = rest.split()
            except (OSError, IndexError, ValueError):
                continue
        return found

    def cpu_seconds(self) -> float | None:
        """CPU time (user and system) used so far by the child's process group: the child and what it
        started. ``None`` where ``/proc`` cannot tell (another system, the child gone)."""
        try:
            ticks = os.sysconf("SC_CLK_TCK")
        except (ValueError, AttributeError):
            return None
        group = self.group_stats()
        return sum(int(f[11]) + int(f[12]) for f in group.values()) / ticks if group else None

    def read_line_patient(self, quiet: float, most: float) -> Line | None:
        """The next stdout line, waiting ``quiet`` seconds, and longer (``most`` in all) while the child is
        still using the CPU or is held in the kernel's I/O: on a loaded machine a slow start is work in
        progress, not silence. An idle child (blocked on its stdin) is silent after ``quiet``, however
        busy the machine."""
        deadline = time.monotonic() + most
        while True:
            before = self.cpu_seconds()
            line = self.read_line(min(quiet, deadline - time.monotonic()))
            if line is not None or time.monotonic() >= deadline or before is None:
                return line
            after = self.cpu_seconds()
            if after is None or self.stdout_closed.is_set() or (after - before < BUSY_CPU and not self.held_now()):
                return None

    def stderr_tail(self, limit: int = 2000) -> str:
        """The last ``limit`` bytes of stderr, decoded leniently."""
        with self._lock:
            data = b"".join(self._stderr_tail)
        return data[-limit:].decode("utf-8", "replace")

    # -- writing ---------------------------------------------------------------------------
    def send(self, data: bytes) -> bool:
        """Write bytes to the child's stdin; False if it no longer reads (a closed pipe)."""
        stdin = self.process.stdin
        if stdin is None or stdin.closed:
            return False
        try:
            stdin.write(data)
            stdin.flush()
        except (BrokenPipeError, ValueError, OSError):
            return False
        return True

    def close_stdin(self) -> None:
        stdin = self.process.stdin
        if stdin is not None and not stdin.closed:
            with contextlib.suppress(OSError):
                stdin.close()

    # -- ending ----------------------------------------------------------------------------
    def wait(self, timeout: float) -> int | None:
        """The exit status, or None if the child is still running after ``timeout``."""
        try:
            return self.process.wait(timeout=max(0.0, timeout))
        except subprocess.TimeoutExpired:
            return None

    def group_threads(self) -> list[str]:
        """``/proc/PID/task/TID`` of every thread of the child's process group (the child and what it
        started). Empty where ``/proc`` cannot tell."""
        return [path for pid in self.group_stats() for path in thread_state.of_process(pid)]

    def run_delays(self) -> dict[str, float]:
        """Seconds each thread of the child's process group has waited for a CPU so far (runnable, not
        running: the kernel's ``schedstat``), by thread. Empty where ``/proc`` cannot tell."""
        self._seen_threads = self.group_threads()
        return self.thread_run_delays(self._seen_threads)

    def known_run_delays(self) -> dict[str, float]:
        """:meth:`run_delays` of the threads the last full reading found (a full one if there was none):
        a few file reads, where a full reading scans all of ``/proc`` (1-3 ms). A baseline to take on
        every call, for :meth:`starved_known`."""
        if self._seen_threads is None:
            return self.run_delays()
        return self.thread_run_delays(self._seen_threads)

    def starved_known(self, before: dict[str, float]) -> float:
        """:meth:`starved`, of the threads in ``before`` only (a few file reads). A thread started since,
        or missed by that reading, is not counted: its wait before ``before`` cannot be told apart, and
        an allowance must not grow by a wait that came before it was given."""
        return longest_wait(before, self.thread_run_delays(list(before)))

    def run_delays_since(self, before: dict[str, float], ticks: int, threads: list[str]) -> dict[str, float]:
        """:meth:`thread_run_delays` of the threads in ``before``, and of every thread of the group
        started since ``ticks`` (:func:`reference.thread_state.ticks_now`, read with ``before``), of
        ``threads`` (:meth:`group_threads`, a scan of ``/proc``): a process the child started meanwhile
        (a tool that runs a program) waits for a CPU on the child's behalf, and all of its wait came
        after ``before``."""
        born = [t for t in threads if t not in before and thread_state.born_since(t, ticks)]
        return self.thread_run_delays([*before, *born])

    @staticmethod
    def thread_run_delays(threads: list[str]) -> dict[str, float]:
        """Seconds each of ``threads`` (``/proc/PID/task/TID``) has waited for a CPU so far, by thread
        (one that has ended is left out)."""
        delays = {}
        for thread in threads:
            try:
                delays[thread] = int(thread_state.read_proc(f"{thread}/schedstat").split()[1]) / 1e9
            except (OSError, IndexError, ValueError):
                continue
        return delays

    def starved(self, before: dict[str, float]) -> float:
        """Seconds the most-delayed thread of the child's process group waited for a CPU since
        ``before`` (a reading of :meth:`run_delays`): how long a busy machine held the child back."""
        return max((d - before.get(t, 0.0) for t, d in self.run_delays().items()), default=0.0)

    def wait_patient(self, quiet: float, most: float) -> int | None:
        """The exit status within ``quiet`` seconds of the time the child could run, ``most`` seconds in
        all at most; None while it still runs then. The wait grows by what the machine held it back:
        its threads' waits for a CPU (``schedstat``), and the time a look every ``LOOK_EVERY`` seconds
        found one in the kernel's I/O; nor does it end while a thread waits for a core right now
        (:mod:`reference.thread_state`). A server asleep, or busy on its own, gets ``quiet`` seconds,
        however busy the machine."""
        start = time.monotonic()
        before = self.run_delays()
        if not before:  # /proc cannot tell: the plain wait
            return self.wait(quiet)
        paths = list(before)
        held, last, seen = 0.0, start, thread_state.look(paths)
        self.last_look = {}
        while True:
            left = min(start + quiet + held + self.starved_known(before), start + most) - time.monotonic()
            code = self.wait(min(left, LOOK_EVERY) if left > 0 else LOOK_EVERY)
            if code is not None:
                return code
            now, threads = time.monotonic(), thread_state.look(paths)
            if any(thread.in_io for thread in threads.values()):
                held += now - last
            queued = any(thread.queued_since(seen.get(path)) for path, thread in threads.items())
            last, seen, due = now, threads, start + quiet + held
            # The full reading also counts a thread started since the first look (a scan of /proc).
            if now >= start + most or (
                not queued and now >= due + self.starved_known(before) and now >= due + self.starved(before)
            ):
                self.last_look = threads
                return self.process.poll()

    def working_now(self, threads: list[str] | None = None) -> bool:
        """Whether a thread of the child's process group (``threads``, if just found) is running, waiting
        for a core, or in the kernel's I/O right now (state R or D): at work, not asleep waiting for input."""
        found = self.group_threads() if threads is None else threads
        return any(thread.state in ("R", "D") for thread in thread_state.look(found).values())

    def output_in_flight(self) -> bool:
        """Whether stdout the child has written is on its way to a caller of :meth:`read_line`: in the pipe,
        in the reader's hands (its thread not asleep in a read), or read and not yet taken. Looked at in
        the order it moves, so that a line cannot slip between two looks. On a busy machine the reader
        may wait for a core with a reply in hand."""
        if self.unread_bytes():
            return True
        reader = self._threads[0].native_id
        if reader is not None and self._threads[0].is_alive():
            thread = thread_state.Thread.read(f"/proc/self/task/{reader}")
            if thread is not None and thread.state in ("R", "D"):
                return True
        return not self.lines.empty()

    def unread_bytes(self) -> int:
        """Bytes the child has written to its stdout that the reader has not yet taken (0 where the system
        cannot tell)."""
        stdout = self.process.stdout
        try:
            count = array.array("i", [0])
            fcntl.ioctl(stdout.fileno() if stdout is not None else -1, termios.FIONREAD, count)
        except (OSError, ValueError, NameError):
            return 0
        return count[0]

    def held_now(self) -> bool:
        """Whether a thread of the child's process group is in the kernel's I/O right now (state D: a
        disk, a mount a sandbox makes on a busy machine): held by the machine, not idle by choice."""
        return any(thread.in_io for thread in thread_state.look(self.group_threads()).values())

    def _wait_killed(self) -> int:
        """The exit status of a child sent SIGKILL: ``KILL_WAIT`` seconds, and on while a thread of its
        group is held in the kernel's I/O (SIGKILL takes effect when that call returns)."""
        start = time.monotonic()
        while True:
            try:
                return self.process.wait(timeout=KILL_WAIT)
            except subprocess.TimeoutExpired:
                if time.monotonic() - start >= KILL_HELD_MOST or not self.held_now():
                    raise

    def _signal_group(self, sig: int) -> None:
        try:
            if os.name == "posix":
                os.killpg(self.process.pid, sig)
            else:
                self.process.send_signal(sig)
        except (ProcessLookupError, PermissionError, OSError):
            pass

    def close(self, grace: float = 2.0) -> int:
        """Shut down in the spec's order: close stdin, wait, SIGTERM, wait, SIGKILL.

        Whatever the child forked into its session is killed too. Returns the exit status
        (negative: the signal that ended it). A child that even SIGKILL does not end within
        ``KILL_WAIT`` seconds (longer while a thread of its group is held in the kernel's I/O, where a
        signal waits for the call to return, ``KILL_HELD_MOST`` at most) raises ``subprocess.TimeoutExpired``.
        """
        self.close_stdin()
        code = self.wait(grace)
        if code is None:
            self._signal_group(signal.SIGTERM)
            code = self.wait(1.0)
        if code is None:
            self._signal_group(signal.SIGKILL)
            code = self._wait_killed()  # a bound even here: TimeoutExpired, never a hang
        self._signal_group(signal.SIGKILL)  # grandchildren left in the session
        close_after_readers(zip(self._threads, (self.process.stdout, self.process.stderr), strict=True), 1.0)
        return code

    def kill(self, wait: float = 1.0) -> None:
        """End the child and its session at once (SIGKILL), for when there is no time to ask; wait up to
        ``wait`` seconds for it to be gone (0: not at all, for a caller that kills several first)."""
        self._signal_group(signal.SIGKILL)
        if wait > 0:
            self.wait(wait)

    def __enter__(self) -> ChildProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
