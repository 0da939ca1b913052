"""The sandbox without bubblewrap: the same private view of the system, made with util-linux alone.

Where ``bwrap`` is missing, the learner's code must still never see the course, nor run as root.
:class:`Unshared` gives it the view :class:`~grader.grading.sandbox.Bubblewrap` gives (``/work``,
``/runtime``, ``/data/shop.db``, ``/grading/guard.pipe``, the system read-only, a private ``/tmp``
and ``/proc``, nothing else), made by a short shell script that runs in new namespaces made by
``unshare`` (mount, pid, net, ipc, uts; and user, when grading does not run as root):

1. a tmpfs becomes the new root, and each path the code may see is bind-mounted into it (read-only
   but for ``/work`` and the guard's pipe);
2. ``/proc`` of the new pid namespace, a ``/dev`` of five devices, a private ``/tmp``, loopback up;
3. ``pivot_root`` into it and the old root detached (``umount -l``): nothing of the host's files is
   reachable any more, not through ``..``, not through ``/proc/*/cwd``;
4. the code starts as the submission's own user (as root; with no capabilities in either case) with
   no new privileges, a clean environment and the same limits.

    >>> runner = Unshared.detect(slot=1)
    >>> runner is None or runner.isolation.startswith("unshare:")
    True
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Sequence

from .bubblewrap import Bubblewrap
from .confinement import BASE_ENV, LIMITS, Limits, _setpriv, prlimit_words, system_view, tool

# Runs as root of the new namespaces: "$1" the empty folder that becomes the root, then triplets
# (ro|rw|dir SOURCE TARGET), then "--" and the command. Every step must work, or nothing runs (-e).
SETUP = r"""
set -eu
PATH=/usr/sbin:/usr/bin:/sbin:/bin; export PATH
new=$1; tmp=$2; shift 2
mount -t tmpfs -o size=64m,mode=0755,nosuid,nodev mcp-lab-root "$new"
while [ "$1" != "--" ]; do
    kind=$1; from=$2; to=$new$3; shift 3
    if [ "$kind" = dir ]; then mkdir -p "$to"; chmod 0755 "$to"; continue; fi
    if [ -d "$from" ]; then mkdir -p "$to"; else mkdir -p "${to%/*}"; : > "$to"; fi
    mount --rbind "$from" "$to"
    if [ "$kind" = ro ]; then mount -o remount,bind,ro,nosuid,nodev "$to"; fi
done
shift
mkdir -p "$new/proc" "$new/tmp" "$new/dev" "$new/.old"
mount -t proc -o nosuid,nodev,noexec proc "$new/proc"
mount -t tmpfs -o "size=$tmp,mode=1777,nosuid,nodev" tmp "$new/tmp"
for device in null zero full random urandom; do
    : > "$new/dev/$device"; mount --bind "/dev/$device" "$new/dev/$device"
