"""The instructor's repairs of stage 09: the five handed-out servers, made healthy.

Each handed-out ``repair_N.py`` (beside the stage's notebook, ``notebooks/09-clinic-repair/``) has
one defect. Its repair is written here as the few edits that make it healthy, applied to the
handed-out text, so that the two cannot drift apart (``tests/test_course_repairs.py`` proves that
every healthy file passes its cell, public and hidden checks). Only grading and the instructor's
solution cell import this package; the learner's kernel never does.

    >>> "WRITING = threading.Lock()" in healthy_source(1)
    True
    >>> changed_lines(handed_out(5), healthy_source(5))
    3
"""

from __future__ import annotations

from pathlib import Path

from grader.course.checks.stage09 import FOLDER, SERVERS, changed_lines, file_name, handed_out

__all__ = ["FIXES", "apply_solution", "changed_lines", "handed_out", "healthy_source"]

# Each server's repair: (text of the handed-out file, what the healthy file has instead).
FIXES: dict[int, list[tuple[str, str]]] = {
    # Replies and rejections come from different threads: one lock around every write of a message.
    1: [
        (
            "def send(message):\n"
            '    """Write one message. json.dump streams it: a big result is never built as one string."""\n'
            "    json.dump(message, OUT, ensure_ascii=False)\n"
            '    OUT.write("\\n")\n'
            "    OUT.flush()\n",
            "WRITING = threading.Lock()  # one message at a time on stdout, whichever thread writes it\n"
            "\n"
            "\n"
            "def send(message):\n"
            '    """Write one message. json.dump streams it: a big result is never built as one string."""\n'
            "    with WRITING:\n"
            "        json.dump(message, OUT, ensure_ascii=False)\n"
            '        OUT.write("\\n")\n'
            "        OUT.flush()\n",
        ),
        (
            '    OUT.write(json.dumps({"jsonrpc": "2.0", "id": None, "error": error.to_error()}) + "\\n")\n'
            "    OUT.flush()\n",
            "    with WRITING:\n"
            '        OUT.write(json.dumps({"jsonrpc": "2.0", "id": None, "error": error.to_error()}) + "\\n")\n'
            "        OUT.flush()\n",
        ),
    ],
    # The error path wrote into stdout's buffer and never flushed it.
    2: [
        (
            '        self.write({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": text}})\n',
            '        self.write({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": text}})\n'
            "        self.out.flush()\n",
        ),
    ],
    # The tool calls were keyed, and answered, by str(id): key them by the id itself.
    3: [
        (
            '        # notifications/cancelled may name a call as 7 or as "7": a string key finds it either way.\n'
            "        key = str(request_id)\n",
            '        # Keyed by the id itself: 7 and "7" are two different ids, and a reply carries its own.\n'
            "        key = request_id\n",
        ),
        (
            '        call = self.running.get(str(params.get("requestId")))\n',
            '        request_id = params.get("requestId")\n'
            "        call = self.running.get(request_id) if isinstance(request_id, (str, int)) else None\n",
        ),
    ],
    # tally writes to stdout (print and file descriptor 1): keep the real stdout for the protocol,
    # and point descriptor 1 at stderr before tally starts.
    4: [
        (
            "def main():\n    methods = make_server()\n    out = sys.stdout.buffer\n",
            "def main():\n"
            '    out = os.fdopen(os.dup(1), "wb")  # the protocol\'s own copy of the real stdout\n'
            "    os.dup2(2, 1)  # descriptor 1 (print, tally's os.write) now leads to stderr\n"
            "    methods = make_server()\n",
        ),
    ],
    # The request's _meta was checked once per connection: check every request's own (2026-07-28 is stateless).
    5: [
        (
            "        if self.client is not None:\n"
            "            return self.client  # checked on this connection's first request\n",
            "",
        ),
        ("        self.client = meta\n", ""),
    ],
}


def healthy_source(number: int) -> str:
    """``repair_NUMBER.py`` repaired: the handed-out text with the instructor's edits."""
    text = handed_out(number)
    for old, new in FIXES[number]:
        if text.count(old) != 1:
            raise ValueError(f"repair {number}: the fix no longer matches the handed-out file: {old[:60]!r}")
        text = text.replace(old, new)
    return text


def apply_solution(folder: Path | None = None) -> list[Path]:
    """The instructor's repairs, written over the handed-out files in ``folder`` (the cwd).

    Never in the course's own copy of the stage, nor in an nbgrader course's ``source/`` or its
    private one: the release would then carry the healthy files."""
    folder = (Path.cwd() if folder is None else folder).resolve()
    course = folder.parent.parent
    if folder == FOLDER.resolve() or (folder.parent.name == "source" and (course / "nbgrader_config.py").exists()):
        raise RuntimeError(
            f"not writing the repairs into {folder}: its files are the ones handed out. "
            "Run this notebook in a copy of the stage's folder."
        )
    written = []
    for number in range(1, SERVERS + 1):
        path = folder / file_name(number)
        path.write_text(healthy_source(number), encoding="utf-8")
        written.append(path)
    return written
