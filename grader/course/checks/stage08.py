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
of it, not a kitchen sink (:func:`evidence_problem`: a line whose replies are the reference's own
shows nothing, and if the case still breaks the rule without such lines, they were not needed). It
does not say whether the rule named is the case's defect; of a log case, it says that the line is in
the log. The hidden check grades the rule: it must be the one the case's defect breaks, shown by the
learner's own replay (a live case), or shown on that very line (a log).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from grader.checker.catalogue import CHECKS, MODERN_CHECKS
from grader.checker.transcript import Session, broken

from ..clinic import Case, draw_for
from ..clinic.hostlog import render
from ..clinic.replay import MAX_LINE, MAX_LINES, replay
from ..expect import Failure, show
from ..work import Work
from . import public

CASES = 10
# The reference a case is compared with: the same server with no defect (the shop's tools only).
REFERENCE = [sys.executable, "-m", "grader.course.clinic.server", "--healthy"]
_REPLAYS: dict[tuple[str, ...], tuple[Session, Session]] = {}  # this process's replays, by case and lines


def _cell(number: int) -> None:
    name = f"case-{number:02d}"

    @public("08", f"test_case_{number:02d}", f"{name}: the answer's form, and whether its evidence shows a defect")
    def run(work: Work) -> None:
        check_evidence(work, name)


for _number in range(1, CASES + 1):
    _cell(_number)


def case_of(work: Work, name: str) -> Case:
    found = {c.name: c for c in draw_for(work.salt, work.student)}
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


def sessions(work: Work, case: Case, lines: list[str | bytes]) -> tuple[Session, Session]:
    """The case's session and the reference's on the same lines (replayed once per process)."""
    key = (work.salt, work.student, case.name, *[repr(line) for line in lines])
    if key not in _REPLAYS:
        command = [sys.executable, "-m", "grader.course.clinic.server", work.salt, work.student, case.name]
        _REPLAYS[key] = replay_pair(command, lines)
    return _REPLAYS[key]


def replay_pair(command: list[str], lines: list[str | bytes]) -> tuple[Session, Session]:
    """``command``'s session and the reference's on ``lines``, replayed side by side."""
    from reference.catalog import TOOLS

    with ThreadPoolExecutor(max_workers=2) as pool:
        mine, theirs = pool.map(lambda argv: replay(argv, lines), [command, REFERENCE])
    schemas = {tool["name"]: tool["outputSchema"] for tool in TOOLS}
    mine.tool_schemas = theirs.tool_schemas = schemas
    return mine, theirs


def _shown(session: Session) -> list[str]:
    shown = []
    for item in session.received[:6]:
        when = " (before anything was sent)" if item.early else " (only after stdin closed)" if item.after_close else ""
        shown.append(show(item.data) + when)
    if session.died:
        shown.append(f"(the server exited, status {session.exit_code}, while its stdin was open)")
    return shown or ["(nothing)"]


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


# -- evidence of the rule named: it shows on the lines, and the lines are a reproducer of it ---------
MOST_KEPT = 3  # lines a reproducer may hold before its halves are tried alone (honest ones hold 1 or 2)


def _usable_id(message: Any) -> str | None:
    """The JSON key of a request's id (a string or an integer), else None."""
    if not isinstance(message, dict) or not isinstance(message.get("method"), str) or "id" not in message:
        return None
    id = message["id"]
    ok = isinstance(id, str) or (isinstance(id, int) and not isinstance(id, bool))
    return json.dumps(id) if ok else None


def _loose_key(key: str) -> str:
    """An id's JSON without the quotes of a string: 7 and "7" meet."""
    return key.strip('"')


