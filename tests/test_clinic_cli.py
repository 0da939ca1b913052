"""``mcp-lab clinic`` (the learner's view of the gallery) and ``mcp-lab gallery ... --reveal``.

Each test runs ``mcp-lab`` as a real process. The learner's view shows neutral case names and
symptoms, never an exhibit's name or explanation; a case runs as a real server over real pipes
under a neutral command line; the instructor's view (``--reveal``) keeps the exhibits' names. A
wrong invocation gets one line on stderr and exit status 2 (output into a closed pipe:
test_checker_words.py).
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from conftest import MCP_LAB, ROOT

from grader import gallery
from grader.course import clinic
from reference.child import ChildProcess, child_environment

SEED = "k3f9"
NAMES = [e.name for e in gallery.exhibits()]


def mcp_lab(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [MCP_LAB, *args], capture_output=True, text=True, timeout=60, env=child_environment(), cwd=cwd, check=False
    )


def spoilers(text: str) -> list[str]:
    """Exhibit names or explanations that appear in ``text``."""
    found = [e.name for e in gallery.exhibits() if e.name in text]
    return found + [e.name for e in gallery.exhibits() if e.explanation[:40] in text]


def test_clinic_list_shows_the_learners_cases_and_symptoms_only() -> None:
    done = mcp_lab("clinic", "list", "--seed", SEED)
    assert done.returncode == 0 and done.stderr == ""
    cases = clinic.cases(SEED)
    lines = done.stdout.splitlines()
    assert lines[: len(cases)] == [f"{name}  {case.symptom}" for name, case in cases.items()]
    assert f"mcp-lab clinic run case-01 --seed {SEED}" in done.stdout
    assert spoilers(done.stdout) == []


def test_clinic_reads_the_seed_file_in_the_current_folder(tmp_path: Path) -> None:
    (tmp_path / clinic.SEED_FILE).write_text("b00c\n", encoding="utf-8")
    done = mcp_lab("clinic", "list", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == f"case-01  {clinic.cases('b00c')['case-01'].symptom}"
    assert "--seed" not in done.stdout  # the seed file will be found again
    # Two seeds, two draws: the seed decides (it is not ignored).
    assert done.stdout != mcp_lab("clinic", "list", "--seed", SEED, cwd=tmp_path).stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["clinic", "list"], "no clinic_seed.txt in"),  # run in a folder without a seed
        (["clinic", "list", "--seed", " "], "--seed is empty"),
        (["clinic", "run", "case-99", "--seed", SEED], "there is no case 'case-99'"),
        (["clinic", "run", "banner", "--seed", SEED], "there is no case 'banner'"),
        (["clinic", "run"], "required: CASE"),
        (["clinic"], "required: ACTION"),
        (["clinic", "frob"], "invalid choice"),
        (["gallery", "list", "extra"], "unrecognized arguments"),
    ],
)
def test_wrong_clinic_invocations_get_one_line_and_exit_2(args: list[str], message: str, tmp_path: Path) -> None:
    done = mcp_lab(*args, cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and message in lines[0] and lines[0].startswith("mcp-lab"), done.stderr


def test_a_case_runs_as_a_server_under_a_neutral_command_line() -> None:
    name, case = next(iter(clinic.cases(SEED).items()))
    child = ChildProcess([MCP_LAB, "clinic", "run", name, "--seed", SEED], cwd=str(ROOT))
    try:
        # The CLI became the case's server (same pid): its command line names the case, not the defect.
        deadline = time.monotonic() + 10
        cmdline = ""
        while "grader.course.clinic" not in cmdline and time.monotonic() < deadline:
            cmdline = Path(f"/proc/{child.pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            time.sleep(0.05)
        assert f"grader.course.clinic run {SEED} {name}" in cmdline
        assert case.exhibit.name not in cmdline
        child.send(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
        child.close_stdin()  # a case that does not flush answers at end of input
        replies = []
        while (line := child.read_line(10)) is not None:
            replies.append(line.data)
        assert any(b'"id":1' in r or b'"id": 1' in r for r in replies), replies
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
