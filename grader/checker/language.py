"""What language a server command is written in, as far as the command tells: for fix hints.

A hint about ``sys.stdin.buffer`` helps a Python author and confuses a Node one. The command's
words decide (the program, a script's suffix, a launcher), then a script's ``#!`` line; when
nothing tells, the hints are worded for any language.

    >>> server_language(["python3", "server.py"])
    'python'
    >>> server_language(["npx", "-y", "@modelcontextprotocol/server-everything"])
    'node'
    >>> server_language(["./server-binary", "--stdio"])
    'neutral'
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Sequence
from pathlib import Path

PYTHON_PROGRAMS = re.compile(r"^(python[\d.]*|pypy[\d.]*|uv|uvx|pipx|poetry|pdm|hatch|mcp-lab)$")
NODE_PROGRAMS = re.compile(r"^(node|nodejs|npx|npm|pnpm|pnpx|yarn|bun|bunx|deno|tsx|ts-node)$")
PYTHON_FILES = (".py", ".pyz")
NODE_FILES = (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts")


def _from_words(argv: Sequence[str]) -> str | None:
    program = Path(argv[0]).name
    if PYTHON_PROGRAMS.match(program):
        return "python"
    if NODE_PROGRAMS.match(program):
        return "node"
    for word in argv:
        if word.endswith(PYTHON_FILES):
            return "python"
        if word.endswith(NODE_FILES):
            return "node"
    return None


def _from_shebang(program: str) -> str | None:
    path = shutil.which(program)
    if path is None:
        return None
    try:
        with open(path, "rb") as file:
            first = file.readline(200)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode("utf-8", "replace").split()
    words = words[1:] if words and Path(words[0]).name == "env" else words
    words = [w for w in words if not w.startswith("-")]  # env -S and the like
    return _from_words(words) if words else None


def server_language(argv: Sequence[str]) -> str:
    """``"python"``, ``"node"`` or ``"neutral"``."""
    if not argv:
        return "neutral"
    return _from_words(argv) or _from_shebang(argv[0]) or "neutral"
