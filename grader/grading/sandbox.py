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
- ``none`` (no bwrap on this machine, or ``MCP_LAB_SANDBOX=none``): the code runs in its scratch
  copy with a cleared environment, in a pid namespace of its own (``unshare --pid --kill-child``:
  when grading stops it, every process it started goes too), as the submission's own user when
  grading runs as root, with a process limit; but it *could* read what that user can read: the
  grading command says so on every run.

Limits in both cases: per process (``prlimit``) CPU time, address space, file size, open files;
per submission, processes (a cgroup's ``pids.max`` where this machine lets grading make cgroups,
else ``RLIMIT_NPROC`` of the submission's own user), memory (a cgroup's limit, where there is one)
and disk (:func:`hold_disk`: its scratch copies on a tmpfs of :data:`Limits.disk` bytes, where
grading runs as root; else only the size of one file).

    >>> runner = detect(slot=1)
    >>> runner.isolation.split(":")[0] in ("bubblewrap", "none")
    True
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from grader.course.work import Runner

UID_BASE = 200_000  # + the grading process's pid: a user of its own for each submission being graded
CGROUP_ROOTS = {"pids": Path("/sys/fs/cgroup/pids"), "memory": Path("/sys/fs/cgroup/memory")}  # cgroups v1
CGROUP_V2 = Path("/sys/fs/cgroup")


@dataclass(frozen=True)
class Limits:
    cpu_seconds: int = 120  # per process: a server busy for two minutes of CPU is stuck
    address_space: int = 2 << 30  # bytes of memory one process may map
    file_size: int = 64 << 20  # bytes of one file it may write
    open_files: int = 512
    processes: int = 256  # per submission: its processes and threads, all its cells together
    memory: int = 3 << 30  # bytes of memory per submission, where a cgroup can hold it
    tmp_size: int = 256 << 20  # bytes of the private /tmp (in memory: counted in the cgroup too)
    disk: int = 512 << 20  # bytes a submission may write in its scratch copies, all its cells together


LIMITS = Limits()
# What the learner's processes get of an environment: these, and the stage's own variables.
BASE_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "TMPDIR": "/tmp",
    "LOGNAME": "learner",
    "USER": "learner",
    "MCP_LAB_CODE_GUARD": "1",  # the guard runs code from files only (lab_runtime.codeguard)
}


def python_prefix() -> Path:
    """The installation whose interpreter runs the learner's code (not a virtual environment)."""
    return Path(sys.base_prefix).resolve()


def python_executable() -> str:
    base = getattr(sys, "_base_executable", sys.executable)
    return os.path.realpath(base)


def submission_uid() -> int:
    """The user the learner's code runs as: one per grading process, which grades one submission
    (``mcp-lab course grade`` forks one per submission), so that no two submissions graded at the
    same time share a user, its processes or its limits."""
    return UID_BASE + os.getpid()


def _as_root() -> bool:
    return os.geteuid() == 0 and shutil.which("setpriv") is not None


# -- per-submission limits: a cgroup ------------------------------------------------------------
class Cgroup:
    """The submission's cgroups (pids and memory), made on first use by a grader running as root,
    removed by :func:`release` (and by the grading command after a grading process died)."""

    def __init__(self, name: str, limits: Limits) -> None:
        self.name = name
        self.folders: list[Path] = []  # made by :meth:`join`
        self.wanted: dict[Path, dict[str, int]] = {}
        if os.geteuid() != 0:
            return
        unified = CGROUP_V2 / "cgroup.controllers"
        if unified.is_file() and {"pids", "memory"} <= set(unified.read_text().split()):
            self.wanted = {CGROUP_V2 / name: {"pids.max": limits.processes, "memory.max": limits.memory}}
        else:
            self.wanted = {
                root / name: settings
                for root, settings in (
                    (CGROUP_ROOTS["pids"], {"pids.max": limits.processes}),
                    (CGROUP_ROOTS["memory"], {"memory.limit_in_bytes": limits.memory}),
                )
                if os.access(root, os.W_OK)
            }

    @property
    def kinds(self) -> str:
        """What the cgroups hold ("" where this machine offers none)."""
        return " and ".join(
            "pids and memory (cgroup v2)" if f.parent == CGROUP_V2 else f"{f.parent.name} (cgroup v1)"
            for f in self.wanted
        )

    def _make(self) -> None:
        for folder, settings in self.wanted.items():
            if folder in self.folders:
                continue
            try:
                folder.mkdir(exist_ok=True)
                for key, value in settings.items():
                    (folder / key).write_text(f"{value}\n")
            except OSError:
                continue
            self.folders.append(folder)

    def join(self) -> list[str]:
        """Words that put the command that follows in the cgroups before it starts."""
        self._make()
        if not self.folders:
            return []
        script = 'for g in $CGS; do echo $$ > $g/cgroup.procs || exit 126; done; unset CGS; exec "$@"'
        folders = " ".join(str(f) for f in self.folders)
        return [shutil.which("env") or "/usr/bin/env", f"CGS={folders}", "/bin/sh", "-c", script, "mcp-lab-cgroup"]

    def remove(self) -> None:
        """Every process still in the cgroups is killed; the cgroups go."""
        for folder in self.folders:
            for _ in range(20):
                try:
                    pids = [int(p) for p in (folder / "cgroup.procs").read_text().split()]
                except (OSError, ValueError):
                    break
                if not pids:
                    break
                for pid in pids:
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)
                os.sched_yield()
            with contextlib.suppress(OSError):
                folder.rmdir()
        self.folders = []


