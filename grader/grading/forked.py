"""One submission graded in a process of its own, forked from a server with the grading worker loaded.

A crash, a kill or a time-out there cannot take the other submissions with it, and what it left is
swept. The instructor's machine grades this way (:mod:`.command`), and so does a Dask worker
(:mod:`.cluster`): the same process, the same :func:`~grader.grading.grade.grade_job`.

    >>> LOST_FORKSERVER
    255
"""

from __future__ import annotations

import contextlib
import multiprocessing
import tempfile
import threading
from pathlib import Path
from typing import Any

from .grade import Verdicts
from .job import Job
from .sweep import sweep

SUBMISSION_LIMIT = 900.0  # seconds for one submission's whole grading (cells are bounded far below)
# multiprocessing's status for a child whose fork server went away (killed, or out of memory): the
# submission was never judged, so it is graded again once, by a fork server started anew.
LOST_FORKSERVER = 255

_CONTEXT: Any = None


def context() -> Any:
    """Processes forked from a server that has the grading worker loaded (started on first use)."""
    global _CONTEXT
    if _CONTEXT is None:
        _CONTEXT = multiprocessing.get_context("forkserver")
        _CONTEXT.set_forkserver_preload(["grader.grading.worker"])
    return _CONTEXT


def start_workers() -> threading.Thread:
    """Start the fork server now, on a thread: its imports (a second or more of CPU) run on the other
    core while this one reads the course and loads nbgrader, instead of before the first submission."""
    from multiprocessing import forkserver

    def start() -> None:
        with contextlib.suppress(Exception):  # a server that cannot start fails the first submission's start
            forkserver.ensure_running()

    context()
    thread = threading.Thread(target=start, name="forkserver-start", daemon=True)
    thread.start()
    return thread


def grade_forked(job: Job, slot: int, alone: bool, again: bool = True) -> tuple[Verdicts | None, str]:
    """Grade one submission in a process of its own: its verdicts, or why there are none
    (``alone``: no other submission is graded beside it, :func:`~grader.grading.grade.grade_job`)."""
    from .worker import grade_to_file

    with tempfile.TemporaryDirectory(prefix="mcp-lab-verdicts-") as tmp:
        out = Path(tmp) / "verdicts.json"
        process = context().Process(target=grade_to_file, args=(job, slot, out, alone))
        process.start()
        try:
            process.join(SUBMISSION_LIMIT)
            if process.is_alive():
                process.kill()
                process.join(10)
                return None, f"grading did not finish within {SUBMISSION_LIMIT:.0f} s"
        finally:
            if process.pid is not None and not process.is_alive():
                sweep(process.pid)  # what a crash or a kill left: processes, cgroups, runtime copies
        if process.exitcode == LOST_FORKSERVER and not out.is_file() and again:
            return grade_forked(job, slot, alone, again=False)
        if process.exitcode != 0 or not out.is_file():
            return None, f"the grader crashed (exit status {process.exitcode})"
        return Verdicts.from_json(out.read_text(encoding="utf-8")), ""
