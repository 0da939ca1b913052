"""A class graded on a real Dask cluster (`mcp-lab course grade STAGE --scheduler ADDRESS`).

Every cluster here is real: a `dask scheduler` and `dask worker` processes on 127.0.0.1, started
from the project's venv in sessions of their own (killed by process group when the test ends,
also on failure). The class is small (stage 01, four learners) and graded once on this machine
first: the cluster's table must equal it.

- a worker killed with SIGKILL mid-run costs a retry elsewhere, never a verdict;
- workers that must not grade (another version of the grading code; no bubblewrap) refuse, and
  their submissions end as ``grading failed`` with the reason when no other worker may take them;
- the scheduler stopped mid-run: one error, the verdicts so far kept; the next run grades only the rest;
- over TLS on the loopback, a submission whose grading kills its worker every time ends as
  ``grading failed`` after the scheduler's ``allowed-failures``, and the others are graded.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT
from course_support import api, notebook_text, python_env, submit
from test_course_pipeline import BUGS

from grader.course import build
from grader.grading import secret, version
from grader.grading.cluster import ClusterError, Scheduler
from grader.grading.command import Row, grade_stage
from grader.grading.confinement import tool
from grader.grading.nbhook import verdicts_path
from grader.grading.sweep import sweep_stale

pytestmark = [pytest.mark.timeout(400), pytest.mark.xdist_group("grading-cluster")]
STAGE = "01-framing"
DASK = ROOT / ".venv" / "bin" / "dask"
NO_BUBBLEWRAP = tool("bwrap") is None or os.environ.get("MCP_LAB_SANDBOX") in ("unshare", "none")
# A dask-worker preload: the worker kills itself (SIGKILL, as the kernel's OOM killer would) whenever a
# task of the student "poison" starts on it. The worker dies for real; Dask and the grader see only that.
POISON = """
import os, signal
from distributed.diagnostics.plugin import WorkerPlugin

class Poison(WorkerPlugin):
    def transition(self, key, start, finish, **kwargs):
        if finish == "executing" and "-poison-" in str(key):
            os.kill(os.getpid(), signal.SIGKILL)

async def dask_setup(worker):
    await worker.plugin_add(Poison(), name="poison")
"""


def the_stage() -> build.Stage:
    return next(s for s in build.stages() if s.name == STAGE)


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A course with four hand-ins of stage 01: the key twice, a bug, the untouched release."""
    root = tmp_path_factory.mktemp("cluster") / "course"
    build.init_course(root)
    secret.create(root)
    assert api(root).generate_assignment(STAGE, force=True, create=True)["success"]
    stage = the_stage()
    bug = next(b for b in BUGS if b[0] == STAGE)[2]
    release = (root / "release" / STAGE / stage.notebook).read_text(encoding="utf-8")
    for student, text in (
        ("ada", notebook_text(stage)),
        ("bob", release),
        ("cy", notebook_text(stage, bug)),
        ("dee", notebook_text(stage)),
    ):
        submit(root, student, stage, text)
    return root


def copy_of(course: Path, where: Path) -> Path:
    target = where / "course"
    shutil.copytree(course, target, symlinks=True)
    return target


def shown(rows: list[Row]) -> list[tuple[Any, ...]]:
    """A table's content without its timings."""
    return sorted((r.student, r.score, r.max_score, r.status, json.dumps(r.flags, sort_keys=True)) for r in rows)


@pytest.fixture(scope="module")
def local(course: Path, tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Any, ...]]:
    """The class graded on this machine, two at a time: what every cluster must reproduce."""
    rows = grade_stage(copy_of(course, tmp_path_factory.mktemp("local")), STAGE, 2)
    assert {r.student: r.status for r in rows} == dict.fromkeys(["ada", "bob", "cy", "dee"], "graded")
    scores = {r.student: r.score for r in rows}
    assert scores["ada"] == scores["dee"] == the_stage().points() > scores["cy"] > scores["bob"] == 0, scores
    return shown(rows)


