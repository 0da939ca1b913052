"""What a grading process leaves, removed: its learners' leftover processes, its cgroups, its runtime copies
and its scratch disk.

A grading process (one per submission, forked by ``mcp-lab course grade``) removes its own when it
ends (:mod:`.worker`); after a crash or a kill its parent does (:func:`sweep`); after the grading
command itself was killed with its workers, the next one does (:func:`sweep_stale`).

    >>> sweep_stale() >= 0
    True
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from grader.course import runtime

from . import sandbox


def sweep(pid: int) -> None:
    """Remove what grading process ``pid`` left: its processes, cgroups and runtime copies."""
    sandbox.release(pid)
    runtime.clear(pid)


def sweep_stale() -> int:
    """Remove what grading processes that no longer run left (a grading command killed with its
    workers): runtime copies named for a dead process, cgroups of one. Return how many went."""
    gone = 0
    pids = {
        int(m.group(1))
        for p in Path(tempfile.gettempdir()).glob(f"{runtime.PREFIX}??-*-*")
        if (m := re.match(rf"{runtime.PREFIX}..-(\d+)-", p.name))
    }
    for folder in [*sandbox.CGROUP_ROOTS.values(), sandbox.CGROUP_V2]:
        if folder.is_dir():
            pids |= {int(p.name[8:]) for p in folder.glob("mcp-lab-*") if p.name[8:].isdigit()}
    pids |= {int(m.group(1)) for d in sandbox.disks() if (m := re.search(r"-(\d+)-[^-]*$", d.name))}
    for pid in sorted(pids):
        try:
            os.kill(pid, 0)
            continue  # still running: its own
        except ProcessLookupError:
            pass
        except PermissionError:
            continue
        sweep(pid)
        gone += 1
    return gone
