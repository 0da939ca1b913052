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
import os
import stat

from nbgrader.exchange.default.collect import ExchangeCollect


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


class PlainCollect(ExchangeCollect):
    """nbgrader's collect, copying plain files only (see the module's text)."""

    def do_copy(self, src: str, dest: str, log: object = None) -> None:
        if os.path.islink(src) or not os.path.isdir(src):
            self.log.warning("not collected: %s is not a folder of the exchange's own", src)
            return
        limit = int(self.coursedir.max_file_size) * 1000  # nbgrader counts kilobytes
        for skipped in plain_copy(src, dest, list(self.coursedir.ignore), limit):
            self.log.warning("not collected: %s", skipped)