class Cluster:
    """A real scheduler and workers on the loopback, each in a session of its own."""

    def __init__(self, folder: Path, tls: dict[str, str] | None = None, env: dict[str, str] | None = None) -> None:
        self.folder = folder
        self.tls = tls or {}
        self.env = {**python_env(), **(env or {})}
        self.env.pop("PYTHONUNBUFFERED", None)
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        self.file = folder / "scheduler.json"

    def tls_words(self) -> list[str]:
        if not self.tls:
            return []
        return ["--tls-ca-file", self.tls["ca"], "--tls-cert", self.tls["cert"], "--tls-key", self.tls["key"]]

    def start(self, name: str, words: list[str], env: dict[str, str] | None = None) -> None:
        with open(self.folder / f"{name}.log", "wb") as log:  # drained by the kernel: a file, never a full pipe
            self.processes[name] = subprocess.Popen(
                [str(DASK), *words],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**self.env, **(env or {})},
                cwd=self.folder,
                start_new_session=True,
            )

    def scheduler(self) -> None:
        protocol = "tls" if self.tls else "tcp"
        self.file.unlink(missing_ok=True)
        words = ["scheduler", "--host", f"{protocol}://127.0.0.1", "--port", "0", "--dashboard-address", ":0"]
        self.start("scheduler", [*words, "--no-show", "--scheduler-file", str(self.file), *self.tls_words()])
        deadline = time.monotonic() + 90
        while not self.file.is_file():
            assert self.processes["scheduler"].poll() is None, self.log("scheduler")
            assert time.monotonic() < deadline, self.log("scheduler")
            time.sleep(0.2)
        time.sleep(0.3)  # written whole (json.dump) before the scheduler accepts; read it when complete

    def worker(self, name: str, env: dict[str, str] | None = None, extra: tuple[str, ...] = ()) -> None:
        words = ["worker", "--scheduler-file", str(self.file), "--nthreads", "1", "--nworkers", "1"]
        words += ["--name", name, "--no-dashboard", "--death-timeout", "30", "--local-directory", str(self.folder)]
        self.start(name, [*words, *extra, *self.tls_words()], env)

    def wait_for(self, count: int) -> None:
        with self.client() as client:
            client.wait_for_workers(count, timeout=120)

    def client(self) -> Any:
        from distributed import Client
        from distributed.security import Security

        security = Security()
        if self.tls:
            security = Security(
                tls_ca_file=self.tls["ca"],
                tls_client_cert=self.tls["cert"],
                tls_client_key=self.tls["key"],
                require_encryption=True,
            )
        return Client(scheduler_file=str(self.file), security=security, timeout="60s", set_as_default=False)

    def options(self, unsafe: bool = NO_BUBBLEWRAP) -> Scheduler:
        """How the instructor's command reaches this cluster. Its workers run on this machine: where it
        has no bubblewrap, the fallback is allowed (``--unsafe-no-sandbox``), so they grade with
        ``unshare`` as the local grading does, and a refusal is the one test that asks for it."""
        if self.tls:
            return Scheduler("", str(self.file), self.tls["ca"], self.tls["cert"], self.tls["key"], unsafe)
        return Scheduler("", str(self.file), unsafe=unsafe)

    def kill(self, name: str) -> None:
        process = self.processes[name]
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(30)

    def log(self, name: str) -> str:
        path = self.folder / f"{name}.log"
        return path.read_text(errors="replace")[-3000:] if path.is_file() else ""

    def stop(self) -> None:
        for process in self.processes.values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)  # the worker, its nanny, its fork server, its graders
            process.wait(30)
        sweep_stale()  # what the killed graders left: their learners' processes, cgroups, runtime copies


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Any]:
    """A factory of clusters; every process of each killed when the test ends."""
    made: list[Cluster] = []

    def make(name: str = "cluster", **kwargs: Any) -> Cluster:
        folder = tmp_path / name
        folder.mkdir()
        made.append(Cluster(folder, **kwargs))
        return made[-1]

    try:
        yield make
    finally:
        for one in made:
            one.stop()


def in_thread(target: Any, *args: Any) -> tuple[threading.Thread, dict[str, Any]]:
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["rows"] = target(*args)
        except BaseException as exc:  # the test thread reads it
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, box


def processing_on(made: Cluster, address_of: str) -> bool:
    """Whether the named worker is grading a submission now (the scheduler's own view)."""
    with made.client() as client:
        info = client.scheduler_info(n_workers=-1)["workers"]
        busy = client.processing()
    return any(w.get("name") == address_of and busy.get(a) for a, w in info.items())


