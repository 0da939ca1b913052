"""A probe that nudges a silent server with a ping, to tell a reply stuck in a buffer from a slow one.

A server that does not flush some of its replies keeps them in its stdout buffer until it writes
and flushes something else. So when a request goes unanswered for a moment, the probe writes a
ping of its own: if the awaited reply then comes out at once, ahead of the ping's reply, it was
written long ago and held back, the signature of a missing flush (a slow tool, still working,
answers later, or after the ping). The ping goes only to a server that has been silent for a
second of the time it could run, is asleep (no thread of it running, waiting for a core or in the
kernel's I/O: one at work holds no finished reply) and has nothing in the pipe. The probe records
it as a :class:`Late` reply and goes on at once, instead of waiting out the timeout for every
unflushed reply. The nudges' replies are read and kept on record (frames, stdout rules) but never
handed to the caller.

    >>> import sys
    >>> with NudgingProbe([sys.executable, "-m", "reference.server"], timeout=5) as probe:
    ...     probe.request("ping", id=7).message, probe.late
    ({'jsonrpc': '2.0', 'id': 7, 'result': {}}, [])

Replies held until stdin closes (the other place a buffer gets flushed) are found by
:mod:`grader.checker.flush` from the frames and :attr:`NudgingProbe.closed_at`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from reference import thread_state
from reference.child import ChildProcess, longest_wait

from .probe import Probe, Received, Reply, same_id

NUDGE_AFTER = 1.0  # seconds of silence before the first nudge (of time the server and the probe could run)
NUDGE_AGAIN = 0.05  # once a reply was seen stuck, later silences are nudged at once
FLUSHED_WITHIN = 0.5  # a reply this soon after the nudge was held back
AT_WORK_MOST = 1.0  # seconds more a silent server at work is left to work before the nudge
TRACK_EVERY = 0.2  # while a nudge is due, how often the server's waits are read (a process it starts may end)
EXIT_WITHIN = 1.0  # a reply this soon after stdin closed was held back (exiting takes a moment more)
PREFIX = "flush-probe-"  # the nudges' ids
OPENING = ("initialize", "server/discover")  # a session's first request, in either era: never nudged


@dataclass(frozen=True)
class Late:
    """A reply that came out only when the probe wrote something else (or closed stdin)."""

    request: dict[str, Any]  # the request it answers
    sent_at: float  # seconds since start, when the request was written
    trigger_at: float  # when the nudge (or stdin's close) was written
    arrived_at: float  # when the reply arrived
    trigger: str  # "a ping" or "stdin closed"
    line: bytes  # the reply as received


@dataclass
class Waits:
    """What held the server and this probe back, from one moment on (the request, then the nudge): the
    seconds their threads waited for a CPU (the kernel's ``schedstat``), a process the server started
    since included. Read while the server is silent, so that one that has ended keeps its wait."""

    before: dict[str, float]  # the server's threads' waits at that moment
    own: dict[str, float]  # this probe's threads' waits then
    ticks: int  # the moment, on the clock of a thread's start (thread_state.ticks_now)
    seen: dict[str, float] = field(default_factory=dict)  # the server's threads' waits at the last reading
    threads: list[str] = field(default_factory=list)  # the server's threads the last reading found

    @classmethod
    def now(cls, child: ChildProcess) -> Waits:
        before = child.known_run_delays()
        return cls(before, _own_run_delays(), thread_state.ticks_now(), dict(before))

    def track(self, child: ChildProcess) -> None:
        """Read the waits of the server's threads, and of those started since, now."""
        self.threads = child.group_threads()
        self.seen.update(child.run_delays_since(self.before, self.ticks, self.threads))

    def held(self, child: ChildProcess) -> float:
        """The seconds of the server's waits, thread after thread, or the probe's longest, if longer:
        what to add to a silence before it is no longer the machine's doing. A server that runs a
        program waits, and then the program does: the waits add up (threads that waited side by side
        only make this more patient)."""
        self.track(child)
        server = sum(d - self.before.get(t, 0.0) for t, d in self.seen.items())
        return max(server, longest_wait(self.own, _own_run_delays()))

    def longest(self, child: ChildProcess) -> float:
        """The longest wait of one thread of the server's (started since included) or of this probe's:
        the strict measure, for judging a reply held back (a larger allowance would call more replies
        held)."""
        self.track(child)
        server = max((d - self.before.get(t, 0.0) for t, d in self.seen.items()), default=0.0)
        return max(server, longest_wait(self.own, _own_run_delays()))


def is_nudge_reply(item: Received) -> bool:
    message = item.message
    return (
        isinstance(message, dict)
        and "method" not in message
        and isinstance(message.get("id"), str)
        and message["id"].startswith(PREFIX)
    )


class NudgingProbe(Probe):
    def __init__(
        self, argv: Sequence[str], timeout: float, env: Mapping[str, str] | None = None, name: str = "probe"
    ) -> None:
        super().__init__(argv, timeout, env=env, name=name)
        self.late: list[Late] = []
        self.closed_at: float | None = None  # when stdin was closed
        self.nudges = 0
        self.ended_by_itself = False  # stdout closed while stdin was still open (the server died)
        self.unanswered = 0  # requests given up on: at close, their replies may still be in a buffer
        self._awaiting: dict[str, Any] | None = None  # the request being waited for
        self._sent_at = 0.0
        self._nudge_at: float | None = None  # when to nudge, if still silent
        self._nudged_at: float | None = None  # when the nudge for the awaited request went out
        self._delay = 0.0  # the silence that earns the awaited request a nudge
        self._since = Waits({}, {}, 0)  # CPU waits since the request was sent (then since the nudge)

    def exchange(self, message: dict[str, Any], timeout: float | None = None, patience: float = 0.0) -> Reply:
        if message.get("method") in OPENING or "id" not in message:
            # Before the opening request is answered a silence is a slow start (startup-time), not a buffer.
            return super().exchange(message, timeout, patience)
        limit = self.timeout if timeout is None else timeout
        delay = NUDGE_AGAIN if self.late else min(NUDGE_AFTER, limit / 2)
        self._awaiting, self._sent_at = message, self.child.elapsed()
        self._nudge_at, self._nudged_at, self._delay = self._sent_at + delay, None, delay
        self._since = Waits.now(self.child)
        try:
            reply = super().exchange(message, timeout, patience)
        finally:
            self._awaiting = self._nudge_at = None
        if reply.message is None and reply.near_miss is None and not reply.spread:
            self.unanswered += 1
        return reply

    # A server whose stdout closes, or whose process ends, while stdin is still open died by itself,
    # wherever the checker sees it first: a read that ends, or a look before the next bad input.
    def stdout_closed(self) -> bool:
        closed = super().stdout_closed()
        self.ended_by_itself = self.ended_by_itself or (closed and self.closed_at is None)
        return closed

    def alive(self) -> bool:
        alive = super().alive()
        self.ended_by_itself = self.ended_by_itself or (not alive and self.closed_at is None)
        return alive

    def read(self, timeout: float, patience: float = 0.0) -> Received | None:
        if patience:  # an opening request's patient wait: never nudged
            return super().read(timeout, patience)
        deadline = self.child.elapsed() + timeout
        while True:
            now = self.child.elapsed()
            wait = deadline - now
            if self._nudge_at is not None:
                wait = min(wait, self._nudge_at - now, TRACK_EVERY)
            item = super().read(max(0.0, wait))
            if item is None:
                if self.stdout_closed():
                    return None
                if self._nudge_at is not None and self.child.elapsed() >= self._nudge_at:
                    self._nudge_when_due()
                    continue
                if self._nudge_at is not None:
                    self._since.track(self.child)
                if self.child.elapsed() >= deadline:
                    return None
                continue
            if is_nudge_reply(item):
                continue  # ours: on record, but no caller's business
            self._note_if_late(item)
            return item

    def _nudge_when_due(self) -> None:
        """Nudge now if the server has been silent for the awaited request's delay, in the time it and
        this probe could run; else later, by what they waited for a CPU. On a busy machine a reply that comes
        right after a nudge would otherwise be no sign of a buffer: the server, or the probe's reader,
        was only waiting for a core. Nor is a server nudged while it is at work (a thread of it running,
        waiting for a core or in the kernel's I/O), or while its reply is already on its way: a reply
        held in a buffer is the reply of a server asleep, waiting for input. That wait ends after
        AT_WORK_MOST, so that a thread that never rests (a busy loop beside a buffer) costs a second a
        request, not every request's time-out."""
        later = self._sent_at + self._delay + self._since.held(self.child)
        now = self.child.elapsed()
        if later > now + 0.01:
            self._nudge_at = later
            return
        # In the order a reply moves; the server's threads as held() just found them.
        if now < later + AT_WORK_MOST and (
            self.child.working_now(self._since.threads) or self.child.output_in_flight()
        ):
            self._nudge_at = now + TRACK_EVERY
            return
        self._nudge()

    def _nudge(self) -> None:
        self._since = Waits.now(self.child)  # the reply's window counts from here
        self._nudge_at = None
        self.nudges += 1
        self._nudged_at = self.child.elapsed()
        self.send({"jsonrpc": "2.0", "id": f"{PREFIX}{self.nudges}", "method": "ping"})

    def _note_if_late(self, item: Received) -> None:
        awaited, nudged = self._awaiting, self._nudged_at
        message = item.message
        if awaited is None or nudged is None or not isinstance(message, dict) or "method" in message:
            return
        # Within FLUSHED_WITHIN of the time the server and the probe could run since the nudge (and not
        # before it: a reply that came off the pipe first was not brought out by it).
        if (
            same_id(message.get("id"), awaited.get("id"))
            and item.line.at >= nudged
            and item.line.at - nudged - self._since.longest(self.child) <= FLUSHED_WITHIN
        ):
            self.late.append(Late(awaited, self._sent_at, nudged, item.line.at, "a ping", item.line.data))

    def close_stdin(self) -> None:
        if self.closed_at is None:
            self.closed_at = self.child.elapsed()
        super().close_stdin()

    def close(self, *args: Any, **kwargs: Any) -> int:
        if self.closed_at is None and self.unanswered and self.alive() and not self.stdout_closed():
            # Replies given up on may sit in a buffer that exiting flushes: end input, and listen
            # a moment before the process is ended (however little grace the caller gives it).
            self.close_stdin()
            self.read_for(EXIT_WITHIN)
        if self.closed_at is None:
            self.closed_at = self.child.elapsed()
        return super().close(*args, **kwargs)


def _own_run_delays() -> dict[str, float]:
    """Seconds each thread of this process has waited for a CPU (the kernel's ``schedstat``), by thread;
    empty where ``/proc`` cannot tell."""
    try:
        threads = [f"/proc/self/task/{task}" for task in os.listdir("/proc/self/task")]
    except OSError:
        return {}
    return ChildProcess.thread_run_delays(threads)
