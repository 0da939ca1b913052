"""The clinic (stage 08): servers with one defect each, drawn for one learner, and the learner's evidence.

A learner gets ten cases (:mod:`.draw`): live servers to run and probe, and host logs to read.
Which cases comes from the course's salt (``clinic.json`` beside the notebook, released with it)
and the learner's own id (their JupyterHub or nbgrader user, or ``$MCP_LAB_STUDENT``, or the
login name), never from a file they hand in. Each answer names the rule broken (a check id of
``mcp-lab check``) and carries evidence: for a live case, the lines that make it break the rule
(replayed against the case and the reference, :mod:`.replay`, and judged as evidence, :mod:`.evidence`);
for a log, the number of the line where the defect shows.

    >>> cases = draw_for("salt", "alice")
    >>> sorted({c.kind for c in cases})
    ['live', 'log']
"""

from __future__ import annotations

import getpass
import json
import os
import sys
from pathlib import Path
from typing import Any

from .draw import Case, draw
from .hostlog import HostLog, render

SALT_FILE = "clinic.json"
SELF_PACED = "self-paced"  # the salt where no course gave one
STUDENT_VARS = ("MCP_LAB_STUDENT", "NBGRADER_STUDENT", "JUPYTERHUB_USER")


def student() -> str:
    """This learner's id: the one nbgrader will know them by."""
    for name in STUDENT_VARS:
        if os.environ.get(name):
            return os.environ[name]
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "learner"


def salt(folder: Path | None = None) -> str:
    """The course's salt, from ``clinic.json`` in ``folder`` (the notebook's); a fixed one if there is none."""
    path = (Path.cwd() if folder is None else folder) / SALT_FILE
    try:
        value = json.loads(path.read_text(encoding="utf-8")).get("salt")
    except (OSError, ValueError, AttributeError):
        return SELF_PACED
    return value if isinstance(value, str) and value else SELF_PACED


def draw_for(salt_value: str, student_id: str) -> list[Case]:
    return draw(salt_value, student_id)


def cases(folder: Path | None = None, student_id: str | None = None) -> dict[str, Case]:
    """This learner's cases, by name."""
    return {c.name: c for c in draw(salt(folder), student_id or student())}


def command(case: str, folder: Path | None = None, student_id: str | None = None) -> list[str]:
    """The command that runs the live case ``case`` as a stdio server."""
    found = cases(folder, student_id).get(case)
    if found is None or found.kind != "live":
        live = [name for name, c in cases(folder, student_id).items() if c.kind == "live"]
        raise ValueError(f"{case!r} is not one of your live cases ({', '.join(live)})")
    return [sys.executable, "-m", "grader.course.clinic.server", salt(folder), student_id or student(), case]


def reference() -> list[str]:
    """The command that runs the server every case is made from, with no defect: compare against it."""
    return [sys.executable, "-m", "grader.course.clinic.server", "--healthy"]


def compare(case: str, lines: list[str | bytes], folder: Path | None = None, rule: str | None = None) -> None:
    """Send ``lines`` at once to ``case`` and to the healthy server, as grading replays your evidence,
    and print both sessions: every reply whole where it is short, and where a reply differs from the
    healthy server's, the region around the first differing byte with the length of each. Then whether
    the case did something the rules forbid (not which rule); with ``rule``, the visible check's verdict
    on your lines as evidence of that rule."""
    from grader.checker.transcript import broken

    from ..work import Work
    from .evidence import evidence_problem, sessions

    work = Work(Path.cwd() if folder is None else folder, "08", student=student(), salt=salt(folder))
    found = cases(folder).get(case)
    if found is None or found.kind != "live":
        raise ValueError(f"{case!r} is not one of your live cases")
    mine, theirs = sessions(work, found, list(lines))
    for title, session, other in ((case, mine, theirs), ("the healthy server", theirs, mine)):
        print(f"{title}:")
        for item in session.received:
            when = (
                "  (before anything was sent)"
                if item.early
                else "  (only after stdin closed)"
                if item.after_close
                else ""
            )
            print(f"  <- {_shown_beside(item.data, _counterpart(item.data, session, other))}{when}")
        if not session.received:
            print("  (nothing)")
        if session.died:
            print(f"  (exited with status {session.exit_code} while its stdin was open)")
    first = _first_difference(mine, theirs)
    if first:
        print(first)
    shown = (
        "yes: the case broke a rule the healthy server kept" if broken(mine, theirs) else "no difference the rules see"
    )
    print(f"evidence: {shown}")
    if rule is not None:
        problem = evidence_problem(case, rule, list(lines), lambda some: sessions(work, found, some))
        print(f"as evidence of {rule}: " + ("yes" if problem is None else problem.text()))


CUT = 300  # characters of a reply shown whole; a longer one is shown around where it differs


