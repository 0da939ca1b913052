"""Stage 08's evidence, replayed as grading replays it: the lesson's worked example, a defect that breaks
two rules at once, and the timing labels of ``clinic.compare``.

Each test runs real servers (gallery exhibits and the clinic's healthy server) over real pipes through
:func:`grader.course.clinic.replay.replay`, and judges with :func:`grader.checker.transcript.broken`,
the judge the hidden check uses.
"""

from __future__ import annotations

import ast
import re

import pytest
from conftest import ROOT
from course_support import KITCHEN_SINK

from grader import gallery
from grader.checker.transcript import broken
from grader.course.clinic.evidence import REFERENCE
from grader.course.clinic.replay import MOST, replay

LESSON = ROOT / "notebooks" / "08-clinic-diagnosis" / "08-clinic-diagnosis.py"


def worked_answer() -> dict:
    """The answer the lesson's worked example gives (its ```python block, read as data)."""
    text = LESSON.read_text(encoding="utf-8")
    section = text[text.index('# %% [markdown] id="example-answer"') :]
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
    """A banner truly breaks both (its defect's "also"): the hidden check takes either, shown on the lines."""
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
    assert silent.received == [] and time.monotonic() - started < MOST / 2  # QUIET (1 s) and the rest, not MOST


def _variants(family: str) -> list[tuple[int, object]]:
    """(seed, defect) for each distinct set of parameters the family draws (first 40 seeds)."""
    import random

    from grader.course.clinic.defects import FAMILIES

    found: dict[str, tuple[int, object]] = {}
    for seed in range(40):
        defect = FAMILIES[family](random.Random(seed))
        found.setdefault(repr(sorted(defect.params.items())), (seed, defect))
    return list(found.values())


def _families() -> list[str]:
    from grader.course.clinic.defects import FAMILIES

    return list(FAMILIES)


@pytest.mark.parametrize("family", _families())
def test_every_familys_answer_key_is_evidence_and_a_kitchen_sink_is_not(family: str) -> None:
    """The answer key keeps full marks for any salt only if each family's reproducer, in every variant,
    passes the visible evidence check with the family's rule: the server breaks it where the healthy
    server keeps it, on lines that are a reproducer (replayed as grading does). The seven-line kitchen
    sink, with the same right rule, never passes it: it is evidence of everything and of no rule."""
    import sys
    from concurrent.futures import ThreadPoolExecutor

    from grader.course.clinic.evidence import evidence_problem, replay_pair
    from grader.grading.clinic_key import reproducer

    def judged(item: tuple[int, object]) -> tuple[object, object, object]:
        seed, defect = item
        command = [sys.executable, "-m", "grader.course.clinic.server", "--family", family, str(seed)]

        def pair(lines: list) -> tuple:
            return replay_pair(command, lines)

        rule = defect.rule  # type: ignore[attr-defined]
        key = evidence_problem("case-xx", rule, reproducer(defect), pair)  # type: ignore[arg-type]
        return defect, key, evidence_problem("case-xx", rule, KITCHEN_SINK, pair)

    with ThreadPoolExecutor(max_workers=2) as pool:
        for defect, key, sink in pool.map(judged, _variants(family)):
            assert key is None, (defect.params, key.text())  # type: ignore[attr-defined]
            assert sink is not None, defect.params  # type: ignore[attr-defined]


def _session(sent: list[bytes], received: list[bytes], early: int = 0, late: int = 0):  # type: ignore[no-untyped-def]
    """A session by hand: the first ``early`` lines came before anything was sent, the last ``late`` after close."""
    from grader.checker.transcript import Received, Session

    items = [Received(data, early=n < early, after_close=n >= len(received) - late) for n, data in enumerate(received)]
    return Session(sent, items)


def test_a_line_shows_nothing_when_its_replies_are_the_references() -> None:
    """idle_lines: a request whose replies (by id, in any JSON type of it, with their moment) are the
    reference's shows nothing; a reply held until stdin closed, an id changed, a stdout line that is not
    JSON written beside a reply, or an extra reply to a notification shows something."""
    from grader.course.clinic.evidence import idle_lines

    ping1, ping2 = b'{"jsonrpc":"2.0","id":1,"method":"ping"}', b'{"jsonrpc":"2.0","id":2,"method":"ping"}'
    ok1, ok2 = b'{"jsonrpc":"2.0","id":1,"result":{}}', b'{"jsonrpc":"2.0","id":2,"result":{}}'
    note = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
    nul = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"Method not found"}}'
    ref = _session([ping1, ping2], [ok1, ok2])
    assert idle_lines(ref, ref) == [0, 1]
    assert idle_lines(_session([ping1, ping2], [ok1, ok2], late=1), ref) == [0]  # the second held back
    assert idle_lines(_session([ping1, ping2], [b'{"jsonrpc":"2.0","id":"1","result":{}}', ok2]), ref) == [1]
    assert idle_lines(_session([ping1, ping2], [ok1, b"calling ping", ok2]), ref) == []  # beside both replies
    assert idle_lines(_session([ping1, ping2], [b"Server ready", ok1, ok2], early=1), ref) == [0, 1]  # a banner
    with_note = _session([note, ping1], [ok1])
    assert idle_lines(_session([note, ping1], [nul, ok1]), with_note) == [1]
    assert idle_lines(with_note, with_note) == [0, 1]


