"""The grading worker: what every submission's grading process has loaded before it starts.

``mcp-lab course grade`` grades each submission in a process of its own (a crash there cannot
take the others with it), forked from a server that imported this module once: the checks, the
checker, jsonschema, nbformat. A fresh interpreter would spend about two seconds of CPU on those
imports for every submission; a fork spends none.
"""

from __future__ import annotations

import sys
from pathlib import Path

# jsonschema would build rfc3987's grammar at import (a second of CPU); no check uses "format".
sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]

import jsonschema  # noqa: E402, F401 - loaded once, for every worker

import grader.course.checks.stage00  # noqa: E402
import grader.grading.hidden  # noqa: E402, F401
from grader.course import build  # noqa: E402
from grader.course.checks import cells  # noqa: E402
from grader.grading.grade import grade  # noqa: E402
from grader.grading.hidden import for_stage  # noqa: E402

for _stage in build.stages():  # every stage's checks, public and hidden
    cells(_stage.name[:2])
    for_stage(_stage.name[:2])


def grade_to_file(course: Path, stage: str, student: str, slot: int, out: Path) -> None:
    """Grade one submission and write its verdicts to ``out`` (the parent reads them)."""
    out.write_text(grade(course, stage, student, slot).as_json(), encoding="utf-8")
