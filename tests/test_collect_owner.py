"""``nbgrader collect`` in a course made by ``mcp-lab course init`` collects only the student's own work.

Real ``nbgrader collect`` runs (as root, as an instructor's cron or shell would) over an exchange
whose submission folders are owned by real system users the test creates with ``useradd`` and
removes afterwards. A folder named for one student but made by another is refused with an error
line, also when it is the newest: the student's own submission is collected instead. Where every
folder belongs to one uid (learners sharing ``jovyan``), everything is refused with a line saying why.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from course_support import python_env

from grader.course import build

pytestmark = [
    pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root: it creates system users"),
    pytest.mark.skipif(shutil.which("useradd") is None, reason="needs useradd to create system users"),
    pytest.mark.timeout(180),
]
STAGE = "01-framing"
OLDER, NEWER = "2026-12-01 10:00:00.000000 UTC", "2026-12-01 11:00:00.000000 UTC"


@pytest.fixture
def users() -> Iterator[list[str]]:
    """Three system users with fresh names (an honest learner, a classmate, a shared ``jovyan``-like
    uid); removed afterwards, also when the test fails."""
    names = [f"mcpl{role}{secrets.token_hex(3)}" for role in ("ann", "bob", "jov")]
    made = []
    try:
        for name in names:
            subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", name], check=True)
            made.append(name)
        yield names
    finally:
        for name in made:
            subprocess.run(["userdel", name], check=False, capture_output=True)


@pytest.fixture
def course(tmp_path: Path) -> Path:
    """A course folder with the config ``mcp-lab course init`` writes, and an empty exchange."""
    folder = tmp_path / "course"
    build.write_course(folder, [s for s in build.stages() if s.name == STAGE])
    inbound = tmp_path / "exchange" / build.COURSE_ID / "inbound"
    inbound.mkdir(parents=True)
    inbound.chmod(0o733)  # as nbgrader's release makes it: learners write, nobody lists
    return folder


def hand_in(course: Path, student: str, owner: str, stamp: str, marker: str, stray: str = "") -> Path:
    """A submission folder in the inbound, as ``nbgrader submit`` makes it, owned by ``owner``
    (with one file owned by ``stray`` when given)."""
    folder = course.parent / "exchange" / build.COURSE_ID / "inbound" / f"{student}+{STAGE}+{stamp}+{marker}"
    folder.mkdir()
    (folder / f"{STAGE}.ipynb").write_text(f'{{"marker": "{marker}"}}', encoding="utf-8")
    (folder / "timestamp.txt").write_text(stamp, encoding="utf-8")
    for path in (folder, *folder.iterdir()):
        shutil.chown(path, owner, owner)
    if stray:
        (folder / "notes.txt").write_text("added by someone else", encoding="utf-8")
        shutil.chown(folder / "notes.txt", stray, stray)
    return folder


def collect(course: Path, *options: str) -> subprocess.CompletedProcess[str]:
    exchange = course.parent / "exchange"
    done = subprocess.run(
        [sys.executable, "-m", "nbgrader", "collect", STAGE, f"--Exchange.root={exchange}", *options],
        cwd=course,
        capture_output=True,
        text=True,
        timeout=150,
        env=python_env(),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def collected(course: Path, student: str) -> str | None:
    path = course / "submitted" / student / STAGE / f"{STAGE}.ipynb"
    return path.read_text(encoding="utf-8") if path.exists() else None


def error_lines(done: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in done.stderr.splitlines() if "ERROR]" in line]


def test_a_newer_folder_made_by_a_classmate_is_refused_and_the_students_own_is_collected(
    users: list[str], course: Path
) -> None:
    ann, bob, _ = users
    hand_in(course, ann, ann, OLDER, "anns-own")
    forged = hand_in(course, ann, bob, NEWER, "forged-by-bob")
    done = collect(course)
    assert '"anns-own"' in (collected(course, ann) or ""), done.stderr
    errors = error_lines(done)
    line = next((e for e in errors if forged.name in e), "")
    assert f"owned by {bob}, not by the student {ann}" in line, done.stderr
    assert any("use an exchange that knows the hub's user" in e for e in errors), errors


def test_a_file_of_a_classmate_inside_the_students_folder_refuses_the_folder(users: list[str], course: Path) -> None:
    ann, bob, _ = users
    hand_in(course, ann, ann, OLDER, "anns-older")
    mixed = hand_in(course, ann, ann, NEWER, "anns-newer", stray=bob)
    done = collect(course)
    assert '"anns-older"' in (collected(course, ann) or ""), done.stderr
    assert any(mixed.name in e and f"owned by {bob}" in e for e in error_lines(done)), done.stderr


def test_learners_sharing_one_uid_are_all_refused_with_the_reason(users: list[str], course: Path) -> None:
    """The DockerSpawner/KubeSpawner case: every folder is ``jovyan``'s, whichever learner it names,
    and the students are no system users of the exchange's machine."""
    _, _, jovyan = users
    for student in ("ada", "eve"):
        hand_in(course, student, jovyan, NEWER, f"{student}-work")
    done = collect(course)
    assert collected(course, "ada") is None and collected(course, "eve") is None
    errors = error_lines(done)
    for student in ("ada", "eve"):
        wanted = f"owned by {jovyan}, not by the student {student} (no system user is named {student})"
        assert any(wanted in e for e in errors), errors
    summary = [e for e in errors if "2 submission(s) not made by their student" in e]
    assert len(summary) == 1 and "share one uid" in summary[0] and "A class on JupyterHub" in summary[0], errors


def test_the_check_can_be_turned_off_for_an_exchange_only_the_instructor_writes(users: list[str], course: Path) -> None:
    _, _, jovyan = users
    hand_in(course, "ada", jovyan, NEWER, "ada-work")
    done = collect(course, "--PlainCollect.owner_check=False")
    assert '"ada-work"' in (collected(course, "ada") or ""), done.stderr
    assert not [e for e in error_lines(done) if "not made by their student" in e], done.stderr
