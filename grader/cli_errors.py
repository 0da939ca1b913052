"""The one exit for people's errors on the ``mcp-lab`` command line: :class:`UsageError`.

A wrong invocation, of any subcommand, raises it with the one line to show; ``grader.cli.main``
prints that line on stderr and exits with status 2, never a traceback. Here, importing nothing of
the project, so that every subcommand's module (``cli.py``, ``clinic_cli.py``) can raise it
without importing the command line that dispatches to it.

    >>> try:
    ...     Parser(prog="mcp-lab demo").parse_args(["--bogus"])
    ... except UsageError as exc:
    ...     print(exc)
    mcp-lab demo: unrecognized arguments: --bogus (see mcp-lab demo --help)
"""

from __future__ import annotations

import argparse
from typing import NoReturn


class UsageError(Exception):
    pass


class Parser(argparse.ArgumentParser):
    """argparse, but a mistake is one line ("mcp-lab check: error: ...") and exit 2."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message} (see {self.prog} --help)")