def test_evidence_of_the_rule_named_and_only_of_it() -> None:
    """The visible check on the worked example's server: its one line is evidence of id-echo; a rule the
    lines do not show is refused (without saying which rule they show); a line added that shows nothing
    is named, as the lines to remove."""
    from grader.course.clinic.evidence import evidence_problem, replay_pair

    def pair(lines: list) -> tuple:
        return replay_pair(gallery.command("id_not_echoed"), lines)

    zero = '{"jsonrpc":"2.0","id":0,"method":"ping"}'
    seven = '{"jsonrpc":"2.0","id":7,"method":"tools/list"}'
    assert evidence_problem("case-xx", "id-echo", [zero], pair) is None
    wrong = evidence_problem("case-xx", "ping", [zero], pair)
    assert wrong is not None and "does not break ping" in wrong.summary and "id-echo" not in wrong.text()
    extra = evidence_problem("case-xx", "id-echo", [seven, zero], pair)
    assert extra is not None and "without line 1 the case still breaks it" in extra.summary, extra.text()


def test_every_learner_draws_a_case_of_2026_07_28_and_the_draw_is_theirs() -> None:
    from grader.course.clinic.draw import MODERN, draw, seed

    assert len(MODERN) >= 3
    for number in range(300):
        salt, student = f"salt-{number % 5}", f"learner-{number}"
        cases = draw(salt, student)
        assert any(c.kind == "live" and c.defect.family in MODERN for c in cases), (salt, student)
        draw.cache_clear()
        again = draw(salt, student)
        assert [(c.kind, c.defect.family, c.defect.params) for c in cases] == [
            (c.kind, c.defect.family, c.defect.params) for c in again
        ]
    assert seed("salt-0", "learner-1") != seed("salt-0", "learner-2")


def test_a_2026_07_28_host_log_shows_the_discover_probe_and_the_meta_envelope() -> None:
    import json
    import random

    from grader.course.clinic.defects import FAMILIES
    from grader.course.clinic.hostlog import render

    for family in ("result_type", "cache_hints"):
        for _, defect in _variants(family):
            log = render(defect)  # type: ignore[arg-type]
            assert log.line, (family, defect.params)  # type: ignore[attr-defined]
            client = [line.split("Message from client: ", 1)[1] for line in log.lines if "from client" in line]
            sent = [json.loads(line) for line in client]
            assert sent[0]["method"] == "server/discover"
            requests = [m for m in sent if "id" in m]
            versions = {m["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] for m in requests}
            assert versions == {"2026-07-28"}
            assert not any(m["method"] in ("initialize", "ping") for m in sent)
            shown = log.lines[log.line - 1]
            assert "Message from server" in shown, shown
    # A defect the 2026-07-28 session cannot show (ping is gone) is logged by an older host, in its own era.
    legacy = render(FAMILIES["ping_body"](random.Random(1)))
    assert '"protocolVersion":"2025-11-25"' in legacy.text() and "server/discover" not in legacy.text()


def test_a_rule_that_only_follows_from_the_defect_is_not_the_diagnosis(tmp_path) -> None:
    """In-flight replies sent to the wrong ids: the answer key's lines also show a ping answered with
    another request's result. The hidden check takes id-echo, the defect's rule, and refuses ping, saying
    it is a consequence; a rule the lines do not show at all is refused without that remark."""
    from grader.course.checks.stage08 import check_rule
    from grader.course.clinic.draw import draw
    from grader.course.expect import Failure
    from grader.course.work import Work
    from grader.grading.clinic_key import reproducer

    salt = "salt-in-flight"
    student, case = next(
        (student, case)
        for student in (f"learner-{n}" for n in range(500))
        for case in draw(salt, student)
        if case.kind == "live" and case.defect.family == "in_flight"
    )
    lines = reproducer(case.defect)

    def verdict(rule: str) -> str:
        answers = {"diagnosis": {case.name: {"rule": rule, "reproduce": lines}}}
        folder = tmp_path / rule
        folder.mkdir()
        try:
            with Work(folder, "08", answers=answers, student=student, salt=salt) as work:
                check_rule(work, case.name)
        except Failure as failure:
            return failure.text()
        return ""

    assert verdict("id-echo") == ""
    assert "ping is not the rule this server breaks: your lines show it broken, but as a consequence" in verdict("ping")
    refused = verdict("prompts-get")
    assert "prompts-get is not the rule this server breaks" in refused and "consequence" not in refused


def test_compare_shows_a_long_reply_where_it_differs_and_the_verdict_for_a_rule(
    tmp_path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """clinic.compare on a case whose list_orders result lacks structuredContent: the replies are longer than
    the cut, so each is shown around its first differing byte with both lengths, and the first difference is
    named by its JSON path; with rule=, the visible check's verdict on the lines."""
    import json

    from grader.course import clinic
    from grader.course.clinic.draw import draw

    student, case = next(
        (student, case)
        for student in (f"learner-{n}" for n in range(800))
        for case in draw("self-paced", student)
        if case.kind == "live" and case.defect.family == "structured_missing"
    )
    monkeypatch.setenv("MCP_LAB_STUDENT", student)
    tool = case.defect.params["tool"]
    arguments = {"get_order": {"order_id": 7}, "search_products": {"query": "mug"}}.get(tool, {})
    call = json.dumps(
        {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    )
    clinic.compare(case.name, [call], folder=tmp_path, rule="structured-output")
    out = capsys.readouterr().out
    assert "differs at result.structuredContent:" in out and "(absent)" in out, out
    assert "the other server's:" in out or "lengths:" in out, out
    assert "evidence: yes" in out and "as evidence of structured-output: yes" in out, out
