"""The checker and slow tools: a per-call timeout apart from the protocol's, cancellation, no skipped checks.

tests/servers/slow_tool.py is a correct server whose read-only `wait` tool works for a few seconds
on a thread of its own (and records every notifications/cancelled it receives). The spec bounds no
tool's run time, so a slow tool is at most a warning; the checks after it are still judged; and
exit-on-eof tells a server that exits once its work in flight ends from one that never exits.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SLOW = [sys.executable, str(ROOT / "tests" / "servers" / "slow_tool.py")]


def check(*args: str, timeout: float = 90) -> dict[str, dict[str, Any]]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    done = subprocess.run(
        [sys.executable, "-m", "grader.cli", "check", "--json", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=ROOT,
    )
    assert done.returncode in (0, 1), done.stderr
    return {c["id"]: c for c in json.loads(done.stdout)["checks"]}


def test_a_call_past_the_call_timeout_is_cancelled_and_the_checks_go_on(tmp_path: Path) -> None:
    record = tmp_path / "record"
    found = check("--call-timeout", "1", "--", *SLOW, str(record), "--seconds", "5")
    slow = found["tools-call-result"]
    assert slow["status"] == "warn", slow
    assert "no reply from wait within 1 s" in slow["summary"] and "notifications/cancelled" in slow["summary"]
    assert (slow["evidence"]["keyword"], slow["evidence"]["source"]) == (
        "SHOULD",
        "MCP 2025-11-25, Lifecycle > Timeouts",
    )
    # The server received the cancellation, for the very request the checker gave up on.
    cancelled = record.read_text().split()
    assert f"{slow['evidence']['cancelled'][0]}" in cancelled
    # The checks after the slow call were judged, not skipped.
    for later in ("unknown-tool", "tool-error-kind", "exit-on-eof"):
        assert found[later]["status"] == "pass", found[later]
    # A server with tools but not the shop's: the shop checks say so, not "not reached".
    for shop_check in ("shop-contract", "shop-read-only"):
        assert found[shop_check]["status"] == "skip"
        assert found[shop_check]["summary"].startswith("not a shop server (no count_orders")
    # It exits at EOF once the work in flight ends (the call ran ~4 s past the cancellation).
    assert "once the tool call(s) in flight ended" in found["exit-on-eof"]["summary"]


@pytest.mark.slow
def test_a_server_that_never_exits_is_told_apart(tmp_path: Path) -> None:
    found = check("--call-timeout", "1", "--", *SLOW, str(tmp_path / "record"), "--seconds", "3", "--never-exit")
    eof = found["exit-on-eof"]
    assert eof["status"] == "warn" and eof["evidence"]["keyword"] == "SHOULD"
    assert eof["summary"].startswith("never exits") and "tool calls in flight" in eof["summary"]


def test_a_call_slower_than_the_protocol_timeout_but_within_the_call_timeout_passes(tmp_path: Path) -> None:
    # --timeout bounds protocol replies (1 s here); a tool call has --call-timeout (default 30 s).
    record = tmp_path / "record"
    found = check("--timeout", "1", "--", *SLOW, str(record), "--seconds", "2")
    assert found["tools-call-result"]["status"] == "pass", found["tools-call-result"]
    assert found["exit-on-eof"]["summary"] == "exited with status 0 after stdin closed"
    # Only the checker's own test cancellation (an id no request has) reached the server.
    assert "call-wait" not in record.read_text()


# A server's shutdown on a busy machine: after stdin closes it needs 0.4 s of CPU to exit, pinned to one
# core beside four CPU-bound processes there, each in a session of its own as the server is (the kernel
# shares a core between sessions): it gets about a fifth of that core.
SLOW_SHUTDOWN = (
    "import os, sys, time\n"
    "os.sched_setaffinity(0, {CORE})\n"
    "sys.stdin.read()\n"
    "start = time.process_time()\n"
    "while time.process_time() - start < 0.4:\n"
    "    pass\n"
)
HOG = "import os\nos.sched_setaffinity(0, {CORE})\nwhile 1:\n    pass\n"


def test_a_shutdown_slowed_by_a_busy_machine_is_waited_for_an_idle_server_is_not() -> None:
    """exit-on-eof's wait counts the time a server could run: one that waits for a CPU to finish its
    shutdown gets longer (the time it waited), one asleep after end of input does not."""
    from reference.child import ChildProcess

    core = sorted(os.sched_getaffinity(0))[-1]
    hog = [sys.executable, "-c", HOG.replace("CORE", str(core))]
    hogs = [subprocess.Popen(hog, start_new_session=True) for _ in range(4)]
    slow = ChildProcess([sys.executable, "-c", SLOW_SHUTDOWN.replace("CORE", str(core))])
    idle = ChildProcess([sys.executable, "-c", "import time\nwhile 1:\n    time.sleep(0.1)\n"])
    try:
        slow.close_stdin()
        assert slow.wait_patient(1.0, 60.0) == 0, slow.stderr_tail()
        idle.close_stdin()
        started = time.monotonic()
        assert idle.wait_patient(1.0, 60.0) is None
        assert time.monotonic() - started < 30  # the grace, and what it waited for a CPU: never the 60 s
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait(10)
        slow.close(grace=0)
        idle.close(grace=0)


# A hold of the kernel's, made on purpose: fanotify's permission events. Opening a marked file waits
# (uninterruptible, state D, as a read from a slow disk does) until the listener allows it.
FAN_CLASS_CONTENT, FAN_CLOEXEC, FAN_MARK_ADD, FAN_OPEN_PERM, FAN_ALLOW = 0x04, 0x01, 0x01, 0x00010000, 0x01


class OpenGate:
    """A file whose every opening the kernel holds for ``hold`` seconds (needs CAP_SYS_ADMIN)."""

    def __init__(self, path: Path, hold: float) -> None:
        import ctypes
        import threading

        libc = ctypes.CDLL(None, use_errno=True)
        libc.fanotify_mark.argtypes = [ctypes.c_int, ctypes.c_uint, ctypes.c_uint64, ctypes.c_int, ctypes.c_char_p]
        path.write_text("")
        self.path, self.hold, self.held = path, hold, 0
        self.fd = libc.fanotify_init(FAN_CLASS_CONTENT | FAN_CLOEXEC, os.O_RDONLY)
        if self.fd < 0:
            pytest.skip(f"fanotify_init: {os.strerror(ctypes.get_errno())} (a hold in the kernel needs root)")
        if libc.fanotify_mark(self.fd, FAN_MARK_ADD, FAN_OPEN_PERM, -100, str(path).encode()) < 0:
            os.close(self.fd)
            pytest.skip(f"fanotify_mark: {os.strerror(ctypes.get_errno())}")
        self.thread = threading.Thread(target=self._answer, daemon=True)
        self.thread.start()

    def _answer(self) -> None:
        import struct

        while True:
            try:
                data = os.read(self.fd, 4096)
            except OSError:
                return  # closed
            # struct fanotify_event_metadata: event_len, vers, reserved, metadata_len, mask, fd, pid
            *_, fd, _pid = struct.unpack_from("IBBHQii", data)
            time.sleep(self.hold)
            self.held += 1
            os.write(self.fd, struct.pack("iI", fd, FAN_ALLOW))
            os.close(fd)

    def close(self) -> None:
        os.close(self.fd)


def test_a_shutdown_held_by_the_kernel_is_waited_for(tmp_path: Path) -> None:
    """exit-on-eof's wait counts the time a server could run: 2.5 s in uninterruptible sleep (the
    kernel's I/O: here an open() that fanotify holds) are the machine's, not the server's; the same
    2.5 s asleep by the server's own choice are its own."""
    from reference import thread_state
    from reference.child import ChildProcess

    gate = OpenGate(tmp_path / "gate", hold=2.5)
    code = f"import sys, time\nsys.stdin.read()\nopen({str(gate.path)!r}).close()\n"
    held = ChildProcess([sys.executable, "-c", code])
    asleep = ChildProcess([sys.executable, "-c", "import sys, time\nsys.stdin.read()\ntime.sleep(2.5)\n"])
    try:
        held.close_stdin()
        assert held.wait_patient(1.0, 60.0) == 0, held.stderr_tail()
        assert gate.held == 1
        asleep.close_stdin()
        assert asleep.wait_patient(1.0, 60.0) is None
        assert thread_state.describe(asleep.last_look).endswith("waits for a timer (time.sleep)")
    finally:
        gate.close()
        held.close(grace=0)
        asleep.close(grace=0)


def test_a_start_held_by_the_kernel_is_waited_for(tmp_path: Path) -> None:
    """The course's reads give a server more than their 3 s while it is held in the kernel's I/O, as a
    sandbox's mounts are on a busy machine (here: 4.5 s in an open() that fanotify holds, before the
    server reads its first line); a server that only sleeps that long is still 'no reply'."""
    from grader.course.drive import Server, initialize
    from grader.course.expect import Failure

    gate = OpenGate(tmp_path / "gate", hold=4.5)
    serve = "import runpy\nrunpy.run_module('reference.server', run_name='__main__')\n"
    held = [sys.executable, "-c", f"open({str(gate.path)!r}).close()\n{serve}"]
    asleep = [sys.executable, "-c", f"import time\ntime.sleep(4.5)\n{serve}"]
    try:
        with Server(held, timeout=3.0) as server:
            sent = initialize()
            server.send(sent)
            assert server.next_line(sent, "initialize-result")["id"] == sent["id"]
        assert gate.held == 1
        with Server(asleep, timeout=3.0) as server, pytest.raises(Failure, match="no reply within 3 s"):
            sent = initialize()
            server.send(sent)
            server.next_line(sent, "initialize-result")
    finally:
        gate.close()
