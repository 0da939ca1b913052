"""The stage sources are jupytext notebooks: jupytext itself reads them into the course's notebooks.

``jupytext --to ipynb notebooks/NN-name/NN-name.py`` (the command an instructor runs, and what
JupyterLab does when it opens the file as a notebook) gives the notebook the course builds into
its ``source/`` folder: the same cells, sources, nbgrader metadata and notebook metadata. What
holds for cell ids, exactly: jupytext 1.19 keeps no cell id in a text notebook (jupytext issue
#1263), so the id a cell has in the course travels as the cell's ``id`` metadata, which the build
makes the cell's id; the ids jupytext itself gives are its own (random) ones.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from grader.course import build

STAGES = build.stages()
JUPYTEXT = Path(sys.executable).with_name("jupytext")


@pytest.fixture(scope="module")
def converted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """Every stage's text converted by jupytext's own command (one run for all), by stage name."""
    if not JUPYTEXT.exists():
        pytest.skip(f"jupytext is not installed beside {sys.executable} (the course extra)")
    folder = tmp_path_factory.mktemp("jupytext")
    for stage in STAGES:
        shutil.copyfile(stage.text, folder / stage.text.name)
    texts = [str(folder / stage.text.name) for stage in STAGES]
    done = subprocess.run([str(JUPYTEXT), "--to", "ipynb", *texts], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return {s.name: json.loads((folder / s.notebook).read_text(encoding="utf-8")) for s in STAGES}


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A course built from the stages, as ``mcp-lab course init`` builds it."""
    root = tmp_path_factory.mktemp("course") / "course"
    build.init_course(root)
    return root


def _joined(source: str | list[str]) -> str:
    return "".join(source) if isinstance(source, list) else source


@pytest.mark.parametrize("stage", STAGES, ids=lambda s: s.name)
def test_jupytext_gives_the_notebook_the_course_builds(
    stage: build.Stage, converted: dict[str, dict[str, Any]], course: Path
) -> None:
    theirs = converted[stage.name]
    ours = json.loads((course / "source" / stage.name / stage.notebook).read_text(encoding="utf-8"))
    assert (theirs["nbformat"], theirs["nbformat_minor"]) == (ours["nbformat"], ours["nbformat_minor"]) == (4, 5)
    assert len(theirs["cells"]) == len(ours["cells"])
    for number, (their, our) in enumerate(zip(theirs["cells"], ours["cells"], strict=True), start=1):
        where = f"{stage.name} cell {number} ({our['id']})"
        assert their["cell_type"] == our["cell_type"], where
        assert _joined(their["source"]) == our["source"], where
        # The cell's id travels in its metadata; everything else there (nbgrader's) is the same.
        assert their["metadata"] == {"id": our["id"], **our["metadata"]}, where
        assert their.get("outputs") == our.get("outputs") and their.get("execution_count") is None, where
    # The notebook's metadata: the same kernel and language; jupytext adds its own options only.
    assert {k: v for k, v in theirs["metadata"].items() if k != "jupytext"} == ours["metadata"]
    assert ours["metadata"]["kernelspec"]["name"] == "python3"


@pytest.mark.parametrize("stage", STAGES, ids=lambda s: s.name)
def test_the_text_is_as_jupytext_writes_it(stage: build.Stage) -> None:
    """Opening a stage in JupyterLab and saving it (jupytext writes it back) changes no byte, and a
    cell's id and nbgrader metadata are where jupytext reads them: on its ``# %%`` line."""
    import jupytext

    text = stage.text.read_text(encoding="utf-8")
    notebook = jupytext.reads(text, fmt="py:percent")
    assert jupytext.writes(notebook, fmt="py:percent") == text, (
        f"{stage.text.name} is not as jupytext writes it: `jupytext --to py:percent` it (after `--to ipynb`)"
    )
    graded = [c for c in notebook.cells if "nbgrader" in c.metadata]
    assert graded and all(c.metadata["nbgrader"]["grade_id"] == c.metadata["id"] for c in graded)
    assert "comment_magics: false" in text, "magics such as %%module stay as written, uncommented"


@pytest.mark.parametrize("stage", STAGES, ids=lambda s: s.name)
def test_saving_in_jupyterlab_writes_the_text_back_unchanged(stage: build.Stage, tmp_path: Path) -> None:
    """JupyterLab opens and saves a ``.py`` notebook through jupytext's contents manager; a running
    kernel fills in ``language_info`` (its version, ...): the header keeps its name only, so a
    save that changed no cell changes no byte."""
    from jupyter_server.services.contents.largefilemanager import LargeFileManager
    from jupytext.sync_contentsmanager import build_sync_jupytext_contents_manager_class

    shutil.copyfile(stage.text, tmp_path / stage.text.name)
    manager = build_sync_jupytext_contents_manager_class(LargeFileManager)(root_dir=str(tmp_path))
    model = manager.get(stage.text.name, type="notebook")
    assert [c["metadata"].get("id") for c in model["content"]["cells"]] == [c["id"] for c in stage.source()["cells"]]
    model["content"]["metadata"]["language_info"] = {
        "name": "python", "version": "3.11.2", "mimetype": "text/x-python", "file_extension": ".py",
        "codemirror_mode": {"name": "ipython", "version": 3}, "nbconvert_exporter": "python",
        "pygments_lexer": "ipython3",
    }  # fmt: skip
    manager.save(model, stage.text.name)
    assert (tmp_path / stage.text.name).read_bytes() == stage.text.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == [stage.text.name], "no paired file unless asked for"


def test_a_paired_notebook_beside_the_text_is_not_shipped(tmp_path: Path) -> None:
    """jupytext's pairing writes ``NN-name.ipynb`` beside the text: the course builds its own and
    never copies that one over it, nor hands it out; the stage's data files still go along."""
    original = next(s for s in STAGES if s.name.startswith("09"))
    folder = tmp_path / "notebooks" / original.name
    shutil.copytree(original.folder, folder)
    stage = build.Stage(original.name, folder)
    (folder / stage.notebook).write_text('{"cells": [], "stale": true}', encoding="utf-8")
    before = stage.digest()
    (folder / stage.notebook).write_text('{"cells": [], "stale": "again"}', encoding="utf-8")
    assert stage.digest() == before, "a paired notebook does not make the stage stale"
    assert stage.notebook not in [p.name for p in stage.extras()]
    assert [p.name for p in stage.extras()] == sorted(p.name for p in original.extras())
    build.write_course(tmp_path / "course", [stage])
    built = json.loads((tmp_path / "course" / "source" / stage.name / stage.notebook).read_text(encoding="utf-8"))
    assert "stale" not in built and built["cells"] == stage.source()["cells"]
