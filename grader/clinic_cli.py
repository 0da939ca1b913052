"""``mcp-lab clinic``: your clinic cases (stage 08), from a terminal in your stage 08 folder.

The cases are the ones the stage 08 notebook gives you: drawn from the course's salt
(``clinic.json`` in the folder) and your student id (``$MCP_LAB_STUDENT``, your JupyterHub user, or
your login name). Nothing here names a defect, except ``key``, which says what it is.

    $ mcp-lab clinic list                         # each case: live server or host log, and its symptom
    $ mcp-lab check -- mcp-lab clinic run case-01 # a live case as a stdio server
    $ mcp-lab clinic log case-02                  # a log case's log, with line numbers
    $ mcp-lab clinic key                          # the answer key of your cases (self-study only)
"""

from __future__ import annotations

import argparse
import json
import os

from .cli_errors import UsageError


def clinic_command(args: argparse.Namespace) -> int:
    from .course import clinic

    cases = clinic.cases()
    if args.clinic_command == "list":
        for name, case in cases.items():
            kind = "live server" if case.kind == "live" else "host log   "
            print(f"{name}  {kind}  {case.symptom}")
        print(f"\n(drawn for {clinic.student()}; salt from {clinic.SALT_FILE} or the self-paced default)")
        print("Run a live case: mcp-lab check -- mcp-lab clinic run case-01; read a log: mcp-lab clinic log CASE")
        return 0
    if args.clinic_command == "key":
        from .course.kit import is_kit

        if is_kit():
            raise UsageError("mcp-lab clinic key: not in a graded class's kit (your instructor holds the key)")
        print("The answer key of your own cases, for self-study: the rule of each, and a log's line.")
        print(json.dumps(clinic.key(), indent=1))
        return 0
    case = cases.get(args.case)
    if case is None:
        first, last = min(cases), max(cases)
        raise UsageError(f"mcp-lab clinic: there is no case {args.case!r}; your cases are {first} to {last}")
    if args.clinic_command == "log":
        if case.kind != "log":
            raise UsageError(f"mcp-lab clinic log: {args.case} is a live server: mcp-lab clinic run {args.case}")
        log = clinic.host_log(args.case)
        width = len(str(len(log.lines)))
        for number, line in enumerate(log.lines, 1):
            print(f"{number:>{width}}  {line}")
        return 0
    if case.kind != "live":
        raise UsageError(f"mcp-lab clinic run: {args.case} is a host log, not a server: mcp-lab clinic log {args.case}")
    command = clinic.command(args.case)
    # Become the case's server: same pid, same pipes, so the caller talks to it directly.
    os.execv(command[0], command)
