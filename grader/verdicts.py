"""Verdicts: what each check concluded, merged from every probe that looked at it.

Several probes may speak to one check (id-echo is seen in the main session and under cp1252);
the worst finding wins: fail over warn over pass over skip, and its evidence is the one kept.

    >>> found = Findings()
    >>> found.add("ping", "pass", "ping answered {}")
    >>> found.add("ping", "fail", "ping answered null", {"received": "null"})
    >>> found.results()["ping"].status
    'fail'
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from .catalogue import CHECKS

STATUSES = ("pass", "fail", "warn", "skip")
_RANK = {"skip": 0, "pass": 1, "warn": 2, "fail": 3}


@dataclass
class Result:
    id: str
    status: str
    summary: str
    evidence: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "status": self.status, "summary": self.summary, "evidence": dict(self.evidence)}


class Findings:
    """Thread-safe collector: probes run in parallel threads and report here."""

    def __init__(self) -> None:
        self._results: dict[str, Result] = {}
        # Why an unreached check was not reached; set by the step that stopped the session.
        self.unreached = "not reached: an earlier step did not complete"
        self._lock = threading.Lock()

    def add(self, check: str, status: str, summary: str, evidence: dict[str, Any] | None = None) -> None:
        if check not in CHECKS or status not in STATUSES:
            raise ValueError(f"unknown check {check!r} or status {status!r}")
        new = Result(check, status, summary, dict(evidence or {}))
        with self._lock:
            old = self._results.get(check)
            if old is None or _RANK[status] > _RANK[old.status]:
                self._results[check] = new

    def passed(self, check: str, summary: str, evidence: dict[str, Any] | None = None) -> None:
        self.add(check, "pass", summary, evidence)

    def failed(self, check: str, summary: str, evidence: dict[str, Any] | None = None) -> None:
        self.add(check, "fail", summary, evidence)

    def warned(self, check: str, summary: str, evidence: dict[str, Any] | None = None) -> None:
        self.add(check, "warn", summary, evidence)

    def skipped(self, check: str, summary: str) -> None:
        self.add(check, "skip", summary)

    def status(self, check: str) -> str | None:
        with self._lock:
            result = self._results.get(check)
        return result.status if result else None

    def results(self) -> dict[str, Result]:
        """One result per catalogue check, in catalogue order; an unreached check is a skip."""
        with self._lock:
            found = dict(self._results)
        return {check: found.get(check) or Result(check, "skip", self.unreached) for check in CHECKS}
