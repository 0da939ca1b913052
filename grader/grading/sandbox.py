"""The sandbox: how a submission's code runs when an instructor grades it.

Every process of the learner's code (their server, the harness that calls their functions, the
peers their client starts) runs in a sandbox that sees only

- ``/work``: a scratch copy of that one submission (the only place it may write),
- ``/runtime``: the stage's runtime (:mod:`grader.course.runtime`), read-only,
- ``/data/shop.db``: the shop database, read-only,
- the Python installation and the system's libraries, read-only, and a private ``/tmp`` (a tmpfs
  of :data:`Limits.tmp_size`),

and nothing else: not the course (its gradebook, ``source/``, ``release/``, other submissions,
the course secret), not the network, not the grader's environment (only the variables the stage
sets). The strongest isolation this machine offers is used:

- ``bubblewrap``: Linux namespaces (mount, pid, net, ipc, uts) via ``bwrap --clearenv``; when
  grading runs as root, the code also runs as a user of its own (one per submission being graded:
  :func:`submission_uid`) with no capabilities and no new privileges;
- ``unshare`` (no bwrap on this machine, or ``MCP_LAB_SANDBOX=unshare``): the same view, made by
  :mod:`.unshared` with util-linux's ``unshare``, ``mount`` and ``pivot_root``;
- neither: grading refuses (:class:`NoIsolation`), unless the instructor passes
  ``--unsafe-no-sandbox``: then the code runs in its scratch copy with a cleared environment, in a
  pid namespace of its own, as the submission's own user (never as root), with a process limit, and
  it *can* read what that user can read: the grading command says so on every run.

Limits in every case (:mod:`.confinement`): per process (``prlimit``) CPU time, address space, file size, open files;
per submission, processes (a cgroup's ``pids.max`` where this machine lets grading make cgroups,
else ``RLIMIT_NPROC`` of the submission's own user), memory (a cgroup's limit, where there is one)
and disk (:func:`hold_disk`: its scratch copies on a tmpfs of :data:`Limits.disk` bytes, where
grading runs as root; else only the size of one file).

    >>> runner = detect(slot=1)
    >>> runner.isolation.split(":")[0] in ("bubblewrap", "unshare")
    True
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from grader.course.work import Runner

from .bubblewrap import Bubblewrap
from .confinement import (
    BASE_ENV,
    CGROUP_ROOTS,
    CGROUP_V2,
    LIMITS,
    Cgroup,
    Limits,
    _as_root,
    _own,
    _own_processes,
    _reachable,
    _setpriv,
    _unshare,
    cgroup,
    disks,
    free_disk,
    hold_disk,
    prlimit_words,
    python_executable,
    release,
    submission_uid,
    tool,
)
from .unshared import Unshared

__all__ = [
    "CGROUP_ROOTS",
    "CGROUP_V2",
    "LIMITS",
    "Bubblewrap",
    "Cgroup",
    "Limits",
    "NoIsolation",
    "Unsandboxed",
    "Unshared",
    "detect",
    "disks",
    "free_disk",
    "hold_disk",
    "release",
]


class Unsandboxed(Runner):
    """No namespaces but a pid one: a scratch copy, a clean environment, the submission's own user
    (as root) and limits. Only where the instructor accepted it (``--unsafe-no-sandbox``); even then
    the learner's code never runs as root: a Python that another user cannot reach refuses."""

    def __init__(self, limits: Limits = LIMITS) -> None:
        self.limits = limits
        root = os.geteuid() == 0
        # A user of its own needs a Python it can run: one under /root (pyenv's) is not.
        self.as_root = _as_root() and _reachable(Path(python_executable()))
        if root and not self.as_root:
            raise NoIsolation(
                f"grading runs as root and {python_executable()} cannot be run by another user (or setpriv is "
                "missing): the learners' code would run as root; install bubblewrap, or grade as another user"
            )
        self.uid = submission_uid() if self.as_root else os.getuid()
        self.cgroup = cgroup(limits) if root else None
        self.user_ns = [] if root else ["--user", "--map-current-user"]
        self.unshare = _unshare(tuple(self.user_ns))
        held = f"a cgroup: {self.cgroup.kinds}" if self.cgroup and self.cgroup.wanted else "RLIMIT_NPROC"
        who = f"uid {self.uid} of its own" if self.as_root else "the grader's uid"
        self.isolation = (
            "none (--unsafe-no-sandbox): no bubblewrap, no private view of the files; "
            f"{'a pid namespace' if self.unshare else 'no pid namespace (unshare cannot make one here)'}, "
            f"{who}, processes per submission held by {held}, a clean environment; "
            "the code can read what that user can read"
        )

    def python(self) -> str:
        return python_executable()  # not a virtual environment the submission's user may not reach

    def runtime(self, stage: str) -> Path:
        path = super().runtime(stage)
        if self.as_root:
            path.parent.chmod(0o711)  # the submission's user reaches the runtime by its name, lists nothing
        return path

    def own(self, path: Path) -> None:
        _own(path, self.uid) if self.as_root else None

    def prepare(self, folder: Path, runtime: Path, db: Path) -> None:
        self.own(folder)

    def share_file(self, path: Path, inside: str) -> None:
        path.chmod(0o602)

    def wrap(self, argv: Sequence[str], env: dict[str, str]) -> list[str]:
        words: list[str] = []
        if self.cgroup is not None:
            words += self.cgroup.join()
        if self.unshare is not None:
            words += [self.unshare, *self.user_ns, "--pid", "--fork", "--kill-child", "--"]
        if self.as_root:
            words += [*_setpriv(self.uid), "--no-new-privs", "--"]
            processes = self.limits.processes  # the submission's own user: its count is the submission's
        elif self.cgroup is not None and self.cgroup.folders:
            processes = None  # root ignores RLIMIT_NPROC: the cgroup holds the count
        else:
            processes = _own_processes() + self.limits.processes  # this user's count is what the limit holds
        setter = shutil.which("env") or "/usr/bin/env"
        settings = {**BASE_ENV, "HOME": env.get("HOME", "/tmp"), **env}
        # A cleared environment: PYTHONUNBUFFERED and the grader's variables stay out unless the stage sets them.
        return [
            *words,
            setter,
            "-i",
            *(f"{k}={v}" for k, v in settings.items()),
            *prlimit_words(self.limits, processes),
            *argv,
        ]


