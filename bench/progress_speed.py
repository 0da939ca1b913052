"""How long ``mcp-lab progress`` takes on a workspace where every stage is solved.

    .venv/bin/python bench/progress_speed.py

It makes a workspace (``mcp-lab lab --setup-only``), writes each stage's solution into its
notebook (stage 08's answer for this learner's own cases, stage 09's repaired servers), then times
``mcp-lab progress`` twice, and beside it, in the same run, the same checks one stage after
another, each stage's cells one after another (what progress did before its cells shared one
pool). Printed, not asserted: the machine is shared and noisy. Target (issue 16): every stage
in at most 15 s, the same verdicts grading gives, nothing on stderr.
"""

from __future__ import annotations

import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORE_END = "10"  # stages before this one are the core course (00 to 09)
sys.path.insert(0, str(ROOT / "tests"))

from course_support import notebook_text  # noqa: E402  (tests/ is no package)

from grader.course import build, clinic  # noqa: E402
from grader.course.checks import preload  # noqa: E402
from grader.course.progress import stage_progress  # noqa: E402
from grader.grading.clinic_key import solution_value  # noqa: E402
from grader.grading.repairs import apply_solution  # noqa: E402


def solved_workspace(workspace: Path) -> None:
    mcp_lab = [sys.executable, "-m", "grader.cli"]
    subprocess.run([*mcp_lab, "lab", "--setup-only", "--workspace", str(workspace)], check=True, capture_output=True)
    for stage in build.stages():
        text = notebook_text(stage)
        if stage.name.startswith("08"):  # this learner's own cases, as the learner would write them
            notebook = json.loads(text)
            value = solution_value(clinic.salt(workspace / stage.name), clinic.student())
            for cell in notebook["cells"]:
                solution = cell.get("metadata", {}).get("nbgrader", {}).get("solution")
                if solution and "diagnosis" in "".join(cell["source"]):
                    cell["source"] = f"diagnosis = {value!r}\n"
            text = json.dumps(notebook)
        (workspace / stage.name / stage.notebook).write_text(text, encoding="utf-8")
        if stage.name.startswith("09"):
            apply_solution(workspace / stage.name)


def cpu() -> float:
    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    return sum(u.ru_utime + u.ru_stime for u in usage)


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="mcp-lab-bench-progress-") as tmp:
        workspace = Path(tmp) / "workspace"
        solved_workspace(workspace)
        runs = []
        for _ in range(2):
            started, spent = time.monotonic(), cpu()
            done = subprocess.run(
                [sys.executable, "-m", "grader.cli", "progress", "--workspace", str(workspace)],
                capture_output=True,
                text=True,
            )
            runs.append((time.monotonic() - started, cpu() - spent))
            total = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else "(no output)"
            print(
                f"mcp-lab progress: {runs[-1][0]:5.1f} s wall, {runs[-1][1]:5.1f} s CPU; {total}; stderr: "
                f"{len(done.stderr)} characters"
            )
        # The core course alone (stages 00 to 09; the advanced track's notebooks not there yet).
        core = Path(tmp) / "core"
        shutil.copytree(workspace, core)
        for stage in build.stages():
            if stage.name >= CORE_END:
                (core / stage.name / stage.notebook).unlink()
        started, spent = time.monotonic(), cpu()
        done = subprocess.run(
            [sys.executable, "-m", "grader.cli", "progress", "--workspace", str(core)], capture_output=True, text=True
        )
        total = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else "(no output)"
        print(
            f"the ten core stages: {time.monotonic() - started:5.1f} s wall, {cpu() - spent:5.1f} s CPU; {total}; "
            f"stderr: {len(done.stderr)} characters"
        )
        preload()
        started, spent = time.monotonic(), cpu()
        for stage in build.stages():
            stage_progress(workspace / stage.name)
        serial = time.monotonic() - started
        print(f"one cell at a time:  {serial:5.1f} s wall, {cpu() - spent:5.1f} s CPU")
        best = min(wall for wall, _ in runs)
        print(f"progress / one at a time: {best / serial:.2f} ({len(build.stages())} stages)")
        print("target (issue 16): the ten core stages in at most 15 s")


if __name__ == "__main__":
    main()
