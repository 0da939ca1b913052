"""stdout-flush on a busy machine: a reply that is only waiting for a CPU is not a reply held back.

The checker nudges a silent server with a ping after a second, and takes a reply that comes out
right after the ping for one stuck in a buffer (grader/checker/nudge.py). On a busy machine a server
that flushes every reply can still be silent for that second: it waits for a core. So the second
counts only the time the server (and the checker) could run. Both servers here spend 0.25 s of CPU
on each request, beside four CPU-bound processes pinned to their core: the one that flushes is
never taken for a buffer; the one that does not flush is still found, under the same load. A third
flushes too, but runs two programs in a row for each request (0.11 s of CPU each), and they do the spinning: their waits
count as the server's (started after the request, one ended before the nudge was due).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from grader.checker.nudge import NUDGE_AFTER, NudgingProbe

SERVER = """import json, os, sys, time
os.sched_setaffinity(0, {CORE})
for line in sys.stdin:
    message = json.loads(line)
    if message["method"] == "spin":
        start = time.process_time()
        while time.process_time() - start < 0.25:
            pass
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {}}) + "\\n")
    if FLUSH_ALL or message["method"] == "ping":
        sys.stdout.flush()
"""
SPIN = (
    "import os, time\\nos.sched_setaffinity(0, {CORE})\\nstart = time.process_time()\\n"
    "while time.process_time() - start < 0.11:\\n    pass\\n"
)
RUNS_PROGRAMS = """import json, subprocess, sys
SPIN = "SPIN_CODE"
for line in sys.stdin:
    message = json.loads(line)
    for _ in range(2):
        subprocess.run([sys.executable, "-c", SPIN], check=True)
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {}}), flush=True)
""".replace("SPIN_CODE", SPIN)
HOG = "import os\nos.sched_setaffinity(0, {CORE})\nwhile 1:\n    pass\n"


@pytest.fixture
def busy_core() -> Iterator[int]:
    core = sorted(os.sched_getaffinity(0))[-1]
    hog = [sys.executable, "-c", HOG.replace("CORE", str(core))]
    hogs = [subprocess.Popen(hog, start_new_session=True) for _ in range(4)]
    try:
        yield core
    finally:
        for process in hogs:
            process.kill()
            process.wait()


def _spins(core: int, flush_all: bool) -> tuple[NudgingProbe, list[float]]:
    code = SERVER.replace("CORE", str(core)).replace("FLUSH_ALL", str(flush_all))
    took = []
    with NudgingProbe([sys.executable, "-c", code], timeout=20) as probe:
        for n in range(3):
            sent = probe.child.elapsed()
            reply = probe.request("spin", id=n)
            assert reply.message == {"jsonrpc": "2.0", "id": n, "result": {}}, reply
            took.append(probe.child.elapsed() - sent)
    return probe, took


def test_a_server_that_flushes_but_waits_for_a_cpu_holds_nothing_back(busy_core: int) -> None:
    probe, took = _spins(busy_core, flush_all=True)
    assert max(took) > NUDGE_AFTER, took  # the load did make it silent past the nudge's second
    assert probe.late == [], probe.late


def test_a_server_that_does_not_flush_is_still_found_on_a_busy_core(busy_core: int) -> None:
    probe, took = _spins(busy_core, flush_all=False)
    assert [late.request["id"] for late in probe.late] == [0, 1, 2], (probe.late, took)


def test_a_server_whose_programs_wait_for_a_cpu_holds_nothing_back(busy_core: int) -> None:
    took = []
    with NudgingProbe([sys.executable, "-c", RUNS_PROGRAMS.replace("CORE", str(busy_core))], timeout=20) as probe:
        for n in range(2):
            sent = probe.child.elapsed()
            reply = probe.request("run", id=n)
            assert reply.message == {"jsonrpc": "2.0", "id": n, "result": {}}, reply
            took.append(probe.child.elapsed() - sent)
    assert max(took) > NUDGE_AFTER, took
    assert probe.late == [], (probe.late, took)


def test_a_server_still_computing_is_not_nudged_for_a_buffer() -> None:
    """A flushing server that computes for 1.25 s of CPU (on any core, busy or not) is at work when
    the nudge's second is up: a reply held in a buffer is the reply of a server asleep on its input,
    so the nudge waits, and the reply that comes a quarter of a second later is not taken for one."""
    code = SERVER.replace("os.sched_setaffinity(0, {CORE})\n", "").replace("0.25", "1.25")
    with NudgingProbe([sys.executable, "-c", code.replace("FLUSH_ALL", "True")], timeout=20) as probe:
        sent = probe.child.elapsed()
        reply = probe.request("spin", id=1)
        took = probe.child.elapsed() - sent
    assert reply.message == {"jsonrpc": "2.0", "id": 1, "result": {}}, reply
    assert took > NUDGE_AFTER + 0.2, took
    assert probe.late == [] and probe.nudges == 0, (probe.late, took)
