"""The clinic: gallery servers under neutral names, one set per learner (stage 08).

A learner sees ``case-01`` to ``case-12`` and the symptom a host or user would report, never the
exhibit's name or its explanation. Which exhibit hides behind which case is drawn from a seed kept
in ``clinic_seed.txt`` beside the notebook: made on first use, submitted with the notebook, so the
autograder grades the same cases the learner saw. (In an nbgrader *source* folder no seed file is
written: a release must never carry one, or every learner would get the same cases.)

    >>> key = answer_key("k3f9")
    >>> sorted(key) == [f"case-{i:02d}" for i in range(1, CASES + 1)]
    True
    >>> answer_key("k3f9") == key
    True

Run a case as a server (what ``command`` returns; the seed travels in the command line):

    $ python -m grader.course.clinic run k3f9 case-03
"""

from __future__ import annotations

import random
import runpy
import secrets
import sys
from dataclasses import dataclass
from pathlib import Path

from grader.checker.catalogue import CHECKS
from grader.gallery import Exhibit, get

from .expect import Failure, show
from .lab import CHECK_CALL_TIMEOUT

SEED_FILE = "clinic_seed.txt"
_UNSAVED: dict[str, str] = {}  # folder -> seed, where no seed file may be written
CASES = 12
# Exhibits whose one defect the checker reports as the first failure: each case has one answer.
POOL = [
    "banner",
    "missing_flush",
    "id_not_echoed",
    "answers_notifications",
    "bad_line_ignored",
    "dies_on_bad_line",
    "null_id_as_notification",
    "method_not_found_as_invalid_params",
    "ping_not_empty",
    "version_echoed",
    "capabilities_mismatch",
    "bad_input_schema",
    "nan_in_json",
    "structured_content_missing",
    "ready_notification",
    "wrong_result_shape",
]

# Where a defect truly breaks two rules, either is a right diagnosis (a consequence is not: a
# missing flush also makes initialize time out, but the rule broken is the flush).
ALSO_RIGHT = {
    "banner": {"stdout-silent-at-start"},
    "ready_notification": {"stdout-json-lines"},
    "dies_on_bad_line": {"parse-error"},
}


@dataclass(frozen=True)
class Case:
    name: str  # "case-07"
    symptom: str  # what a host or user sees
    exhibit: Exhibit  # the answer: never shown to the learner


def seed(folder: Path | None = None) -> str:
    """This learner's seed: read from ``clinic_seed.txt`` in ``folder`` (the cwd), made on first use."""
    folder = Path.cwd() if folder is None else folder
    path = folder / SEED_FILE
    if path.is_file():
        value = path.read_text(encoding="utf-8").strip()
        if value:
            return value
    if folder.parent.name == "source":
        # nbgrader's source folder: a release must not carry a seed, so this one lives in memory.
        return _UNSAVED.setdefault(str(folder.resolve()), secrets.token_hex(4))
    value = secrets.token_hex(4)
    path.write_text(value + "\n", encoding="utf-8")
    return value


def cases(seed_value: str) -> dict[str, Case]:
    """The learner's twelve cases, by name."""
    rng = random.Random(f"clinic:{seed_value}")
    chosen = rng.sample(POOL, CASES)
    return {f"case-{i:02d}": Case(f"case-{i:02d}", get(name).symptom, get(name)) for i, name in enumerate(chosen, 1)}


def answer_key(seed_value: str) -> dict[str, str]:
    """Each case's answer: the id of the check its server fails."""
    return {name: case.exhibit.check for name, case in cases(seed_value).items()}


def right_answers(seed_value: str, case: str) -> set[str]:
    exhibit = cases(seed_value)[case].exhibit
    return {exhibit.check, *ALSO_RIGHT.get(exhibit.name, set())}


def command(case: str, seed_value: str | None = None) -> list[str]:
    """The command that runs ``case`` as a stdio server."""
    seed_value = seed_value or seed()
    if case not in cases(seed_value):
        raise Failure("clinic", f"there is no {case!r}: the cases are case-01 to case-{CASES:02d}")
    return [sys.executable, "-m", "grader.course.clinic", "run", seed_value, case]


def case_names() -> list[str]:
    return [f"case-{i:02d}" for i in range(1, CASES + 1)]


def report(argv: list[str]) -> None:
    """Run ``mcp-lab check`` on ``argv`` and print its report."""
    from grader.checker.check import run_check
    from grader.checker.report import write_text

    write_text(run_check(list(argv), call_timeout=CHECK_CALL_TIMEOUT), sys.stdout)


def catalogue() -> None:
    """Print every check id with what must hold."""
    for check in CHECKS.values():
        print(f"{check.id:<26} {check.holds}")


def symptoms(seed_value: str | None = None) -> None:
    """Print the cases and what a host or user reports for each."""
    for name, case in cases(seed_value or seed()).items():
        print(f"{name}  {case.symptom}")


# -- grading ----------------------------------------------------------------------------------------
def _answer(diagnosis: object, case: str) -> object:
    if not isinstance(diagnosis, dict):
        raise Failure("clinic", f"diagnosis must be a dict of case name to check id, got {show(diagnosis)}")
    if case not in diagnosis:
        raise Failure("clinic", f"diagnosis has no answer for {case}", hint=f'add "{case}": "<check id>"')
    return diagnosis[case]


def check_answer_format(diagnosis: object, case: str) -> None:
    """The visible test: the answer is one of the checker's check ids."""
    answer = _answer(diagnosis, case)
    if answer not in CHECKS:
        raise Failure(
            "clinic",
            f"{case}: {show(answer)} is not a check id",
            hint="answer with an id from `mcp-lab check`'s list, e.g. 'stdout-flush' or 'id-echo'",
        )


def check_diagnosis(diagnosis: object, case: str, seed_value: str | None = None) -> None:
    """The hidden test: the answer is the rule this case's server breaks."""
    answer = _answer(diagnosis, case)
    if answer not in right_answers(seed_value or seed(), case):
        raise Failure(
            "clinic",
            f"{case}: {show(answer)} is not the rule this server breaks",
            hint="run mcp-lab check on it and read the first failure; then watch the frames that show it",
        )


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) == 3 and args[0] == "run" and args[2] in cases(args[1]):
        exhibit = cases(args[1])[args[2]].exhibit
        # Run the exhibit in this process (same pid, same pipes, so signals and EOF reach it), under
        # the neutral command line: `ps` shows the case, not the defect's name.
        sys.argv = [sys.argv[0]]
        runpy.run_path(str(exhibit.path), run_name="__main__")
        return 0
    print(f"usage: python -m grader.course.clinic run SEED case-01..case-{CASES:02d}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