def test_a_worker_killed_mid_run_costs_a_retry_never_a_verdict(
    course: Path, local: list[tuple[Any, ...]], cluster: Any, tmp_path: Path
) -> None:
    made = cluster()
    made.scheduler()
    made.worker("w1")
    made.worker("w2")
    made.wait_for(2)
    graded = copy_of(course, tmp_path)
    thread, box = in_thread(grade_stage, graded, STAGE, 2, None, made.options())
    deadline = time.monotonic() + 120
    while not processing_on(made, "w1"):
        assert time.monotonic() < deadline and thread.is_alive(), (box, made.log("w1"))
        time.sleep(0.3)
    made.kill("w1")  # the worker and what it forked, mid-grading
    thread.join(300)
    assert not thread.is_alive() and "error" not in box, box
    assert shown(box["rows"]) == local
    written = {p.stem for p in (graded / "grading" / STAGE / "verdicts").glob("*.json")}
    assert written == {"ada", "bob", "cy", "dee"}


def test_workers_of_another_version_or_without_bubblewrap_refuse_before_grading(
    course: Path, cluster: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "other-version"
    for package in ("grader", "reference"):
        shutil.copytree(ROOT / package, other / package, ignore=shutil.ignore_patterns("__pycache__"))
    hidden = other / "grader" / "grading" / "hidden" / "stage01.py"
    hidden.write_text(hidden.read_text(encoding="utf-8") + "\n# another version of the hidden checks\n")
    assert version.code_digest(other) != version.code_digest()
    made = cluster()
    made.scheduler()
    made.worker("old", env={"PYTHONPATH": str(other)})  # imports grader/ from that copy
    made.worker("no-bwrap", env={"MCP_LAB_SANDBOX": "unshare"})  # the sandbox a machine without bwrap has
    made.wait_for(2)
    graded = copy_of(course, tmp_path)
    stage = the_stage()
    release = (graded / "release" / STAGE / stage.notebook).read_text(encoding="utf-8")
    for n in range(7):  # more than the command keeps in flight: the rest must still reach the table
        submit(graded, f"more-{n}", stage, release)
    rows = grade_stage(graded, STAGE, 2, None, made.options(unsafe=False))
    assert len(rows) == 11
    said = capsys.readouterr().err
    assert "grading code differs from the instructor's" in said and "no bubblewrap" in said, said
    for row in rows:
        assert row.status == "grading failed", row
        why = " ".join(f["why"] for f in row.flags)
        assert "no worker of the cluster may grade it" in why and "install bubblewrap" in why, why
    assert not list((graded / "grading" / STAGE / "verdicts").glob("*.json"))  # nothing graded, nothing written


def test_the_scheduler_gone_mid_run_keeps_the_verdicts_and_the_next_run_grades_the_rest(
    course: Path, local: list[tuple[Any, ...]], cluster: Any, tmp_path: Path
) -> None:
    first = cluster("first")
    first.scheduler()
    first.worker("w1")
    first.wait_for(1)
    graded = copy_of(course, tmp_path)
    folder = graded / "grading" / STAGE / "verdicts"
    thread, box = in_thread(grade_stage, graded, STAGE, 1, None, first.options())
    deadline = time.monotonic() + 180
    while not list(folder.glob("*.json")) if folder.is_dir() else True:
        assert time.monotonic() < deadline and thread.is_alive(), (box, first.log("w1"))
        time.sleep(0.2)
    first.kill("scheduler")
    thread.join(120)
    assert not thread.is_alive(), "the grading did not end when its scheduler went away"
    assert isinstance(box.get("error"), ClusterError), box
    assert "went away" in str(box["error"]) and "run the command again" in str(box["error"])
    kept = {p.stem: p.stat().st_mtime_ns for p in folder.glob("*.json")}
    assert 1 <= len(kept) < 4, kept
    second = cluster("second")
    second.scheduler()
    second.worker("w2")
    second.wait_for(1)
    rows = grade_stage(graded, STAGE, 1, None, second.options())
    assert shown(rows) == local
    again = {p.stem: p.stat().st_mtime_ns for p in folder.glob("*.json")}
    assert set(again) == {"ada", "bob", "cy", "dee"}
    assert {s: again[s] for s in kept} == kept, "a verdict that still held was graded again"


@pytest.fixture
def certificates(tmp_path: Path) -> dict[str, str]:
    """A CA and one certificate for 127.0.0.1 signed by it, made with openssl as the README shows."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed: no certificates for the TLS cluster")
    folder = tmp_path / "tls"
    folder.mkdir()
    commands = [
        "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=mcp-lab-ca -keyout ca.key -out ca.pem",
        "openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout node.key -out node.csr",
        "openssl x509 -req -in node.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -out node.pem "
        "-extfile san.cnf",
    ]
    (folder / "san.cnf").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    for command in commands:
        done = subprocess.run(command.split(), cwd=folder, capture_output=True, timeout=60)
        assert done.returncode == 0, done.stderr.decode()
    return {"ca": str(folder / "ca.pem"), "cert": str(folder / "node.pem"), "key": str(folder / "node.key")}


def test_over_tls_a_submission_that_kills_its_worker_every_time_ends_as_grading_failed(
    course: Path, cluster: Any, tmp_path: Path, certificates: dict[str, str]
) -> None:
    graded = copy_of(course, tmp_path)
    stage = the_stage()
    submit(graded, "poison", stage, notebook_text(stage))
    preload = tmp_path / "poison_preload.py"
    preload.write_text(POISON)
    # One task at a time on a worker (the README's advice for grading): a worker that dies takes only the
    # submission it was grading; after allowed-failures deaths, Dask gives that submission up.
    settings = {
        "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "1",
        "DASK_DISTRIBUTED__SCHEDULER__WORKER_SATURATION": "1.0",
    }
    made = cluster(tls=certificates, env=settings)
    made.scheduler()
    assert json.loads(made.file.read_text())["address"].startswith("tls://127.0.0.1:")
    made.worker("w1", extra=("--preload", str(preload)))
    made.wait_for(1)
    plain = Scheduler("", str(made.file))  # tls:// without certificates: refused before connecting
    with pytest.raises(ClusterError, match="--tls-ca"):
        grade_stage(graded, STAGE, 1, ["ada"], plain)
    rows = {r.student: r for r in grade_stage(graded, STAGE, 1, ["ada", "poison"], made.options())}
    assert rows["poison"].status == "grading failed", rows["poison"]
    why = " ".join(f["why"] for f in rows["poison"].flags)
    assert "killed the workers" in why, why
    assert not verdicts_path(graded, STAGE, "poison").exists()
    assert rows["ada"].status == "graded" and rows["ada"].score == stage.points(), rows["ada"]


def test_the_live_line_is_drawn_on_a_terminal_only() -> None:
    """The progress line on a real pseudo-terminal: drawn, then cleared; into a pipe: nothing."""
    import io

    from grader.grading.progress_line import Progress

    leader, follower = os.openpty()
    try:
        with open(follower, "w", closefd=False) as terminal:
            line = Progress(3, terminal)
            line.done(kept=True)
            line.done()
            line.done(failed=True)
            line.close()
        drawn = ""
        while select.select([leader], [], [], 2.0)[0]:  # a pty hands its bytes over a moment later
            drawn += os.read(leader, 65536).decode()
            if drawn.endswith(" \r"):
                break
    finally:
        os.close(leader)
        os.close(follower)
    assert "0/3 done" in drawn and "3/3 done, 1 failed" in drawn and "s per submission" in drawn, drawn
    assert drawn.endswith("\r") and "\n" not in drawn, drawn  # cleared in place: the table starts clean
    piped = io.StringIO()
    line = Progress(3, piped)
    line.done()
    line.close()
    assert piped.getvalue() == ""


def test_plain_tcp_to_another_machine_is_refused_in_one_line(course: Path, tmp_path: Path) -> None:
    """Submissions and their keys never cross the network in clear: tcp:// off the loopback is refused."""
    graded = copy_of(course, tmp_path)
    done = subprocess.run(
        [
            *(str(ROOT / ".venv" / "bin" / "mcp-lab"), "course", "grade", STAGE, "--course", str(graded)),
            "--scheduler",
            "tcp://192.0.2.7:8786",
        ],
        capture_output=True,
        text=True,
        env=python_env(),
        timeout=120,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and "in clear" in done.stderr and "tls://" in done.stderr, done.stderr
    assert not (graded / "grading" / STAGE / "verdicts").exists()
