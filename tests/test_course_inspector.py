"""The wire inspector's model, diff and views, without a browser: real servers as child processes.

Each test runs a real command (the reference, a gallery exhibit, the stage 03 solution, a process
that never answers) through the timeline recorder and asserts what the timeline, the first
difference from the reference, and the text and HTML views show. The widget in a real JupyterLab
is tests/test_course_browser.py's job.
"""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

import pytest

from grader.checker.catalogue import CHECKS
from grader.course import build, inspector, lab
from grader.course.notebook import modules, parse
from grader.course.timeline import Recorder, run
from grader.course.wirediff import compare

pytestmark = pytest.mark.timeout(120)

HANDSHAKE = [lab.initialize(id=1), lab.notification("notifications/initialized"), lab.request("ping", id=2)]


def gone(pid: int) -> bool:
    """The process no longer exists (or is a zombie nobody waits for)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] if Path(f"/proc/{pid}").exists() else "X"
    return state in ("Z", "X")


def test_a_healthy_session_is_linked_timed_and_ends_with_exit_0() -> None:
    timeline = run(lab.reference(), HANDSHAKE)
    frames = timeline.frames()
    assert [(e.direction, e.kind) for e in frames] == [
        ("sent", "request"),
        ("received", "response"),
        ("sent", "notification"),
        ("sent", "request"),
        ("received", "response"),
    ]
    init, init_reply, note, ping, ping_reply = frames
    assert (init.link, init_reply.link) == (init_reply.n, init.n)
    assert (ping.link, ping_reply.link) == (ping_reply.n, ping.n)
    assert note.link is None and not any(e.flag for e in frames)
    assert [e.at for e in frames] == sorted(e.at for e in frames) and frames[-1].at < 5
    assert any(e.kind == "stderr" and "[mcp-lab serve]" in e.text for e in timeline.events)
    assert timeline.exit_code == 0
    assert '"protocolVersion": "2025-11-25"' in init_reply.pretty()  # pretty-printed on demand
    text = timeline.text()
    assert f"#{ping.n:<3} -> request (#{ping_reply.n})" in text and "<- response" in text and "2> stderr" in text


def test_a_reply_with_the_id_in_another_type_stands_out() -> None:
    timeline = run(lab.exhibit("string_ids_mangled"), [lab.request("ping", id="7")])
    sent, reply = timeline.frames()
    assert reply.link == sent.n
    assert reply.flag == 'id mismatch: sent "7" (a string), got 7 (a number)'
    diff = compare(timeline, run(lab.reference(), [lab.request("ping", id="7")]))
    assert diff is not None and diff.check == "id-echo" and diff.learner is reply
    assert CHECKS["id-echo"].rule in diff.text() and CHECKS["id-echo"].fix in diff.text()


def test_stdout_noise_and_answered_notifications_are_marked() -> None:
    banner = run(lab.exhibit("banner"), HANDSHAKE)
    noise = [e for e in banner.events if e.kind == "not-json"]
    assert noise and noise[0].direction == "received" and "not JSON" in noise[0].flag
    assert compare(banner, run(lab.reference(), HANDSHAKE)).check == "stdout-json-lines"

    chatty = run(lab.exhibit("answers_notifications"), HANDSHAKE)
    answer = next(e for e in chatty.events if e.direction == "received" and e.step == 2)
    assert "a notification must get no reply" in answer.flag
    assert compare(chatty, run(lab.reference(), HANDSHAKE)).check == "notification-silence"


def test_a_missing_flush_shows_as_timeouts_then_late_replies() -> None:
    script = [lab.initialize(id=1), lab.request("ping", id=2)]
    timeline = run(lab.exhibit("missing_flush"), script, timeout=0.8)
    assert [e.kind for e in timeline.events if e.kind == "timeout"] == ["timeout", "timeout"]
    late = [e for e in timeline.events if e.direction == "received"]
    assert len(late) == 2 and all("after stdin closed" in e.flag for e in late)
    assert all(e.at >= 1.6 for e in late)  # two waits of 0.8 s went by first
    diff = compare(timeline, run(lab.reference(), script, timeout=0.8))
    assert diff is not None and (diff.check, diff.step) == ("stdout-flush", 1)


def test_a_crash_shows_its_traceback_and_breaks_survives_bad_input() -> None:
    script = [lab.request("ping", id=1), "hello?", lab.request("ping", id=2)]
    timeline = run(lab.exhibit("dies_on_bad_line"), script)
    stderr = [e.text for e in timeline.events if e.kind == "stderr"]
    assert any(line.startswith("Traceback") for line in stderr) and any("JSONDecodeError" in s for s in stderr)
    assert any(e.kind == "timeout" and "exited" in e.text for e in timeline.events)
    assert timeline.exit_code not in (0, None)
    diff = compare(timeline, run(lab.reference(), script))
    assert diff is not None and (diff.check, diff.step) == ("survives-bad-input", 2)
    # A server that dies before reading anything breaks the first request's rule, not survives-bad-input.
    early = run([sys.executable, "-c", "raise NotImplementedError"], HANDSHAKE)
    assert "NotImplementedError" in early.text() and early.exit_code == 1
    diff = compare(early, run(lab.reference(), HANDSHAKE))
    assert diff is not None and (diff.check, diff.step) == ("initialize-result", 1) and "exited" in diff.why


def test_a_correct_solution_matches_the_reference(tmp_path: Path) -> None:
    """Stage 03's solution server differs from the reference in name and capabilities, not in any rule."""
    stage = next(s for s in build.stages() if s.name == "03-lifecycle")
    # server.py imports the stage's other module (modern_server.py): write every module of the stage.
    for name, source in modules(parse(stage.text.read_text(encoding="utf-8"))).items():
        text = source.replace("### BEGIN SOLUTION", "").replace("### END SOLUTION", "")
        (tmp_path / f"{name}.py").write_text(text)
    script = [*HANDSHAKE, lab.request("ping", id="7"), "hello?", lab.initialize("1999-01-01", id=3)]
    mine = run([sys.executable, str(tmp_path / "server.py")], script)
    assert compare(mine, run(lab.reference(), script)) is None
    assert compare(run(lab.reference(), script), run(lab.reference(), script)) is None


