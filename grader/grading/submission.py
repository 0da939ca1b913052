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

import ast
import hashlib
import json
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grader.course.checks import VALUES

_MODULE = re.compile(r"\A%%module[ \t]+(\w+)[ \t]*\n?")
# Files a stage's learners hand in beside the notebook, by stage (glob patterns).
HANDED_IN: dict[str, tuple[str, ...]] = {"09": ("repair_*.py",)}
# Answers that are values (grader.course.checks.VALUES) are read from ``NAME = <literal>`` in the
# learner's cells, never run.
MAX_FILE = 1 << 20  # bytes: a handed-in file larger than this is not a repair


def _source(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _locked(cell: dict[str, Any]) -> bool:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return bool(meta.get("locked")) and not meta.get("solution")


def values(notebook: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    """``{NAME: value}`` for each ``NAME = <literal>`` in the learner's cells (the last one wins).

    A name bound to something that is not a literal (a call, a comprehension) maps to a
    :class:`NotData` that says so: the grader reads answers, it does not run them.

    >>> nb = {"cells": [{"cell_type": "code", "source": "diagnosis = {'case-01': {'rule': 'ping'}}", "metadata": {}}]}
    >>> values(nb, ("diagnosis",))
    {'diagnosis': {'case-01': {'rule': 'ping'}}}
    """
    found: dict[str, Any] = {}
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") != "code" or _locked(cell):
            continue
        try:
            tree = ast.parse(_source(cell))
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                name = node.targets[0].id
                if name in names:
                    try:
                        found[name] = ast.literal_eval(node.value)
                    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                        found[name] = NotData(f"{name} must be written out as data (a dict literal), not computed")
    return found


@dataclass(frozen=True)
class NotData:
    """An answer the grader could not read as data, and why."""

    why: str


def modules(notebook: dict[str, Any]) -> dict[str, str]:
    """``{NAME: text}`` for every ``%%module NAME`` cell of the learner's."""
    found: dict[str, str] = {}
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") != "code" or _locked(cell):
            continue
        source = _source(cell)
        match = _MODULE.match(source)
        if match and match.group(1) not in ("reference", "grader", "lab_runtime"):
            found[match.group(1)] = source[match.end() :]
    return found


@dataclass
class Submission:
    student: str
    stage: str  # "02"
    notebook_path: Path
    modules: dict[str, str] = field(default_factory=dict)
    files: dict[str, bytes] = field(default_factory=dict)  # handed-in files by name
    values: dict[str, Any] = field(default_factory=dict)  # answers that are values (stage 08's diagnosis)
    problem: str = ""  # why the notebook could not be read ("" when it could)

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
        found.modules = modules(notebook)
        found.values = values(notebook, VALUES.get(stage, ()))
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
        for name, text in sorted(self.modules.items()):
            h.update(f"module {name}\n{text}\n".encode())
        for name, data in sorted(self.files.items()):
            h.update(f"file {name}\n".encode() + data + b"\n")
        for name, value in sorted(self.values.items()):
            h.update(f"value {name}\n{value!r}\n".encode())
        return h.hexdigest()[:20]


def copy_tree(source: Path, target: Path) -> None:
    shutil.copytree(source, target, dirs_exist_ok=True)