UNSAFE = "unsafe-none"  # MCP_LAB_SANDBOX's value for grading with no isolation (--unsafe-no-sandbox)
CHOICES = ("bubblewrap", "unshare", UNSAFE)


class NoIsolation(Exception):
    """No sandbox can be made here, and the instructor did not accept grading without one."""


def detect(slot: int = 0) -> Runner:
    """The strongest runner this machine offers: bubblewrap, else the same view made with ``unshare``.

    ``MCP_LAB_SANDBOX`` picks one: ``bubblewrap``, ``unshare`` (``none`` too: "no bubblewrap"), or
    ``unsafe-none``, set only by ``mcp-lab course grade --unsafe-no-sandbox``. Where neither sandbox can
    be made and the instructor did not say ``--unsafe-no-sandbox``, grading refuses: :class:`NoIsolation`.
    """
    wanted = os.environ.get("MCP_LAB_SANDBOX", "") or "bubblewrap"
    if wanted == "none":
        wanted = "unshare"
    if wanted not in CHOICES:
        raise NoIsolation(f"MCP_LAB_SANDBOX={wanted!r}: say one of {', '.join(CHOICES)}")
    if wanted == UNSAFE:
        return Unsandboxed()
    bwrap = tool("bwrap") if sys.platform == "linux" else None
    if wanted == "bubblewrap" and bwrap is not None:
        return Bubblewrap(bwrap, slot)
    found = Unshared.detect(slot) if sys.platform == "linux" else None
    if found is not None:
        return found
    raise NoIsolation(
        "no sandbox can be made here (no bubblewrap, and unshare cannot make the namespaces): install "
        "bubblewrap, or pass --unsafe-no-sandbox to run the learners' code with no isolation at your own risk"
    )
