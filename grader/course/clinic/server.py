"""Run one clinic case as a stdio server: ``python -m grader.course.clinic.server SALT STUDENT CASE``.

``python -m grader.course.clinic.server --family FAMILY SEED`` runs a defect of one family with the
parameters SEED draws (for the course's own tests); ``--healthy`` runs the same server with no
defect: the reference a case is compared with (the shop's tools, no resources or prompts).

The case is drawn again from the salt and the student id (:mod:`.draw`), and its server runs in
this process, on this process's stdin and stdout: what a host starting the command would meet.
Usage errors are one line on stderr and exit status 2.
"""

from __future__ import annotations

import random
import sys

from .defects import FAMILIES, Defect, serve
from .draw import draw


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args == ["--healthy"]:
        return serve(Defect("healthy", "", ""))
    if len(args) == 3 and args[0] == "--family" and args[1] in FAMILIES and args[2].isdigit():
        return serve(FAMILIES[args[1]](random.Random(int(args[2]))))
    if len(args) != 3:
        print("usage: python -m grader.course.clinic.server SALT STUDENT CASE", file=sys.stderr)
        return 2
    salt, student, name = args
    cases = {case.name: case for case in draw(salt, student)}
    case = cases.get(name)
    if case is None or case.kind != "live":
        live = ", ".join(c for c, v in cases.items() if v.kind == "live")
        print(f"clinic: {name} is not one of this learner's live cases ({live})", file=sys.stderr)
        return 2
    return serve(case.defect)


if __name__ == "__main__":
    sys.exit(main())
