"""The clinic's evidence: a learner's lines replayed against a case and the healthy server, and
whether they show the rule named (a reproducer of it, not a kitchen sink).

Both sides use it: :func:`grader.course.clinic.compare` in the learner's notebook, and the stage-08
checks (:mod:`grader.course.checks.stage08`) when they grade. It knows nothing of which rule is a
case's answer. ``REFERENCE`` is the command of the server a case is compared with:

    >>> REFERENCE[1:]
    ['-m', 'grader.course.clinic.server', '--healthy']
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from grader.checker.transcript import Session, broken

from ..expect import Failure, show
from ..work import Work
from .draw import Case
from .replay import replay

# The reference a case is compared with: the same server with no defect (the shop's tools only).
REFERENCE = [sys.executable, "-m", "grader.course.clinic.server", "--healthy"]
_REPLAYS: dict[tuple[str, ...], tuple[Session, Session]] = {}  # this process's replays, by case and lines


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


def shown_replies(session: Session) -> list[str]:
    shown = []
    for item in session.received[:6]:
        when = " (before anything was sent)" if item.early else " (only after stdin closed)" if item.after_close else ""
        shown.append(show(item.data) + when)
    if session.died:
        shown.append(f"(the server exited, status {session.exit_code}, while its stdin was open)")
    return shown or ["(nothing)"]


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
            + " | ".join(shown_replies(theirs)),
            received=shown_replies(mine),
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
