"""The defect's hooks and the server that calls them: the reference shop server, one rule broken.

A :class:`Defect` behaves as the reference does until a family overrides a hook (``reply``,
``write``, ``dies_on``, ...); :class:`CaseServer` calls the hooks around the reference's own
reading, answering and writing; :func:`serve` runs it on this process's stdin and stdout.

    >>> healthy = Defect("healthy", "", "")
    >>> healthy.reply(None, {"method": "ping"}, {"result": {}}), healthy.reply_id(7)
    ({'result': {}}, 7)
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from reference.framing import encode
from reference.server import Server


@dataclass
class Defect:
    """One defect with its parameters; the server calls its hooks around the reference's own work."""

    family: str
    rule: str  # the check id of the rule broken
    symptom: str  # what a host or user reports
    params: dict[str, Any] = field(default_factory=dict)
    visible: bool = True  # the checker's first failure names the rule
    also: frozenset[str] = frozenset()  # other rules the defect truly breaks (also a right answer)
    loggable: bool = False  # it shows in a host's log of an ordinary session
    era: str = "legacy"  # "modern": a rule of MCP 2026-07-28 (the per-request _meta era)

    # -- hooks (the default: behave as the reference does) --------------------------------------
    def start(self, server: CaseServer, stdout: BinaryIO) -> None:
        """Before the first line is read."""

    def dies_on(self, server: CaseServer, line: bytes, message: Any) -> bool:
        """Whether this line ends the process (a crash)."""
        return False

    def reply(self, server: CaseServer, message: Any, reply: Any) -> Any:
        """The reply to ``message`` (the reference's own is ``reply``)."""
        return reply

    def write(self, server: CaseServer, stdout: BinaryIO, reply: Any, message: Any) -> None:
        stdout.write(encode(reply))
        stdout.flush()

    def finish(self, server: CaseServer, stdout: BinaryIO) -> None:
        """After the loop ends (stdin closed): what a process's exit writes out."""

    def reply_id(self, id: Any) -> Any:
        return id


class Holding(Defect):
    """A defect that leaves some replies in a buffer: they go out only with the next flushed write, or
    at exit (as Python flushes its buffers on the way out), whatever their size."""

    def held(self, message: Any, reply: Any) -> bool:
        raise NotImplementedError

    def write(self, server: CaseServer, stdout: BinaryIO, reply: Any, message: Any) -> None:
        pending = server.__dict__.setdefault("pending", [])
        pending.append(encode(reply))
        if not self.held(message, reply):
            stdout.write(b"".join(pending))
            stdout.flush()
            pending.clear()

    def finish(self, server: CaseServer, stdout: BinaryIO) -> None:
        stdout.write(b"".join(server.__dict__.get("pending", [])))
        stdout.flush()


class CaseServer(Server):
    """The reference shop server with a defect's hooks around its reading, answering and writing."""

    def __init__(self, defect: Defect, toolbox: Any) -> None:
        super().__init__(toolbox)
        self.defect = defect
        self.lines = 0
        self.calls: Counter[str] = Counter()
        self._current: Any = None

    def handle_line(self, line: bytes) -> Any:
        self.lines += 1
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        self._current = message  # what the next write answers
        if self.defect.dies_on(self, line, message):
            raise SystemExit(1)
        if isinstance(message, dict) and message.get("method") == "tools/call":
            params = message.get("params")
            self.calls[str(params.get("name")) if isinstance(params, dict) else "?"] += 1
        reply = super().handle_line(line)
        return self.defect.reply(self, message, reply)

    def serve(self, stdin: BinaryIO, stdout: BinaryIO) -> int:
        self.defect.start(self, stdout)
        serve = getattr(self.defect, "serve", None)
        code = serve(self, stdin, stdout) if serve else super().serve(stdin, stdout)
        self.defect.finish(self, stdout)
        return code

    def write_frame(self, stdout: BinaryIO, reply: Any) -> None:  # type: ignore[override]
        self.defect.write(self, stdout, reply, getattr(self, "_current", None))

    def answer(self, stdout: BinaryIO, line: bytes) -> None:
        """Handle one line and write its reply (the loop's body)."""
        reply = self.handle_line(line)
        if reply is not None:
            self.write_frame(stdout, reply)


def _tool_of(message: Any) -> str:
    if isinstance(message, dict) and message.get("method") == "tools/call" and isinstance(message.get("params"), dict):
        return str(message["params"].get("name"))
    return ""


def _arguments(message: Any) -> dict[str, Any]:
    params = message.get("params") if isinstance(message, dict) else None
    arguments = params.get("arguments") if isinstance(params, dict) else None
    return arguments if isinstance(arguments, dict) else {}


def _is_error(reply: Any) -> bool:
    return isinstance(reply, dict) and "error" in reply


def serve(defect: Defect) -> int:
    """Run the shop server with ``defect`` on this process's stdin and stdout."""
    from reference.database import ensure_default, open_readonly
    from reference.shop import shop_toolbox

    server = CaseServer(defect, shop_toolbox(open_readonly(ensure_default())))
    try:
        return server.serve(sys.stdin.buffer, sys.stdout.buffer)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
