"""The course secret, and the keys derived from it: what makes hidden checks unguessable.

``mcp-lab course init`` writes a random secret into ``grading/secret`` of the course folder (mode
0600; nbgrader never copies it: it is not in ``source/``). Every hidden input a check draws (ids,
statuses, revisions, argument sets) comes from a generator seeded by an HMAC of the secret, the
student and the cell, so that

- a learner cannot predict their hidden inputs (they never see the secret);
- grading the same submission again gives the same verdict (the same student, the same draw);
- two students get different hidden inputs.

What grades a submission gets only that submission's :class:`Draws` (a key derived for one student
and stage), never the secret: a grading worker on another machine can draw that learner's hidden
inputs and nothing else. The seal of the verdict files (:meth:`Keys.digest`) stays with the secret.

    >>> a = Keys(b"k" * 32, "alice", "02").rng("test_branches").random()
    >>> a == Keys(b"k" * 32, "alice", "02").rng("test_branches").random()
    True
    >>> a == Keys(b"k" * 32, "bob", "02").rng("test_branches").random()
    False
    >>> a == Draws(Keys(b"k" * 32, "alice", "02").draws()).rng("test_branches").random()
    True
"""

from __future__ import annotations

import hashlib
import hmac
import os
import random
import secrets
from dataclasses import dataclass
from pathlib import Path

FOLDER = "grading"  # in the course folder, beside source/, release/ ...: the instructor's only
FILE = "secret"


def path(course: Path) -> Path:
    return course / FOLDER / FILE


def create(course: Path) -> Path:
    """Write a new secret for ``course`` (never over an existing one)."""
    target = path(course)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as file:
        file.write(secrets.token_hex(32) + "\n")
    return target


def load(course: Path) -> bytes:
    """The secret of ``course``; made on first use for a course made before secrets existed."""
    target = path(course)
    if not target.exists():
        create(course)
    return bytes.fromhex(target.read_text().strip())


@dataclass(frozen=True)
class Keys:
    secret: bytes
    student: str
    stage: str

    def digest(self, purpose: str) -> bytes:
        message = f"{self.student}\0{self.stage}\0{purpose}".encode()
        return hmac.new(self.secret, message, hashlib.sha256).digest()

    def draws(self) -> bytes:
        """The key of this student's hidden draws in this stage: what a grading worker is given."""
        return self.digest("draws")

    def rng(self, purpose: str) -> random.Random:
        """A generator for ``purpose`` (a cell's grade id, say), the same on every grading of this student."""
        return Draws(self.draws()).rng(purpose)


@dataclass(frozen=True)
class Draws:
    """One submission's hidden draws, from its derived key alone (no course secret needed)."""

    key: bytes

    def rng(self, purpose: str) -> random.Random:
        digest = hmac.new(self.key, purpose.encode(), hashlib.sha256).digest()
        return random.Random(int.from_bytes(digest, "big"))
