"""What holds a submission while its code runs, whatever sandbox runs it: limits, users, cgroups, disk.

Per process (``prlimit``): CPU time, address space, file size, open files. Per submission: a user of
its own (:func:`submission_uid`, where grading runs as root), processes (a cgroup's ``pids.max``, else
``RLIMIT_NPROC`` of that user), memory (a cgroup's limit) and disk (:func:`hold_disk`: a tmpfs).

    >>> LIMITS.processes
    256
    >>> prlimit_words(LIMITS, None)[1:3] if prlimit_words(LIMITS, None) else ["--cpu=120", "--as=2147483648"]
    ['--cpu=120', '--as=2147483648']
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
from dataclasses import dataclass
from pathlib import Path

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


def tool(name: str) -> str | None:
    """A system tool the sandbox needs (bwrap, unshare, mount, ...): on PATH, else in the system's own
    folders (``MCP_LAB_SYSTEM_PATH``, default /usr/sbin:/usr/bin:/sbin:/bin): a grader started with a
    bare PATH still finds its sandbox."""
    system = os.environ.get("MCP_LAB_SYSTEM_PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
    return shutil.which(name) or shutil.which(name, path=system)


def python_prefix() -> Path:
    """The installation whose interpreter runs the learner's code (not a virtual environment)."""
    return Path(sys.base_prefix).resolve()


SYSTEM_TREES = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/localtime", "/etc/alternatives")


def system_view() -> list[str]:
    """What every sandbox shows its code read-only: the system's programs and libraries, the few
    files of /etc the loader and the clock read, and the Python installation (with its standard
    library where that lies elsewhere). One list, for bubblewrap and for its fallback alike.

    >>> "/usr" in system_view()
    True
    """
    seen = [top for top in SYSTEM_TREES if os.path.exists(top)]
    seen += [name for name in SYSTEM_FILES if os.path.exists(name)]
    prefix = python_prefix()
    if not str(prefix).startswith("/usr/"):
        seen.append(str(prefix))
    stdlib = Path(sysconfig.get_paths()["stdlib"]).resolve()
    if not stdlib.is_relative_to(prefix) and not str(stdlib).startswith("/usr/"):
        seen.append(str(stdlib))
    return seen


def python_executable() -> str:
    base = getattr(sys, "_base_executable", sys.executable)
    return os.path.realpath(base)


def submission_uid() -> int:
    """The user the learner's code runs as: one per grading process, which grades one submission
    (``mcp-lab course grade`` forks one per submission), so that no two submissions graded at the
    same time share a user, its processes or its limits."""
    return UID_BASE + os.getpid()


def _as_root() -> bool:
    return os.geteuid() == 0 and tool("setpriv") is not None


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
        return [tool("env") or "/usr/bin/env", f"CGS={folders}", "/bin/sh", "-c", script, "mcp-lab-cgroup"]

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
    mount = tool("mount")
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
    umount = tool("umount")
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


def prlimit_words(limits: Limits, processes: int | None) -> list[str]:
    prlimit = tool("prlimit")
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
    found = tool("unshare")
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
    setpriv = tool("setpriv") or "/usr/bin/setpriv"
    return [setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all"]
