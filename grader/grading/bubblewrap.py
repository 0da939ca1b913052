"""The sandbox bubblewrap makes: Linux namespaces in which a submission's code sees only its own files.

>>> Bubblewrap("/usr/bin/bwrap", slot=1).inside  # doctest: +ELLIPSIS
<bound method Bubblewrap.inside of ...>
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from grader.course.work import Runner

from .confinement import (
    BASE_ENV,
    LIMITS,
    Limits,
    _as_root,
    _own,
    _setpriv,
    cgroup,
    prlimit_words,
    python_executable,
    python_prefix,
    submission_uid,
    system_view,
)


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
        prefix = str(python_prefix())
        for path in system_view():
            if path == prefix:
                # Create each folder above the installation, readable: bwrap makes them private.
                parents = [p for p in reversed(Path(path).parents) if str(p) != "/"]
                for parent in parents:
                    words += ["--perms", "0755", "--dir", str(parent)]
            words += ["--ro-bind", path, path]
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
        return [*words, *prlimit_words(self.limits, processes), *argv]
