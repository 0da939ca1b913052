"""Package launchers: commands that may download the server before they start it.

Under ``npx -y PACKAGE`` with a cold cache, seven parallel starts would each install the package,
one after another, and the probes that lose the race miss their window. The checker therefore
starts a launcher once on its own first (the warm-up: the download happens once), and times the
start-up on a warm start, reporting the cold figure beside it.

    >>> is_launcher(["npx", "-y", "@modelcontextprotocol/server-everything"])
    True
    >>> is_launcher(["pipx", "run", "mcp-server-time"]), is_launcher(["uv", "run", "server.py"])
    (True, False)
    >>> is_launcher(["python3", "server.py"])
    False
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .context import Context, initialize, why_no_reply

# Programs that fetch and run a package in one go.
LAUNCHERS = frozenset({"npx", "pnpx", "bunx", "uvx"})
# Programs that do so with a sub-command: pipx run, npm exec, pnpm dlx, yarn dlx, uv tool run.
SUBCOMMANDS = {"pipx": ("run",), "npm": ("exec", "x"), "pnpm": ("dlx",), "yarn": ("dlx",), "uv": ("tool",)}
WARM_UP_TIMEOUT = 120.0  # seconds a launcher may take to download and answer initialize once


def is_launcher(argv: Sequence[str]) -> bool:
    if not argv:
        return False
    program = Path(argv[0]).name
    if program in LAUNCHERS:
        return True
    return len(argv) > 1 and argv[1] in SUBCOMMANDS.get(program, ())


def warm_up(ctx: Context) -> None:
    """Start the command once, alone, and wait for initialize: the cold start, timed."""
    probe = ctx.start("warm-up (launcher)")
    try:
        reply = initialize(probe, ctx, timeout=WARM_UP_TIMEOUT)
        ctx.cold_start = reply.elapsed if reply.message is not None else None
        ctx.cold_note = "" if reply.message is not None else why_no_reply(probe, reply, "initialize")
    finally:
        probe.close()
