"""A stage graded on a Dask cluster: ``mcp-lab course grade STAGE --scheduler ADDRESS``.

The instructor's machine stays the only reader of the course folder and the only writer of the
verdicts and the gradebook (:mod:`.command`). Here it hands each submission, read as a
:class:`~grader.grading.job.Job` (plain files and the submission's derived keys, never the course
secret), to a Dask worker as one task; the worker grades it with the same
:func:`~grader.grading.grade.grade_job`, in a process of its own and the same sandbox as on this
machine (:func:`~grader.grading.forked.grade_forked`), and sends the verdicts back as JSON.

A worker refuses before it grades when its grading code differs from the instructor's
(:func:`~grader.grading.version.code_digest`) or when it has no bubblewrap (unless the instructor
said ``--unsafe-no-sandbox``): its submissions go to the other workers. A worker that dies costs
a retry elsewhere (Dask's own); a submission whose grading keeps killing workers ends as
``grading failed`` after the scheduler's ``allowed-failures``.

    >>> loopback("tcp://127.0.0.1:8786"), loopback("tcp://10.0.0.7:8786"), loopback("tls://grader:8786")
    (True, False, False)
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import multiprocessing
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from . import forked, sandbox, version
from .grade import Verdicts
from .job import Job

CONNECT_TIMEOUT = "20s"  # to reach the scheduler at the start
RETRIES = 2  # a task that raised (not a verdict: the grading machinery failed) runs again, this often
SLOT = 1  # a worker grades one submission per thread; each grading process has a uid of its own anyway


class ClusterError(Exception):
    """The cluster cannot grade (unreachable, gone, misconfigured): one line for the instructor."""


@dataclass
class Scheduler:
    """Where the cluster is and how to talk to it (the ``course grade`` options)."""

    address: str = ""
    file: str = ""  # what ``dask scheduler --scheduler-file`` writes
    tls_ca: str = ""
    tls_cert: str = ""
    tls_key: str = ""
    unsafe: bool = False  # --unsafe-no-sandbox: a worker without bubblewrap grades with what it has

    def where(self) -> str:
        if self.address:
            return self.address
        try:
            return str(json.loads(Path(self.file).read_text(encoding="utf-8"))["address"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ClusterError(f"cannot read the scheduler's address from {self.file}: {exc}") from None


def loopback(address: str) -> bool:
    """Whether ``address`` (``tcp://HOST:PORT``) is this machine's loopback: the only place plain TCP is allowed."""
    parts = urlsplit(address if "://" in address else f"tcp://{address}")
    if parts.scheme != "tcp":
        return False
    host = parts.hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def security(scheduler: Scheduler, address: str) -> Any:
    """Dask's :class:`~distributed.security.Security` for ``address``: TLS for ``tls://``, plain TCP
    only on the loopback (anything else would carry the submissions and their keys in clear)."""
    from distributed.security import Security

    if address.startswith("tls://"):
        given = (scheduler.tls_ca, scheduler.tls_cert, scheduler.tls_key)
        if any(given) and not all(given):
            raise ClusterError("tls:// needs all three of --tls-ca, --tls-cert and --tls-key")
        if all(given):
            for name in given:
                if not Path(name).is_file():
                    raise ClusterError(f"no such file: {name}")
            return Security(
                tls_ca_file=scheduler.tls_ca,
                tls_client_cert=scheduler.tls_cert,
                tls_client_key=scheduler.tls_key,
                require_encryption=True,
            )
        found = Security()  # dask's own configuration (distributed.comm.tls.*), if the instructor set it
        if not found.tls_ca_file:
            raise ClusterError("tls:// needs --tls-ca, --tls-cert and --tls-key (or dask's distributed.comm.tls)")
        return found
    if not loopback(address):
        raise ClusterError(
            f"{address} is not this machine: submissions and their keys would cross the network in clear; "
            "start the scheduler and workers with TLS and give tls://... (see the README)"
        )
    return Security()


def connect(scheduler: Scheduler) -> Any:
    """A Dask client of the scheduler, or :class:`ClusterError`."""
    from distributed import Client

    address = scheduler.where()
    secured = security(scheduler, address)
    try:
        return Client(address, security=secured, timeout=CONNECT_TIMEOUT, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise ClusterError(f"cannot reach the Dask scheduler at {address}: {str(exc).splitlines()[0]}") from None


# -- the worker's side -----------------------------------------------------------------------------
def refusal(code: str, unsafe: bool) -> str:
    """Why this worker must not grade for an instructor whose grading code has digest ``code`` ("" if it may)."""
    mine = version.code_digest()
    if mine != code:
        return (
            f"its grading code differs from the instructor's (digest {mine}, the instructor's {code}): "
            "install this project at the instructor's version on it"
        )
    try:
        runner = sandbox.detect(SLOT)
    except sandbox.NoIsolation as exc:
        if not unsafe:
            return str(exc)
        os.environ["MCP_LAB_SANDBOX"] = sandbox.UNSAFE  # the fallback the instructor allowed, before any fork
        return ""
    bubblewrap = isinstance(runner, sandbox.Bubblewrap) and not isinstance(runner, sandbox.Unshared)
    if not bubblewrap and not unsafe:
        return (
            f"it has no bubblewrap (its sandbox would be {runner.isolation.split(':')[0]}): install bubblewrap "
            "on it, or allow the fallback with --unsafe-no-sandbox"
        )
    return ""


def allow_children() -> None:
    """Let this process fork its grading processes, as :mod:`.command` does on the instructor's machine.

    A Dask worker started by its nanny is a daemonic multiprocessing process, and multiprocessing
    refuses children to those (so that none outlives a parent that will not wait for it). Each
    grading process here is waited for, bounded by a time limit and swept after (:mod:`.forked`), so
    the worker lifts the flag for itself (dask's own ``distributed.worker.daemon: false`` does the same).
    """
    process = multiprocessing.current_process()
    if process.daemon:
        process._config["daemon"] = False  # type: ignore[attr-defined]


def grade_on_worker(job: Job, code: str, unsafe: bool) -> dict[str, str]:
    """The task a Dask worker runs for one submission: refuse, or grade it in a process of its own."""
    from distributed import get_worker

    here = get_worker().address
    why = refusal(code, unsafe)
    if why:
        return {"refused": why, "worker": here}
    allow_children()
    found, problem = forked.grade_forked(job, SLOT, alone=False)
    return {"verdicts": found.as_json() if found else "", "problem": problem, "worker": here}


# -- the instructor's side -------------------------------------------------------------------------
Record = Callable[[str, "Verdicts | None", str], None]


def grade_jobs(scheduler: Scheduler, jobs: Iterator[Job], record: Record, say: Callable[[str], None]) -> None:
    """Grade every job on the cluster; ``record(student, verdicts or None, why)`` as each comes back
    (on this thread). Raises :class:`ClusterError` when the scheduler goes away: what was recorded stays."""
    from distributed import as_completed

    client = connect(scheduler)
    try:
        _grade(client, scheduler, jobs, record, say, as_completed)
    finally:
        with contextlib.suppress(Exception):
            client.close(timeout=5)


def _grade(client: Any, scheduler: Scheduler, jobs: Iterator[Job], record: Record, say: Any, as_completed: Any) -> None:
    refused: dict[str, str] = {}  # worker address -> why it refused
    pending: dict[Any, Job] = {}
    waiting = as_completed(loop=client.loop)
    address = scheduler.where()

    def workers() -> list[str]:
        return list(client.scheduler_info(n_workers=-1).get("workers", {}))

    def submit(job: Job) -> bool:
        allowed = [w for w in workers() if w not in refused] if refused else None
        if allowed == []:
            reasons = "; ".join(f"{w}: {why}" for w, why in refused.items())
            record(job.student, None, f"no worker of the cluster may grade it ({reasons})")
            return False
        future = client.submit(
            grade_on_worker,
            job,
            job.code,
            scheduler.unsafe,
            key=f"{job.key()}-{os.urandom(4).hex()}",
            pure=False,
            retries=RETRIES,
            workers=allowed,
            allow_other_workers=False,
        )
        pending[future] = job
        waiting.add(future)
        return True

    window = max(8, 4 * max(1, len(workers())))  # in flight at once: the rest stays on disk, not in memory
    feed = iter(jobs)

    def top_up() -> None:
        """Submit from the feed until the window is full (a job no worker may take is recorded at once)."""
        while len(pending) < window:
            job = next(feed, None)
            if job is None:
                return
            submit(job)

    top_up()
    for future in waiting:
        job = pending.pop(future)
        if future.status == "cancelled":
            lost = len(pending) + 1
            raise ClusterError(
                f"the Dask scheduler at {address} went away with {lost} submission(s) in flight; the verdicts "
                "so far are kept: run the command again to grade the rest"
            )
        if future.status == "error":
            exc = future.exception()
            why = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            if type(exc).__name__ == "KilledWorker":
                why = f"its grading killed the workers that took it (Dask: {str(exc).splitlines()[0]})"
            record(job.student, None, f"on the cluster: {why}")
        else:
            answer = future.result()
            if "refused" in answer:
                worker = answer["worker"]
                if worker not in refused:
                    refused[worker] = answer["refused"]
                    say(f"worker {worker} refused to grade: {answer['refused']}")
                submit(job)  # to the others
            elif answer.get("verdicts"):
                record(job.student, Verdicts.from_json(answer["verdicts"]), "")
            else:
                record(job.student, None, f"{answer.get('problem') or 'no verdicts'} (on {answer['worker']})")
        top_up()  # one done, one more in flight


def say_on_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
