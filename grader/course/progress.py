"""``mcp-lab progress``: every stage of the learner's workspace, checked the way grading checks it.

For each stage the saved notebook is read as data (its ``%%module`` cells and its answers that
are values, as grading reads them; nothing in it is run), copied with the files handed in beside
it into a temporary folder, and every graded cell's public checks run on that copy, each in
processes of its own. The learner's files are never touched. Hidden checks are the grader's:
"public checks passed" is what can be known beforehand.

    $ mcp-lab progress
    00-shop-and-pipe     10/10  public checks passed
    01-framing            4/12  test_read_frame: framing-read: call number 2 of read_frame returned None; ...
    total                14/22

It also writes ``WORKSPACE/.mcp-lab/progress.json`` (points per stage), which ``mcp-lab lab``
reads to open the first stage not passed yet.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from . import clinic
from .build import STAGE_NAME, WORKSPACE, stages
from .checks import HANDED_IN, VALUES, cells, run
from .expect import Failure
from .notebook import modules, values
from .work import Work

JOBS = 4  # stages checked at once: most of the time goes to waiting on child processes


@dataclass
class StageProgress:
    stage: str
    earned: int = 0
    possible: int = 0
    first_failure: str = ""  # "cell: message", empty when every public check passed
    missing: bool = False

    def line(self, width: int) -> str:
        if self.missing:
            return f"{self.stage:<{width}}  not in the workspace (run make lab)"
        score = f"{self.earned}/{self.possible}"
        if not self.first_failure:
            return f"{self.stage:<{width}}  {score:>5}  public checks passed"
        return f"{self.stage:<{width}}  {score:>5}  {self.first_failure}"


def _points(notebook: dict) -> dict[str, int]:
    found = {}
    for cell in notebook.get("cells", []):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("grade") and cell.get("cell_type") == "code":
            found[meta["grade_id"]] = int(meta.get("points", 0))
    return found


def stage_progress(folder: Path) -> StageProgress:
    result = StageProgress(folder.name)
    path = folder / f"{folder.name}.ipynb"
    if not path.is_file():
        result.missing = True
        return result
    stage = folder.name[:2]
    notebook = json.loads(path.read_text(encoding="utf-8"))
    points = _points(notebook)
    result.possible = sum(points.values())
    public = cells(stage)
    with tempfile.TemporaryDirectory(prefix=f"mcp-lab-progress-{stage}-") as tmp:
        copy = Path(tmp)
        for name, text in modules(notebook).items():
            (copy / f"{name}.py").write_text(text, encoding="utf-8")
        for pattern in HANDED_IN.get(stage, ()):
            for item in folder.glob(pattern):
                shutil.copyfile(item, copy / item.name)
        answers = values(notebook, VALUES.get(stage, ()))
        for grade_id, most in points.items():
            entry = public.get(grade_id)
            try:
                if entry is None:
                    raise Failure("module", "this cell has no checks")
                with Work(copy, stage, answers=answers, student=clinic.student(), salt=clinic.salt(folder)) as work:
                    run(entry, work)
            except Failure as failure:
                if not result.first_failure:
                    result.first_failure = f"{grade_id}: {failure.text().splitlines()[0]}"
                continue
            result.earned += most
    return result


def progress(workspace: Path = WORKSPACE) -> list[StageProgress]:
    # The course's stages; in a learner kit (no notebook text), the stages the workspace holds.
    names = [stage.name for stage in stages()]
    names = names or sorted(p.name for p in workspace.iterdir() if STAGE_NAME.match(p.name))
    with ThreadPoolExecutor(max_workers=JOBS) as pool:
        results = list(pool.map(stage_progress, [workspace / name for name in names]))
    record = workspace / ".mcp-lab" / "progress.json"
    record.parent.mkdir(parents=True, exist_ok=True)
    stages_done = {r.stage: {"earned": r.earned, "possible": r.possible} for r in results if not r.missing}
    record.write_text(json.dumps({"stages": stages_done}, indent=1) + "\n", encoding="utf-8")
    return results


def total_line(results: list[StageProgress], width: int) -> str:
    earned = sum(r.earned for r in results)
    possible = sum(r.possible for r in results)
    return f"{'total':<{width}}  {f'{earned}/{possible}':>5}"
