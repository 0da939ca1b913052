"""Stage 08's evidence, replayed as grading replays it: the lesson's worked example, a defect that breaks
two rules at once, and the timing labels of ``clinic.compare``.

Each test runs real servers (gallery exhibits and the clinic's healthy server) over real pipes through
:func:`grader.course.clinic.replay.replay`, and judges with :func:`grader.checker.transcript.broken`,
the judge the hidden check uses.
"""

from __future__ import annotations

import ast
import re

from conftest import ROOT

from grader import gallery
from grader.checker.transcript import broken
from grader.course.checks.stage08 import REFERENCE
from grader.course.clinic.replay import replay

LESSON = ROOT / "notebooks" / "08-clinic-diagnosis" / "08-clinic-diagnosis.py"


def worked_answer() -> dict:
    """The answer the lesson's worked example gives (its ```python block, read as data)."""
    text = LESSON.read_text(encoding="utf-8")
    section = text[text.index("# %% [markdown] id=example-answer") :]
    block = re.search(r"# ```python\n# (.*?)\n# ```", section, flags=re.S)
    assert block, "the worked example shows its answer in a ```python block"
    return ast.literal_eval("{" + block.group(1).rstrip(",") + "}")["case-xx"]


def test_the_worked_example_is_what_the_server_does() -> None:
    answer = worked_answer()
    assert answer["rule"] == "id-echo"
    mine, theirs = replay(gallery.command("id_not_echoed"), answer["reproduce"]), replay(REFERENCE, answer["reproduce"])
    assert mine.received == [] and not mine.died, mine.received  # id 0 gets no reply at all
    assert len(theirs.received) == 1
    assert "id-echo" in broken(mine, theirs)
    # ... and the watch cell's two pings: only id 7 is answered, with its id as sent.
    both = ['{"jsonrpc":"2.0","id":0,"method":"ping"}', '{"jsonrpc":"2.0","id":7,"method":"ping"}']
    assert [item.data for item in replay(gallery.command("id_not_echoed"), both).received] == [
        b'{"jsonrpc":"2.0","id":7,"result":{}}'
    ]
    # A numeric id other than 0 shows nothing: the example's old evidence (id 7) would prove nothing.
    seven = both[1:]
    assert "id-echo" not in broken(replay(gallery.command("id_not_echoed"), seven), replay(REFERENCE, seven))


def test_a_banner_breaks_both_stdout_rules_on_the_same_evidence() -> None:
    """The hidden check takes any rule the defect breaks on the learner's lines: both are right here."""
    lines = ['{"jsonrpc":"2.0","id":1,"method":"ping"}']
    found = broken(replay(gallery.command("banner"), lines), replay(REFERENCE, lines))
    assert {"stdout-json-lines", "stdout-silent-at-start"} <= set(found), found


def test_lines_written_while_stdin_was_open_are_not_labelled_after_close() -> None:
    """A pretty-printed reply is many lines, all written at once with stdin open: none of them came
    "only after stdin closed", however late the replay reads them."""
    session = replay(gallery.command("pretty_printed"), ['{"jsonrpc":"2.0","id":1,"method":"ping"}'])
    assert len(session.received) > 1
    assert not any(item.after_close for item in session.received), [i.data for i in session.received]
    # A reply that sat in a buffer until stdin closed is still labelled so.
    late = replay(gallery.command("missing_flush"), ['{"jsonrpc":"2.0","id":1,"method":"ping"}'])
    assert late.received and all(item.after_close for item in late.received), late.received


# A server that spends its first 2.5 s on the CPU before it reads stdin: a slow start on a busy machine.
SLOW_START = (
    "import runpy, sys, time\n"
    "end = time.process_time() + 2.5\n"
    "while time.process_time() < end: pass\n"
    "sys.argv = ['server', '--healthy']\n"
    "runpy.run_module('grader.course.clinic.server', run_name='__main__')\n"
)


def test_a_slow_start_is_waited_for_and_an_idle_server_is_quiet_soon() -> None:
    """Grading replays evidence on busy machines: a reference still starting when the quiet second has
    passed (it is using the CPU) is waited for, so its reply never reads as held until stdin closed and
    a case's unflushed reply still stands out against it. An idle server that owes a reply (blocked on
    its stdin) is quiet after that second, however busy the machine."""
    import sys
    import time

    lines = ['{"jsonrpc":"2.0","id":3,"method":"no/such/method"}']
    slow = replay([sys.executable, "-c", SLOW_START], lines)
    assert [item.after_close for item in slow.received] == [False], slow.received
    assert "stdout-flush" in broken(replay(gallery.command("missing_flush"), lines), slow)
    started = time.monotonic()
    silent = replay([sys.executable, "-c", "import sys; sys.stdin.read()"], lines)
    assert silent.received == [] and time.monotonic() - started < 5.0  # QUIET (1 s) and the rest, not MOST (6 s)
