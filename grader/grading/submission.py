"""A submission read as data: the learner's ``%%module`` files and handed-in files, never executed here.

Grading does not run the learner's notebook. It reads it as JSON and takes from it what the
learner made: every code cell that starts with ``%%module NAME`` becomes ``NAME.py`` (a later cell
for the same name wins, as running the notebook top to bottom would), except in the locked cells
(set-up and tests), whose text nbgrader restores from the source anyway. Files a stage asks to be
handed in beside the notebook (the clinic's repaired servers) are copied as they are.

    >>> nb = {"cells": [{"cell_type": "code", "source": "%%module framing\\nimport json\\n", "metadata": {}},
    ...                 {"cell_type": "code", "source": "print(1)", "metadata": {}}]}
    >>> modules(nb)
    {'framing': 'import json\\n'}
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grader.course.checks import HANDED_IN, VALUES
from grader.course.notebook import modules, values

# Answers that are values (VALUES) are read from ``NAME = <literal>`` in the learner's cells, never
# run; files a stage's learners hand in beside the notebook (HANDED_IN) are copied as they are.
MAX_FILE = 1 << 20  # bytes: a handed-in file larger than this is not a repair


@dataclass
class Submission:
    student: str
    stage: str  # "02"
    notebook_path: Path
    modules: dict[str, str] = field(default_factory=dict)
    files: dict[str, bytes] = field(default_factory=dict)  # handed-in files by name
    values: dict[str, Any] = field(default_factory=dict)  # answers that are values (stage 08's diagnosis)
    notebook: dict[str, Any] = field(default_factory=dict)  # the notebook as read (for the flags)
    problem: str = ""  # why the notebook could not be read ("" when it could)
    repaired: list[str] = field(default_factory=list)  # parts of the notebook that were not a notebook's

    @classmethod
    def read(cls, student: str, stage: str, folder: Path, notebook_name: str) -> Submission:
        path = folder / notebook_name
        found = cls(student, stage, path)
        try:
            notebook = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            found.problem = f"no {notebook_name} in the submission"
            return found
        except (OSError, ValueError) as exc:
            found.problem = f"{notebook_name} is not a readable notebook: {exc}"
            return found
        if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
            found.problem = f"{notebook_name} is not a readable notebook: it has no list of cells"
            return found
        found.notebook, found.repaired = plain(notebook)
        found.modules = modules(found.notebook)
        found.values = values(found.notebook, VALUES.get(stage, ()))
        for pattern in HANDED_IN.get(stage, ()):
            for item in sorted(folder.glob(pattern)):
                if item.is_file() and not item.is_symlink() and item.stat().st_size <= MAX_FILE:
                    found.files[item.name] = item.read_bytes()
        return found

    def write(self, target: Path) -> Path:
        """The learner's files in ``target`` (a fresh scratch folder): what their processes see."""
        target.mkdir(parents=True, exist_ok=True)
        for name, text in self.modules.items():
            (target / f"{name}.py").write_text(text, encoding="utf-8")
        for name, data in self.files.items():
            (target / name).write_bytes(data)
        return target

    def digest(self) -> str:
        """A fingerprint of what is graded: the same files give the same verdicts."""
        h = hashlib.sha256()
        if self.problem:
            h.update(f"problem {self.student}\n{self.problem}\n".encode())  # refused: like no one else's
        for name, text in sorted(self.modules.items()):
            h.update(f"module {name}\n{text}\n".encode())
        for name, data in sorted(self.files.items()):
            h.update(f"file {name}\n".encode() + data + b"\n")
        for name, value in sorted(self.values.items()):
            h.update(f"value {name}\n{value!r}\n".encode())
        return h.hexdigest()[:20]


def plain(notebook: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The notebook with every cell in the form nbgrader writes (a dict; its metadata and
    ``metadata.nbgrader`` dicts; its source text), and what had to be set aside to get there.

    >>> plain({"cells": [{"cell_type": "code", "source": ["a", 1], "metadata": {"nbgrader": []}}, 7]})[1]
    ['cell 1: metadata.nbgrader is a list, not a dict (ignored)', 'cell 1: its source is not text (ignored)', \
'cell 2: a int, not a cell (ignored)']
    """
    cells: list[dict[str, Any]] = []
    notes: list[str] = []
    for number, cell in enumerate(notebook.get("cells", []), 1):
        if not isinstance(cell, dict):
            notes.append(f"cell {number}: a {type(cell).__name__}, not a cell (ignored)")
            continue
        cell = dict(cell)
        meta = cell.get("metadata", {})
        if not isinstance(meta, dict):
            notes.append(f"cell {number}: its metadata is a {type(meta).__name__}, not a dict (ignored)")
            meta = {}
        meta = dict(meta)
        if "nbgrader" in meta and not isinstance(meta["nbgrader"], dict):
            kind = type(meta.pop("nbgrader")).__name__
            notes.append(f"cell {number}: metadata.nbgrader is a {kind}, not a dict (ignored)")
        cell["metadata"] = meta
        source = cell.get("source", "")
        if not (isinstance(source, str) or (isinstance(source, list) and all(isinstance(s, str) for s in source))):
            notes.append(f"cell {number}: its source is not text (ignored)")
            cell["source"] = ""
        if not isinstance(cell.get("cell_type", "code"), str):
            cell["cell_type"] = "raw"
        cells.append(cell)
    return {**notebook, "cells": cells}, notes


def copy_tree(source: Path, target: Path) -> None:
    shutil.copytree(source, target, dirs_exist_ok=True)
