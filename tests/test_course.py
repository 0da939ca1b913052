"""The course machinery, fast: the notebook format, the stage sources, the CLI, the workspace, the host.

The slow proofs through nbgrader's pipeline are in test_course_pipeline.py.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

from grader.course import build, drive, expect
from grader.course.notebook import KERNELSPEC, NotebookSourceError, parse
from grader.course.work import Work

STAGES = build.stages()
PYTHON = sys.executable


def mcp_lab(*args: str, cwd: Path = ROOT, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PYTHON, "-m", "grader.cli", *args], capture_output=True, text=True, timeout=timeout, cwd=cwd)


# -- the notebook format -----------------------------------------------------------------------
def _nbgrader(grade_id: str, kind: str, points: int | None = None) -> str:
    """A percent-format cell marker's nbgrader option, as jupytext writes it."""
    meta = {
        "grade": kind == "test", "grade_id": grade_id, "locked": kind != "solution",
        "schema_version": 3, "solution": kind == "solution", "task": False,
    }  # fmt: skip
    if points is not None:
        meta["points"] = points
    return "nbgrader=" + json.dumps(meta)


def test_parse_cell_kinds_and_metadata() -> None:
    text = "\n".join(
        [
            "# ---",
            "# jupyter:",
            "#   kernelspec:",
            "#     display_name: Python 3 (ipykernel)",
            "#     language: python",
            "#     name: python3",
            "# ---",
            "",
            '# %% [markdown] id="intro"',
            "# # Title",
            "#",
            "# text",
            "",
            f'# %% id="setup" {_nbgrader("setup", "setup")}',
            "import os",
            "",
            f'# %% id="answer" {_nbgrader("answer", "solution")}',
            "%%module answer",
            "def f():",
            "    ### BEGIN SOLUTION",
            "    return 1",
            "    ### END SOLUTION",
            "",
            f"# %% {_nbgrader('t_f', 'test', 3)}",  # nbgrader's toolbar writes no id: its grade_id is one
            "assert f() == 1",
            "",
            "# %%",
            "f()",
        ]
    )
    nb = parse(text)
    cells = nb["cells"]
    assert [c["cell_type"] for c in cells] == ["markdown", "code", "code", "code", "code"]
    assert [c["id"] for c in cells] == ["intro", "setup", "answer", "t_f", "cell-05"]
    assert cells[0]["source"] == "# Title\n\ntext"
    assert cells[1]["metadata"] == {"nbgrader": {
        "grade": False, "grade_id": "setup", "locked": True, "schema_version": 3, "solution": False, "task": False,
    }}  # fmt: skip
    assert cells[2]["source"].startswith("%%module answer\n"), "a magic stays as written"
    assert cells[2]["metadata"]["nbgrader"]["solution"] is True
    assert cells[2]["metadata"]["nbgrader"]["locked"] is False
    assert cells[3]["metadata"]["nbgrader"]["points"] == 3
    assert cells[3]["metadata"]["nbgrader"]["grade"] is True
    assert cells[4]["metadata"] == {}
    assert nb["metadata"] == {"kernelspec": KERNELSPEC, "language_info": {"name": "python"}}
    assert all(
        c.get("outputs", []) == [] and c.get("execution_count") is None for c in cells if c["cell_type"] == "code"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('# %% nbgrader={"grade": true, "locked": true, "schema_version": 3, "solution": false, "points": 1}'
         '\nx', "lacks grade_id"),
        (f'# %% id="t" {_nbgrader("t", "test")}\nx', "needs points"),
        ('# %% id="t" nbgrader={"grade": true, "grade_id": "t", "points": 1}\nx', "lacks locked, schema_version"),
        (f'# %% id="s" {_nbgrader("other", "solution")}\nx', "grade_id 'other' is not its id"),
        ('# %% id="a"\nx\n\n# %% id="a"\ny', "used twice"),
    ],
)  # fmt: skip
def test_parse_refuses_malformed_sources(text: str, message: str) -> None:
    with pytest.raises(NotebookSourceError, match=message):
        parse(text)


# -- the stage sources ---------------------------------------------------------------------------
def test_the_stages_of_part_one_exist_in_order() -> None:
    names = [s.name for s in STAGES]
    assert names[:4] == ["00-shop-and-pipe", "01-framing", "02-messages", "03-lifecycle"]
    assert names == sorted(names)


