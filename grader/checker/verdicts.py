"""Verdicts: what each check concluded, from every finding any probe reported for it.

Every finding names the rule it follows (see :mod:`grader.checker.severity`): a rule without a MUST
cannot fail a check. A check's status is its worst finding (fail over warn over pass over skip),
but nothing is hidden by the merge: every failing input is listed, and where a check ran under
several protocol revisions the evidence gives each revision's result and the summary says which
ones failed.

    >>> found = Findings()
    >>> found.add("ping", "pass", "ping answered {}")
    >>> found.add("ping", "fail", "ping answered null", {"received": "null"})
    >>> found.results()["ping"].status
    'fail'
    >>> found.add("tool-error-kind", "pass", "isError", revision="2025-11-25")
    >>> found.add("tool-error-kind", "warn", "-32602", rule="kind", revision="2025-06-18")
    >>> found.results()["tool-error-kind"].summary
    '-32602 [warns under 2025-06-18; passes under 2025-11-25]'
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .catalogue import CATALOGUE, CHECKS
from .severity import Rule

STATUSES = ("pass", "fail", "warn", "skip")
_RANK = {"skip": 0, "pass": 1, "warn": 2, "fail": 3}
_VERB = {"fail": "fails", "warn": "warns", "pass": "passes", "skip": "not judged"}
_UNDER = re.compile(r"^under \d{4}-\d{2}-\d{2}, ")
LISTED = 20  # problems listed in the evidence of one check (the text report shows fewer)


@dataclass
class Finding:
    status: str
    summary: str
    evidence: dict[str, Any]
    rule: str = "main"  # "main" or a key of the check's ``also`` rules
    revision: str | None = None  # the protocol revision of the session that saw it


@dataclass
class Result:
    id: str
    status: str
    summary: str
    evidence: dict[str, Any] = field(default_factory=dict)
    rule: Rule | None = None  # the rule of the finding that decided the status
    caused_by: str | None = None  # the check whose failure this one follows from (root_cause.py)

    def as_json(self) -> dict[str, Any]:
        data = {
            "id": self.id,
            "era": CATALOGUE[self.id].era,  # "legacy", "modern" or "both": the sessions that judge it
            "status": self.status,
            "summary": self.summary,
            "evidence": dict(self.evidence),
        }
        if self.caused_by:
            data["caused_by"] = self.caused_by
        return data


def _worst(findings: list[Finding]) -> Finding:
    """The first finding of the worst status; among revisions, the newest one's (a finding not
    tied to a revision first)."""
    rank = max(_RANK[f.status] for f in findings)
    newest_first = sorted(findings, key=lambda f: f.revision or "~", reverse=True)  # stable: arrival order
    return next(f for f in newest_first if _RANK[f.status] == rank)


def merge(check: str, findings: list[Finding]) -> Result:
    """One result from a check's findings: the worst decides, the others are listed."""
    lead = _worst(findings)
    evidence = dict(lead.evidence)
    summary = lead.summary
    problems = [f for f in findings if f.status in ("fail", "warn")]
    # The same problem seen under two revisions is one problem (by_revision tells where).
    unique = {_UNDER.sub("", f.summary): f"{f.status}: {f.summary}" for f in reversed(problems)}
    distinct = list(reversed(unique.values()))
    if len(distinct) > 1:
        evidence["problems"] = distinct[:LISTED] + [f"... and {len(distinct) - LISTED} more"] * (len(distinct) > LISTED)
        summary = f"{summary} (and {len(distinct) - 1} more problem(s))"
    revisions = list(dict.fromkeys(f.revision for f in findings if f.revision is not None))
    if len(revisions) > 1:
        by_revision = {r: _worst([f for f in findings if f.revision == r]) for r in revisions}
        evidence["by_revision"] = {r: {"status": f.status, "summary": f.summary} for r, f in by_revision.items()}
        order = sorted(by_revision.items(), key=lambda item: -_RANK[item[1].status])
        parts: dict[str, list[str]] = {}
        for revision, finding in order:
            parts.setdefault(finding.status, []).append(revision)
        summary += " [" + "; ".join(f"{_VERB[s]} under {', '.join(rs)}" for s, rs in parts.items()) + "]"
    return Result(check, lead.status, summary, evidence, CATALOGUE[check].rule_named(lead.rule))


class Findings:
    """Thread-safe collector: probes run in parallel threads and report here.

    ``checks``: the checks a report holds (every check of a stdio report by default; over HTTP the
    transport's own too).
    """

    def __init__(self, checks: Iterable[str] = CHECKS) -> None:
        self.checks = list(checks)
        self._found: dict[str, list[Finding]] = {}
        # Why an unreached check was not reached; set by the step that stopped the session.
        self.unreached = "not reached: an earlier step did not complete"
        self._lock = threading.Lock()

    def add(
        self,
        check: str,
        status: str,
        summary: str,
        evidence: dict[str, Any] | None = None,
        rule: str = "main",
        revision: str | None = None,
    ) -> None:
        if check not in self.checks or status not in STATUSES:
            raise ValueError(f"unknown check {check!r} or status {status!r}")
        followed = CATALOGUE[check].rule_named(rule)  # KeyError for a rule the catalogue does not name
        if status == "fail" and not followed.may_fail:
            raise ValueError(f"{check}: a {followed.keyword} rule can warn, never fail ({summary})")
        with self._lock:
            self._found.setdefault(check, []).append(Finding(status, summary, dict(evidence or {}), rule, revision))

    def passed(self, check: str, summary: str, evidence: dict[str, Any] | None = None, **how: Any) -> None:
        self.add(check, "pass", summary, evidence, **how)

    def failed(self, check: str, summary: str, evidence: dict[str, Any] | None = None, **how: Any) -> None:
        self.add(check, "fail", summary, evidence, **how)

    def warned(self, check: str, summary: str, evidence: dict[str, Any] | None = None, **how: Any) -> None:
        self.add(check, "warn", summary, evidence, **how)

    def skipped(self, check: str, summary: str, **how: Any) -> None:
        self.add(check, "skip", summary, **how)

    def status(self, check: str) -> str | None:
        with self._lock:
            findings = list(self._found.get(check, []))
        return _worst(findings).status if findings else None

    def results(self) -> dict[str, Result]:
        """One result per check of the report, in catalogue order; an unreached check is a skip."""
        with self._lock:
            found = {k: list(v) for k, v in self._found.items()}
        return {
            check: merge(check, found[check]) if check in found else Result(check, "skip", self.unreached)
            for check in self.checks
        }
