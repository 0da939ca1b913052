"""The instructor's worked example in README.md, run as it stands: nbgrader's commands and `mcp-lab course grade`.

The README's ```sh block under "For instructors" is cut at its comment about collecting work: the
part before runs, then two learners hand in (one with the solutions, one with the release as it
came, one a file that is not a notebook; another is on the roster and hands nothing in), then the
rest runs. The table must show them all, and the export each one's status: full marks, an honest zero,
not submitted, unreadable.
"""

from __future__ import annotations

import csv
import re
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT
from course_support import notebook_text, python_env

from grader.course import build

pytestmark = pytest.mark.timeout(300)
STAGE = "01-framing"


def instructor_block() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("### For instructors") :]
    match = re.search(r"```sh\n(.*?)```", section, flags=re.S)
    assert match, "the instructor section has a ```sh block"
    return match.group(1).splitlines()


def run_script(lines: list[str], course: Path) -> subprocess.CompletedProcess[str]:
    script = "\n".join(line.replace("~/mcp-course", str(course)) for line in lines)
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=ROOT,
        env=python_env(),
    )


@pytest.mark.slow
def test_the_readme_instructor_example_runs(tmp_path: Path) -> None:
    lines = instructor_block()
    cut = next(i for i, line in enumerate(lines) if line.startswith("# collect"))
    before, after = lines[:cut], lines[cut + 1 :]
    assert any("generate_assignment" in line for line in before)
    assert any("mcp-lab course grade" in line for line in after) and any("export" in line for line in after)
    course = tmp_path / "mcp-course"
    done = run_script(before, course)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    stage = next(s for s in build.stages() if s.name == STAGE)
    released = course / "release" / STAGE / stage.notebook
    assert released.is_file()
    handed = (("ada", notebook_text(stage)), ("bob", released.read_text(encoding="utf-8")), ("dave", "not a notebook"))
    for student, text in handed:
        folder = course / "submitted" / student / STAGE
        folder.mkdir(parents=True)
        (folder / stage.notebook).write_text(text, encoding="utf-8")
    # `cd` is in the first half: the second half starts where the first one ended.
    done = run_script([f"cd {course}", f"export OLDPWD={ROOT}", *after], course)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    table = {line.split()[0]: line for line in done.stdout.splitlines() if line.split()}
    assert table["ada"].split()[1:3] == [str(stage.points()), str(stage.points())], table["ada"]
    # carol is on the roster and handed nothing in: a row of her own, not a silent gap or a graded 0.
    assert table["carol"].split()[1] == "-" and "not-submitted" in table["carol"], table["carol"]
    assert (course / "feedback" / "ada" / STAGE / f"{STAGE}.html").is_file()
    # The export tells an honest 0 from nothing handed in and from a file that is no notebook.
    with open(course / "grades.csv", encoding="utf-8") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle) if row["stage"] == STAGE}
    assert set(rows) == {"ada", "bob", "carol", "dave"}, rows
    assert rows["ada"]["status"] == "graded" and rows["ada"]["flags"] == ""
    assert float(rows["ada"]["score"]) == float(rows["ada"]["max_score"]) == stage.points()
    assert rows["bob"]["status"] == "graded" and float(rows["bob"]["score"]) == 0
    assert rows["carol"]["status"] == "not submitted" and rows["carol"]["score"] == ""
    assert "not-submitted" in rows["carol"]["flags"]
    assert rows["dave"]["status"] == "unreadable" and "unreadable" in rows["dave"]["flags"], rows["dave"]
