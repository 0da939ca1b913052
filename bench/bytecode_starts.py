"""Benchmark: the CPU a Python start costs with the project's bytecode saved, and without it.

Where ``PYTHONDONTWRITEBYTECODE`` is set (CI, this machine, some shells) Python saves nothing it
compiles. Two kinds of process paid for that again at every start, and a test run starts thousands:

- **project**: a server of the course (``reference.server`` and the clinic's server imported), from
  a copy of ``reference/`` and ``grader/`` with its ``__pycache__`` (``make bytecode``) and from one
  without;
- **runtime**: a learner's process under grading (``python -S``, the stage's runtime on its path:
  the guard, the harness, the reference modules), from a runtime built with its bytecode
  (:func:`grader.course.runtime.build`) and from the same runtime without it.

Each start is a real child process; its CPU (user + system) is read from ``wait4``. The two
sides of each pair alternate, start by start, so the machine's noise falls on both alike. It
prints the median and the least of each, and their ratios; a report, not a test (exit 0 whatever it measured).

    $ .venv/bin/python bench/bytecode_starts.py              # 15 starts a side
    $ .venv/bin/python bench/bytecode_starts.py --starts 40 --json
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from a checkout that is not installed
    sys.path.insert(0, str(ROOT))

from grader.course import runtime  # noqa: E402
from grader.grading.confinement import python_executable  # noqa: E402

PROJECT_IMPORTS = "import reference.server, grader.course.clinic.server"
RUNTIME_IMPORTS = "import lab_runtime.guard, lab_runtime.harness, reference.server"


def cpu_ms(argv: Sequence[str], env: dict[str, str], cwd: Path) -> float:
    """The CPU, in ms, of one run of ``argv`` to its end (a failed run is an error: nothing to measure).
    ``cwd`` holds nothing importable: ``-c`` puts it first on the import path."""
    child = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} ended with {child.returncode}")
    return (usage.ru_utime + usage.ru_stime) * 1000


def _env(path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONUNBUFFERED", "PYTHONPATH")}
    return {**env, "PYTHONPATH": str(path), "PYTHONDONTWRITEBYTECODE": "1"}


def pairs(folder: Path) -> dict[str, dict[str, tuple[list[str], dict[str, str]]]]:
    """Each kind of start, with its bytecode and without: (argv, environment)."""
    project = {}
    for side in ("with", "without"):
        copy = folder / f"project-{side}"
        for package in ("reference", "grader"):
            shutil.copytree(ROOT / package, copy / package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        if side == "with":
            compileall.compile_dir(copy, quiet=1)
        project[side] = ([sys.executable, "-c", PROJECT_IMPORTS], _env(copy))
    built = {side: runtime.build("05", folder / f"runtime-{side}") for side in ("with", "without")}
    for cache in built["without"].rglob("__pycache__"):
        shutil.rmtree(cache)
    learner = {side: ([python_executable(), "-S", "-c", RUNTIME_IMPORTS], _env(built[side])) for side in built}
    return {"project": project, "runtime": learner}


def measure(starts: int) -> dict[str, dict[str, float]]:
    with tempfile.TemporaryDirectory(prefix="mcp-lab-bench-") as tmp:
        chosen = pairs(Path(tmp))
        found: dict[str, dict[str, list[float]]] = {k: {"with": [], "without": []} for k in chosen}
        for _ in range(starts):
            for kind, sides in chosen.items():
                for side, (argv, env) in sides.items():
                    found[kind][side].append(cpu_ms(argv, env, Path(tmp)))
    report = {}
    for kind, sides in found.items():
        row: dict[str, float] = {}
        for name, pick in (("median", statistics.median), ("least", min)):
            with_, without = pick(sides["with"]), pick(sides["without"])
            row |= {f"{name}_with_ms": round(with_, 1), f"{name}_without_ms": round(without, 1)}
            row[f"{name}_ratio"] = round(without / with_, 2)
        report[kind] = row
    return report


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=15, help="starts of each side of each kind (default 15)")
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    args = parser.parse_args(argv)
    if args.starts < 1:
        parser.error("--starts must be at least 1")
    report = measure(args.starts)
    if args.json:
        print(json.dumps({"starts": args.starts, "kinds": report}))
        return 0
    print(f"CPU of one start, {args.starts} starts a side, the sides alternating (the least: the cost")
    print("with the least of the machine's noise in it)")
    print(f"{'kind':<9} {'':<7} {'with bytecode':>14} {'without':>10} {'without / with':>15}")
    for kind, row in report.items():
        for name in ("median", "least"):
            with_, without, ratio = (row[f"{name}_{k}"] for k in ("with_ms", "without_ms", "ratio"))
            print(f"{kind:<9} {name:<7} {with_:>11.1f} ms {without:>7.1f} ms {ratio:>14.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
