"""The real-server corpus: stdio MCP servers no one here wrote, as the checker is pointed at them.

``bench/install_corpus.sh`` installs the pinned versions into build/corpus/ (npm packages with
``npm install --prefix``, PyPI ones into a venv of their own); the official Python SDK 2.x server
``bench/sdk_shop_server.py`` runs on the project's own venv. tests/test_corpus.py asserts the
checker's verdicts on each, bench/check_speed.py times it.

    >>> sorted(COMMANDS)
    ['mcp-server-time', 'sdk-shop', 'server-everything', 'server-filesystem']
    >>> COMMANDS["server-filesystem"][-1].endswith("build/corpus/files")
    True
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "build" / "corpus"
NPM_BIN = CORPUS / "npm" / "node_modules" / ".bin"
INSTALLED = CORPUS / "installed.txt"  # written by bench/install_corpus.sh once everything is in
INSTALL = "bench/install_corpus.sh"

COMMANDS: dict[str, list[str]] = {
    "server-everything": [str(NPM_BIN / "mcp-server-everything")],
    "server-filesystem": [str(NPM_BIN / "mcp-server-filesystem"), str(CORPUS / "files")],
    "mcp-server-time": [str(CORPUS / "venv" / "bin" / "mcp-server-time")],
    "sdk-shop": [sys.executable, str(ROOT / "bench" / "sdk_shop_server.py")],
}
# The same server-filesystem, fetched and started by a launcher (a cold or warm npm cache).
LAUNCHED_FILESYSTEM = ["npx", "-y", "@modelcontextprotocol/server-filesystem@2026.8.31", str(CORPUS / "files")]


def installed() -> bool:
    """Whether bench/install_corpus.sh has run to the end here."""
    return INSTALLED.is_file() and all(Path(argv[0]).exists() for argv in COMMANDS.values())