def _decoded(item: Any) -> Any:
    """A received line's JSON (``_NOT_JSON`` for a line that is not JSON)."""
    try:
        return json.loads(item.data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return _NOT_JSON


_NOT_JSON = object()


def _owner(reply: Any, owners: dict[str, str]) -> str | None:
    """The request (its id's JSON) that ``reply`` answers: its id, or the same id in another JSON type."""
    id = reply.get("id") if isinstance(reply, dict) and "method" not in reply else None
    if not isinstance(id, str | int) or isinstance(id, bool):
        return None
    return owners.get(_loose_key(json.dumps(id)))


def _attributed(session: Session, owners: dict[str, str]) -> tuple[dict[str, list[str]], list[str]]:
    """What came back: (by the request it answers, the rest that is JSON), each reply with its moment."""
    by_id: dict[str, list[str]] = {}
    anonymous: list[str] = []
    for item in session.received:
        reply = _decoded(item)
        if reply is _NOT_JSON:
            continue
        shown = json.dumps([reply, item.after_close, item.early], sort_keys=True)
        owner = _owner(reply, owners)
        (by_id.setdefault(owner, []) if owner is not None else anonymous).append(shown)
    return {key: sorted(found) for key, found in by_id.items()}, sorted(anonymous)


def _not_json(session: Session) -> list[bytes]:
    """The stdout lines that are not JSON, written once something was sent."""
    return [item.data for item in session.received if not item.early and _decoded(item) is _NOT_JSON]


def _beside_not_json(session: Session, owners: dict[str, str]) -> set[str]:
    """The requests whose replies were written just before or just after a stdout line that is not JSON."""
    at = {n: _owner(_decoded(item), owners) for n, item in enumerate(session.received)}
    found: set[str] = set()
    for position, item in enumerate(session.received):
        if item.early or _decoded(item) is not _NOT_JSON:
            continue
        before = [at[n] for n in range(position - 1, -1, -1) if at[n] is not None][:1]
        after = [at[n] for n in range(position + 1, len(session.received)) if at[n] is not None][:1]
        found.update(key for key in before + after if key is not None)
    return found


def idle_lines(mine: Session, theirs: Session) -> list[int]:
    """The positions of the lines sent that show nothing: what came back for them is what the
    reference sent back, at the same moment (before or after stdin closed).

    A request is judged by the replies that carry its id (or the same id in another JSON type); the
    lines without a usable id (not JSON, a notification, an id null) together, by the replies that
    name no request. A stdout line that is not JSON marks the requests whose replies were written
    next to it: it came out while they were answered. What was written before anything was sent
    (a banner) belongs to no line."""
    keys = [_usable_id(message) for message in mine.messages()]
    owners = {_loose_key(key): key for key in keys if key is not None}
    mine_by_id, mine_rest = _attributed(mine, owners)
    theirs_by_id, theirs_rest = _attributed(theirs, owners)
    noisy = set() if _not_json(mine) == _not_json(theirs) else _beside_not_json(mine, owners)
    idle = []
    for index, key in enumerate(keys):
        if key is None:
            same = mine_rest == theirs_rest and _not_json(mine) == _not_json(theirs)
        else:
            same = keys.count(key) == 1 and key not in noisy
            same = same and mine_by_id.get(key, []) == theirs_by_id.get(key, [])
        if same:
            idle.append(index)
    return idle


def _numbers(lines: list[int]) -> str:
    shown = [str(n + 1) for n in lines]
    return ("line " if len(shown) == 1 else "lines ") + ", ".join(shown)


def evidence_problem(
    name: str, rule: str, lines: list[str | bytes], replayed: Callable[[list[str | bytes]], tuple[Session, Session]]
) -> Failure | None:
    """Why ``lines`` are not evidence of ``rule`` on the case ``name`` (None when they are); ``replayed``
    gives the case's session and the reference's on some lines.

    They are evidence when, replayed as grading replays them, the case breaks ``rule`` and the
    reference keeps it, and when they are a reproducer of it rather than a kitchen sink: the lines
    that show nothing (:func:`idle_lines`) are left out and the rest replayed; if the case still
    breaks ``rule`` without them, they were not needed. A reproducer of more than ``MOST_KEPT`` lines
    that show something must also need both its halves. Whether ``rule`` is the case's defect is the
    hidden check's question, never answered here."""
    mine, theirs = replayed(lines)
    found = broken(mine, theirs)
    sent = [show(line) for line in lines]
    if rule not in found:
        if found:
            summary = (
                f"{name}: on your lines the case does something the reference does not, but it does not break {rule}"
            )
            hint = (
                f"the rule you name must be the one your lines show broken: read what came back (clinic.compare"
                f"({name!r}, lines)) and the catalogue's words for {rule}"
            )
        else:
            summary = f"{name}: on your lines the case did nothing the reference does not do: {rule} did not show"
            hint = (
                "read the symptom again: what would a host have sent when it went wrong? Try that, in the "
                "smallest form you can"
            )
        return Failure(
            "clinic",
            summary,
            sent=sent,
            expected=f"the case breaking {rule} where the reference keeps it; the reference answered: "
            + " | ".join(_shown(theirs)),
            received=_shown(mine),
            hint=hint,
        )
    idle = idle_lines(mine, theirs)
    showing = [n for n in range(len(lines)) if n not in idle]
    tries: list[list[int]] = []
    if len(lines) > 1:
        kept = showing or [0]
        if len(kept) < len(lines):
            tries.append(kept)
        if len(kept) > MOST_KEPT:
            half = len(kept) // 2
            tries += [kept[:half], kept[half:]]
    for kept in tries:
        smaller, reference = replayed([lines[n] for n in kept])
        if rule in broken(smaller, reference):
            left_out = [n for n in range(len(lines)) if n not in kept]
            why = (
                "what came back for them is what the reference sent"
                if set(left_out) <= set(idle)
                else "they are not needed"
            )
            return Failure(
                "clinic",
                f"{name}: your lines are more than the evidence of {rule}: without {_numbers(left_out)} "
                f"the case still breaks it ({why})",
                sent=sent,
                expected=f"a reproducer: only the lines that make the case break {rule} ({_numbers(kept)} do)",
                hint="remove lines until the defect stops showing, then put the last one back: what is left "
                "is the evidence, and it says where to look in the code",
            )
    return None


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
            received=_shown(mine),
        )
