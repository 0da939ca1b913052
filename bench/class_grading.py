"""A class graded by ``mcp-lab course grade --jobs N``: the measured rate, and the projection for 200 x 10.

    .venv/bin/python bench/class_grading.py [--students 8] [--jobs 4] [--stages 00,01]
    .venv/bin/python bench/class_grading.py --jobs 2 --scheduler tcp://127.0.0.1:8786 [--tasks 1000]

It fakes a class from the answer key: for every stage, ``--students`` submissions that cycle
through the answer key, the course's typical bugs (the pipeline's bug rows), a submission whose
server hangs, and the untouched release; then grades each stage with ``--jobs`` at a time and
prints the submissions per minute, and what 200 learners x 10 stages would take at that rate.
Printed, not asserted (the machine is shared). Target (issue 16): at most an hour on two cores.

With ``--scheduler ADDRESS`` every stage is graded twice, side by side in one run: ``--jobs`` here,
then on the Dask cluster (issue 32); it prints both rates and their ratio, the CPU one submission
costs (the grading processes and the learners' code, measured on the process trees: here, and on
every worker), the instructor's machine's own CPU while the cluster grades, Dask's overhead per task
(``--tasks`` trivial tasks), and what 26,000 submissions need. Target: a loopback cluster of two
workers within 15% of ``--jobs 2``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from course_support import api, handed_in, notebook_text, solved_files, submit  # noqa: E402
from test_course_pipeline import BUGS, HANGS  # noqa: E402

from grader.course import build  # noqa: E402
from grader.grading import secret  # noqa: E402
from grader.grading.command import grade_stage  # noqa: E402

CLASS = 200
BIG = 26_000  # 2,000 learners x 13 stages (issue 32)
CORE_END = "10"  # stages before this one are the core course (00 to 09); 10 to 12 are the advanced track


def fake_class(course: Path, stage: build.Stage, students: int) -> None:
    kinds = ["key", *(b[2] for b in BUGS if b[0] == stage.name)]
    if stage.name in HANGS:
        kinds.append(HANGS[stage.name])
    kinds.append("untouched")
    release = (course / "release" / stage.name / stage.notebook).read_text(encoding="utf-8")
    for n in range(students):
        student = f"learner-{n:03d}"
        kind = kinds[n % len(kinds)]
        if kind == "untouched":
            submit(course, student, stage, release, handed_in(stage, course))
        else:
            replace = None if kind == "key" else kind
            text = notebook_text(stage, replace, course=course, student=student)
            submit(course, student, stage, text, solved_files(stage, course))


def tree_cpu(pid: int = 0) -> float:
    """CPU seconds of a process and everything under it: the live ones' own, and what each has reaped
    (a grading process's learners, the fork server's grading processes)."""
    import psutil

    try:
        top = psutil.Process(pid or os.getpid())
        total = 0.0
        for process in [top, *top.children(recursive=True)]:
            times = process.cpu_times()
            total += times.user + times.system + times.children_user + times.children_system
        return total
    except psutil.Error:
        return 0.0


def machine_cpu() -> float:
    """CPU seconds this machine has been busy (every process: on a shared machine, an upper bound)."""
    import psutil

    times = psutil.cpu_times()
    return sum(times) - times.idle - getattr(times, "iowait", 0.0)


def worker_cpu(client: Any) -> float:
    """CPU seconds of every worker's process tree (its fork server and grading processes included)."""
    return sum(client.run(tree_cpu).values())


def noop(n: int) -> int:
    return n


def overhead(client: Any, tasks: int) -> float:
    """Seconds per trivial task, ``tasks`` of them submitted at once: Dask's own cost per submission."""
    started = time.monotonic()
    client.gather(client.map(noop, range(tasks), pure=False))
    return (time.monotonic() - started) / tasks