done
ln -s /proc/self/fd "$new/dev/fd"; ln -s /proc/self/fd/0 "$new/dev/stdin"
ln -s /proc/self/fd/1 "$new/dev/stdout"; ln -s /proc/self/fd/2 "$new/dev/stderr"
mount -o remount,bind,ro,nosuid,nodev "$new" 2>/dev/null || true
hostname sandbox 2>/dev/null || true
cd "$new"
pivot_root . .old
umount -l /.old
cd /work 2>/dev/null || cd /
exec "$@"
"""

# Brings the loopback interface of the new network namespace up (SIOCSIFFLAGS): a learner's HTTP
# server listens there, as under bubblewrap. Run after pivot_root, by the sandbox's Python.
LOOPBACK_UP = (
    "import fcntl,socket,struct;s=socket.socket();"
    "f=fcntl.ioctl(s,0x8913,struct.pack('16sH',b'lo',0));"
    "fcntl.ioctl(s,0x8914,struct.pack('16sH',b'lo',struct.unpack('16sH',f)[1]|1))"
)


class Unshared(Bubblewrap):
    """Bubblewrap's view of the system, made by ``unshare``, ``mount`` and ``pivot_root``."""

    def __init__(self, unshare: str, slot: int, limits: Limits = LIMITS) -> None:
        super().__init__("", slot, limits=limits)
        self.unshare = unshare
        held = f"a cgroup: {self.cgroup.kinds}" if self.cgroup and self.cgroup.wanted else "RLIMIT_NPROC of that uid"
        self.isolation = (
            "unshare: no bubblewrap; mount, pid, net, ipc and uts namespaces, a private root (pivot_root), "
            "a clean environment, a private /tmp; "
            + (
                f"a uid of its own per submission, no capabilities; processes per submission held by {held}"
                if self.as_root
                else "a user namespace, no capabilities"
            )
        )

    @staticmethod
    def detect(slot: int = 0) -> Unshared | None:
        """The runner, where this machine lets it make its namespaces and root (else None)."""
        found = _works(os.geteuid() == 0)
        return Unshared(found, slot) if found else None

    def _binds(self) -> list[str]:
        words: list[str] = []
        # Each folder above a bound path is made in the new root, 0755: reachable by the
        # submission's user even where the host's (root's home) is not.
        for path in system_view():
            words += ["ro", path, path]
        for folder in ("/data", "/grading"):
            words += ["dir", "-", folder]
        for outside, inside in self.binds.items():
            words += ["rw" if inside in ("/work", "/grading/guard.pipe") else "ro", str(outside), inside]
        return words

    def wrap(self, argv: Sequence[str], env: dict[str, str]) -> list[str]:
        words = [*(self.cgroup.join() if self.cgroup is not None else []), self.unshare]
        if not self.as_root:
            words += ["--user", "--map-root-user"]
        words += ["--mount", "--pid", "--net", "--ipc", "--uts", "--fork", "--kill-child", "--propagation", "private"]
        words += ["--", "/bin/sh", "-c", SETUP, "mcp-lab-sandbox", _mount_point(), str(self.limits.tmp_size)]
        words += [*self._binds(), "--"]
        settings = {**BASE_ENV, "HOME": "/work", **env}
        inner = [self.python(), "-I", "-S", "-c", LOOPBACK_UP]
        start = [shutil.which("env") or "/usr/bin/env", "-i", *(f"{k}={v}" for k, v in settings.items())]
        tail = [*prlimit_words(self.limits, self.limits.processes if self.as_root else None), *argv]
        privileges = [*_setpriv(self.uid), "--no-new-privs", "--"]
        if not self.as_root:  # root of a user namespace: no other uid to become, only capabilities to drop
            privileges = [p for p in privileges if not p.startswith(("--reuid", "--regid", "--clear-groups"))]
        # The loopback goes up while still root of the namespace; then the code starts unprivileged.
        return [
            *words,
            "/bin/sh",
            "-c",
            '"$1" "$2" "$3" "$4" "$5" 2>/dev/null; shift 5; exec "$@"',
            "up",
            *inner,
            *privileges,
            *start,
            *tail,
        ]


def _mount_point() -> str:
    """The folder each sandbox's new root is mounted on. The mount is the sandbox's own (its mount
    namespace's), so all sandboxes share the folder, never a root: one per user, ``mcp-lab-root-UID``
    in the temp folder, kept as tmux keeps ``tmux-UID``. (One per process was left behind by every
    grading process that ends without running ``atexit``: each fork of the grading's fork server.)
    Where that name is taken by what is not this user's own folder, a folder of this process's own."""
    uid = os.geteuid()
    folder = os.path.join(tempfile.gettempdir(), f"mcp-lab-root-{uid}")
    with contextlib.suppress(FileExistsError):
        os.mkdir(folder, 0o755)
    found = os.lstat(folder)
    if stat.S_ISDIR(found.st_mode) and found.st_uid == uid and not found.st_mode & 0o022:
        return folder
    return _own_mount_point()


@functools.cache
def _own_mount_point() -> str:
    folder = tempfile.mkdtemp(prefix="mcp-lab-root-")
    os.chmod(folder, 0o755)
    atexit.register(shutil.rmtree, folder, True)
    return folder


@functools.cache
def _works(root: bool) -> str | None:
    """``unshare``'s path where a sandbox can be made with it here: tried once, on ``true``."""
    found = tool("unshare")
    if found is None or tool("pivot_root") is None or tool("mount") is None:
        return None
    probe = Unshared(found, 0)
    probe.as_root = root
    try:
        tried = subprocess.run(probe.wrap(["/bin/true"], {}), capture_output=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    return found if tried.returncode == 0 else None
