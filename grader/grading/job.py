"""One submission to grade, as plain data: all a grading process needs, with no course folder.

The instructor's machine reads the submission and the stage (:func:`~grader.grading.grade.prepare`)
and hands this to whatever grades it: a process forked on this machine, or a Dask worker on
another (:mod:`.cluster`). It carries that one submission's derived key for the hidden draws
(:class:`~grader.grading.secret.Draws`), never the course secret: the seal and the scrub of the
secret stay on the instructor's machine (:func:`~grader.grading.grade.finish`).

    >>> from pathlib import Path
    >>> from grader.grading.submission import Submission
    >>> job = Job(Submission("ada", "01", Path("01-framing.ipynb")), "01-framing", {"test_x": 1.0})
    >>> job.student, job.stage
    ('ada', '01')
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .flags import Flag
from .submission import Submission


@dataclass
class Job:
    submission: Submission  # the learner's files as read (modules, handed-in files, values), or its problem
    stage_name: str  # "01-framing"
    points: dict[str, float]  # the graded cells and their points, from the instructor's source notebook
    refused: list[Flag] = field(default_factory=list)  # not plain files: never run
    release: frozenset[str] = frozenset()  # the release's code cells as the learner got them
    handed: dict[str, str] = field(default_factory=dict)  # the files the release handed out, as text
    salt: str = ""  # the clinic's salt (stage 08's draws), the instructor's
    draws: bytes = b""  # this student's key for this stage's hidden draws (never the course secret)
    code: str = ""  # the digest of the instructor's grading code (:mod:`.version`)

    @property
    def student(self) -> str:
        return self.submission.student

    @property
    def stage(self) -> str:
        return self.stage_name[:2]

    def key(self) -> str:
        """A name for the job: unique for this stage, readable in Dask's dashboard."""
        return f"grade-{self.stage_name}-{self.student}"
