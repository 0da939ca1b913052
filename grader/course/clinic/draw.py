"""Which cases a learner gets: drawn from the course's salt and the learner's own id, never from a file they hand in.

Ten cases, in an order of their own: five live servers whose defect the checker's first failure
names, three live servers whose defect hides on a path the checker never takes, and two host
logs (a recorded session, no server to probe). At least one live case breaks a rule of MCP
2026-07-28 (``MODERN``). The draw is the same wherever it is made (the
learner's notebook, the grader) for the same salt and student id, and different for another id:

    >>> a = draw("salt", "alice")
    >>> [c.name for c in a][:3], len(a)
    (['case-01', 'case-02', 'case-03'], 10)
    >>> [c.defect.params for c in a] == [c.defect.params for c in draw("salt", "alice")]
    True
    >>> [c.defect.family for c in a] != [c.defect.family for c in draw("salt", "bob")]
    True
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import random
from dataclasses import dataclass

from .defects import FAMILIES, Defect

VISIBLE = [name for name in FAMILIES if FAMILIES[name](random.Random(0)).visible]
HIDDEN = [name for name in FAMILIES if name not in VISIBLE]
# The families of MCP 2026-07-28's rules (resultType, caching hints, the _meta envelope, -32022, one era
# per connection): every learner meets at least one among their live cases.
MODERN = [name for name in FAMILIES if FAMILIES[name](random.Random(0)).era == "modern"]
COUNTS = {"visible": 5, "hidden": 3, "log": 2}


@dataclass(frozen=True)
class Case:
    name: str  # "case-04"
    kind: str  # "live" (a server to run) or "log" (a host's log to read)
    defect: Defect

    @property
    def symptom(self) -> str:
        return self.defect.symptom


def seed(salt: str, student: str) -> int:
    return int.from_bytes(hmac.new(salt.encode(), f"clinic\0{student}".encode(), hashlib.sha256).digest(), "big")


def _loggable(name: str, rng: random.Random) -> Defect | None:
    """A defect of family ``name`` that shows in a host's log, or None if this family cannot."""
    from .hostlog import render

    for _ in range(6):
        defect = FAMILIES[name](rng)
        if defect.loggable and render(defect).line:
            return defect
    return None


@functools.lru_cache(maxsize=256)
def draw(salt: str, student: str) -> list[Case]:
    """The learner's cases, ``case-01`` onwards (the same list object for the same learner: do not change it)."""
    rng = random.Random(seed(salt, student))
    visible = rng.sample(VISIBLE, COUNTS["visible"])
    hidden = rng.sample(HIDDEN, COUNTS["hidden"])
    if not any(name in MODERN for name in visible + hidden):
        # No case of the revision the course teaches: the last visible one makes way for one.
        visible[-1] = rng.choice([name for name in VISIBLE if name in MODERN and name not in visible])
    chosen: list[tuple[str, Defect]] = [("live", FAMILIES[n](rng)) for n in visible + hidden]
    for name in rng.sample([n for n in VISIBLE if n not in visible], len(VISIBLE) - len(visible)):
        if len([c for c in chosen if c[0] == "log"]) == COUNTS["log"]:
            break
        defect = _loggable(name, rng)
        if defect is not None:
            chosen.append(("log", defect))
    rng.shuffle(chosen)
    return [Case(f"case-{i:02d}", kind, defect) for i, (kind, defect) in enumerate(chosen, 1)]