def test_a_server_that_never_answers_costs_bounded_time_and_is_ended() -> None:
    argv = [sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)"]
    started = time.monotonic()
    recorder = Recorder(argv, timeout=0.5)
    pid = recorder.probe.child.pid
    recorder.send(lab.request("ping", id=1))
    timeline = recorder.close(exit_wait=0.5)
    assert time.monotonic() - started < 8
    assert [e.kind for e in timeline.events if e.direction == "note"] == ["timeout", "stdin-closed", "no-exit", "exit"]
    assert timeline.exit_code == -9  # SIGTERM ignored: SIGKILL
    assert gone(pid)
    assert compare(timeline, run(lab.reference(), [lab.request("ping", id=1)])).check == "ping"


def test_a_command_that_cannot_start_is_a_note_not_an_exception() -> None:
    timeline = run(["/nonexistent/server"], HANDSHAKE)
    assert [e.kind for e in timeline.events] == ["not-started"]
    assert "could not be started" in timeline.text()


def test_typed_lines_go_to_a_live_server_that_is_ended_afterwards() -> None:
    view = inspector.Inspector(lab.reference(), [lab.request("ping", id=1)])
    parse_error = view.send("hello?")
    assert view.live is not None
    pid = view.live.probe.child.pid
    reply = next(e for e in parse_error if e.direction == "received")
    assert reply.message["error"]["code"] == -32700 and reply.link == parse_error[0].n
    echoed = view.send('{"jsonrpc":"2.0","id":"abc","method":"ping"}')
    assert [e.message for e in echoed if e.direction == "received"] == [{"jsonrpc": "2.0", "id": "abc", "result": {}}]
    assert "mcp-frame" in view.live_html() and "Parse error" in view.live_html()
    view.end_live()
    assert view.live.timeline.exit_code == 0 and gone(pid)
    again = view.send('{"jsonrpc":"2.0","id":2,"method":"ping"}')  # a new live server after the end
    assert any(e.direction == "received" for e in again)
    view.end_live()


def test_views_show_frames_the_first_difference_and_a_text_fallback(capsys: pytest.CaptureFixture[str]) -> None:
    script = [lab.request("ping", id="7")]
    view = inspector.Inspector(lab.exhibit("string_ids_mangled"), script, against=lab.reference())
    page = view.html()
    assert page.count('class="mcp-row mcp-frame') == 4  # two frames a side
    assert page.count('mcp-first-diff" data-n') == 2  # the learner's reply, and the reference's
    assert "<code>id-echo</code>" in page and CHECKS["id-echo"].fix.replace("'", "&#x27;") in page
    assert "<details><summary>" in page  # each frame pretty-prints on a click
    bundle = view.bundle()
    assert bundle["text/plain"] == view.text()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert "First difference (step 1): id-echo" in view.text()
    inspector.show(lab.reference(), script)  # outside IPython: the transcript, printed
    out = capsys.readouterr().out
    assert out.startswith("$ ") and "-> request (#" in out and '<- response (#1): {"jsonrpc":"2.0","id":"7"' in out


def test_a_forged_reply_with_the_id_as_a_string_is_marked_and_the_true_reply_linked(tmp_path: Path) -> None:
    from grader.course.work import Work

    with Work(tmp_path, "06") as work:
        reverse = work.command(work.peer("adversaries", "reverse"))
    timeline = run(reverse, [lab.initialize(id=1), lab.request("ping", id=2)])
    received = [e for e in timeline.frames() if e.direction == "received"]
    forged = [e for e in received if e.message.get("result") == {"forged": True}]
    true = [e for e in received if e.message.get("result") != {"forged": True}]
    assert len(forged) == 2 and len(true) == 2
    assert all("id mismatch" in e.flag for e in forged)
    assert not any(e.flag for e in true)
    for reply in true:
        request = next(e for e in timeline.frames() if e.n == reply.link)
        assert request.link == reply.n and request.message["id"] == reply.message["id"]


MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "pytest", "version": "1"},
}


def test_a_modern_session_folds_the_envelope_and_marks_each_frame_with_its_era() -> None:
    script = [
        lab.request("server/discover", 1, {"_meta": MODERN_META}),
        lab.request("tools/call", 2, {"name": "count_orders", "arguments": {"status": "paid"}, "_meta": MODERN_META}),
    ]
    timeline = run(lab.reference(), script)
    frames = timeline.frames()
    assert [(e.kind, e.era) for e in frames] == [
        ("request", "2026-07-28"),
        ("response", "2026-07-28"),
        ("request", "2026-07-28"),
        ("response", "2026-07-28"),
    ]
    call, result = frames[2], frames[3]
    # Folded on the summary line (the envelope is the same on every request), whole when opened.
    assert '"_meta":{…}' in call.summary() and "clientCapabilities" not in call.summary()
    assert '"resultType":"complete"' in result.summary() and "serverInfo" not in result.summary()
    assert "io.modelcontextprotocol/clientCapabilities" in call.pretty()
    assert f"#{call.n:<3} -> request (#{result.n}) [2026-07-28]: " in timeline.text()
    page = inspector.Inspector(lab.reference(), script).html()
    assert '<span class="mcp-era">2026-07-28</span>' in page and "{…}" in page


def test_a_legacy_session_is_marked_legacy_from_its_initialize_on() -> None:
    timeline = run(lab.reference(), [lab.request("ping", 0), *HANDSHAKE])
    eras = [(e.kind, e.era) for e in timeline.frames()]
    # The ping before any era is neither; from initialize on, the connection is legacy.
    assert eras == [
        ("request", ""),
        ("response", ""),
        ("request", "legacy"),
        ("response", "legacy"),
        ("notification", "legacy"),
        ("request", "legacy"),
        ("response", "legacy"),
    ]
    assert all("{…}" not in e.summary() for e in timeline.frames())


def test_a_reply_without_structured_content_is_a_difference_shown_whole_never_same() -> None:
    """A clinic case whose list_orders result lacks structuredContent (hundreds of bytes shorter than the
    reference's): the first difference names structured-output and shows where, with both lengths; a
    server that differs only in what no rule compares (its name) still gets its first differing bytes,
    never "same"; only byte-identical sessions are "the same"."""
    import random

    from grader.course import clinic
    from grader.course.clinic.defects import FAMILIES

    seed = next(
        n for n in range(40) if FAMILIES["structured_missing"](random.Random(n)).params["tool"] == "list_orders"
    )
    case = [sys.executable, "-m", "grader.course.clinic.server", "--family", "structured_missing", str(seed)]
    call = lab.request("tools/call", id=2, params={"name": "list_orders", "arguments": {"limit": 3}})
    view = inspector.Inspector(case, [lab.initialize(id=1), call], against=clinic.reference())
    text = view.text()
    assert "First difference (step 2): structured-output" in text, text[-2000:]
    assert "differs at result.structuredContent:" in text and "(absent)" in text
    assert re.search(r"lengths: yours (\d+) bytes, reference (\d+) bytes", text), text[-1500:]
    mine, theirs = map(int, re.search(r"lengths: yours (\d+) bytes, reference (\d+) bytes", text).groups())
    assert mine < theirs
    assert "Same as the reference" not in text and "structuredContent" in view.html()
    # Only a name differs (the stage 03 solution's server, say): no rule, but the bytes are shown.
    named = [sys.executable, "-c", RENAMED]
    other = inspector.Inspector(named, [lab.initialize(id=1)], against=lab.reference()).text()
    assert "No rule of the catalogue tells the two apart" in other and "result.serverInfo" in other, other[-1500:]
    same = inspector.Inspector(lab.reference(), [lab.request("ping", id=1)], against=lab.reference()).text()
    assert same.endswith("Same as the reference on every frame, byte for byte.")


# The reference server under another name: every rule kept, the bytes of initialize's result differ.
RENAMED = (
    "import sys\n"
    "import reference.server as s\n"
    "s.SERVER_INFO['name'] = 'a-learners-shop'\n"
    "sys.argv = ['server']\n"
    "sys.exit(s.main())\n"
)


def test_plain_text_marks_a_stdout_line_that_is_not_json() -> None:
    """The transcript (what nbclient shows), and lab.watch's lines, mark a banner on stdout as not JSON."""
    import contextlib
    import io

    timeline = run(lab.exhibit("banner"), [lab.initialize(id=1)])
    banner = next(line for line in timeline.text().splitlines() if "Shop server started" in line)
    assert "<- not-json" in banner and "!! not JSON" in banner, banner
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        lab.watch(lab.exhibit("banner"), [lab.initialize(id=1)])
    shown = next(line for line in printed.getvalue().splitlines() if "Shop server started" in line)
    assert "not JSON" in shown, printed.getvalue()
    assert not any("not JSON" in line for line in printed.getvalue().splitlines() if '"jsonrpc"' in line)