@pytest.mark.parametrize("stage", STAGES, ids=lambda s: s.name)
def test_stage_source_is_well_formed(stage: build.Stage) -> None:
    text = stage.text.read_text(encoding="utf-8")
    nb = parse(text, stage.name)
    cells = nb["cells"]
    ids = [c["id"] for c in cells]
    assert ids == [c["id"] for c in parse(text, stage.name)["cells"]], "cell ids must be stable"
    assert all(re.fullmatch(r"[A-Za-z0-9_-]{1,64}", i) for i in ids)
    graded = [c for c in cells if c["metadata"].get("nbgrader", {}).get("grade")]
    solutions = [c for c in cells if c["metadata"].get("nbgrader", {}).get("solution")]
    assert graded and solutions
    assert stage.points() == sum(c["metadata"]["nbgrader"]["points"] for c in graded)
    for cell in solutions:
        assert "### BEGIN SOLUTION" in cell["source"] and "### END SOLUTION" in cell["source"], cell["id"]
    # The setup cell comes first and names the stage; the revision is named in the text.
    first_code = next(c for c in cells if c["cell_type"] == "code")
    assert first_code["id"] == "setup" and f'lab.setup("{stage.name[:2]}")' in first_code["source"]
    # Every stage names the revision it teaches, the current one, before its first code cell.
    intro = "".join(c["source"] for c in cells[: cells.index(first_code)])
    assert "2026-07-28" in intro, "the stage's opening cells do not name MCP 2026-07-28"
    assert "MCP 2026-07-28" in text


def test_every_check_a_stage_names_has_a_rule_and_a_fix() -> None:
    sources = "\n".join(p.read_text() for p in (ROOT / "grader" / "course" / "checks").glob("stage*.py"))
    named = set(re.findall(r'Failure\(\s*"([a-z0-9-]+)"', sources))
    named |= set(re.findall(r'call\([^,]+, "([a-z0-9-]+)"', sources))
    assert named, "the stage checks raise Failure with a check id"
    for check in named:
        rule, fix = expect.rule_and_fix(check)
        assert rule and fix, f"{check}: no rule or fix to show the learner"


def test_points_command_prints_each_stage_and_the_total() -> None:
    done = mcp_lab("course", "points")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert [line.split()[0] for line in lines] == [*(s.name for s in STAGES), "total", "total"]
    assert lines[-2].split()[:2] == ["total", str(sum(s.points() for s in STAGES))]
    # Stages 08 and 09 a script can earn (README, What a graded class can trust): marked, and left
    # out of the total for credit.
    practice = [line.split()[0] for line in lines if "practice:" in line]
    assert practice == ["08-clinic-diagnosis", "09-clinic-repair"], lines
    credit = sum(s.points() for s in STAGES if s.name not in practice)
    assert lines[-1].split()[:4] == ["total", "for", "credit", str(credit)], lines


# -- the instructor's course ----------------------------------------------------------------------
def test_course_init_makes_an_nbgrader_course_and_refuses_to_overwrite(tmp_path: Path) -> None:
    target = tmp_path / "course"
    done = mcp_lab("course", "init", str(target))
    assert done.returncode == 0, done.stderr
    for stage in STAGES:
        notebook = json.loads((target / "source" / stage.name / stage.notebook).read_text(encoding="utf-8"))
        assert notebook["metadata"]["kernelspec"]["name"] == "python3"
    config = (target / "nbgrader_config.py").read_text()
    assert "ClearHiddenTests" in config and "Execute.timeout" in config
    for module in ("framing.py", "messages.py", "server.py"):
        assert repr(module) in config, f"{module} must be in CourseDirectory.ignore"
    again = mcp_lab("course", "init", str(target))
    assert again.returncode == 2
    assert again.stderr.count("\n") == 1 and "already holds a course" in again.stderr


@pytest.mark.parametrize(
    "args",
    [["course"], ["course", "init"], ["course", "grade"], ["lab", "stray"], ["progress", "--workspace"]],
)
def test_course_commands_answer_a_wrong_invocation_in_one_line(args: list[str]) -> None:
    done = mcp_lab(*args)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr


def test_progress_without_a_workspace_is_a_clear_error(tmp_path: Path) -> None:
    done = mcp_lab("progress", "--workspace", str(tmp_path / "nowhere"))
    assert done.returncode == 2 and "make lab" in done.stderr


