"""A submission is plain files: no links, devices or pipes, and no copy of a course file.

nbgrader's exchange is the learner's to fill, and ``nbgrader collect`` copies what a symlink points
at: a link to ``grading/secret`` arrives as a file holding the secret, a link to the instructor's
``source/`` notebook as the answer key, a folder linked to another student's as their work. So
before a submission is graded, its folder is read without following a single link (``lstat``), and

- a symbolic link, a hard link (a file with another name somewhere), a device, a FIFO or a socket
  refuses the submission (flag ``links``);
- a file byte for byte the course secret or one of the instructor's notebooks (``source/``), or a
  file that holds the secret anywhere in it (the notebook too), refuses it (flag ``course-files``);

the refused submission gets 0 in every cell, with the reason, and never runs.

    >>> import tempfile, pathlib
    >>> course = pathlib.Path(tempfile.mkdtemp())
    >>> (course / "grading").mkdir(); _ = (course / "grading" / "secret").write_text("ab" * 32 + "\\n")
    >>> folder = course / "submitted" / "eve" / "02-messages"; folder.mkdir(parents=True)
    >>> _ = (folder / "stolen").write_text("ab" * 32 + "\\n")
    >>> (folder / "link").symlink_to(course / "grading" / "secret")
    >>> sorted(kind for kind, _ in refusals(course, folder))
    ['course-files', 'links']
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from . import secret

MAX_FILES = 2000  # entries of one submission's folder read (a submission is a notebook and a few files)
MAX_BYTES = 32 << 20  # a file larger than this is not compared (no course file is that large)


def _read(path: Path) -> bytes | None:
    try:
        if path.stat().st_size > MAX_BYTES:
            return None
        return path.read_bytes()
    except OSError:
        return None


def _digest(path: Path) -> str | None:
    data = _read(path)
    return None if data is None else hashlib.sha256(data).hexdigest()


def _holds_secret(data: bytes, key: bytes | None) -> bool:
    """Whether ``data`` holds the course secret as its file holds it (hex, in either case)."""
    return key is not None and (key.hex().encode() in data or key.hex().upper().encode() in data)


def _secret(course: Path) -> bytes | None:
    try:
        return bytes.fromhex(secret.path(course).read_text().strip())
    except (OSError, ValueError):
        return None


def course_files(course: Path) -> dict[str, str]:
    """``{sha256: what}`` of the files a submission must never hold: the secret, the instructor's notebooks."""
    found: dict[str, str] = {}
    candidates = [secret.path(course), *sorted((course / "source").glob("*/*.ipynb"))]
    for path in candidates:
        if path.is_file() and not path.is_symlink():
            digest = _digest(path)
            if digest is not None:
                found[digest] = str(path.relative_to(course))
    return found


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a plain file"


def refusals(course: Path, folder: Path) -> list[tuple[str, str]]:
    """``[(flag kind, why)]`` that refuse the submission in ``folder`` (empty: it is plain files)."""
    found: list[tuple[str, str]] = []
    submitted = course / "submitted"
    expected = os.path.join(os.path.realpath(submitted), folder.parent.name, folder.name)
    for part in (folder.parent, folder):
        if part.is_symlink():
            found.append(("links", f"{part.relative_to(course)} is a symbolic link (to {os.readlink(part)})"))
    if found or os.path.realpath(folder) != expected:
        return found or [("links", f"{folder.relative_to(course)} is not where it says it is")]
    known = course_files(course)
    key = _secret(course)
    todo, seen = [folder], 0
    while todo:
        current = todo.pop()
        try:
            entries = list(os.scandir(current))
        except OSError as exc:
            found.append(("links", f"{Path(current).relative_to(course)} cannot be read: {exc.strerror}"))
            continue
        for entry in entries:
            seen += 1
            if seen > MAX_FILES:
                return [*found, ("links", f"more than {MAX_FILES} files in the submission")]
            where = Path(entry.path).relative_to(course)
            info = entry.stat(follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode):
                todo.append(Path(entry.path))
            elif not stat.S_ISREG(info.st_mode):
                found.append(("links", f"{where} is {_kind(info.st_mode)}, not a file"))
            elif info.st_nlink > 1:
                found.append(("links", f"{where} is a hard link ({info.st_nlink} names for one file)"))
            else:
                data = _read(Path(entry.path))
                digest = None if data is None else hashlib.sha256(data).hexdigest()
                if digest in known:
                    found.append(("course-files", f"{where} is a copy of the course's {known[digest]}"))
                elif data is not None and _holds_secret(data, key):
                    found.append(("course-files", f"{where} holds the course secret"))
    return found
