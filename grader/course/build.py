"""Courses made from ``notebooks/``: the instructor's nbgrader course and the learner's workspace.

Every stage is a folder ``notebooks/NN-name/`` holding ``NN-name.py`` (the notebook as text in
jupytext's percent format, see :mod:`.notebook`). A *course* is an nbgrader course folder:
``source/NN-name/NN-name.ipynb`` built from that text, and an ``nbgrader_config.py`` that sets
the timeouts, the kernel, feedback without hidden tests, and the files nbgrader must never copy
(the learner's ``%%module`` files, which hold solutions when a source notebook is run in place).

The learner's *workspace* holds nbgrader's release of every stage, made by ``generate_assignment``
in a private course under ``build/course/``. A stage folder already in the workspace is never
touched again; a stage added to the course later appears on the next run.

    >>> [s.name for s in stages()][:2]
    ['00-shop-and-pipe', '01-framing']
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import gradebook
from .notebook import parse, source_modules, write

try:
    import fcntl
except ImportError:  # Windows: no lock (one learner, one terminal)
    fcntl = None  # type: ignore[assignment]

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
PRIVATE_COURSE = ROOT / "build" / "course"
WORKSPACE = ROOT / "workspace"
COURSE_ID = "mcp-wire-lab"
CELL_TIMEOUT = 60  # seconds a cell may run under nbgrader: above any test cell's own bounded waits (25 s)
STAGE_NAME = re.compile(r"^\d\d-[a-z0-9-]+$")


@dataclass(frozen=True)
class Stage:
    name: str  # the folder, the assignment and the notebook name: "01-framing"
    folder: Path

    @property
    def text(self) -> Path:
        return self.folder / f"{self.name}.py"

    @property
    def notebook(self) -> str:
        return f"{self.name}.ipynb"

    def source(self) -> dict[str, Any]:
        """The instructor's source notebook (with solutions), as JSON data."""
        return parse(self.text.read_text(encoding="utf-8"), str(self.text))

    def modules(self) -> list[str]:
        """The files its ``%%module`` cells write (``framing.py``, ...)."""
        return [f"{m}.py" for m in source_modules(self.source())]

    def points(self) -> int:
        return sum(c["metadata"].get("nbgrader", {}).get("points", 0) for c in self.source()["cells"])

    def extras(self) -> list[Path]:
        """The data files the stage ships beside its text. Not the text, and not a notebook of the
        stage's name beside it (jupytext's paired ``.ipynb``, or the text run in place): the
        course's notebook is built from the text."""
        own = (self.text.name, self.notebook)
        return [p for p in sorted(self.folder.iterdir()) if p.is_file() and p.name not in own]

    def digest(self) -> str:
        data = b"".join(p.read_bytes() for p in [self.text, *self.extras()])
        return hashlib.sha256(data).hexdigest()[:16]


def stages(root: Path = NOTEBOOKS) -> list[Stage]:
    """The course's stages, from its notebooks' text (none in a learner kit, which has no solutions)."""
    if not root.is_dir():
        return []
    folders = sorted(p for p in root.iterdir() if STAGE_NAME.match(p.name))
    return [Stage(p.name, p) for p in folders if (p / f"{p.name}.py").is_file()]


def ignored_files() -> list[str]:
    """What nbgrader must never copy between source, release, submissions and feedback."""
    modules = sorted({m for stage in stages() for m in stage.modules()})
    return [".ipynb_checkpoints", "__pycache__", "*.pyc", "*.db", *modules]


