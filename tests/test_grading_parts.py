"""A cell's public and hidden checks are graded side by side, each in a copy of its own, and the
cell's verdict is what it would have been had they run one after the other: the public checks'
failure first, then the hidden checks'.

The checks here are registered for the test alone (on stage 01, under grade ids no notebook has)
and run through the grader's own path: :func:`grader.grading.grade.grade_cell`, a real
:class:`~grader.course.work.Work` in a scratch folder, real threads.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from grader.course.checks import CELLS, Cell
from grader.course.expect import Failure
from grader.course.work import Work
from grader.grading import grade, secret
from grader.grading.hidden import HIDDEN
from grader.grading.submission import Submission

STAGE = "01"
WAIT = 30.0  # seconds a part waits for the other: only a bound, met at once when they run side by side


@pytest.fixture
def register() -> Iterator[Callable[[str, Callable[[Work], None], Callable[[Work, random.Random], None]], None]]:
    """Register a cell's public and hidden checks for one test; removed after it."""
    added: list[tuple[str, str]] = []

    def add(grade_id: str, public: Callable[[Work], None], hidden: Callable[[Work, random.Random], None]) -> None:
        CELLS[(STAGE, grade_id)] = Cell(STAGE, grade_id, "a test's own cell", public)
        HIDDEN[(STAGE, grade_id)] = hidden
        added.append((STAGE, grade_id))

    yield add
    for key in added:
        CELLS.pop(key, None)
        HIDDEN.pop(key, None)


def graded(tmp_path: Path, grade_id: str) -> grade.CellVerdict:
    submission = Submission("learner", STAGE, tmp_path / "01-framing.ipynb", modules={"framing": "X = 1\n"})
    keys = secret.Keys(b"a course secret", "learner", STAGE)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    verdict, _ = grade.grade_cell(submission, grade_id, 2.0, keys, scratch, slot=0)
    return verdict


def test_the_parts_run_side_by_side_each_in_its_own_copy(tmp_path: Path, register: Callable) -> None:
    folders: dict[str, Path] = {}
    met = {"public": threading.Event(), "hidden": threading.Event()}

    def part(name: str, other: str, work: Work) -> None:
        folders[name] = work.folder
        (work.folder / "left-by.txt").write_text(name)  # the other part must not see it
        met[name].set()
        if not met[other].wait(WAIT):  # one after the other, this would wait in vain
            raise Failure("module", f"the {other} part did not run beside the {name} part")
        assert (work.folder / "left-by.txt").read_text() == name

    register("test_zz_side_by_side", lambda w: part("public", "hidden", w), lambda w, rng: part("hidden", "public", w))
    verdict = graded(tmp_path, "test_zz_side_by_side")
    assert verdict.status == "passed", verdict
    assert folders["public"] != folders["hidden"], folders


def test_a_hidden_failure_decides_when_the_public_checks_pass(tmp_path: Path, register: Callable) -> None:
    def hidden(work: Work, rng: random.Random) -> None:
        raise Failure("framing-read", "the hidden values found it")

    register("test_zz_hidden_fails", lambda w: None, hidden)
    verdict = graded(tmp_path, "test_zz_hidden_fails")
    assert verdict.status == "failed" and "the hidden values found it" in verdict.text, verdict


def test_the_public_failure_comes_first_when_both_fail(tmp_path: Path, register: Callable) -> None:
    public_failed = threading.Event()

    def public(work: Work) -> None:
        public_failed.set()
        raise Failure("framing-read", "the public values found it")

    def hidden(work: Work, rng: random.Random) -> None:
        public_failed.wait(WAIT)  # the hidden part ends last: order of ending is not order of counting
        raise Failure("framing-read", "the hidden values found it too")

    register("test_zz_both_fail", public, hidden)
    verdict = graded(tmp_path, "test_zz_both_fail")
    assert verdict.status == "failed" and "the public values found it" in verdict.text, verdict
    assert "hidden values" not in verdict.text