# -- the host: one learner piece inside the reference ---------------------------------------------
def test_host_refuses_a_wrong_invocation(tmp_path: Path) -> None:
    with Work(tmp_path, "01") as work:
        host = [*work.python(), str(work.runtime / "lab_runtime" / "host.py")]
        for args in ([], ["nonsense", str(tmp_path)], ["framing", str(tmp_path)]):
            done = subprocess.run(work.command([*host, *args]), capture_output=True, text=True, timeout=30)
            assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        (tmp_path / "framing.py").write_text("def encode(m):\n    return b''\n")
        done = subprocess.run(work.host("framing"), capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and "decode, read_frame, write_frame" in done.stderr, done.stderr


REFERENCE_FRAMING = (ROOT / "reference" / "framing.py").read_text(encoding="utf-8")


def test_host_runs_the_reference_framing_as_a_learner_file(tmp_path: Path) -> None:
    """The reference's own framing, as a learner's file, passes the stage's process checks."""
    from grader.course.checks import stage01

    (tmp_path / "framing.py").write_text(REFERENCE_FRAMING)
    with Work(tmp_path, "01") as work:
        stage01.check_replies(work.host("framing"), [0, "7"])
        stage01.check_bad_lines(work.host("framing"))


def test_a_learner_file_cannot_borrow_what_its_stage_teaches(tmp_path: Path) -> None:
    """In stage 01's runtime reference.framing *is* the learner's framing.py: importing it gives nothing."""
    from grader.course.checks import stage01

    (tmp_path / "framing.py").write_text("from reference.framing import encode, decode, read_frame, write_frame\n")
    with Work(tmp_path, "01") as work, pytest.raises(expect.Failure):
        stage01.check_replies(work.host("framing"), [0])


def _solution_modules(prefix: str, folder: Path) -> None:
    """The stage's %%module files, as its solution notebook writes them, in ``folder``."""
    from grader.course.notebook import modules

    stage = next(s for s in STAGES if s.name.startswith(prefix))
    for name, text in modules(parse(stage.text.read_text(encoding="utf-8"), stage.name)).items():
        (folder / f"{name}.py").write_text(text, encoding="utf-8")


@pytest.mark.parametrize(
    ("stage", "taught"), [("10", {"resources": "shop_resources", "prompts": "shop_prompts"}),
                          ("11", {"writes": "shop_writes", "audit": "shop_audit", "confirm": "shop_state"})],
)  # fmt: skip
def test_the_advanced_stages_runtimes_hold_the_learners_modules_in_place_of_the_answer_key(
    stage: str, taught: dict[str, str]
) -> None:
    """Stage 10's reference.resources and reference.prompts, stage 11's reference.writes and reference.audit,
    are the learner's own modules (shims that import them): the answer key is not in the runtime, and a
    learner's file that asks for it by name is flagged."""
    from grader.course import runtime
    from grader.grading import flags

    package = runtime.cached(stage) / "reference"
    for module, learner in taught.items():
        text = (package / f"{module}.py").read_text(encoding="utf-8")
        assert text == (runtime.LAB_RUNTIME / "shims" / f"{module}.py").read_text(encoding="utf-8")
        assert f"import {learner} as _learner" in text or f"from {learner} import" in text
        found = flags.scan(stage, {learner: f"from reference.{module} import *\n"})
        assert [f.kind for f in found] == ["answer-key"], found


@pytest.mark.parametrize("saved", [True, False], ids=["with-the-trees-bytecode", "without"])
def test_a_runtime_carries_the_bytecode_its_processes_load_without_writing_any(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, saved: bool
) -> None:
    """The learner's processes run with PYTHONDONTWRITEBYTECODE (graded: on a read-only /runtime), so
    each source of a runtime has a compiled file beside it that the runtime's Python takes: the
    course's own (``make bytecode``) where it has one, else one compiled for it; a source changed
    afterwards is compiled again, never run stale."""
    import compileall
    import shutil

    from grader.course import runtime
    from grader.grading.confinement import python_executable

    tree = tmp_path / "tree"  # the course's packages, with their bytecode or without
    for attribute, package in (("LAB_RUNTIME", runtime.LAB_RUNTIME), ("REFERENCE", runtime.REFERENCE)):
        shutil.copytree(package, tree / package.name, ignore=shutil.ignore_patterns("__pycache__"))
        if saved:
            compileall.compile_dir(tree / package.name, quiet=1)
        monkeypatch.setattr(runtime, attribute, tree / package.name)
    built = runtime.build("05", tmp_path / "runtime")
    changed = built / "lab_runtime" / "fixtures.py"
    changed.write_text(changed.read_text(encoding="utf-8") + "CHANGED = 1\n", encoding="utf-8")
    loaded = ["lab_runtime/guard.py", "lab_runtime/harness.py", "reference/server.py", "reference/dispatch.py"]
    code = (
        "import lab_runtime.guard, lab_runtime.harness, reference.server, lab_runtime.fixtures as f; print(f.CHANGED)"
    )
    env = {"PYTHONPATH": str(built), "PYTHONDONTWRITEBYTECODE": "1", "PATH": "/usr/bin:/bin"}
    child = subprocess.run(
        [python_executable(), "-S", "-v", "-c", code],
        env=env,
        cwd=tmp_path,  # -c puts it first on the path: not the checkout, whose reference/ would be found
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert child.stdout.strip() == "1", child.stderr[-2000:]
    for source in loaded:
        assert f"matches {built / source}\n" in child.stderr, source
    assert f"matches {changed}\n" not in child.stderr
    assert saved or not list(tree.rglob("__pycache__"))  # compiled for the copies, never into the course


def test_the_parts_a_grading_runs_side_by_side_share_one_runtime(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A submission graded alone runs its cells' parts on threads side by side, and each asks for the
    stage's runtime as it starts: one is built, and every part gets it (each building its own cost
    60 ms of CPU a copy, six copies a grading)."""
    import tempfile
    import threading

    from grader.course import runtime

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where cached() makes its copies
    monkeypatch.setattr(runtime, "_BUILT", {})
    start = threading.Barrier(6)
    got: list[Path] = []

    def part() -> None:
        start.wait()
        got.append(runtime.cached("06"))

    threads = [threading.Thread(target=part) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    try:
        assert len(got) == 6 and len(set(got)) == 1, got
        assert [p.name for p in tmp_path.iterdir()] == [got[0].parent.name]
    finally:
        assert runtime.clear() == 1


def test_stage_11s_server_refuses_the_course_database_by_the_learners_own_rule(tmp_path: Path) -> None:
    """--allow-writes on the course's database: the learner's writable_copy refuses it, the server says why
    in its last line and exits 2 (nothing written); on a copy it serves, and stdin's end ends it with 0."""
    from reference import database

    _solution_modules("11", tmp_path)
    copy = database.build(tmp_path / "copy.db")
    with Work(tmp_path, "11") as work:
        course = work.host("shop_writes", "--allow-writes", "--db", str(work.db))
        done = subprocess.run(course, capture_output=True, text=True, timeout=30, input="")
        last = done.stderr.strip().splitlines()[-1]
        assert done.returncode == 2 and last.startswith("mcp-lab serve: ") and "never written" in last, done.stderr
        assert done.stdout == "", done.stdout
        served = work.host("shop_writes", "--allow-writes", "--db", str(copy))
        ping = '{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
        done = subprocess.run(served, capture_output=True, text=True, timeout=30, input=ping)
        assert done.returncode == 0 and done.stdout == '{"jsonrpc":"2.0","id":1,"result":{}}\n', done.stderr
        assert "writes allowed on" in done.stderr


def test_a_missing_flush_is_named_as_such(tmp_path: Path) -> None:
    flush = "    stream.flush()\n"
    assert REFERENCE_FRAMING.count(flush) == 1
    (tmp_path / "framing.py").write_text(REFERENCE_FRAMING.replace(flush, ""))
    with (
        Work(tmp_path, "01") as work,
        drive.Server(work.host("framing"), timeout=1.0) as server,
        pytest.raises(expect.Failure) as caught,
    ):
        server.expect(drive.request("ping", "7"), {"jsonrpc": "2.0", "id": "7", "result": {}}, "id-echo")
    text = caught.value.text()
    assert text.startswith("stdout-flush: no reply within 1 s; it came only when stdin was closed")
    assert '{"jsonrpc":"2.0","id":"7","result":{}}' in text and "fix:" in text


def test_an_id_type_mismatch_is_explained() -> None:
    problem = drive.mismatch({}, {"jsonrpc": "2.0", "id": 7, "result": {}}, {"jsonrpc": "2.0", "id": "7", "result": {}})
    assert problem == 'sent id "7" (a string), got 7 (a number)'


def test_failures_render_without_a_traceback() -> None:
    failure = expect.Failure("id-echo", 'sent id "7" (a string), got 7 (a number)', sent="{}", received="{}")
    lines = failure._render_traceback_()
    assert lines[0].endswith('id-echo: sent id "7" (a string), got 7 (a number)')
    assert any(line.strip().startswith("rule:") for line in lines)
    assert any(line.strip().startswith("fix:") for line in lines)
    assert not any("Traceback" in line for line in lines)


def test_the_readme_failure_example_is_a_real_failure(tmp_path: Path) -> None:
    """README.md shows what a learner sees for a numeric id echoed as a string: it must be real."""
    from grader.course.checks import stage02

    stage = next(s for s in STAGES if s.name == "02-messages")
    cells = parse(stage.text.read_text(encoding="utf-8"))["cells"]
    source = next(c["source"] for c in cells if c["id"] == "messages").removeprefix("%%module messages\n")
    stringify = '    id = message["id"]\n    if isinstance(id, int):\n        id = str(id)\n'
    bug = source.replace('    id = message["id"]\n', stringify)
    assert bug != source
    (tmp_path / "messages.py").write_text(bug, encoding="utf-8")
    with Work(tmp_path, "02") as work, pytest.raises(expect.Failure) as caught:
        stage02.check_id_echo(work.host("messages"), [42])
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = re.search(r"```text\n(Failure  id-echo.*?)```", readme, flags=re.S)
    assert shown, "README.md shows a failure message"
    assert shown.group(1).removeprefix("Failure  ").rstrip("\n") == caught.value.text()


def test_validate_shows_every_rule_and_fix_whole() -> None:
    """nbgrader's Validate cuts a long line of a failed cell's output ("..."): every rule and fix a
    learner can meet is wrapped below its limit (the summary and the frames stay one line each)."""
    from nbgrader.validator import Validator

    from grader.checker.catalogue import CATALOGUE

    validator = Validator()
    room = validator.width - 3  # _indent cuts a line longer than this, indent included
    for check in [*CATALOGUE, *expect.LESSON_RULES]:
        text = expect.Failure(check, "a summary", hint="a hint " * 20).text()
        prose = text.splitlines()[1:]
        cut = [line for line in prose if len(validator.indent + line) > room]
        assert not cut, f"{check}: Validate would cut {cut}"


@pytest.mark.parametrize(
    ("text", "flagged"),
    [
        ('import subprocess\nsubprocess.run(["mcp-lab", "clinic", "key"])\n', True),
        ('import os\nos.system("mcp-lab gallery list --reveal")\n', True),
        ('CMD = "/srv/venv/bin/mcp-lab"\n', True),
        # The checker's own probe method is a fair line of a clinic reproducer (the answer key uses it).
        ('LINES = [\'{"jsonrpc": "2.0", "method": "notifications/mcp-lab/unknown"}\']\n', False),
    ],
)
def test_the_course_command_is_flagged_but_a_name_that_contains_it_is_not(text: str, flagged: bool) -> None:
    from grader.grading import flags

    found = [f.kind for f in flags.scan("08", {"answers": text})]
    assert ("answer-key" in found) is flagged, found


@pytest.mark.parametrize(
    ("stage", "text", "flagged"),
    [
        # Stage 00's answer key loaded by its path: the sandbox has no such file (the try loses its
        # points), and the instructor sees the attempt as an import of it by name would show.
        (
            "00",
            "import importlib.util\n"
            "spec = importlib.util.spec_from_file_location('db', '/home/me/mcp-wire-lab/reference/database.py')\n",
            True,
        ),
        ("01", "SOURCE = open('../reference/framing.pyc', 'rb').read()\n", True),
        ("02", "NOTES = 'my reference: docs/reference.md and reference/notes.txt'\n", False),
        ("02", 'def f():\n    """Written after reading reference/framing.py in the lesson."""\n', False),
    ],
    ids=["by-path", "bytecode", "other-files", "docstring"],
)
def test_the_answer_keys_file_named_by_its_path_is_flagged(stage: str, text: str, flagged: bool) -> None:
    from grader.grading import flags

    found = flags.scan(stage, {"mine": text})
    assert ("answer-key" in [f.kind for f in found]) is flagged, found
    assert not flagged or "names the file of reference." in found[0].why, found
