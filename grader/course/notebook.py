"""Stage notebooks as text: jupytext's percent format, read into an nbgrader source notebook.

A stage is written as one text file, reviewable in a diff, and turned into ``.ipynb`` only when a
course is built. The file is a notebook in jupytext's percent format (``py:percent``), so an
instructor can open it as a notebook in JupyterLab and ``jupytext --to ipynb`` converts it. Each
cell starts with a ``# %%`` line that carries the cell's metadata as ``key=value`` (JSON values):

    # %% [markdown] id="title"         text (each line's leading "# " is jupytext's)
    # %% id="try-it"                   code the learner may edit and run (an example)
    # %% id="encode" nbgrader={"grade": false, "grade_id": "encode", "locked": false, ...}
                                       a graded cell: nbgrader's own metadata, as nbgrader writes it

The file's YAML header (``# ---`` ... ``# ---``) holds the kernel and jupytext's options: magics
such as ``%%module framing`` stay as written (``comment_magics: false``).

Cell ids: jupytext 1.19 keeps no cell id in a text notebook (jupytext issue #1263; a text file
read alone gets random ids), so each cell carries its id in its metadata, ``id="..."``, and
:func:`parse` makes that the cell's id. A cell nbgrader knows has the id of its ``grade_id`` (a
cell made with nbgrader's toolbar in JupyterLab needs no ``id``); any other cell without one gets
``cell-NN``, its position.

    >>> text = '# %% [markdown] id="hello"\\n# # Hello\\n\\n# %% id="t" nbgrader=' + (
    ...     '{"grade": true, "grade_id": "t", "locked": true, "points": 2, "schema_version": 3, "solution": false}'
    ...     '\\nassert True\\n')
    >>> nb = parse(text)
    >>> [c["cell_type"] for c in nb["cells"]], nb["cells"][1]["metadata"]["nbgrader"]["points"]
    (['markdown', 'code'], 2)
    >>> nb["cells"][1]["id"], nb["cells"][1]["source"], nb["metadata"]["kernelspec"]["name"]
    ('t', 'assert True', 'python3')
"""

from __future__ import annotations

import ast
import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .pysource import parse as parse_source

FORMAT = "py:percent"
ID = "id"  # the cell metadata key that carries a cell's id through the text (see above)
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
LANGUAGE_INFO = {"name": "python"}
_NBGRADER_KEYS = ("grade", "grade_id", "locked", "schema_version", "solution")


class NotebookSourceError(ValueError):
    """The text of a stage is not a well-formed notebook source."""


def read(text: str) -> Any:
    """The notebook jupytext reads from ``text`` (an ``nbformat.NotebookNode``, ids as jupytext gives)."""
    import jupytext

    return jupytext.reads(text, fmt=FORMAT)


def _nbgrader(meta: dict[str, Any], cell_id: str | None, where: str) -> str:
    """The id of a cell nbgrader knows: its ``grade_id`` (nbgrader grades by it), which an ``id`` repeats."""
    missing = [key for key in _NBGRADER_KEYS if key not in meta]
    if missing:
        raise NotebookSourceError(f"{where}: its nbgrader metadata lacks {', '.join(missing)}")
    if cell_id is not None and meta["grade_id"] != cell_id:
        raise NotebookSourceError(f"{where}: its nbgrader grade_id {meta['grade_id']!r} is not its id")
    if meta["grade"] and "points" not in meta:
        raise NotebookSourceError(f"{where}: a graded cell needs points in its nbgrader metadata")
    return meta["grade_id"]


def _cell(cell: Any, number: int, name: str) -> dict[str, Any]:
    metadata = dict(cell.get("metadata", {}))
    cell_id = metadata.pop(ID, None)
    where = f"{name}: cell {number} ({cell_id or cell.cell_type})"
    if "nbgrader" in metadata:  # a cell nbgrader's own toolbar made has a grade_id, no id
        cell_id = _nbgrader(metadata["nbgrader"], cell_id, where)
    result: dict[str, Any] = {
        "cell_type": cell.cell_type,
        "id": cell_id or f"cell-{number:02d}",
        "metadata": metadata,
        "source": cell.source,
    }
    if cell.cell_type == "code":
        result["execution_count"] = None
        result["outputs"] = []
    return result


def parse(text: str, name: str = "<stage>") -> dict[str, Any]:
    """The nbgrader source notebook (nbformat 4.5 JSON data) that the percent-format ``text`` is.

    What jupytext reads, with each cell's id restored from its metadata, jupytext's own options
    left out, and the course's kernel where the header names none. A fresh copy on every call; the
    reading itself is done once per text (jupytext takes about 0.2 s of CPU for a stage, and every
    nbgrader command of a course reads all of them: :func:`~grader.course.build.ignored_files`)."""
    return json.loads(_parsed(text, name))


@functools.lru_cache(maxsize=64)
def _parsed(text: str, name: str) -> str:
    notebook = read(text)
    cells = [_cell(cell, number, name) for number, cell in enumerate(notebook.cells, start=1)]
    ids = [c["id"] for c in cells]
    if len(set(ids)) != len(ids):
        twice = sorted({i for i in ids if ids.count(i) > 1})
        raise NotebookSourceError(f"{name}: cell ids used twice: {', '.join(twice)}")
    metadata = {key: value for key, value in notebook.metadata.items() if key != "jupytext"}
    metadata.setdefault("kernelspec", dict(KERNELSPEC))
    metadata.setdefault("language_info", dict(LANGUAGE_INFO))
    return json.dumps({"cells": cells, "metadata": metadata, "nbformat": 4, "nbformat_minor": 5})


def source_modules(notebook: dict[str, Any]) -> list[str]:
    """The names of the source notebook's ``%%module NAME`` cells, in order (every cell, locked or not)."""
    cells = (c for c in notebook.get("cells", []) if c.get("cell_type") == "code")
    return [match.group(1) for match in (_MODULE.match(_source(c)) for c in cells) if match]


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
