"""The sandbox: how a submission's code runs when an instructor grades it.

Every process of the learner's code (their server, the harness that calls their functions, the
peers their client starts) runs in a sandbox that sees only

- ``/work``: a scratch copy of that one submission (the only place it may write),
- ``/runtime``: the stage's runtime (:mod:`grader.course.runtime`), read-only,
- ``/data/shop.db``: the shop database, read-only,
- the Python installation and the system's libraries, read-only, and a private ``/tmp``,

and nothing else: not the course (its gradebook, ``source/``, ``release/``, other submissions,
the course secret), not the network. The strongest isolation this machine offers is used:

- ``bubblewrap``: Linux namespaces (mount, pid, net, ipc, uts) via ``bwrap``; when grading runs
  as root, the code also runs as a user of its own (uid 61000 + the grading slot) with no
  capabilities and no new privileges;
- ``none``: no bwrap on this machine. The code still runs in its scratch copy, as a child
  process with resource limits, but it *could* read and write anything the grader can: the
  grading command says so on every run.

Resource limits in both cases (``prlimit``): CPU time, address space, file size, open files and,
with a user of its own, processes.

    >>> runner = detect(slot=1)
    >>> runner.isolation.split(":")[0] in ("bubblewrap", "none")
    True
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from grader.course.work import Runner

UID_BASE = 61000  # the sandbox users: one per grading slot, so their process limits are their own


@dataclass(frozen=True)
class Limits:
    cpu_seconds: int = 120  # per process: a server busy for two minutes of CPU is stuck
    address_space: int = 2 << 30  # bytes of memory one process may map
    file_size: int = 64 << 20  # bytes of one file it may write
    open_files: int = 512
    processes: int = 256  # with a user of its own: processes and threads of that user


LIMITS = Limits()
# Variables of the grader's environment that must not reach the learner's code (or change it).
UNSET = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE", "VIRTUAL_ENV", "PYTHONBREAKPOINT")


def python_prefix() -> Path:
    """The installation whose interpreter runs the learner's code (not a virtual environment)."""
    return Path(sys.base_prefix).resolve()


def python_executable() -> str:
    base = getattr(sys, "_base_executable", sys.executable)
    return os.path.realpath(base)


def _limits(limits: Limits, with_processes: bool) -> list[str]:
    prlimit = shutil.which("prlimit")
    if prlimit is None:
        return []
    words = [
        prlimit,
        f"--cpu={limits.cpu_seconds}",
        f"--as={limits.address_space}",
        f"--fsize={limits.file_size}",
        f"--nofile={limits.open_files}",
    ]
    if with_processes:
        words.append(f"--nproc={limits.processes}")
    return [*words, "--"]


class Unsandboxed(Runner):
    """No isolation but a scratch copy and resource limits: the fallback where bwrap is missing."""

    isolation = "none: bubblewrap (bwrap) is not installed; the code runs as a plain child with limits"

    def __init__(self, limits: Limits = LIMITS) -> None:
        self.limits = limits

    def wrap(self, argv: Sequence[str], env: dict[str, str]) -> list[str]:
        setter = shutil.which("env") or "/usr/bin/env"
        unset = [word for name in ("PYTHONUNBUFFERED", *UNSET) for word in ("-u", name)]
        return [setter, *unset, *(f"{k}={v}" for k, v in env.items()), *_limits(self.limits, False), *argv]


