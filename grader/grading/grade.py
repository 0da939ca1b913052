"""One submission graded: every graded cell's public and hidden checks, run against a scratch copy.

The verdict of each cell is decided here, in the grader's process, by the course's own checks; the
learner's code runs only in sandboxed children (:mod:`.sandbox`) that see a fresh copy of their
files for each cell. Nothing the learner wrote in their notebook's other cells runs at all.

    $ python -m grader.grading.grade COURSE 02-messages STUDENT [SLOT]    # prints the verdicts as JSON

Three steps, so that the middle one can run anywhere: :func:`prepare` reads the submission and the
stage into a :class:`~grader.grading.job.Job` (the instructor's machine), :func:`grade_job` grades
it with no course folder (a forked process here, or a Dask worker: :mod:`.cluster`), :func:`finish`
scrubs the course secret from what came back (the instructor's machine again).

A cell is ``passed``, ``failed`` (the checks found a broken rule: the text says which) or
``error`` (grading itself failed or ran out of time: never the learner's zero without a flag).
"""

from __future__ import annotations

import base64
import errno
import hashlib
import hmac
import json
import os
import shutil
import sys
import tempfile
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from grader.checker import schema_formats
from grader.course import clinic
from grader.course.checks import Cell, cells, preload, run
from grader.course.expect import Failure
from grader.course.work import Work
from reference import database

from . import answers, flags, hidden, likeness, plainfiles, refusals, sandbox, secret, version
from .job import Job
from .submission import Submission

CELL_LIMIT = 90.0  # seconds for one part of a cell, its public or its hidden checks (each wait is bounded far below)
CELL_JOBS = 4  # cells of one submission graded at once, when others are graded beside it (a class)
PART_JOBS = 6  # parts of cells graded at once, when the submission is graded alone (most of it is waiting)


@dataclass
class CellVerdict:
    grade_id: str
    points: float
    status: str  # "passed", "failed" or "error"
    text: str = ""  # the failure as the learner reads it, or what went wrong in grading
    seconds: float = 0.0


@dataclass
class Verdicts:
    student: str
    stage: str  # "02-messages"
    digest: str = ""  # of the graded files (Submission.digest)
    isolation: str = ""
    cells: dict[str, CellVerdict] = field(default_factory=dict)
    flags: list[dict[str, str]] = field(default_factory=list)
    seconds: float = 0.0
    refused: bool = False  # not plain files: never run, and never handed to nbgrader (it follows links)
    likeness: dict[str, str] = field(default_factory=dict)  # normalised answers' fingerprints (likeness.py)
    code: str = ""  # the digest of the grading code that judged it (:mod:`.version`)
    seal: str = ""  # an HMAC of the rest, keyed by the course secret (:meth:`sealed`)

    def as_json(self) -> str:
        return json.dumps(asdict(self), indent=1, ensure_ascii=False)

    def _mac(self, key: bytes) -> str:
        sealed = {**asdict(self), "seal": ""}
        if not self.code:  # a file sealed before verdicts carried the code's digest still holds
            del sealed["code"]
        body = json.dumps(sealed, sort_keys=True, ensure_ascii=False).encode()
        return hmac.new(secret.Keys(key, self.student, self.stage).digest("verdicts"), body, hashlib.sha256).hexdigest()

    def sealed(self, key: bytes) -> Verdicts:
        """These verdicts with their seal: a verdict file edited afterwards no longer matches it."""
        self.seal = self._mac(key)
        return self

    def seal_holds(self, key: bytes) -> bool:
        return bool(self.seal) and hmac.compare_digest(self.seal, self._mac(key))

    @classmethod
    def from_json(cls, text: str) -> Verdicts:
        data = json.loads(text)
        data["cells"] = {k: CellVerdict(**v) for k, v in data["cells"].items()}
        known = {f.name for f in fields(cls)}  # a file written by another version of the grader
        return cls(**{k: v for k, v in data.items() if k in known})


