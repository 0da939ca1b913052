"""``nbgrader collect`` that never follows a link out of the exchange.

nbgrader's own collect copies each submission with ``shutil.copytree``, which copies what a
symbolic link points at: a link to ``grading/secret`` in a student's outbound folder arrives in
``submitted/`` as a file holding the secret; a hard link is copied as the file it names. A course
made by ``mcp-lab course init`` collects with :class:`PlainCollect` instead
(``c.ExchangeFactory.collect`` in its ``nbgrader_config.py``): the same command, the same
records and timestamps, but only plain files are copied (read without following a link); a
link, a device or a FIFO is left in the exchange with a warning naming it, and a file with more
than one name is copied as its bytes, never linked. Grading refuses what is left anyway
(:mod:`.plainfiles`).

It also collects only what the student made: a submission folder in the exchange's ``inbound/``
whose folder or files are not all owned by the system user named as the student is refused with an
error line (folder, owner, student), and the student's newest submission of their own is collected
instead (nbgrader itself only warns, and collects the newest folder whoever wrote it). The file
exchange knows a learner by nothing else: where learners share one uid (a hub's DockerSpawner or
KubeSpawner running every server as ``jovyan``) every submission is refused, with one line saying
why. ``c.PlainCollect.owner_check = False`` turns the check off, for a course whose exchange nobody
but the instructor writes.

    $ nbgrader collect 02-messages        # in a course folder made by mcp-lab course init

    >>> import tempfile, pathlib
    >>> outbound, submitted = pathlib.Path(tempfile.mkdtemp()), pathlib.Path(tempfile.mkdtemp()) / "ada"
    >>> _ = (outbound / "02-messages.ipynb").write_text("{}")
    >>> (outbound / "secret").symlink_to("/etc/hostname")
    >>> [line.rpartition("/")[2] for line in plain_copy(str(outbound), str(submitted), [], 1 << 20)]
    ['secret: a symbolic link']
    >>> sorted(p.name for p in submitted.iterdir())
    ['02-messages.ipynb']
"""

from __future__ import annotations

import fnmatch
import glob
import os
import stat
from typing import Any

from nbgrader.exchange.default.collect import ExchangeCollect, groupby
from traitlets import Bool

try:
    import pwd
except ImportError:  # Windows: no uids, no check
    pwd = None  # type: ignore[assignment]

README_SECTION = 'README.md, "A class on JupyterHub, and beyond one machine"'


def plain_copy(source: str, target: str, ignore: list[str], max_bytes: int) -> list[str]:
    """Copy the plain files and folders under ``source`` to ``target``; return what was left out, and why."""
    skipped: list[str] = []
    os.makedirs(target, exist_ok=True)
    for entry in os.scandir(source):
        where = os.path.join(target, entry.name)
        info = entry.stat(follow_symlinks=False)
        if any(fnmatch.fnmatch(entry.name, pattern) for pattern in ignore):
            continue
        if stat.S_ISDIR(info.st_mode):
            skipped += plain_copy(entry.path, where, ignore, max_bytes)
        elif not stat.S_ISREG(info.st_mode):
            kind = "a symbolic link" if stat.S_ISLNK(info.st_mode) else "not a plain file"
            skipped.append(f"{entry.path}: {kind}")
        elif info.st_size > max_bytes:
            skipped.append(f"{entry.path}: larger than {max_bytes} bytes")
        else:
            fd = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NOCTTY", 0))
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):  # replaced since it was listed
                    skipped.append(f"{entry.path}: not a plain file")
                    continue
                with open(where, "wb") as out, os.fdopen(os.dup(fd), "rb") as data:
                    out.write(data.read(max_bytes + 1)[:max_bytes])
            finally:
                os.close(fd)
    return skipped


def owners(folder: str) -> set[int]:
    """The uids owning ``folder`` and everything under it (links not followed)."""
    found = {os.lstat(folder).st_uid}
    for where, folders, files in os.walk(folder):
        found.update(os.lstat(os.path.join(where, name)).st_uid for name in folders + files)
    return found


def user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def system_uid(name: str) -> int | None:
    try:
        return pwd.getpwnam(name).pw_uid
    except KeyError:
        return None


def owner_problem(folder: str, student: str) -> str | None:
    """Why ``folder`` is not the student's own submission (None when it is)."""
    uid = system_uid(student)
    others = sorted(owners(folder) - {uid})
    if not others:
        return None
    nobody = "" if uid is not None else f" (no system user is named {student})"
    return f"{folder} is owned by {', '.join(user_name(o) for o in others)}, not by the student {student}{nobody}"


class PlainCollect(ExchangeCollect):
    """nbgrader's collect, copying plain files only, and only the student's own (see the module's text)."""

    owner_check = Bool(
        True,
        help="Collect only submissions whose folder and files are owned by the system user named as the "
        "student. Off only where nobody but the instructor writes the exchange.",
    ).tag(config=True)

    def init_src(self) -> None:
        super().init_src()  # checks the course and inbound folders, reads the due date
        if not self.owner_check or pwd is None:
            return
        student = self.coursedir.student_id or "*"
        pattern = os.path.join(self.inbound_path, f"{student}+{self.coursedir.assignment_id}+*")
        records = [self._path_to_record(f) for f in glob.glob(pattern)]
        kept, refused = [], []
        for record in records:
            problem = owner_problem(os.path.join(self.inbound_path, record["filename"]), record["username"])
            if problem is None:
                kept.append(record)
            else:
                refused.append(record)
                self.log.error("not collected: %s", problem)
        if refused:
            self.log.error(
                "not collected: %d submission(s) not made by their student. nbgrader's file exchange knows "
                "a learner only by the owner of the files; where learners' servers share one uid "
                "(DockerSpawner, KubeSpawner as jovyan) it cannot tell them apart: use an exchange that "
                "knows the hub's user (%s). c.PlainCollect.owner_check = False turns this check off, "
                "only for an exchange nobody but you writes.",
                len(refused),
                README_SECTION,
            )
        self.src_records = [self._chosen(v) for v in groupby(kept, lambda item: item["username"]).values()]

    def _chosen(self, records: list[dict[str, Any]]) -> dict[str, Any]:
        """The submission nbgrader's own collect would choose among one student's: the newest, or
        with ``--before-duedate`` the newest before the due date if there is one."""
        records = self._sort_by_timestamp(records)
        if self.duedate is not None and self.before_duedate:
            return next((r for r in records if r["timestamp"] <= self.duedate), records[0])
        return records[0]

    def do_copy(self, src: str, dest: str, log: object = None) -> None:
        if os.path.islink(src) or not os.path.isdir(src):
            self.log.warning("not collected: %s is not a folder of the exchange's own", src)
            return
        limit = int(self.coursedir.max_file_size) * 1000  # nbgrader counts kilobytes
        for skipped in plain_copy(src, dest, list(self.coursedir.ignore), limit):
            self.log.warning("not collected: %s", skipped)
