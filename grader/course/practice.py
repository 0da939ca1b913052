"""Stages a script can earn in a graded class: practice, not proof (README, "What a graded class can trust").

Stage 08's cases run on the learner's own machine, where a script that probes them reads their
defects; with the public repository the clinic's answer key writes any learner's diagnosis from
the salt the release carries. Stage 09's repairs are the same for everyone. The course keeps them
(they are where a learner practises reading servers that misbehave), and says so: ``mcp-lab course
points`` marks them and prints the total for credit without them.

    >>> sorted(PRACTICE)
    ['08-clinic-diagnosis', '09-clinic-repair']
    >>> for_credit({"01-framing": 12, "08-clinic-diagnosis": 10})
    12
"""

from __future__ import annotations

PRACTICE = {
    "08-clinic-diagnosis": "practice: a script over the kit (or the repository's answer key) can earn it",
    "09-clinic-repair": "practice: the smallest repairs are the same for everyone, and public",
}


def for_credit(points: dict[str, int]) -> int:
    """The total of the stages that are not practice."""
    return sum(value for name, value in points.items() if name not in PRACTICE)