def graded_cells(course: Path, stage_name: str, every: bool = False) -> dict[str, float]:
    """The graded cells of the stage and their points, from the instructor's source notebook
    (``every``: all the cells nbgrader knows by an id, the solution and locked ones too)."""
    path = course / "source" / stage_name / f"{stage_name}.ipynb"
    notebook = json.loads(path.read_text(encoding="utf-8"))
    found = {}
    for cell in notebook["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if (meta.get("grade") and cell.get("cell_type") == "code") or (every and meta.get("grade_id")):
            found[meta["grade_id"]] = float(meta.get("points", 0))
    return found


def release_cells(course: Path, stage_name: str) -> frozenset[str]:
    """The text of the release's own code cells: the lesson's examples, as the learner got them."""
    path = course / "release" / stage_name / f"{stage_name}.ipynb"
    try:
        notebook = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return frozenset()
    sources = (c.get("source", "") for c in notebook.get("cells", []) if c.get("cell_type") == "code")
    return frozenset(("".join(s) if isinstance(s, list) else s).strip() for s in sources)


@dataclass
class Part:
    """One part of a graded cell (its public or its hidden checks) and the folder of its own copy."""

    cell: Cell
    points: float
    folder: Path


def cell_parts(stage: str, grade_id: str, points: float, keys: secret.Keys | secret.Draws, scratch: Path) -> list[Part]:
    """A cell's parts in the order their failures count: the public checks, then the hidden ones.

    >>> keys = secret.Keys(b"a course secret", "learner", "06")
    >>> [part.folder.name for part in cell_parts("06", "test_timeouts", 2.0, keys, Path("scratch"))]
    ['test_timeouts.1', 'test_timeouts.2']
    """
    public = cells(stage).get(grade_id)
    if public is None:
        raise LookupError(f"stage {stage} has no checks for the cell {grade_id}")
    extra = hidden.for_stage(stage).get(grade_id)
    if extra is None:
        return [Part(public, points, scratch / grade_id)]
    secret_values = Cell(stage, grade_id, public.says, lambda w: extra(w, keys.rng(grade_id)))
    # Numbered, not named: without bubblewrap the learner's code sees its folder's path, and nothing
    # in it may tell the hidden checks' run from the public one's.
    return [Part(public, points, scratch / f"{grade_id}.1"), Part(secret_values, points, scratch / f"{grade_id}.2")]


DISK_FULL = (
    f"your code filled the disk grading gives a submission ({sandbox.LIMITS.disk >> 20} MiB, all its cells "
    "together): write only what the stage asks for, and nothing in a loop without end"
)


def grade_part(submission: Submission, part: Part, slot: int, salt: str = "") -> tuple[CellVerdict, list[flags.Flag]]:
    """One part of a cell, in a fresh copy of the learner's files, bounded by :data:`CELL_LIMIT`."""
    grade_id, points, folder = part.cell.grade_id, part.points, part.folder
    if folder.exists():
        shutil.rmtree(folder)
    try:
        submission.write(folder / "work")
    except OSError as error:
        if error.errno != errno.ENOSPC:
            raise
        shutil.rmtree(folder, ignore_errors=True)
        return CellVerdict(grade_id, points, "failed", DISK_FULL), []
    channel = refusals.Channel(folder / "guard.pipe")
    runner = sandbox.detect(slot)
    verdict = CellVerdict(grade_id, points, "error", "grading did not start")
    started = time.monotonic()
    box: dict[str, Any] = {}

    def go() -> None:
        try:
            with Work(
                folder / "work",
                submission.stage,
                runner,
                database.ensure_default(),
                guard_pipe=channel.path,
                answers=submission.values,
                student=submission.student,
                salt=salt,
            ) as work:
                box["work"] = work
                run(part.cell, work)
            box["status"] = ("passed", "")
        except Failure as failure:
            box["status"] = ("failed", failure.text())
        except RecursionError:  # the grader's own code nests nothing this deep: the learner's data did
            box["status"] = ("failed", "your answer or your code's reply nests too deeply to be read (RecursionError)")
        except Exception as error:
            if isinstance(error, OSError) and error.errno == errno.ENOSPC:  # the learner's code filled the disk
                box["status"] = ("failed", DISK_FULL)
                return
            box["status"] = ("error", "grading failed (not a verdict on your code):\n" + traceback.format_exc(limit=8))

    thread = threading.Thread(target=go, name=f"grade-{folder.name}", daemon=True)
    thread.start()
    thread.join(CELL_LIMIT)
    if thread.is_alive():
        work = box.get("work")
        if work is not None:
            work.close()  # ends the learner's processes; the checks' own waits then end too
        thread.join(10)
        verdict.text = f"grading did not finish within {CELL_LIMIT:.0f} s (a time-out of the grader, not a zero)"
    elif "status" in box:
        verdict.status, verdict.text = box["status"]
    verdict.seconds = round(time.monotonic() - started, 2)
    channel.close()
    refused = flags.refused(channel.lines())
    shutil.rmtree(folder, ignore_errors=True)  # the part's copy, off the submission's disk, for the next one
    return verdict, refused


def grade_cell(
    submission: Submission,
    grade_id: str,
    points: float,
    keys: secret.Keys | secret.Draws,
    scratch: Path,
    slot: int,
    salt: str = "",
) -> tuple[CellVerdict, list[flags.Flag]]:
    """One cell alone: its parts side by side, and its verdict."""
    return grade_cells(
        submission, {grade_id: cell_parts(submission.stage, grade_id, points, keys, scratch)}, slot, salt
    )[grade_id]


def grade_cells(
    submission: Submission, split: dict[str, list[Part]], slot: int, salt: str = "", alone: bool = True
) -> dict[str, tuple[CellVerdict, list[flags.Flag]]]:
    """Cells by their parts (:func:`cell_parts`): each cell's verdict and the refusals of its parts.

    Graded alone, a cell's public and hidden checks run side by side too, each in a copy of its own:
    the slowest cells are those that wait out a timeout or replay traffic twice. Beside other
    submissions the cores are busy already, and a second copy of each cell would only cost CPU: its
    parts run one after the other. A part whose cell has already failed is not run (a hang waits once).
    """
    failed = {grade_id: threading.Event() for grade_id in split}  # a part of the cell did not pass

    def one(task: list[Part]) -> list[tuple[CellVerdict, list[flags.Flag]]]:
        done = []
        for part in task:
            grade_id = part.cell.grade_id
            if failed[grade_id].is_set():  # its verdict is decided already
                done.append((CellVerdict(grade_id, part.points, "failed", "not run: the cell failed"), []))
                continue
            done.append(grade_part(submission, part, slot, salt))
            if done[-1][0].status != "passed":
                failed[grade_id].set()
        return done

    tasks = [[part] for cell in split.values() for part in cell] if alone else list(split.values())
    with ThreadPoolExecutor(max_workers=PART_JOBS if alone else CELL_JOBS) as pool:
        graded = iter(outcome for done in pool.map(one, tasks) for outcome in done)
        outcomes = {grade_id: [next(graded) for _ in cell] for grade_id, cell in split.items()}
    return {
        grade_id: (
            verdict_of(grade_id, cell[0].points, outcomes[grade_id]),
            [f for _, r in outcomes[grade_id] for f in r],
        )
        for grade_id, cell in split.items()
    }


def verdict_of(grade_id: str, points: float, graded: list[tuple[CellVerdict, list[flags.Flag]]]) -> CellVerdict:
    """A cell's verdict from its parts' (in :func:`cell_parts`' order): the first that did not pass
    decides, as if they had run one after the other; the cell took as long as its slowest part."""
    verdicts = [verdict for verdict, _ in graded]
    first = next((v for v in verdicts if v.status != "passed"), verdicts[0])
    return CellVerdict(grade_id, points, first.status, first.text, max(v.seconds for v in verdicts))


def grade(course: Path, stage_name: str, student: str, slot: int = 0, alone: bool = True) -> Verdicts:
    """Grade ``student``'s submission of ``stage_name`` in ``course`` (``alone``: no other submission
    is graded beside it, so its cells' parts may have the machine to themselves): :func:`prepare`,
    :func:`grade_job` and :func:`finish`, here in one process."""
    return finish(grade_job(prepare(course, stage_name, student), slot, alone), secret.load(course))


@dataclass
class Stage:
    """What every submission of a stage shares, read once from the course folder."""

    points: dict[str, float]
    release: frozenset[str]
    handed: dict[str, str]
    salt: str
    code: str = ""  # the digest of the grading code (:mod:`.version`), read once for the stage

    @classmethod
    def read(cls, course: Path, stage_name: str) -> Stage:
        return cls(
            graded_cells(course, stage_name),
            release_cells(course, stage_name),
            handed_texts(course, stage_name),
            clinic.salt(course / "source" / stage_name),  # the instructor's, never the submission's
            version.code_digest(),
        )


def prepare(course: Path, stage_name: str, student: str, stage: Stage | None = None, key: bytes = b"") -> Job:
    """The instructor's side: read ``student``'s submission and what grading it needs into a :class:`Job`
    (the submission's own derived keys, never the course secret ``key``)."""
    stage = stage or Stage.read(course, stage_name)
    submission, refused = read_submission(course, stage_name, student)
    draws = secret.Keys(key or secret.load(course), student, stage_name[:2]).draws()
    return Job(
        submission,
        stage_name,
        stage.points,
        refused,
        stage.release,
        stage.handed,
        stage.salt,
        draws,
        stage.code,
    )


def grade_job(job: Job, slot: int = 0, alone: bool = True) -> Verdicts:
    """Grade one submission from its :class:`Job` alone (no course folder, no course secret): the one
    grading function, in a process forked on the instructor's machine or on a Dask worker."""
    started = time.monotonic()
    schema_formats.leave_out()  # no check uses "format" (a second of CPU at jsonschema's import)
    stage, stage_name, submission, points = job.stage, job.stage_name, job.submission, job.points
    found = list(job.refused)
    result = Verdicts(job.student, stage_name, submission.digest(), sandbox.detect(slot).isolation)
    result.code = job.code  # a worker whose own code differs refuses before it gets here (:mod:`.cluster`)
    result.likeness = (
        {} if submission.problem else likeness.fingerprints(submission_texts(submission), submission.values, job.handed)
    )
    result.refused = bool(found)
    if submission.problem:
        if not found:
            found.append(
                flags.Flag("not-submitted" if "no " in submission.problem else "unreadable", submission.problem)
            )
        for grade_id, most in points.items():
            result.cells[grade_id] = CellVerdict(grade_id, most, "failed", submission.problem)
    else:
        found += [flags.Flag("tampering", note) for note in submission.repaired]
        texts = submission_texts(submission)
        found += flags.scan(stage, texts)
        found += flags.scan_notebook(stage, submission.notebook, set(points), job.release)
        keys = secret.Draws(job.draws)
        with tempfile.TemporaryDirectory(prefix=f"mcp-lab-grade-{stage}-{os.getpid()}-") as tmp:
            scratch = Path(tmp)
            # Private to the grader; without bubblewrap the submission's user must pass through to its copy.
            scratch.chmod(0o711 if isinstance(sandbox.detect(slot), sandbox.Unsandboxed) else 0o700)
            held = sandbox.hold_disk(scratch)
            result.isolation += (
                f"; disk per submission held by a tmpfs of {sandbox.LIMITS.disk >> 20} MiB"
                if held
                else "; no disk quota per submission (it needs root), only a file size limit"
            )
            try:
                # The cells are independent (each gets a fresh copy) and spend their time waiting on the
                # learner's processes: graded side by side, a submission costs about its slowest cell.
                preload()  # what the cells import lazily, once, before they run side by side
                broken = answers.malformed(stage, submission.values)

                split = {
                    grade_id: cell_parts(stage, grade_id, most, keys, scratch)
                    for grade_id, most in points.items()
                    if not (broken.get(grade_id) or broken.get("*"))
                }
                graded = grade_cells(submission, split, slot, job.salt, alone)
                for grade_id, most in points.items():
                    why = broken.get(grade_id) or broken.get("*")
                    if why:  # an answer the checks cannot read: a 0 that says why, not a crash of the grader
                        result.cells[grade_id] = CellVerdict(grade_id, most, "failed", why)
                        continue
                    verdict, refused = graded[grade_id]
                    result.cells[grade_id] = verdict
                    found += refused
                    if verdict.status == "error":
                        found.append(flags.Flag("grading-failed", f"{grade_id}: {verdict.text.splitlines()[0]}"))
            finally:
                if held:
                    sandbox.free_disk(scratch)
    result.flags = [f.as_dict() for f in dict.fromkeys(found)]
    result.seconds = round(time.monotonic() - started, 2)
    return result


def finish(result: Verdicts, key: bytes) -> Verdicts:
    """The instructor's side again: the course secret scrubbed from what came back (a flag where it was)."""
    scrubbed = [f.as_dict() for f in scrub(result, key)]
    result.flags += [f for f in scrubbed if f not in result.flags]
    return result


def submission_texts(submission: Submission) -> dict[str, str]:
    """The learner's files as text: the notebook's modules and the files handed in beside it."""
    return {**submission.modules, **{k: v.decode("utf-8", "replace") for k, v in submission.files.items()}}


def handed_texts(course: Path, stage_name: str) -> dict[str, str]:
    """The learner's files as the release handed them out (stubs, stage 09's servers): what an
    answer's own part is measured against (:func:`likeness.fingerprints`)."""
    release = course / "release" / stage_name
    if not release.is_dir():
        return {}
    return submission_texts(Submission.read("", stage_name[:2], release, f"{stage_name}.ipynb"))


def read_submission(course: Path, stage_name: str, student: str) -> tuple[Submission, list[flags.Flag]]:
    """The submission as grading reads it: refused, with its flags, unless it is plain files
    (:mod:`.plainfiles`); never a link followed."""
    folder = course / "submitted" / student / stage_name
    notebook = f"{stage_name}.ipynb"
    refused = plainfiles.refusals(course, folder) if folder.is_dir() or folder.is_symlink() else []
    if refused:
        submission = Submission(student, stage_name[:2], folder / notebook)
        whys = "; ".join(why for _, why in refused)
        submission.problem = f"the submission was refused before grading (it must be plain files): {whys}"
        return submission, [flags.Flag(kind, why) for kind, why in refused]
    return Submission.read(student, stage_name[:2], folder, notebook), []


SECRET_SHOWN = "[the course secret]"


def scrub(result: Verdicts, key: bytes) -> list[flags.Flag]:
    """Take the course secret out of every verdict's text (the learner's output is quoted there); a
    flag for each cell where it was."""
    found = []
    # The secret as the file holds it (hex) and as a program that read it would most likely send it:
    # with a sandbox the file is out of reach; this is for a grading with --unsafe-no-sandbox.
    text = key.hex().encode()
    # An encoding of anything that starts with the secret starts with the encoding of its whole groups
    # (3 bytes a group in base64, 5 in base32), whatever follows it (a newline, more text).
    forms = {key.hex(), key.hex().upper()} | {
        encode(raw[: len(raw) // group * group]).decode()
        for raw in (key, text)
        for encode, group in ((base64.b64encode, 3), (base64.urlsafe_b64encode, 3), (base64.b32encode, 5))
    }
    for verdict in result.cells.values():
        if any(form in verdict.text for form in forms):
            for form in forms:
                verdict.text = verdict.text.replace(form, SECRET_SHOWN)
            found.append(flags.Flag("course-files", f"{verdict.grade_id}: the output held the course secret"))
    return found


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (3, 4):
        print("usage: python -m grader.grading.grade COURSE STAGE STUDENT [SLOT]", file=sys.stderr)
        return 2
    slot = int(args[3]) if len(args) == 4 else 0
    print(grade(Path(args[0]).resolve(), args[1], args[2], slot).as_json())
    return 0


if __name__ == "__main__":
    sys.exit(main())
