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
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from . import clinic
from .build import STAGE_NAME, WORKSPACE, stages
from .checks import HANDED_IN, VALUES, cells, preload, run
from .expect import Failure
from .notebook import modules, values
from .work import Work

JOBS = 6  # cells checked at once, across stages: most of the time goes to waiting on child processes


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


@dataclass
class _Stage:
    """One stage as read from the workspace: its result so far, its files, its answers."""

    folder: Path
    result: StageProgress
    files: dict[str, bytes] = field(default_factory=dict)  # what each cell's copy holds
    answers: dict = field(default_factory=dict)
    points: dict[str, int] = field(default_factory=dict)


def _read(folder: Path) -> _Stage:
    read = _Stage(folder, StageProgress(folder.name))
    path = folder / f"{folder.name}.ipynb"
    if not path.is_file():
        read.result.missing = True
        return read
    stage = folder.name[:2]
    notebook = json.loads(path.read_text(encoding="utf-8"))
    read.points = _points(notebook)
    read.result.possible = sum(read.points.values())
    read.files = {f"{name}.py": text.encode("utf-8") for name, text in modules(notebook).items()}
    for pattern in HANDED_IN.get(stage, ()):
        read.files.update({item.name: item.read_bytes() for item in sorted(folder.glob(pattern))})
    read.answers = values(notebook, VALUES.get(stage, ()))
    cells(stage)  # the stage's checks imported here, before its cells run in threads
    return read


def _check(read: _Stage, grade_id: str) -> str:
    """One cell's public checks on a copy of its own: "" when they pass, else the first line of the failure."""
    stage = read.folder.name[:2]
    entry = cells(stage).get(grade_id)
    try:
        if entry is None:
            raise Failure("module", "this cell has no checks")
        with tempfile.TemporaryDirectory(prefix=f"mcp-lab-progress-{stage}-") as tmp:
            copy = Path(tmp)
            for name, data in read.files.items():
                (copy / name).write_bytes(data)
            student, salt = clinic.student(), clinic.salt(read.folder)
            with Work(copy, stage, answers=read.answers, student=student, salt=salt) as work:
                run(entry, work)
    except Failure as failure:
        return failure.text().splitlines()[0]
    return ""


def stage_progress(folder: Path) -> StageProgress:
    """One stage's progress (its cells one after another)."""
    read = _read(folder)
    _tally(read, {grade_id: _check(read, grade_id) for grade_id in read.points})
    return read.result


def _tally(read: _Stage, failures: dict[str, str]) -> None:
    for grade_id, most in read.points.items():  # in the notebook's order: the first failure is the first cell's
        if failures[grade_id]:
            read.result.first_failure = read.result.first_failure or f"{grade_id}: {failures[grade_id]}"
        else:
            read.result.earned += most


def progress(workspace: Path = WORKSPACE) -> list[StageProgress]:
    """Every stage's progress: each cell of each stage is one task of one pool (most of a check's
    time is spent waiting on child processes, so more run at once than there are cores)."""
    # The course's stages; in a learner kit (no notebook text), the stages the workspace holds.
    names = [stage.name for stage in stages()]
    names = names or sorted(p.name for p in workspace.iterdir() if STAGE_NAME.match(p.name))
    reads = [_read(workspace / name) for name in names]
    tasks = [(read, grade_id) for read in reads for grade_id in read.points]
    preload()  # what the cells import lazily, once, before they run side by side
    with ThreadPoolExecutor(max_workers=JOBS) as pool:
        found = list(pool.map(lambda task: _check(*task), tasks))
    failures: dict[str, dict[str, str]] = {}
    for (read, grade_id), failure in zip(tasks, found, strict=True):
        failures.setdefault(read.folder.name, {})[grade_id] = failure
    for read in reads:
        _tally(read, failures.get(read.folder.name, {}))
    results = [read.result for read in reads]
    record = workspace / ".mcp-lab" / "progress.json"
    record.parent.mkdir(parents=True, exist_ok=True)
    stages_done = {r.stage: {"earned": r.earned, "possible": r.possible} for r in results if not r.missing}
    record.write_text(json.dumps({"stages": stages_done}, indent=1) + "\n", encoding="utf-8")
    return results


def total_line(results: list[StageProgress], width: int) -> str:
    earned = sum(r.earned for r in results)
    possible = sum(r.possible for r in results)
    return f"{'total':<{width}}  {f'{earned}/{possible}':>5}"
