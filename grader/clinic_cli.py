"""``mcp-lab clinic``: the learner's view of the gallery, neutral case names and symptoms only.

The cases are the ones the stage 08 notebook gives this learner: drawn by
:mod:`grader.course.clinic` from the seed in ``clinic_seed.txt`` (in the folder the command runs
in, the notebook's folder) or from ``--seed``. Nothing here names an exhibit or its defect; the
instructor's view is ``mcp-lab gallery list --reveal``.

    $ mcp-lab clinic list --seed k3f9
    case-01  Host log: 'Server transport closed unexpectedly', then ...
    ...
    $ mcp-lab check -- mcp-lab clinic run case-01 --seed k3f9
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from .cli import UsageError


def learner_seed(given: str | None, folder: Path | None = None) -> str:
    """``--seed``, else the seed file in ``folder`` (the cwd); never made here, only read."""
    from .course.clinic import SEED_FILE

    if given is not None:
        if not given.strip():
            raise UsageError("mcp-lab clinic: --seed is empty")
        return given.strip()
    path = (Path.cwd() if folder is None else folder) / SEED_FILE
    seed = path.read_text(encoding="utf-8").strip() if path.is_file() else ""
    if not seed:
        raise UsageError(
            f"mcp-lab clinic: no {SEED_FILE} in {path.parent}: run it in your stage 08 folder "
            "(the notebook makes the seed) or give --seed SEED"
        )
    return seed


def clinic_command(args: argparse.Namespace) -> int:
    from .course import clinic

    seed = learner_seed(args.seed)
    cases = clinic.cases(seed)
    again = f" --seed {seed}" if args.seed is not None else ""
    if args.clinic_command == "list":
        for name, case in cases.items():
            print(f"{name}  {case.symptom}")
        print(f"\nDiagnose one: mcp-lab check -- mcp-lab clinic run case-01{again}")
        return 0
    if args.case not in cases:
        first, last = min(cases), max(cases)
        raise UsageError(f"mcp-lab clinic run: there is no case {args.case!r}; your cases are {first} to {last}")
    command = clinic.command(args.case, seed)
    # Become the case's server: same pid, same pipes, so the caller talks to it directly.
    os.execv(command[0], command)