# nbgrader's sanitising steps, after a first one that turns a cell claiming to be graded but
# unknown to the course into a plain cell (nbgrader would fail the whole submission on it).
SANITIZE_PREPROCESSORS = [
    "grader.grading.nbhook.DropForeignCells",
    "nbgrader.preprocessors.ClearOutput",
    "nbgrader.preprocessors.DeduplicateIds",
    "nbgrader.preprocessors.OverwriteKernelspec",
    "nbgrader.preprocessors.OverwriteCells",
    "nbgrader.preprocessors.CheckCellMetadata",
]
# nbgrader's autograde steps, with the learner's notebook never run: GradeOutside puts the verdicts
# that grading decided outside the learner's kernel where Execute would have put the outputs.
AUTOGRADE_PREPROCESSORS = [
    "grader.grading.nbhook.GradeOutside",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "nbgrader.preprocessors.SaveAutoGrades",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
]
FEEDBACK_PREPROCESSORS = [
    "nbgrader.preprocessors.GetGrades",
    "nbgrader.preprocessors.ClearHiddenTests",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
]


# Why each group of settings is there: written above it in nbgrader_config.py.
_WHY = {
    "CourseDirectory": "Files nbgrader never copies: caches, databases, and the files the %%module cells write\n"
    "# (in a source folder they hold solutions; in a submission they are rewritten from the notebook).",
    "Execute": "The learner's Validate button runs the notebook; every wait inside a test cell is bounded by the\n"
    "# course (seconds): this is the outer net.",
    "Autograde": "Grading never runs the learner's notebook: each graded cell gets the verdict of the course's\n"
    "# checks, run outside the learner's kernel against their %%module files (mcp-lab course grade).",
    "OverwriteCells": "A graded cell the learner deleted comes back from the source and is graded like the others.",
    "GenerateFeedback": "Feedback shows scores and the learner's own failures, never the source of hidden tests.",
    "ExchangeFactory": "nbgrader collect copies plain files only: never what a link in the exchange points at.",
}


def settings() -> dict[str, dict[str, Any]]:
    """The nbgrader settings of every course made from these notebooks, by configurable class."""
    return {
        "CourseDirectory": {"course_id": COURSE_ID, "ignore": ignored_files()},
        "Execute": {"timeout": CELL_TIMEOUT, "interrupt_on_timeout": True, "kernel_name": "python3"},
        "Autograde": {
            "sanitize_preprocessors": SANITIZE_PREPROCESSORS,
            "autograde_preprocessors": AUTOGRADE_PREPROCESSORS,
        },
        "OverwriteCells": {"add_missing_cells": True},
        "GenerateFeedback": {"preprocessors": FEEDBACK_PREPROCESSORS},
        "ExchangeFactory": {"collect": "grader.grading.collect.PlainCollect"},
    }


def config_text() -> str:
    """The ``nbgrader_config.py`` of a course made from these notebooks."""
    lines = ["# nbgrader configuration written by `mcp-lab course init` (MCP Wire Lab)."]
    lines.append("c = get_config()  # noqa: F821")
    for section, values in settings().items():
        lines.extend(["", f"# {_WHY[section]}"])
        lines.extend(f"c.{section}.{key} = {value!r}" for key, value in values.items())
    return "\n".join(lines) + "\n"


def config(course: Path) -> Any:
    """The same settings as a traitlets ``Config``, for nbgrader's API on the course at ``course``."""
    from traitlets.config import Config

    result = Config()
    result.CourseDirectory.root = str(course)
    for section, values in settings().items():
        for key, value in values.items():
            setattr(result[section], key, value)
    return result


def write_course(course: Path, chosen: list[Stage] | None = None) -> list[Stage]:
    """Write (or refresh) the config and the source notebooks of ``course``."""
    chosen = stages() if chosen is None else chosen
    (course / "source").mkdir(parents=True, exist_ok=True)
    (course / "nbgrader_config.py").write_text(config_text(), encoding="utf-8")
    gradebook.seed(course)  # before nbgrader opens it: spares its `alembic heads` subprocess
    for stage in chosen:
        target = course / "source" / stage.name
        salt = _clinic_salt(target)
        if target.exists():
            shutil.rmtree(target)
        write(stage.text, target / stage.notebook)
        for extra in stage.extras():  # data files a stage ships beside its text
            shutil.copy2(extra, target / extra.name)
        if stage.name.startswith(CLINIC_STAGE):
            # The course's own salt for the clinic's draws (kept when the course is rewritten):
            # released with the notebook, so that each learner's notebook draws their cases.
            (target / "clinic.json").write_text(json.dumps({"salt": salt}) + "\n", encoding="utf-8")
    return chosen


