"""What a thread of a child process is doing now, as Linux's ``/proc`` tells it: for waits that are fair.

A host that gives a server a few seconds to exit must not count against it the time the machine
held it back. A thread waiting for a CPU is counted by the kernel (``schedstat``: see
:meth:`reference.child.ChildProcess.run_delays`); two other holds are only seen by looking:

- a thread in uninterruptible sleep (state ``D``): the kernel is doing I/O for it, such as reading
  a page of the program back from disk on a busy machine;
- a runnable thread (state ``R``) whose CPU time has not moved since the last look: it is waiting
  for a core right now, and that wait reaches ``schedstat`` only once it runs.

A thread asleep by its own choice (``S``: ``time.sleep``, ``join()``, a read) is the program's doing,
and the words for what it waits on make a useful failure message ("a lock, an event or another
thread" for a ``join()`` that never returns).

    >>> import threading
    >>> me = Thread.read(f"/proc/self/task/{threading.get_native_id()}")
    >>> me.state, me.waits_for
    ('R', 'nothing: it is running')
    >>> Thread("/proc/1/task/1", "python3", "S", 0, "futex_do_wait").waits_for
    'a lock, an event or another thread (a join() or an Event.wait() that never returns?)'
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

# The kernel function a sleeping thread waits in (its "wchan"), by the start of its name: what a
# Python program was doing to get there.
WAITS_IN = (
    ("futex", "a lock, an event or another thread (a join() or an Event.wait() that never returns?)"),
    ("hrtimer_nanosleep", "a timer (time.sleep)"),
    ("pipe_read", "data on a pipe (a read of stdin or of a child's output)"),
    ("pipe_write", "room in a pipe (a write that no one reads)"),
    ("do_wait", "a child process to end (subprocess's wait())"),
    ("poll_schedule_timeout", "input on a file descriptor (select or poll)"),
    ("do_select", "input on a file descriptor (select)"),
    ("ep_poll", "an event loop's input (selectors, asyncio)"),
    ("do_epoll_wait", "an event loop's input (selectors, asyncio)"),
    ("unix_stream", "a socket"),
    ("inet_", "a socket"),
    ("sk_wait", "a socket"),
    ("wait_woken", "a socket or a terminal"),
)


def read_proc(path: str) -> bytes:
    """A small ``/proc`` file (a ``stat`` line, a ``schedstat``), in one read; OSError as ``open()`` would.

    The fair waits scan every process's ``stat`` file, hundreds of them a look on a busy machine, many
    times a second: Python's buffered file object was a third of that scan's CPU (300 processes:
    5.5 ms a scan with ``open()``, 3.7 ms so).

    >>> read_proc("/proc/self/stat").split()[0] == str(os.getpid()).encode()
    True
    """
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        return os.read(fd, 4096)  # a stat line is a few hundred bytes; the kernel makes it whole
    finally:
        os.close(fd)


def own_wait() -> float:
    """Seconds the calling thread has waited for a CPU so far (runnable, not running: its ``schedstat``);
    0.0 where ``/proc`` cannot tell. Read around a step, it tells the step's time from the machine's
    load: a checker that stamps a reply late because it waited for a core must not blame the server.

    >>> 0.0 <= own_wait() <= own_wait()
    True
    """
    try:
        return int(read_proc("/proc/thread-self/schedstat").split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


def ticks_now() -> int:
    """The kernel's clock for a thread's start (``/proc/.../stat``'s 22nd field): clock ticks since boot.

    >>> started = int(read_proc("/proc/self/stat").rpartition(b")")[2].split()[19])
    >>> started <= ticks_now()
    True
    """
    return int(time.clock_gettime(time.CLOCK_BOOTTIME) * os.sysconf("SC_CLK_TCK"))


def born_since(path: str, ticks: int) -> bool:
    """Whether the thread at ``path`` (``/proc/PID/task/TID``) started at or after ``ticks``
    (:func:`ticks_now`): all of its waits for a CPU came after that moment. False once it has ended."""
    try:
        return int(read_proc(f"{path}/stat").rpartition(b")")[2].split()[19]) >= ticks
    except (OSError, IndexError, ValueError):
        return False


@dataclass(frozen=True)
class Thread:
    """One look at a thread (``path``: ``/proc/PID/task/TID``)."""

    path: str
    command: str  # the process's name (its "comm": the program's file name, cut to 15 bytes)
    state: str  # R running or runnable, S asleep, D uninterruptible (the kernel's I/O), T stopped, Z ended
    cpu_ns: int  # CPU time so far
    wchan: str  # the kernel function it sleeps in ("" while it runs, or where the kernel will not tell)

    @classmethod
    def read(cls, path: str) -> Thread | None:
        """The thread at ``path`` now; None once it has ended (or where ``/proc`` cannot tell)."""
        try:
            head, _, fields = read_proc(f"{path}/stat").rpartition(b")")
            command, state = head.partition(b"(")[2].decode(errors="replace"), fields.split()[0].decode()
            cpu_ns = int(read_proc(f"{path}/schedstat").split()[0])
        except (OSError, IndexError, ValueError):
            return None
        try:
            where = read_proc(f"{path}/wchan").decode(errors="replace").strip()
        except OSError:
            where = ""
        return cls(path, command, state, cpu_ns, "" if where == "0" else where)

    @property
    def pid(self) -> str:
        return self.path.split("/")[2]

    @property
    def tid(self) -> str:
        return self.path.split("/")[4]

    @property
    def waits_for(self) -> str:
        """In words: what the thread waits for."""
        if self.state == "R":
            return "nothing: it is running"
        if self.state == "D":
            return f"the kernel's I/O ({self.wchan or 'uninterruptible'})"
        for start, words in WAITS_IN:
            if self.wchan.startswith(start):
                return words
        return f"{self.wchan or 'something the kernel does not name'} (state {self.state})"

    @property
    def in_io(self) -> bool:
        """In the kernel's I/O (uninterruptible sleep): the machine holds it, not the program."""
        return self.state == "D"

    def queued_since(self, earlier: Thread | None) -> bool:
        """Runnable, without a nanosecond of CPU since ``earlier`` (a look at the same thread): waiting for
        a core right now (``schedstat`` counts that wait once it runs)."""
        return self.state == "R" and earlier is not None and earlier.cpu_ns == self.cpu_ns


def of_process(pid: int | str) -> list[str]:
    """``/proc/PID/task/TID`` of each thread of process ``pid`` ([] once it has ended, or where ``/proc``
    cannot tell).

    >>> import os, threading
    >>> f"/proc/{os.getpid()}/task/{threading.get_native_id()}" in of_process(os.getpid())
    True
    """
    try:
        return [f"/proc/{pid}/task/{task}" for task in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return []


def look(paths: list[str]) -> dict[str, Thread]:
    """Each of ``paths`` (``/proc/PID/task/TID``) that still runs, by path."""
    found = {}
    for path in paths:
        thread = Thread.read(path)
        if thread is not None:
            found[path] = thread
    return found


def describe(threads: dict[str, Thread]) -> str:
    """What ``threads`` are doing, in one line ("" for none), a process's main thread first: for a
    failure message.

    >>> describe({"/proc/7/task/9": Thread("/proc/7/task/9", "python3", "S", 0, "hrtimer_nanosleep"),
    ...           "/proc/7/task/7": Thread("/proc/7/task/7", "python3", "R", 0, "")})
    'the main thread (pid 7) waits for nothing: it is running; thread 9 waits for a timer (time.sleep)'
    """
    parts = []
    for thread in sorted(threads.values(), key=lambda t: (t.pid, t.tid != t.pid)):
        who = f"the main thread (pid {thread.pid})" if thread.tid == thread.pid else f"thread {thread.tid}"
        parts.append(f"{who} waits for {thread.waits_for}")
    return "; ".join(parts)
