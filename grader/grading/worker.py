"""The grading worker: what every submission's grading process has loaded before it starts.

``mcp-lab course grade`` grades each submission in a process of its own (a crash there cannot
take the others with it), forked from a server that imported this module once: the checks, the
checker, jsonschema, the SDK's clients, nbformat. A fresh interpreter would spend about two seconds of CPU on those
imports for every submission; a fork spends none. A Dask worker grading for another machine forks
its grading processes from the same server (:mod:`.forked`).
"""

from __future__ import annotations

import os
from pathlib import Path

import grader.course.checks.stage00
import grader.grading.hidden  # noqa: F401
from grader.course import build
from grader.course.checks import cells, preload
from grader.grading.grade import grade_job
from grader.grading.hidden import for_stage
from grader.grading.job import Job
from grader.grading.sweep import sweep

preload()  # jsonschema, the checker, the SDK's clients: loaded once, for every worker

for _stage in build.stages():  # every stage's checks, public and hidden
    cells(_stage.name[:2])
    for_stage(_stage.name[:2])


def grade_to_file(job: Job, slot: int, out: Path, alone: bool = True) -> None:
    """Grade one submission and write its verdicts to ``out`` (the parent reads them).

    The process ends with ``os._exit`` (multiprocessing's way): nothing registered with atexit runs,
    so what it made is removed here; after a crash or a kill, the parent removes it (:func:`sweep`)."""
    try:
        out.write_text(grade_job(job, slot, alone).as_json(), encoding="utf-8")
    finally:
        sweep(os.getpid())
