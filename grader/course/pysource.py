"""Python source read as a tree, one thread at a time.

The checks of several cells run side by side in threads (grading, ``mcp-lab progress``), and some
read the learner's source (stage 05's capstone, stage 09's repairs). CPython 3.11 keeps the AST
constructor's recursion depth in state shared by every thread, so two threads in ``ast.parse`` at
once can fail with ``SystemError: AST constructor recursion depth mismatch`` (python/cpython
gh-106905): a grading error that has nothing to do with the learner's code. So every parse of the
course's goes through one lock.

    >>> type(parse("x = 1")).__name__
    'Module'
"""

from __future__ import annotations

import ast
import threading

_ONE_AT_A_TIME = threading.Lock()


def parse(source: str, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse(source)``, never in two threads at once."""
    with _ONE_AT_A_TIME:
        return ast.parse(source, filename)
