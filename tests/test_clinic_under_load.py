"""The clinic's verdicts do not depend on how busy the machine is (issue 34).

A replay judges the moments that matter (a line written before anything was sent, a reply held until
stdin closed, a server that died) by what the server did, never by the clock: the same case servers,
replayed with CPU-bound processes beside them, give the same ``broken`` rules and the same idle lines
as on a quiet machine. The cases are real ones (``python -m grader.course.clinic.server SALT STUDENT
CASE``), drawn for the families whose verdict once moved with the load: a banner (before anything was
sent, or not), replies held in a buffer (after stdin closed, or not), a server that dies on bad input.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator

import pytest

from grader.checker.transcript import broken
from grader.course.clinic.defects import Defect
from grader.course.clinic.draw import draw
from grader.course.clinic.evidence import idle_lines, replay_pair
from grader.grading.clinic_key import reproducer

PING = '{"jsonrpc":"2.0","id":1,"method":"ping"}'
STUDENT = "under-load"

# (what the case is, which defect, the lines replayed besides the instructor's reproducer)
WANTED: list[tuple[str, Callable[[Defect], bool], list[list[str | bytes]]]] = [
    ("a banner", lambda d: d.family == "stdout_noise" and d.params["variant"] == "banner", [[PING]]),
    ("every reply held", lambda d: d.family == "unflushed" and d.params["which"] == "all", []),
    ("errors held", lambda d: d.family == "unflushed" and d.params["which"] == "errors", [[PING]]),
    ("dies on bad input", lambda d: d.family == "dies_on", []),
]


def _case(wanted: Callable[[Defect], bool]) -> tuple[str, str, Defect]:
    """(salt, case name, defect) of the first course salt whose draw for STUDENT has a live case ``wanted``."""
    for number in range(400):
        salt = f"load-{number}"
        for case in draw(salt, STUDENT):
            if case.kind == "live" and wanted(case.defect):
                return salt, case.name, case.defect
    raise AssertionError("no salt of the first 400 draws such a case")


# The case's server, started at a lower priority (``nice`` 10 more): starved beside CPU-bound processes.
STARVED = (
    "import os, runpy, sys\n"
    "os.nice(10)\n"
    "sys.argv = ['server', *sys.argv[1:]]\n"
    "runpy.run_module('grader.course.clinic.server', run_name='__main__')\n"
)


def _verdicts(starved: bool = False) -> dict[str, object]:
    """Each case's verdicts: (rules broken, idle lines) on its reproducer and on the other lines."""
    found: dict[str, object] = {}
    for what, wanted, others in WANTED:
        salt, name, defect = _case(wanted)  # the same salt and case on every run
        start = ["-c", STARVED] if starved else ["-m", "grader.course.clinic.server"]
        command = [sys.executable, *start, salt, STUDENT, name]
        for label, lines in [("reproducer", reproducer(defect)), *(("a ping", other) for other in others)]:
            mine, theirs = replay_pair(command, lines)
            found[f"{what}, {label}"] = (sorted(broken(mine, theirs)), idle_lines(mine, theirs))
    return found


@pytest.fixture(scope="module")
def quiet_verdicts() -> dict[str, object]:
    """The verdicts before any load is started (module scope: made before the load fixture)."""
    return _verdicts()


@pytest.fixture
def cpu_load() -> Iterator[int]:
    """Two CPU-bound processes per core beside the replays (at the test's own niceness), always ended."""
    count = min(4, 2 * (os.cpu_count() or 1))
    hogs: list[subprocess.Popen[bytes]] = []
    try:
        for _ in range(count):
            hogs.append(subprocess.Popen([sys.executable, "-c", "while 1: pass"]))
        yield count
    finally:
        for hog in hogs:
            hog.kill()
        for hog in hogs:
            hog.wait(10)


def test_the_verdicts_under_load_are_the_quiet_ones(quiet_verdicts: dict[str, object], cpu_load: int) -> None:
    loaded = _verdicts(starved=True)
    moved = {key: (quiet_verdicts[key], loaded[key]) for key in quiet_verdicts if quiet_verdicts[key] != loaded[key]}
    assert not moved, (
        f"with {cpu_load} CPU-bound processes beside the starved cases, verdicts moved (quiet, loaded): {moved}"
    )


def test_the_verdicts_are_those_of_the_defects(quiet_verdicts: dict[str, object]) -> None:
    """What each case shows, whatever the load: so that the comparison above compares the right things."""
    shown = quiet_verdicts
    # A banner is written before anything is sent: it belongs to no line, and a ping beside it shows nothing.
    assert shown["a banner, a ping"] == (["stdout-json-lines", "stdout-silent-at-start"], [0])
    assert "stdout-flush" in shown["every reply held, reproducer"][0]
    assert "stdout-flush" in shown["errors held, reproducer"][0]
    assert shown["errors held, a ping"] == ([], [0])  # a ping's reply is flushed
    assert "survives-bad-input" in shown["dies on bad input, reproducer"][0]
