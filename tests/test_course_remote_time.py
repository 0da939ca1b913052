"""A call into the learner's process is limited on the time that process could run.

The checks call the learner's code through a harness process (grader/course/remote.py) and give
each call a limit. On a busy machine the harness waits for a CPU: a call that needs 0.4 s of CPU
can take seconds of wall time, and a wall-clock limit would fail honest work. So the limit grows
by what the harness's threads waited for a CPU (the kernel's ``schedstat``), up to
``MOST_WAIT_FOR_CPU``; a call asleep or blocked waits for no CPU and still ends at its limit.
Both are measured here beside four CPU-bound processes pinned to the harness's core.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader.course import runtime
from grader.course.remote import Harness, RemoteTimeout

# The learner's module: it pins itself to one core, then burns CPU (process time) or sleeps on demand.
LEARNER = """import os, time
os.sched_setaffinity(0, {CORE})


def spin(seconds):
    start = time.process_time()
    while time.process_time() - start < seconds:
        pass
    return "done"


def nap(seconds):
    time.sleep(seconds)
    return "awake"


def spin_aside(seconds):  # a thread that burns CPU, then sleeps; the call returns at once
    import threading

    def work():
        spin(seconds)
        time.sleep(3600)

    threading.Thread(target=work, daemon=True).start()
    return "started"
"""
HOG = "import os\nos.sched_setaffinity(0, {CORE})\nwhile 1:\n    pass\n"


@pytest.fixture
def busy_core_harness(tmp_path: Path):  # type: ignore[no-untyped-def]
    core = sorted(os.sched_getaffinity(0))[-1]
    (tmp_path / "learner.py").write_text(LEARNER.replace("CORE", str(core)), encoding="utf-8")
    hog = [sys.executable, "-c", HOG.replace("CORE", str(core))]
    # Each in a session of its own, as the harness is: the kernel shares the core between sessions.
    hogs = [subprocess.Popen(hog, start_new_session=True) for _ in range(4)]
    lab_runtime = runtime.cached("01")
    harness = Harness(
        [sys.executable, "-S", str(lab_runtime / "lab_runtime" / "harness.py"), "."],
        env={"PYTHONPATH": str(lab_runtime)},
        cwd=str(tmp_path),
    )
    try:
        yield harness
    finally:
        for process in hogs:
            process.kill()
            process.wait(10)
        harness.close()


def test_a_call_slowed_by_a_busy_machine_gets_the_time_it_waited_for_a_cpu(busy_core_harness: Harness) -> None:
    learner = busy_core_harness.module("learner", limit=60)
    started = time.monotonic()
    assert learner.spin.invoke([0.4], {}, 1.0) == "done"  # 0.4 s of CPU at a fifth of a core: about 2 s
    took = time.monotonic() - started
    print(f"a call needing 0.4 s of CPU took {took:.2f} s")
    assert took > 1.0, "the core was not busy: this test shows nothing"


def test_a_call_asleep_ends_at_its_limit_however_busy_the_machine(busy_core_harness: Harness) -> None:
    learner = busy_core_harness.module("learner", limit=60)
    started = time.monotonic()
    with pytest.raises(RemoteTimeout) as raised:
        learner.nap.invoke([60], {}, 1.0)
    took = time.monotonic() - started
    print(f"a sleeping call: ended after {took:.2f} s, {raised.value.waited:.2f} s credited; {raised.value}")
    assert took < 6, f"a sleeping call got {took:.1f} s for a 1 s limit"
    assert raised.value.waited < 0.5 and str(raised.value).startswith("nap(...) did not return within 1 s")


def test_a_wait_for_a_cpu_before_the_call_is_not_credited_to_it(busy_core_harness: Harness) -> None:
    """A thread of the learner's waited seconds for a CPU before the call began: that wait is no
    reason to give the call more time (a sleeping call still ends at its limit)."""
    learner = busy_core_harness.module("learner", limit=60)
    assert learner.spin_aside.invoke([0.4], {}, 5.0) == "started"
    time.sleep(2.5)  # 0.4 s of CPU at a fifth of a core: done, after about 2 s of waiting for it
    started = time.monotonic()
    with pytest.raises(RemoteTimeout) as raised:
        learner.nap.invoke([60], {}, 1.0)
    took = time.monotonic() - started
    waited = raised.value.waited
    print(f"after a thread's wait: a sleeping call ended after {took:.2f} s, {waited:.2f} s credited")
    assert took < 2.5 and waited < 0.5, f"{took:.1f} s for a 1 s limit, {waited:.1f} s credited"
