"""The digest of the grading code: what tells a grading worker running other checks from this one.

A worker on another machine grades with its own copy of the project. Verdicts are only comparable
when that copy's checks, hidden checks, sandbox and reference are these very files, so the
instructor's machine sends its digest with every submission and a worker whose own digest differs
refuses before it grades (:mod:`.cluster`). The verdict files carry it too: a stage graded by
other checks is graded again (:func:`~grader.grading.command.grade_stage`).

    >>> len(code_digest()) == 20 and code_digest() == code_digest()
    True
"""

from __future__ import annotations

import hashlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the folder that holds grader/ and reference/
PACKAGES = ("grader", "reference")


def code_digest(root: Path = ROOT) -> str:
    """A fingerprint of every source file of ``grader/`` and ``reference/`` under ``root`` (names and
    contents, length-prefixed: no two trees give the same bytes). Read anew each time (some 50 ms):
    the files on disk are what the next grading process loads."""
    h = hashlib.sha256()
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*")):
            if not path.is_file() or "__pycache__" in path.parts or path.suffix in (".pyc", ".pyo"):
                continue
            name = path.relative_to(root).as_posix().encode()
            data = path.read_bytes()
            h.update(len(name).to_bytes(4, "big") + name + len(data).to_bytes(8, "big") + data)
    return h.hexdigest()[:20]
