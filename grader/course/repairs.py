"""Stage 09's broken servers: copies of :mod:`grader.course.repair_template` with one defect each.

Each defect is one small edit of the healthy file, of a kind the field ships. The learner gets the
files (``repair_1.py`` ... beside the notebook, written once and never overwritten), a symptom for
each, and repairs them in the editor. The grade: ``mcp-lab check`` on the repaired file fails no
check (warnings allowed), and the repair is a repair: a few lines changed, not a new server.

    >>> [d.check for d in DEFECTS]
    ['stdout-flush', 'id-echo', 'notification-silence', 'survives-bad-input', 'stdout-json-lines']
    >>> "flush" in broken_source(1)
    False
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from .expect import Failure
from .lab import graded_check

TEMPLATE = Path(__file__).with_name("repair_template.py")
MAX_CHANGED_LINES = 12  # a repair touches a few lines; more means a rewrite


@dataclass(frozen=True)
class Defect:
    check: str  # the check the broken file fails
    symptom: str  # what a host or user reports
    healthy: str  # text of the template ...
    broken: str  # ... and what the broken copy has instead


DEFECTS = [
    Defect(
        "stdout-flush",
        "Hangs on connect with every host; typed into a terminal by hand, it answers.",
        '    sys.stdout.buffer.write(json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\\n")\n'
        "    sys.stdout.buffer.flush()\n",
        '    sys.stdout.buffer.write(json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\\n")\n',
    ),
    Defect(
        "id-echo",
        "Hosts that number their requests time out on the first one; a test client with string ids works.",
        '    message_id = message["id"]\n',
        '    message_id = str(message["id"])\n',
    ),
    Defect(
        "notification-silence",
        "Strict hosts drop the connection right after the handshake: a reply to a message that had no id.",
        '    if "id" not in message:\n'
        "        return None  # a notification: never answered\n"
        '    message_id = message["id"]\n',
        '    message_id = message.get("id")\n',
    ),
    Defect(
        "survives-bad-input",
        "Works until a client sends one malformed line; then the host says the server disconnected.",
        "        try:\n"
        '            message = json.loads(line.decode("utf-8"))\n'
        "        except ValueError as exc:\n"
        '            send(error(None, -32700, f"Parse error: {exc}"))\n'
        "            continue\n",
        '        message = json.loads(line.decode("utf-8"))\n',
    ),
    Defect(
        "stdout-json-lines",
        "Connects, then every request fails in the host with 'Unexpected token' in a JSON parser.",
        '    method = METHODS.get(message["method"])\n',
        '    print(f"handling {message[\'method\']}")\n    method = METHODS.get(message["method"])\n',
    ),
]


def file_name(number: int) -> str:
    return f"repair_{number}.py"


def broken_source(number: int) -> str:
    """The text of ``repair_NUMBER.py`` as handed out (numbers from 1)."""
    defect = DEFECTS[number - 1]
    text = TEMPLATE.read_text(encoding="utf-8")
    head = f'"""Repair {number}: {defect.symptom}\n\nFind the defect and fix it in this file."""\n'
    body = text[text.index("\nimport json") :]
    assert defect.healthy in body, f"defect {number} no longer matches the template"
    return head + body.replace(defect.healthy, defect.broken, 1)


def healthy_source(number: int) -> str:
    """``repair_NUMBER.py`` repaired: the instructor's solution."""
    return broken_source(number).replace(DEFECTS[number - 1].broken, DEFECTS[number - 1].healthy, 1)


def hand_out(folder: Path | None = None) -> list[str]:
    """Write the broken files into ``folder`` (the cwd) where they are missing; never overwrite."""
    folder = Path.cwd() if folder is None else folder
    names = []
    for number in range(1, len(DEFECTS) + 1):
        path = folder / file_name(number)
        if not path.exists():
            path.write_text(broken_source(number), encoding="utf-8")
        names.append(path.name)
    return names


def apply_solution(folder: Path | None = None) -> None:
    """The instructor's repairs, written over the files."""
    folder = Path.cwd() if folder is None else folder
    for number in range(1, len(DEFECTS) + 1):
        (folder / file_name(number)).write_text(healthy_source(number), encoding="utf-8")


def check_repair(number: int) -> None:
    """The repaired file fails no check, and differs from the handed-out one by a few lines only."""
    import sys

    path = Path.cwd() / file_name(number)
    if not path.is_file():
        raise Failure("clinic-repair", f"{path.name} is missing: run the cell that hands out the files")
    changed = _changed_lines(broken_source(number), path.read_text(encoding="utf-8"))
    if changed == 0:
        raise Failure("clinic-repair", f"{path.name} is as it was handed out: find its defect and fix it")
    if changed > MAX_CHANGED_LINES:
        raise Failure(
            "clinic-repair",
            f"{path.name} differs from the handed-out file in {changed} lines: repair it, do not rewrite it",
            hint=f"a repair changes at most {MAX_CHANGED_LINES} lines",
        )
    failed = [r for r in graded_check([sys.executable, str(path)]).results if r.status == "fail"]
    if failed:
        first = failed[0]
        others = f" (and {', '.join(r.id for r in failed[1:])})" if failed[1:] else ""
        raise Failure(first.id, f"mcp-lab check on {path.name}: {first.summary}{others}")


def _changed_lines(before: str, after: str) -> int:
    diff = difflib.ndiff(before.splitlines(), after.splitlines())
    return sum(1 for line in diff if line[:2] in ("- ", "+ "))