def _key(data: bytes) -> str | None:
    """A reply's id as text (7 and "7" alike), to pair it with the other server's reply to the same request."""
    import json

    try:
        message = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return None
    id = message.get("id") if isinstance(message, dict) else None
    return None if id is None else json.dumps(id).strip('"')


def _counterpart(data: bytes, session: Any, other: Any) -> bytes | None:
    """The other session's line in this one's place: the reply to the same request, else the line at the
    same position among the lines that answer no request."""
    key = _key(data)
    if key is not None:
        return next((item.data for item in other.received if _key(item.data) == key), None)
    mine = [item.data for item in session.received if _key(item.data) is None]
    theirs = [item.data for item in other.received if _key(item.data) is None]
    position = mine.index(data)
    return theirs[position] if position < len(theirs) else None


def _shown_beside(data: bytes, other: bytes | None) -> str:
    """A reply as text: whole up to ``CUT`` characters; a longer one cut where it does not hide how it differs."""
    from ..wirediff import byte_window

    text = data.decode("utf-8", "backslashreplace")
    if len(text) <= CUT:
        return text
    if other is None or other == data:
        same = ", the same as the other server's" if other == data else ""
        return f"{text[:CUT]}... ({len(data)} bytes{same})"
    window, _, at = byte_window(data, other, CUT // 2)
    return f"{window}  ({len(data)} bytes; the other server's: {len(other)} bytes; they differ from byte {at})"


def _first_difference(mine: Any, theirs: Any) -> str:
    """The first reply of the case that differs from the healthy server's, in words (or "")."""
    from ..wirediff import content_lines

    for item in mine.received:
        other = _counterpart(item.data, mine, theirs)
        if other != item.data:
            names = ("the case", "the healthy server")
            lines = content_lines(item.data, other, names) if other is not None else ["  (the healthy server: nothing)"]
            shown = item.data.decode("utf-8", "backslashreplace")
            head = f"first difference: {shown[:80]}{'...' if len(shown) > 80 else ''}"
            return "\n".join([head, *lines])
    extra = [item for item in theirs.received if _counterpart(item.data, theirs, mine) is None]
    if extra:
        return f"first difference: the healthy server sent {extra[0].data[:200]!r}; the case sent nothing in its place"
    return ""


def host_log(case: str, folder: Path | None = None, student_id: str | None = None) -> HostLog:
    """The host's log of the log case ``case``."""
    found = cases(folder, student_id).get(case)
    if found is None or found.kind != "log":
        logs = [name for name, c in cases(folder, student_id).items() if c.kind == "log"]
        raise ValueError(f"{case!r} is not one of your log cases ({', '.join(logs)})")
    return render(found.defect, seed=int(found.name[-2:]))


def symptoms(folder: Path | None = None) -> None:
    """Print the cases: their kind and what a host or user reports of each."""
    for name, case in cases(folder).items():
        kind = "live server" if case.kind == "live" else "host log   "
        print(f"{name}  {kind}  {case.symptom}")


def show_log(case: str, folder: Path | None = None) -> Path:
    """Print the log of ``case`` with line numbers, and write it beside the notebook as ``CASE.log``."""
    log = host_log(case, folder)
    path = (Path.cwd() if folder is None else folder) / f"{case}.log"
    path.write_text(log.text(), encoding="utf-8")
    width = len(str(len(log.lines)))
    for number, line in enumerate(log.lines, 1):
        print(f"{number:>{width}}  {line}")
    return path


def report(argv: list[str]) -> None:
    """Run ``mcp-lab check`` on ``argv`` and print its report."""
    from grader.checker.check import run_check
    from grader.checker.report import write_text

    from ..drive import CHECK_CALL_TIMEOUT

    write_text(run_check(list(argv), call_timeout=CHECK_CALL_TIMEOUT), sys.stdout)


def catalogue() -> None:
    """Print every check id with what must hold: the rules of both eras, then those of MCP 2026-07-28 alone."""
    from grader.checker.catalogue import CHECKS, MODERN_CHECKS

    for check in [*CHECKS.values(), *MODERN_CHECKS.values()]:
        print(f"{check.id:<26} {check.holds}")


def key(folder: Path | None = None, student_id: str | None = None) -> dict[str, Any]:
    """The answer key of this learner's cases (for self-study): case -> rule, and a log's line."""
    found: dict[str, Any] = {}
    for name, case in cases(folder, student_id).items():
        if case.kind == "log":
            found[name] = {"rule": case.defect.rule, "line": host_log(name, folder, student_id).line}
        else:
            found[name] = {"rule": case.defect.rule}
    return found


__all__ = [
    "SALT_FILE",
    "Case",
    "cases",
    "catalogue",
    "command",
    "compare",
    "host_log",
    "key",
    "reference",
    "report",
    "salt",
    "show_log",
    "student",
    "symptoms",
]
