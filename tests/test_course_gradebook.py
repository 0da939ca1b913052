"""A new course's gradebook (grader.course.gradebook): the one nbgrader makes, made without its
``alembic heads`` subprocess, and opened by nbgrader as its own."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from grader.course import build, gradebook


def _schema(path: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT name, sql FROM sqlite_master ORDER BY name").fetchall()


def _version(path: Path) -> list[tuple[str]]:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT version_num FROM alembic_version").fetchall()


def _open_with_nbgrader(path: Path, path_env: str) -> subprocess.CompletedProcess[str]:
    """nbgrader's Gradebook on ``path``, in a Python of its own whose PATH is ``path_env``."""
    code = (
        "import sys\nsys.modules['rfc3987_syntax'] = None  # a second of CPU (tests/conftest.py)\n"
        "from nbgrader.api import Gradebook\nGradebook('sqlite:///' + sys.argv[1]).close()\n"
    )
    env = {**os.environ, "PATH": path_env}
    return subprocess.run([sys.executable, "-c", code, str(path)], env=env, capture_output=True, text=True, timeout=120)


def test_a_seeded_gradebook_is_the_one_nbgrader_makes(tmp_path: Path) -> None:
    (tmp_path / "ours").mkdir()
    ours = gradebook.seed(tmp_path / "ours")
    theirs = tmp_path / "theirs.db"
    made = _open_with_nbgrader(theirs, build.nbgrader_env()["PATH"])  # runs `alembic heads` itself
    assert made.returncode == 0, made.stderr
    assert _schema(ours) == _schema(theirs)
    assert _version(ours) == _version(theirs) == [(gradebook.head(),)]


def test_nbgrader_opens_a_seeded_gradebook_without_running_alembic(tmp_path: Path) -> None:
    no_alembic = str(Path(sys.executable).parent.parent / "no-such-bin")  # not a folder: no alembic on PATH
    fresh = _open_with_nbgrader(tmp_path / "fresh.db", no_alembic)
    assert fresh.returncode != 0 and "alembic" in fresh.stderr  # a new gradebook needs the command
    seeded = _open_with_nbgrader(gradebook.seed(tmp_path), no_alembic)
    assert seeded.returncode == 0, seeded.stderr


def test_a_new_course_has_its_gradebook_and_a_second_write_keeps_it(tmp_path: Path) -> None:
    course = tmp_path / "course"
    chosen = build.stages()[:1]
    build.write_course(course, chosen)
    path = course / gradebook.FILE
    assert _version(path) == [(gradebook.head(),)]
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO student (id) VALUES ('ada')")
    build.write_course(course, chosen)
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT id FROM student").fetchall() == [("ada",)]