def side_by_side(course: Path, stages: list[build.Stage], args: argparse.Namespace) -> None:
    """Every stage graded here with ``--jobs``, then on the cluster: rates, ratio, CPU, and the projection."""
    from grader.grading.cluster import Scheduler, connect

    where = Scheduler(args.scheduler)
    client = connect(where)
    workers = len(client.scheduler_info(n_workers=-1)["workers"])
    print(f"{'stage':<22} {'subs':>5} {'local s':>8} {'cluster s':>9} {'ratio':>6}  (cluster: {workers} workers)")
    local_total = cluster_total = local_cpu = cluster_cpu = own_cpu = busy = 0.0
    count = 0
    for stage in stages:
        before, machine = tree_cpu(), machine_cpu()
        started = time.monotonic()
        rows = grade_stage(course, stage.name, args.jobs, again=True)
        here = time.monotonic() - started
        local_cpu += tree_cpu() - before
        busy += machine_cpu() - machine
        before, before_workers = tree_cpu(), worker_cpu(client)
        started = time.monotonic()
        remote = grade_stage(course, stage.name, args.jobs, scheduler=where, again=True)
        there = time.monotonic() - started
        own_cpu += tree_cpu() - before
        cluster_cpu += worker_cpu(client) - before_workers
        failed = sum(r.status != "graded" for r in rows) + sum(r.status != "graded" for r in remote)
        note = f"  ({failed} grading failed)" if failed else ""
        print(f"{stage.name:<22} {len(rows):>5} {here:8.1f} {there:9.1f} {here / there:6.2f}{note}")
        local_total += here
        cluster_total += there
        count += len(rows)
    print(f"{'all':<22} {count:>5} {local_total:8.1f} {cluster_total:9.1f} {local_total / cluster_total:6.2f}")
    print(
        f"throughput: --jobs {args.jobs} {60 * count / local_total:.1f}/min, the cluster "
        f"{60 * count / cluster_total:.1f}/min: the cluster at {100 * local_total / cluster_total:.0f}% of --jobs"
    )
    per_local, per_worker, per_own = local_cpu / count, cluster_cpu / count, own_cpu / count
    print(
        f"CPU per submission: {per_local:.1f} s graded here (grading and nbgrader), {per_worker:.1f} s on a "
        f"worker; the instructor's machine {per_own:.2f} s while the cluster grades; the whole machine was busy "
        f"{busy / count:.1f} s per submission graded here (an upper bound: other work included)"
    )
    per_task = overhead(client, args.tasks)
    print(f"Dask's overhead: {1000 * per_task:.1f} ms a task ({args.tasks} trivial tasks)")
    client.close()
    # A worker thread grades one submission at a time, and most of that time waits on the learner's
    # processes (time-outs, replays): the slot time, not the CPU, sets how many threads a core carries.
    slot = cluster_total * workers / count
    print(
        f"per submission: {slot:.1f} s of a worker thread, {per_worker:.1f} s of its CPU; the instructor's machine "
        f"{per_own:.2f} s of CPU (reading, sealing, nbgrader's autograde: one writer, one at a time)"
    )
    floor = BIG * per_own / 3600
    for threads in (32, 128, 512):
        hours = max(BIG * slot / threads / 3600, floor)
        print(
            f"{BIG:,} submissions on {threads} worker threads ({threads * per_worker / slot:.0f} cores busy): "
            f"about {hours:.1f} h; {BIG * per_worker / 3600:.0f} core-hours on the workers, {floor:.1f} h of one "
            "core on the instructor's machine (the floor, whatever the cluster)"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=8, help="submissions per stage (default 8)")
    parser.add_argument("--jobs", type=int, default=4, help="mcp-lab course grade --jobs (default 4)")
    parser.add_argument("--stages", default="", help="only these stages, by number: 00,01 (default: all)")
    parser.add_argument("--scheduler", default="", metavar="ADDRESS", help="also grade on this Dask cluster")
    parser.add_argument("--tasks", type=int, default=1000, help="trivial tasks for Dask's overhead (default 1000)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="class-grading-") as tmp:
        course = Path(tmp) / "course"
        build.init_course(course)
        secret.create(course)
        nbgrader = api(course)
        stages = [s for s in build.stages() if not args.stages or s.name[:2] in args.stages.split(",")]
        for stage in stages:
            assert nbgrader.generate_assignment(stage.name, force=True, create=True)["success"]
            fake_class(course, stage, args.students)
        if args.scheduler:
            side_by_side(course, stages, args)
            return 0
        print(f"{'stage':<22} {'submissions':>11} {'seconds':>8} {'per minute':>10}")
        total = core = 0.0
        for stage in stages:
            started = time.monotonic()
            rows = grade_stage(course, stage.name, args.jobs)
            took = time.monotonic() - started
            total += took
            core += took if stage.name < CORE_END else 0.0
            failed = sum(r.status != "graded" for r in rows)
            note = f"  ({failed} grading failed)" if failed else ""
            print(f"{stage.name:<22} {len(rows):>11} {took:8.1f} {60 * len(rows) / took:10.1f}{note}")
        count = args.students * len(stages)
        rate = count / total
        projection = CLASS * len(stages) / rate
        print(f"{'all':<22} {count:>11} {total:8.1f} {60 * rate:10.1f}")
        print(
            f"projection for {CLASS} learners x {len(stages)} stages at --jobs {args.jobs}: "
            f"{projection / 60:.0f} min ({projection / 3600:.2f} h)"
        )
        ten = [s for s in stages if s.name < CORE_END]
        if ten:  # the class: the ten stages of the core course (00 to 09)
            per = core / (args.students * len(ten))
            minutes = CLASS * len(ten) * per / 60
            print(f"projection for {CLASS} learners x the {len(ten)} core stages (00-09): {minutes:.0f} min")
    return 0


if __name__ == "__main__":
    sys.exit(main())