class Bubblewrap(Runner):
    """Each process of the learner's code in namespaces of its own that see one submission only."""

    def __init__(self, bwrap: str, slot: int, folder: Path | None = None, limits: Limits = LIMITS) -> None:
        self.bwrap = bwrap
        self.slot = slot
        self.limits = limits
        self.as_root = os.geteuid() == 0 and shutil.which("setpriv") is not None
        self.uid = UID_BASE + slot if self.as_root else os.getuid()
        self.binds: dict[Path, str] = {}  # outside path -> inside path, set by :meth:`bind`
        self.isolation = (
            f"bubblewrap: mount, pid, net, ipc and uts namespaces; uid {self.uid}, no capabilities"
            if self.as_root
            else "bubblewrap: user, mount, pid, net, ipc and uts namespaces"
        )

    # -- where things are ------------------------------------------------------------------------
    def python(self) -> str:
        return python_executable()

    def bind(self, outside: Path, inside: str) -> None:
        self.binds[Path(outside).resolve()] = inside

    def runtime(self, stage: str) -> Path:
        path = super().runtime(stage)
        for folder in (path, path.parent):
            os.chmod(folder, 0o755)  # a temporary folder is private to its maker: the sandbox user reads it
        return path

    def inside(self, path: Path) -> str:
        resolved = Path(path).resolve()
        for outside, inside in self.binds.items():
            if resolved == outside:
                return inside
        raise ValueError(f"{path} is not visible in the sandbox")

    def prepare(self, folder: Path, runtime: Path, db: Path) -> None:
        """Make ``folder`` (the submission's scratch copy) the sandbox's ``/work``, and so on."""
        self.bind(folder, "/work")
        self.bind(runtime, "/runtime")
        self.bind(db, "/data/shop.db")
        self.own(folder)

    def share_file(self, path: Path, inside: str) -> None:
        path.touch()
        path.chmod(0o622)  # the sandbox user appends; it cannot read what others wrote
        self.bind(path, inside)

    def own(self, path: Path) -> None:
        if self.as_root:
            for item in [path, *path.rglob("*")]:
                os.chown(item, self.uid, self.uid, follow_symlinks=False)

    # -- the command ------------------------------------------------------------------------------
    def _system(self) -> list[str]:
        words: list[str] = []
        for top in ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
            if os.path.exists(top):
                words += ["--ro-bind", top, top]
        for name in ("/etc/ld.so.cache", "/etc/localtime", "/etc/alternatives"):
            words += ["--ro-bind-try", name, name]
        prefix = python_prefix()
        if not str(prefix).startswith("/usr/"):
            # Create each folder above the installation, readable: bwrap makes them private.
            parents = [p for p in reversed(prefix.parents) if str(p) != "/"]
            for parent in parents:
                words += ["--perms", "0755", "--dir", str(parent)]
            words += ["--ro-bind", str(prefix), str(prefix)]
        stdlib = Path(sysconfig.get_paths()["stdlib"]).resolve()
        if not stdlib.is_relative_to(prefix) and not str(stdlib).startswith("/usr/"):
            words += ["--ro-bind", str(stdlib), str(stdlib)]
        return words

    def wrap(self, argv: Sequence[str], env: dict[str, str]) -> list[str]:
        words = [self.bwrap, "--die-with-parent", "--unshare-pid", "--unshare-net", "--unshare-ipc"]
        words += ["--unshare-uts", "--unshare-cgroup-try", "--hostname", "sandbox"]
        if not self.as_root:
            words.append("--unshare-user")
        words += self._system()
        words += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--perms", "0755", "--dir", "/data"]
        words += ["--perms", "0755", "--dir", "/grading"]
        for outside, inside in self.binds.items():
            kind = "--bind" if inside in ("/work", "/grading/guard.log") else "--ro-bind"
            words += [kind, str(outside), inside]
        words += ["--chdir", "/work"]
        for name in UNSET:
            words += ["--unsetenv", name]
        settings = {"HOME": "/work", "TMPDIR": "/tmp", "LOGNAME": "learner", "USER": "learner", **env}
        for name, value in settings.items():
            words += ["--setenv", name, value]
        words.append("--")
        if self.as_root:
            setpriv = shutil.which("setpriv") or "/usr/bin/setpriv"
            words += [setpriv, f"--reuid={self.uid}", f"--regid={self.uid}", "--clear-groups"]
            words += ["--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]
        return [*words, *_limits(self.limits, self.as_root), *argv]


def detect(slot: int = 0) -> Runner:
    """The strongest runner this machine offers (``MCP_LAB_SANDBOX=none`` forces the fallback)."""
    bwrap = shutil.which("bwrap")
    if os.environ.get("MCP_LAB_SANDBOX") == "none" or bwrap is None or sys.platform != "linux":
        return Unsandboxed()
    return Bubblewrap(bwrap, slot)
