"""``mcp-lab clinic`` (the learner's stage 08 cases) and ``mcp-lab gallery ... --reveal``.

Each test runs ``mcp-lab`` as a real process. The learner's view shows neutral case names, the
kind of case and symptoms, never a defect's name; the draw follows the course's salt and the
learner's id, and nothing else; a case runs as a real server over real pipes under a neutral
command line; the instructor's view (``--reveal``) keeps the exhibits' names. A wrong invocation
gets one line on stderr and exit status 2 (output into a closed pipe: test_checker_words.py).
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
from conftest import MCP_LAB, ROOT

from grader import gallery
from grader.course import clinic
from reference.child import ChildProcess, child_environment

STUDENT = "learner-k3f9"
NAMES = [e.name for e in gallery.exhibits()]


def mcp_lab(*args: str, cwd: Path = ROOT, student: str = STUDENT) -> subprocess.CompletedProcess[str]:
    env = child_environment({"MCP_LAB_STUDENT": student})
    return subprocess.run([MCP_LAB, *args], capture_output=True, text=True, timeout=60, env=env, cwd=cwd, check=False)


def spoilers(text: str) -> list[str]:
    """Defect family names, exhibit names or explanations that appear in ``text``."""
    from grader.course.clinic.defects import FAMILIES

    found = [e.name for e in gallery.exhibits() if e.name in text]
    found += [name for name in FAMILIES if name in text]
    return found + [e.name for e in gallery.exhibits() if e.explanation[:40] in text]


def course_folder(tmp_path: Path, salt: str = "salt-1") -> Path:
    (tmp_path / clinic.SALT_FILE).write_text(json.dumps({"salt": salt}), encoding="utf-8")
    return tmp_path


def test_clinic_list_shows_the_learners_cases_and_symptoms_only(tmp_path: Path) -> None:
    folder = course_folder(tmp_path)
    done = mcp_lab("clinic", "list", cwd=folder)
    assert done.returncode == 0 and done.stderr == ""
    cases = clinic.cases(folder, STUDENT)
    lines = done.stdout.splitlines()
    kinds = {"live": "live server", "log": "host log   "}
    assert lines[: len(cases)] == [f"{n}  {kinds[c.kind]}  {c.symptom}" for n, c in cases.items()]
    assert f"drawn for {STUDENT}" in done.stdout
    assert spoilers("\n".join(lines[: len(cases)])) == []


def test_the_draw_follows_the_salt_and_the_student_not_any_file_a_learner_hands_in(tmp_path: Path) -> None:
    folder = course_folder(tmp_path)
    mine = mcp_lab("clinic", "list", cwd=folder).stdout
    assert mine == mcp_lab("clinic", "list", cwd=folder).stdout  # the same learner, the same cases
    assert mine != mcp_lab("clinic", "list", cwd=folder, student="someone-else").stdout
    (folder / "clinic_seed.txt").write_text("b00c\n")  # the old seed file changes nothing
    assert mine == mcp_lab("clinic", "list", cwd=folder).stdout
    assert mine != mcp_lab("clinic", "list", cwd=course_folder(tmp_path, "another-course")).stdout


def test_clinic_key_is_the_learners_own_and_says_what_it_is(tmp_path: Path) -> None:
    folder = course_folder(tmp_path)
    done = mcp_lab("clinic", "key", cwd=folder)
    assert done.returncode == 0 and done.stdout.startswith("The answer key of your own cases")
    key = json.loads(done.stdout.split("\n", 1)[1])
    cases = clinic.cases(folder, STUDENT)
    assert sorted(key) == sorted(cases)
    assert all(key[n]["rule"] == c.defect.rule for n, c in cases.items())
    assert all(("line" in key[n]) == (c.kind == "log") for n, c in cases.items())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["clinic", "run", "case-99"], "there is no case 'case-99'"),
        (["clinic", "run", "banner"], "there is no case 'banner'"),
        (["clinic", "run"], "required: CASE"),
        (["clinic", "log"], "required: CASE"),
        (["clinic"], "required: ACTION"),
        (["clinic", "frob"], "invalid choice"),
        (["gallery", "list", "extra"], "unrecognized arguments"),
    ],
)
def test_wrong_clinic_invocations_get_one_line_and_exit_2(args: list[str], message: str, tmp_path: Path) -> None:
    done = mcp_lab(*args, cwd=course_folder(tmp_path))
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and message in lines[0] and lines[0].startswith("mcp-lab"), done.stderr


def test_run_and_log_refuse_the_other_kind_of_case(tmp_path: Path) -> None:
    folder = course_folder(tmp_path)
    cases = clinic.cases(folder, STUDENT)
    live = next(n for n, c in cases.items() if c.kind == "live")
    log = next(n for n, c in cases.items() if c.kind == "log")
    for args, message in ((["run", log], "is a host log"), (["log", live], "is a live server")):
        done = mcp_lab("clinic", *args, cwd=folder)
        assert done.returncode == 2 and message in done.stderr, done.stderr
    done = mcp_lab("clinic", "log", log, cwd=folder)
    assert done.returncode == 0 and "Message from client" in done.stdout
    assert done.stdout.splitlines()[0].startswith("1 ") or done.stdout.splitlines()[0].startswith(" 1 ")


def test_a_case_runs_as_a_server_under_a_neutral_command_line(tmp_path: Path) -> None:
    folder = course_folder(tmp_path)
    name, case = next((n, c) for n, c in clinic.cases(folder, STUDENT).items() if c.kind == "live")
    env = child_environment({"MCP_LAB_STUDENT": STUDENT})
    child = ChildProcess([MCP_LAB, "clinic", "run", name], env=env, cwd=str(folder))
    try:
        # The CLI became the case's server (same pid): its command line names the case, not the defect.
        deadline = time.monotonic() + 10
        cmdline = ""
        while "grader.course.clinic" not in cmdline and time.monotonic() < deadline:
            cmdline = Path(f"/proc/{child.pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            time.sleep(0.05)
        assert f"grader.course.clinic.server salt-1 {STUDENT} {name}" in cmdline
        assert case.defect.family not in cmdline
        child.send(b'{"jsonrpc":"2.0","id":"a","method":"ping"}\n')
        child.close_stdin()  # a case that does not flush answers at end of input
        replies = []
        while (line := child.read_line(10)) is not None:
            replies.append(line.data)
        assert any(b'"a"' in r for r in replies) or case.defect.family in ("dies_on",), replies
    finally:
        child.close(grace=0.5)


def test_gallery_list_names_nothing_without_reveal() -> None:
    done = mcp_lab("gallery", "list")
    assert done.returncode == 0 and done.stderr == ""
    assert "mcp-lab gallery list --reveal" in done.stdout and "mcp-lab clinic list" in done.stdout
    assert spoilers(done.stdout) == []


def test_gallery_list_reveal_is_the_instructors_view() -> None:
    done = mcp_lab("gallery", "list", "--reveal")
    assert done.returncode == 0 and done.stderr == ""
    rows = [line.split(None, 2) for line in done.stdout.splitlines()[: len(NAMES)]]
    assert [(r[0], r[1]) for r in rows] == [(e.name, e.check) for e in gallery.exhibits()]
    assert rows[0][2] == gallery.exhibits()[0].symptom


def test_gallery_show_explains_only_with_reveal() -> None:
    exhibit = gallery.get("partial_flush")
    hidden = mcp_lab("gallery", "show", exhibit.name)
    shown = mcp_lab("gallery", "show", exhibit.name, "--reveal")
    assert hidden.returncode == shown.returncode == 0
    assert exhibit.symptom in hidden.stdout and exhibit.symptom in shown.stdout
    assert exhibit.explanation not in hidden.stdout and "caught by" not in hidden.stdout
    assert f"defect: {exhibit.explanation}" in shown.stdout and "caught by: stdout-flush (fail)" in shown.stdout