_CGROUPS: dict[int, Cgroup] = {}

# -- per-submission disk: a tmpfs under the scratch copies ----------------------------------------
DISK_SOURCE = "mcp-lab-disk"  # the tmpfs's name in the mount table: how a leftover one is found


def hold_disk(folder: Path, limits: Limits = LIMITS) -> bool:
    """Mount a tmpfs of ``limits.disk`` bytes on ``folder`` (the submission's scratch folder, empty,
    named with the grading process's pid): what the learner's code writes there, in every cell, is
    held to that size (then ENOSPC), never the host's disk; its pages count in the submission's
    memory cgroup. Root on Linux only; False where it cannot be mounted."""
    mount = shutil.which("mount")
    if os.geteuid() != 0 or mount is None or sys.platform != "linux":
        return False
    mode = f"{folder.stat().st_mode & 0o777:o}"
    try:
        done = subprocess.run(
            [mount, "-t", "tmpfs", "-o", f"size={limits.disk},mode={mode},nosuid,nodev", DISK_SOURCE, str(folder)],
            capture_output=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def disks(pid: int | None = None) -> list[Path]:
    """The mounted scratch disks (of grading process ``pid``, or of any)."""
    found = []
    with contextlib.suppress(OSError), open("/proc/self/mounts", encoding="utf-8") as table:
        for line in table:
            fields = line.split()
            if len(fields) > 2 and fields[0] == DISK_SOURCE and fields[2] == "tmpfs":
                path = Path(fields[1].replace("\\040", " "))
                if pid is None or f"-{pid}-" in path.name:
                    found.append(path)
    return found


def free_disk(folder: Path) -> None:
    """Unmount the scratch disk on ``folder`` (lazily: a process still inside loses it anyway)."""
    umount = shutil.which("umount")
    if umount is not None:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            subprocess.run([umount, "-l", str(folder)], capture_output=True, timeout=10)


def cgroup(limits: Limits = LIMITS) -> Cgroup:
    """This grading process's cgroup (one submission's)."""
    pid = os.getpid()
    if pid not in _CGROUPS:
        _CGROUPS[pid] = Cgroup(f"mcp-lab-{pid}", limits)
        atexit.register(release)
    return _CGROUPS[pid]


def release(pid: int | None = None) -> None:
    """End the submission's leftover processes and remove its cgroups (``pid``: another grading
    process's, which died before it could)."""
    pid = os.getpid() if pid is None else pid
    found = _CGROUPS.pop(pid, None)
    if found is None:
        found = Cgroup(f"mcp-lab-{pid}", LIMITS)
        found.folders = [f / found.name for f in [*CGROUP_ROOTS.values(), CGROUP_V2] if (f / found.name).is_dir()]
    found.remove()
    for folder in disks(pid):  # a grading process killed before it unmounted its scratch disk
        free_disk(folder)
        shutil.rmtree(folder, ignore_errors=True)


def _limits(limits: Limits, processes: int | None) -> list[str]:
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
    if processes is not None:
        words.append(f"--nproc={processes}")
    return [*words, "--"]


def _own_processes() -> int:
    """How many processes and threads this user runs now (RLIMIT_NPROC counts them all)."""
    uid, count = os.getuid(), 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if os.stat(entry.path).st_uid == uid:
                    count += len(os.listdir(f"{entry.path}/task"))
    return count


@functools.cache
def _unshare(user: tuple[str, ...]) -> str | None:
    """``unshare`` where it can make a pid namespace here (not every kernel lets a user make one)."""
    found = shutil.which("unshare")
    if found is None:
        return None
    try:
        tried = subprocess.run(
            [found, *user, "--pid", "--fork", "--kill-child", "--", "true"], capture_output=True, timeout=10
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return found if tried.returncode == 0 else None


def _reachable(path: Path) -> bool:
    """Whether any user may reach and run ``path`` (every folder above it searchable by others)."""
    try:
        return all(os.stat(p).st_mode & 0o001 for p in path.parents) and bool(os.stat(path).st_mode & 0o001)
    except OSError:
        return False


def _own(path: Path, uid: int) -> None:
    """Give the submission's user ``path`` to write in, except its code: a ``.py`` the grader wrote
    stays the grader's, so the guard can tell it from one the learner's process made (codeguard)."""
    for item in [path, *path.rglob("*")]:
        if item.is_symlink() or (item.suffix in (".py", ".pyc") and not item.is_dir()):
            continue
        os.chown(item, uid, uid, follow_symlinks=False)


def _setpriv(uid: int) -> list[str]:
    setpriv = shutil.which("setpriv") or "/usr/bin/setpriv"
    return [setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all"]


class Unsandboxed(Runner):
    """No namespaces but a pid one: a scratch copy, a clean environment, the submission's own user
    (as root) and limits. The fallback where bwrap is missing (or ``MCP_LAB_SANDBOX=none``)."""

    def __init__(self, limits: Limits = LIMITS) -> None:
        self.limits = limits
        root = os.geteuid() == 0
        # A user of its own needs a Python it can run: one under /root (pyenv's) is not.
        self.as_root = _as_root() and _reachable(Path(python_executable()))
        self.uid = submission_uid() if self.as_root else os.getuid()
        self.cgroup = cgroup(limits) if root else None
        self.user_ns = [] if root else ["--user", "--map-current-user"]
        self.unshare = _unshare(tuple(self.user_ns))
        held = f"a cgroup: {self.cgroup.kinds}" if self.cgroup and self.cgroup.wanted else "RLIMIT_NPROC"
        who = (
            f"uid {self.uid} of its own"
            if self.as_root
            else "the grader's uid (root: this Python is not reachable by another user)"
            if root
            else "the grader's uid"
        )
        self.isolation = (
            f"none: no bubblewrap{' (MCP_LAB_SANDBOX=none)' if os.environ.get('MCP_LAB_SANDBOX') == 'none' else ''}; "
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
            *_limits(self.limits, processes),
            *argv,
        ]


class Bubblewrap(Runner):
    """Each process of the learner's code in namespaces of its own that see one submission only."""

    def __init__(self, bwrap: str, slot: int, folder: Path | None = None, limits: Limits = LIMITS) -> None:
        self.bwrap = bwrap
        self.slot = slot
        self.limits = limits
        self.as_root = _as_root()
        self.uid = submission_uid() if self.as_root else os.getuid()
        self.cgroup = cgroup(limits) if self.as_root else None
        self.binds: dict[Path, str] = {}  # outside path -> inside path, set by :meth:`bind`
        held = f"a cgroup: {self.cgroup.kinds}" if self.cgroup and self.cgroup.wanted else "RLIMIT_NPROC of that uid"
        self.isolation = (
            "bubblewrap: mount, pid, net, ipc and uts namespaces, a clean environment, a private /tmp; "
            f"a uid of its own per submission, no capabilities; processes per submission held by {held}"
            if self.as_root
            else "bubblewrap: user, mount, pid, net, ipc and uts namespaces, a clean environment, a private /tmp"
        )

    # -- where things are ------------------------------------------------------------------------
    def python(self) -> str:
        return python_executable()

    def bind(self, outside: Path, inside: str) -> None:
        self.binds[Path(outside).resolve()] = inside

    def runtime(self, stage: str) -> Path:
        path = super().runtime(stage)
        path.chmod(0o755)  # bound at /runtime for the sandbox user to read; its parent stays private (0700)
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
        path.chmod(0o602)  # a FIFO the grader reads: the sandbox user writes down it, reads nothing back
        self.bind(path, inside)

    def own(self, path: Path) -> None:
        _own(path, self.uid) if self.as_root else None

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
        words = [*(self.cgroup.join() if self.cgroup is not None else []), self.bwrap, "--die-with-parent"]
        words += ["--unshare-pid", "--unshare-net", "--unshare-ipc"]
        words += ["--unshare-uts", "--unshare-cgroup-try", "--hostname", "sandbox"]
        if not self.as_root:
            words.append("--unshare-user")
        words += self._system()
        words += ["--proc", "/proc", "--dev", "/dev", "--size", str(self.limits.tmp_size), "--tmpfs", "/tmp"]
        words += ["--perms", "0755", "--dir", "/data", "--perms", "0755", "--dir", "/grading"]
        for outside, inside in self.binds.items():
            kind = "--bind" if inside in ("/work", "/grading/guard.pipe") else "--ro-bind"
            words += [kind, str(outside), inside]
        words += ["--chdir", "/work", "--clearenv"]  # the grader's environment is not the learner's
        for name, value in {**BASE_ENV, "HOME": "/work", **env}.items():
            words += ["--setenv", name, value]
        words.append("--")
        if self.as_root:
            words += [*_setpriv(self.uid), "--no-new-privs", "--"]
        processes = self.limits.processes if self.as_root else None  # the submission's own user
        return [*words, *_limits(self.limits, processes), *argv]


def detect(slot: int = 0) -> Runner:
    """The strongest runner this machine offers (``MCP_LAB_SANDBOX=none`` forces the fallback)."""
    bwrap = shutil.which("bwrap")
    if os.environ.get("MCP_LAB_SANDBOX") == "none" or bwrap is None or sys.platform != "linux":
        return Unsandboxed()
    return Bubblewrap(bwrap, slot)
