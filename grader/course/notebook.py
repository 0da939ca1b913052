"""Stage notebooks as text: a percent-format file becomes an nbgrader source notebook.

A stage is written as one text file, reviewable in a diff, and turned into ``.ipynb`` only when a
course is built. Cells start with a ``# %%`` line; the word after it says what nbgrader makes of
the cell, and ``id=`` names it (graded cells must be named):

    # %% [markdown]            text (each line's leading "# " removed)
    # %%                       code the learner may edit and run (an example)
    # %% setup id=setup        locked code: nbgrader restores it if edited
    # %% solution id=encode    the learner's cell: BEGIN/END SOLUTION regions become stubs
    # %% test id=t_encode points=2
                               a graded test (BEGIN/END HIDDEN TESTS regions leave the release)

Lines before the first ``# %%`` are the file's own notes and belong to no cell.

    >>> nb = parse("# %% [markdown]\\n# # Hello\\n# %% test id=t points=2\\nassert True\\n")
    >>> [c["cell_type"] for c in nb["cells"]], nb["cells"][1]["metadata"]["nbgrader"]["points"]
    (['markdown', 'code'], 2)
    >>> nb["cells"][1]["id"], nb["metadata"]["kernelspec"]["name"]
    ('t', 'python3')
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .pysource import parse as parse_source

KINDS = ("code", "markdown", "setup", "solution", "test")
_HEADER = re.compile(r"^# %%(?:\s+(?P<rest>.*))?$")

KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


class NotebookSourceError(ValueError):
    """The text of a stage is not a well-formed notebook source."""


def _header(rest: str, where: str) -> tuple[str, dict[str, str]]:
    kind, options = "code", {}
    for word in rest.split():
        if word == "[markdown]":
            kind = "markdown"
        elif "=" in word:
            key, _, value = word.partition("=")
            options[key] = value
        elif word in KINDS:
            kind = word
        else:
            raise NotebookSourceError(f"{where}: unknown cell word {word!r} (one of {', '.join(KINDS)})")
    if kind in ("setup", "solution", "test") and "id" not in options:
        raise NotebookSourceError(f"{where}: a {kind} cell needs an id= (nbgrader grades by it)")
    if kind == "test" and "points" not in options:
        raise NotebookSourceError(f"{where}: a test cell needs points=")
    return kind, options


def _nbgrader(kind: str, options: dict[str, str]) -> dict[str, Any] | None:
    if kind in ("code", "markdown"):
        return None
    meta: dict[str, Any] = {
        "grade": kind == "test",
        "grade_id": options["id"],
        "locked": kind in ("setup", "test"),
        "schema_version": 3,
        "solution": kind == "solution",
        "task": False,
    }
    if kind == "test":
        meta["points"] = int(options["points"])
    return meta


def _cell(kind: str, options: dict[str, str], lines: list[str], number: int) -> dict[str, Any]:
    while lines and not lines[-1].strip():
        lines.pop()
    while lines and not lines[0].strip():
        lines.pop(0)
    if kind == "markdown":
        lines = [line[2:] if line.startswith("# ") else line.removeprefix("#") for line in lines]
    source = "\n".join(lines)
    cell: dict[str, Any] = {
        "cell_type": "markdown" if kind == "markdown" else "code",
        "id": options.get("id", f"cell-{number:02d}"),
        "metadata": {},
        "source": source,
    }
    meta = _nbgrader(kind, options)
    if meta is not None:
        cell["metadata"]["nbgrader"] = meta
    if cell["cell_type"] == "code":
        cell["execution_count"] = None
        cell["outputs"] = []
    return cell


def parse(text: str, name: str = "<stage>") -> dict[str, Any]:
    """The notebook (as nbformat 4.5 JSON data) that ``text`` describes."""
    cells: list[dict[str, Any]] = []
    current: tuple[str, dict[str, str]] | None = None
    lines: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        match = _HEADER.match(line)
        if match:
            if current is not None:
                cells.append(_cell(*current, lines, len(cells) + 1))
            current = _header(match.group("rest") or "", f"{name}:{number}")
            lines = []
        elif current is not None:
            lines.append(line)
    if current is not None:
        cells.append(_cell(*current, lines, len(cells) + 1))
    ids = [c["id"] for c in cells]
    if len(set(ids)) != len(ids):
        twice = sorted({i for i in ids if ids.count(i) > 1})
        raise NotebookSourceError(f"{name}: cell ids used twice: {', '.join(twice)}")
    return {
        "cells": cells,
        "metadata": {"kernelspec": dict(KERNELSPEC), "language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def write(source: Path, target: Path) -> Path:
    """Build ``target`` (.ipynb) from the text file ``source``; return the target."""
    notebook = parse(source.read_text(encoding="utf-8"), str(source))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return target


# -- what a learner's notebook holds, read as data (never run) ----------------------------------
_MODULE = re.compile(r"\A%%module[ \t]+(\w+)[ \t]*\n?")


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
            tree = parse_source(_source(cell))
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