CLINIC_STAGE = "08-"


def _clinic_salt(target: Path) -> str:
    try:
        return json.loads((target / "clinic.json").read_text(encoding="utf-8"))["salt"]
    except (OSError, ValueError, KeyError, TypeError):
        return secrets.token_hex(8)


def init_course(course: Path) -> list[Stage]:
    """``mcp-lab course init DIR``: a new nbgrader course; never over an existing one."""
    if (course / "source").exists() or (course / "nbgrader_config.py").exists():
        raise FileExistsError(f"{course} already holds a course (source/ or nbgrader_config.py); choose a new folder")
    return write_course(course)


def nbgrader_env() -> dict[str, str]:
    """nbgrader runs ``alembic`` from its own environment: put that environment's bin first on PATH."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def nbgrader_api(course: Path) -> Any:
    """nbgrader's own API (what its commands run) on the course at ``course``."""
    os.environ["PATH"] = nbgrader_env()["PATH"]
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    settings_ = config(course)
    return NbGraderAPI(coursedir=CourseDirectory(config=settings_), config=settings_)


def generate(course: Path, names: list[str]) -> None:
    """``nbgrader generate_assignment`` for each name, in this process (one start-up for all)."""
    if not names:
        return
    api = nbgrader_api(course)
    for name in names:
        result = api.generate_assignment(name, force=True, create=True)
        if not result.get("success"):
            raise RuntimeError(f"nbgrader generate_assignment {name} failed:\n{result.get('log', '')[-3000:]}")


def release(private: Path = PRIVATE_COURSE) -> Path:
    """Bring the private course's release up to date with ``notebooks/``; return its release folder.

    One process at a time (a lock file): two ``mcp-lab lab`` started together (two terminals, two
    test workers) would otherwise run nbgrader on the same course at once."""
    stamps = private / "stamps"
    stamps.mkdir(parents=True, exist_ok=True)
    with open(private / ".release.lock", "w") as lock:
        if fcntl is not None:
            fcntl.flock(lock, fcntl.LOCK_EX)
        stale = [s for s in stages() if _stamp(stamps, s) != s.digest() or not (private / "release" / s.name).exists()]
        if stale:
            write_course(private, stale)
            generate(private, [s.name for s in stale])
            for stage in stale:
                (stamps / stage.name).write_text(stage.digest(), encoding="utf-8")
    return private / "release"


def _stamp(stamps: Path, stage: Stage) -> str:
    path = stamps / stage.name
    return path.read_text(encoding="utf-8") if path.exists() else ""


def sync_workspace(workspace: Path = WORKSPACE, private: Path = PRIVATE_COURSE) -> list[tuple[str, str]]:
    """Copy each released stage the workspace lacks; never touch one it has. Returns (stage, what)."""
    released = release(private)
    workspace.mkdir(parents=True, exist_ok=True)
    config = workspace / "nbgrader_config.py"
    config.write_text(workspace_config_text(), encoding="utf-8")  # course machinery, not learner work
    done = []
    for stage in stages():
        target = workspace / stage.name
        if target.exists():
            done.append((stage.name, "kept"))
        else:
            shutil.copytree(released / stage.name, target)
            done.append((stage.name, "added"))
    return done


def workspace_config_text() -> str:
    """The learner's nbgrader config: the Validate button uses the course's timeouts and kernel."""
    return f"""# Written by `make lab` (MCP Wire Lab): settings for the nbgrader Validate button.
c = get_config()  # noqa: F821
c.Execute.timeout = {CELL_TIMEOUT}
c.Execute.interrupt_on_timeout = True
c.Execute.kernel_name = "python3"
"""
