"""The checks of stage 08 (the clinic: diagnosis).

The learner's answer is a value, ``diagnosis``: for each case the rule it breaks (a check id) and
the evidence, read as data (the grader never runs the cell):

    diagnosis = {
        "case-01": {"rule": "id-echo", "reproduce": ['{"jsonrpc":"2.0","id":7,"method":"ping"}']},
        "case-02": {"rule": "stdout-json-lines", "line": 14},      # a host-log case
    }

The public check of a live case replays the learner's lines against the case and against the
reference (:mod:`grader.course.clinic.replay`) and asks for evidence of the rule *named*: the case
must break that rule on the lines while the reference keeps it, and the lines must be a reproducer
of it, not a kitchen sink (:func:`grader.course.clinic.evidence.evidence_problem`: a line whose
replies are the reference's own shows nothing, and if the case still breaks the rule without such
lines, they were not needed). It
does not say whether the rule named is the case's defect; of a log case, it says that the line is in
the log. The hidden check grades the rule: it must be the one the case's defect breaks, shown by the
learner's own replay (a live case), or shown on that very line (a log).
"""

from __future__ import annotations

from typing import Any

from grader.checker.catalogue import CHECKS, MODERN_CHECKS
from grader.checker.transcript import broken

from ..clinic.draw import Case, draw
from ..clinic.evidence import evidence_problem, sessions, shown_replies
from ..clinic.hostlog import render
from ..clinic.replay import MAX_LINE, MAX_LINES
from ..expect import Failure, show
from ..work import Work
from . import public

CASES = 10


def _cell(number: int) -> None:
    name = f"case-{number:02d}"

    @public("08", f"test_case_{number:02d}", f"{name}: the answer's form, and whether its evidence shows a defect")
    def run(work: Work) -> None:
        check_evidence(work, name)


for _number in range(1, CASES + 1):
    _cell(_number)


def case_of(work: Work, name: str) -> Case:
    found = {c.name: c for c in draw(work.salt, work.student)}
    if name not in found:
        raise Failure("clinic", f"there is no {name}: your cases are case-01 to case-{len(found):02d}")
    return found[name]


def answer(work: Work, case: Case) -> dict[str, Any]:
    """The learner's answer for ``case``, checked for its form (a teaching failure if it is wrong)."""
    diagnosis = work.answer("diagnosis")
    why = getattr(diagnosis, "why", None)
    if why:
        raise Failure("clinic", why)
    if not isinstance(diagnosis, dict):
        raise Failure("clinic", f"diagnosis must be a dict of case name to answer, got {show(diagnosis)}")
    entry = diagnosis.get(case.name)
    example = (
        '{"rule": "<check id>", "reproduce": ["<a line to send>", ...]}'
        if case.kind == "live"
        else '{"rule": "<check id>", "line": <the log line\'s number>}'
    )
    if not isinstance(entry, dict):
        raise Failure("clinic", f"diagnosis has no answer for {case.name}", hint=f'add "{case.name}": {example}')
    rule = entry.get("rule")
    if rule not in CHECKS and rule not in MODERN_CHECKS:
        raise Failure(
            "clinic",
            f"{case.name}: {show(rule)} is not a check id",
            hint="name the rule with an id from mcp-lab check's list (clinic.catalogue() prints it), e.g. "
            "'stdout-flush', 'id-echo' or 'modern-result-type'",
        )
    if case.kind == "live":
        lines = entry.get("reproduce")
        ok = isinstance(lines, list) and 0 < len(lines) <= MAX_LINES
        ok = ok and all(isinstance(line, str | bytes) and len(line) <= MAX_LINE for line in lines)
        if not ok:
            raise Failure(
                "clinic",
                f"{case.name} is a live server: its evidence is the lines that make it break the rule",
                expected=f'"reproduce": a list of 1 to {MAX_LINES} lines (text or bytes, each up to {MAX_LINE} '
                "characters), sent to the server at once",
                received=show(lines),
            )
    else:
        line = entry.get("line")
        if not isinstance(line, int) or isinstance(line, bool):
            raise Failure(
                "clinic",
                f"{case.name} is a host log: its evidence is the number of the line where the defect shows",
                received=show(line),
            )
    return entry


def check_evidence(work: Work, name: str) -> None:
    """The public check: the answer's form; a live case's lines reproduce the rule named (not which rule is right)."""
    case = case_of(work, name)
    entry = answer(work, case)
    if case.kind == "log":
        log = render(case.defect, seed=int(case.name[-2:]))
        if not 1 <= entry["line"] <= len(log.lines):
            raise Failure("clinic", f"{name}'s log has lines 1 to {len(log.lines)}, not {entry['line']}")
        return
    lines = list(entry["reproduce"])
    problem = evidence_problem(name, entry["rule"], lines, lambda some: sessions(work, case, some))
    if problem is not None:
        raise problem


def check_rule(work: Work, name: str) -> None:
    """The hidden check: the rule named is the case's, and the evidence shows it."""
    case = case_of(work, name)
    entry = answer(work, case)
    rule = entry["rule"]
    right = {case.defect.rule, *case.defect.also}
    if case.kind == "log":
        log = render(case.defect, seed=int(case.name[-2:]))
        if rule not in right:
            raise Failure("clinic", f"{name}: {rule} is not the rule this server breaks in the log")
        if entry["line"] != log.line:
            raise Failure("clinic", f"{name}: line {entry['line']} is not where the defect first shows in the log")
        return
    # A rule the defect truly breaks is a right answer (a banner on stdout breaks stdout-json-lines
    # and stdout-silent-at-start alike: the defect's "also"), if the learner's own evidence shows it,
    # judged against the reference. A rule that only follows from the defect on some lines (a ping
    # answered with another request's result, when replies go to the wrong ids) is not the diagnosis.
    mine, theirs = sessions(work, case, entry["reproduce"])
    found = broken(mine, theirs)
    if rule not in right:
        follows = (
            ": your lines show it broken, but as a consequence of the one defect, which breaks a rule "
            "first; find that one (lab.inspect(case, frames, against=clinic.reference()) shows the first frame "
            "that differs)"
            if rule in found
            else ""
        )
        raise Failure("clinic", f"{name}: {rule} is not the rule this server breaks{follows}")
    if rule not in found:
        raise Failure(
            "clinic",
            f"{name}: your lines do not show the case breaking {rule}",
            sent=[show(line) for line in entry["reproduce"]],
            received=shown_replies(mine),
        )
