"""The stdio MCP server over the shop: the loop that ties framing, dispatch and the tools together.

It reads one message per line from stdin and writes one reply per request to stdout, flushing
each. Logs go to stderr only: stdout is the protocol channel and carries nothing else. At end
of input (the client closed our stdin) it exits with status 0; a closed stdout ends it quietly.

    $ mcp-lab serve                      # the embedded shop, built on first use
    $ mcp-lab serve --db /tmp/shop.db    # or python -m reference.server --db /tmp/shop.db

    >>> import io
    >>> out = io.BytesIO()
    >>> make_server().serve(io.BytesIO(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\\n'), out)
    0
    >>> out.getvalue()
    b'{"jsonrpc":"2.0","id":1,"result":{}}\\n'
"""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from . import database, envelope
from .dispatch import Dispatcher
from .errors import METHOD_NOT_FOUND, PARSE_ERROR, RpcError
from .framing import read_frame, write_frame
from .lifecycle import LATEST, Session

if TYPE_CHECKING:
    from .tools import Toolbox

SERVER_INFO = {"name": "mcp-wire-lab-shop", "title": "MCP Wire Lab shop", "version": "0.1.0"}
INSTRUCTIONS = (
    "A read-only view of a small online shop: customers, products and orders. Use count_orders "
    "and list_orders for questions about orders by status, get_order for one order's items, and "
    "search_products to find products. Money is in integer cents."
)


def log(message: str) -> None:
    """One line to stderr, never to stdout."""
    sys.stderr.write(f"[mcp-lab serve] {message}\n")
    sys.stderr.flush()


class Server:
    # The loop's pieces. The course runs a learner's piece inside this loop by replacing one of
    # them on an instance (grader/course/host.py): the rest stays the answer key's.
    read_frame = staticmethod(read_frame)
    write_frame = staticmethod(write_frame)

    def __init__(self, toolbox: Toolbox | None) -> None:
        # No toolbox: the tools/list and tools/call handlers are plugged in by whoever runs the
        # loop (stage 05 of the course plugs in the learner's; until then both are refused).
        self.session = Session()
        self.toolbox = toolbox
        self.dispatcher = Dispatcher(
            methods={
                "initialize": self.initialize,
                "ping": lambda params: {},
                "tools/list": self.list_tools,
                "tools/call": self.call_tool,
            },
            notifications={
                "notifications/initialized": self.initialized,
                # Every request is answered before the next line is read, so by the time a
                # cancellation arrives there is nothing left to stop: ignoring it is correct.
                "notifications/cancelled": lambda params: None,
            },
            batches_allowed=lambda: self.session.batches_allowed,
            log=log,
        )

    def initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        result = self.session.initialize(params, SERVER_INFO, {"tools": {"listChanged": False}}, INSTRUCTIONS)
        log(f"initialize: client {self.session.client_name or '?'}, revision {self.session.version}")
        return result

    def initialized(self, params: Any) -> None:
        self.session.initialized = True

    def list_tools(self, params: dict[str, Any]) -> dict[str, Any]:
        if self.toolbox is None:
            raise RpcError(METHOD_NOT_FOUND, "tools/list: this server has no tools plugged in")
        return self.toolbox.list(params, self.session.structured_output)

    def call_tool(self, params: dict[str, Any]) -> dict[str, Any]:
        if self.toolbox is None:
            raise RpcError(METHOD_NOT_FOUND, "tools/call: this server has no tools plugged in")
        session = self.session
        return self.toolbox.call(params, session.bad_arguments_are_tool_errors, session.structured_output)

    def handle_line(self, line: bytes) -> Any:
        """The reply to one line (``None`` when nothing is owed)."""
        return self.dispatcher.handle_line(line)

    def serve(self, stdin: BinaryIO, stdout: BinaryIO) -> int:
        """Serve until stdin ends; return the exit status."""
        while True:
            try:
                line = self.read_frame(stdin)
            except ValueError as exc:  # FrameError, or any framing's way of refusing a line
                reply: Any = envelope.error_message(None, PARSE_ERROR, str(exc))
            else:
                if line is None:
                    return 0
                if not line.strip():
                    continue  # a blank line carries no message
                reply = self.handle_line(line)
            if reply is not None:
                self.write_frame(stdout, reply)


def make_server(db: Path | str | None = None) -> Server:
    """The shop server: the loop, the lifecycle and the shop's tools over the database at ``db``."""
    from .shop import shop_toolbox  # here, not at the top: the loop runs without the shop too

    path = Path(db) if db is not None else database.ensure_default()
    return Server(shop_toolbox(database.open_readonly(path)))


def run(db: Path | str | None = None) -> int:
    """Serve on this process's stdin/stdout; the entry point of ``mcp-lab serve``."""
    if db is not None and not Path(db).is_file():
        print(f"mcp-lab serve: no database at {db} (build one with: mcp-lab db build {db})", file=sys.stderr)
        return 2
    try:
        server = make_server(db)
    except (sqlite3.Error, OSError) as exc:
        print(f"mcp-lab serve: cannot open the database: {exc}", file=sys.stderr)
        return 2
    log(f"serving the shop, revision {LATEST}; stdin closed ends the server")
    try:
        return server.serve(sys.stdin.buffer, sys.stdout.buffer)
    except BrokenPipeError:
        # The client is gone. Point stdout at /dev/null so that the interpreter's final flush
        # does not print a second BrokenPipeError on the way out.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        return 130


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args == []:
        return run()
    if len(args) == 2 and args[0] == "--db":
        return run(args[1])
    print("usage: python -m reference.server [--db PATH]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
