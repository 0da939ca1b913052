"""``mcp-lab progress``: for each stage in the learner's workspace, do its visible tests pass?

Each stage notebook is run as saved, in a temporary copy of its folder (the learner's files are
never touched), with the same kernel and timeouts as nbgrader. A graded test cell passes when it
raises nothing. Hidden tests are not in the workspace: "passed" means the public checks passed.

    $ mcp-lab progress
    00-shop-and-pipe   10/10 public checks passed
    01-framing          4/12  test_read_frame: framing-read: call number 2 of read_frame returned None; ...
"""

from __future__ import annotations

import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .build import CELL_TIMEOUT, WORKSPACE, stages

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass
class StageProgress:
    stage: str
    earned: int = 0
    possible: int = 0
    first_failure: str = ""  # "cell: message", empty when every visible test passed
    missing: bool = False

    def line(self, width: int) -> str:
        if self.missing:
            return f"{self.stage:<{width}}  not in the workspace (run make lab)"
        score = f"{self.earned}/{self.possible}"
        if not self.first_failure:
            return f"{self.stage:<{width}}  {score:>5}  public checks passed"
        return f"{self.stage:<{width}}  {score:>5}  {self.first_failure}"


def stage_progress(folder: Path) -> StageProgress:
    import nbformat
    from nbclient import NotebookClient

    result = StageProgress(folder.name)
    notebook_path = folder / f"{folder.name}.ipynb"
    if not notebook_path.is_file():
        result.missing = True
        return result
    with tempfile.TemporaryDirectory(prefix="mcp-lab-progress-") as tmp:
        copy = Path(tmp) / folder.name
        shutil.copytree(folder, copy, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
        notebook = nbformat.read(copy / notebook_path.name, as_version=4)
        client = NotebookClient(
            notebook,
            timeout=CELL_TIMEOUT,
            kernel_name="python3",
            allow_errors=True,
            resources={"metadata": {"path": str(copy)}},
        )
        client.execute()
    for cell in notebook.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if not meta.get("grade") or cell.cell_type != "code":
            continue
        points = int(meta.get("points", 0))
        result.possible += points
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        if not errors:
            result.earned += points
        elif not result.first_failure:
            error = errors[0]
            message = _ANSI.sub("", (error.get("evalue") or error.get("ename") or "").strip())
            first = message.splitlines()[0] if message else error.get("ename", "error")
            result.first_failure = f"{meta.get('grade_id')}: {first}"
    return result


def progress(workspace: Path = WORKSPACE) -> list[StageProgress]:
    return [stage_progress(workspace / stage.name) for stage in stages()]
