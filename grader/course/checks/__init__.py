"""The public checks of every stage, registered by graded cell.

A notebook's graded cell is one line, ``lab.check("test_branches")``: it runs what is registered
here for that stage and cell, against the learner's files (:class:`~grader.course.work.Work`).
Grading runs exactly these, then the hidden ones of :mod:`grader.grading.hidden`, with the same
:class:`Work` in a sandbox; so what a learner sees pass here passes there (on these inputs).

    >>> entry = cell("02", "test_branches")
    >>> entry.says
    'every branch of handle_line, for ids 1, "7" and 0'

Each stage's module registers its cells with :func:`public`:

    @public("02", "test_branches", 'every branch of handle_line, for ids 1, "7" and 0')
    def branches(work: Work) -> None:
        check_branches(work.module("messages").handle_line, [1, "7", 0])
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from ..expect import Failure
from ..work import Work


@dataclass(frozen=True)
class Cell:
    stage: str  # "02"
    grade_id: str  # the nbgrader grade id of the cell: "test_branches"
    says: str  # what the public checks check, in one line
    run: Callable[[Work], None]


CELLS: dict[tuple[str, str], Cell] = {}
# Answers that are values, by stage: the learner's notebook sets ``NAME = <literal>``; the checks
# read the value (in the notebook, from the kernel; when graded, from the cell's text as data).
VALUES: dict[str, tuple[str, ...]] = {"08": ("diagnosis",)}
# Files a stage's learners hand in beside the notebook, by stage (glob patterns).
HANDED_IN: dict[str, tuple[str, ...]] = {"09": ("repair_*.py",)}


# What the checks import only when a cell needs it (heavy, or for a few cells). Whoever runs cells
# side by side in threads (grading, mcp-lab progress) loads these first: two threads importing one
# package with import cycles inside (jsonschema) can meet it half-initialised.
LAZY = (
    "jsonschema",
    "grader.checker.check",
    "anyio",
    "mcp",
    "mcp.client.stdio",
    "mcp.client.streamable_http",
    "httpx2",
)


def preload() -> None:
    """Import :data:`LAZY` now, in this thread (a package that is not installed is left out)."""
    from grader.checker import schema_formats

    schema_formats.leave_out()  # no check uses "format" (a second of CPU at jsonschema's import)
    for name in LAZY:
        try:
            importlib.import_module(name)
        except ImportError:
            continue


def public(stage: str, grade_id: str, says: str) -> Callable[[Callable[[Work], None]], Callable[[Work], None]]:
    """Register the decorated function as the public checks of ``stage``'s cell ``grade_id``."""

    def register(run: Callable[[Work], None]) -> Callable[[Work], None]:
        if (stage, grade_id) in CELLS:
            raise ValueError(f"stage {stage}: cell {grade_id} is registered twice")
        CELLS[(stage, grade_id)] = Cell(stage, grade_id, says, run)
        return run

    return register


def run(cell: Cell, work: Work) -> None:
    """Run ``cell``'s checks on ``work``; whatever the learner's code does on the way is a :class:`Failure`.

    The checks call the learner's code through :func:`~grader.course.calls.call`, which explains
    what it raised. A proxy used outside such a call (reading an attribute of the learner's object,
    say) can still meet the learner's process stopped or ended, or their exception: that is a
    verdict on their code too, never an error of the grader's.
    """
    from ..remote import RemoteDied, RemoteError, RemoteRaised, RemoteTimeout

    try:
        cell.run(work)
    except RemoteTimeout as exc:
        raise Failure(
            "module", f"{exc}: an endless loop, or a wait without a timeout?", stderr=work.printed()
        ) from None
    except RemoteDied as exc:
        raise Failure("module", str(exc), stderr=exc.stderr) from None
    except RemoteError as exc:
        raise Failure("module", f"{exc}", stderr=work.printed()) from None
    except RemoteRaised as exc:
        where = getattr(exc, "where", "")
        details = {"where": where} if where else {}
        raise Failure("module", f"your code raised {type(exc).__name__}: {exc}", **details) from None


def cells(stage: str) -> dict[str, Cell]:
    """Every graded cell of ``stage``, by grade id."""
    importlib.import_module(f"{__name__}.stage{stage}")
    return {grade_id: entry for (s, grade_id), entry in CELLS.items() if s == stage}


def cell(stage: str, grade_id: str) -> Cell:
    found = cells(stage).get(grade_id)
    if found is None:
        raise Failure("module", f"stage {stage} has no graded cell {grade_id!r}")
    return found
