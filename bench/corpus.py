"""The real-server corpus: stdio MCP servers no one here wrote, as the checker is pointed at them.

``bench/install_corpus.sh`` installs the pinned versions into build/corpus/ (npm packages with
``npm install --prefix``, PyPI ones into a venv of their own); the official Python SDK 2.x server
``bench/sdk_shop_server.py`` runs on the project's own venv. tests/test_corpus.py asserts the
checker's verdicts on each, bench/check_speed.py times it.

    >>> sorted(COMMANDS)
    ['mcp-server-time', 'sdk-shop', 'server-everything', 'server-filesystem']
    >>> COMMANDS["server-filesystem"][-1].endswith("build/corpus/files")
    True

The Streamable HTTP servers (``HTTP_SERVERS``) are started by :func:`serve_http` on a free port
of 127.0.0.1, which yields the URL that ``mcp-lab check --url`` is pointed at:

    >>> sorted(HTTP_SERVERS)
    ['reference-http', 'sdk-shop-http', 'server-everything-http']
    >>> with serve_http("reference-http") as url:
    ...     url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
    True
"""

from __future__ import annotations

import socket
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
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


# Streamable HTTP servers: the command and environment that make each listen on a given port
# ({port}), every one at /mcp. server-everything takes its port from $PORT (and listens on every
# interface); the SDK's prints its URL, as the reference does.
HTTP_SERVERS: dict[str, tuple[list[str], dict[str, str]]] = {
    "server-everything-http": ([str(NPM_BIN / "mcp-server-everything"), "streamableHttp"], {"PORT": "{port}"}),
    "sdk-shop-http": ([sys.executable, str(ROOT / "bench" / "sdk_shop_http_server.py"), "--port", "{port}"], {}),
    "reference-http": ([sys.executable, "-m", "reference.server", "--http", "127.0.0.1:{port}"], {}),
}
HTTP_START_TIMEOUT = 60.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def serve_http(name: str) -> Iterator[str]:
    """Start an HTTP server of ``HTTP_SERVERS`` on a free port; its URL once it accepts connections."""
    from reference.child import ChildProcess

    port = str(free_port())
    argv, env = HTTP_SERVERS[name]
    child = ChildProcess(
        [a.replace("{port}", port) for a in argv], {k: v.replace("{port}", port) for k, v in env.items()}, str(ROOT)
    )
    try:
        deadline = time.monotonic() + HTTP_START_TIMEOUT
        while True:
            try:
                socket.create_connection(("127.0.0.1", int(port)), timeout=1).close()
                break
            except OSError:
                if child.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"{name} did not listen on port {port}: {child.stderr_tail(2000)}") from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        child.close(grace=0.0)  # SIGTERM (Node's server ends on it too)


def installed() -> bool:
    """Whether bench/install_corpus.sh has run to the end here."""
    return INSTALLED.is_file() and all(Path(argv[0]).exists() for argv in COMMANDS.values())
