"""The MCP Inspector's CLI on the capstone (cell ``test_own_server_inspector``): it lists the
learner's tools and calls them (Node.js; the corpus's pinned copy, else npx). Stage 12 runs it over
HTTP with the same launcher.

A missing Inspector is never a verdict on the learner's server: on their own machine it is a
failure that says what to install, when grading :class:`InspectorUnavailable`.

    >>> INSPECTOR
    '@modelcontextprotocol/inspector@2.12.0'
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from grader.checker.probe import Probe
from reference.lifecycle import LATEST

from ...drive import (
    initialize,
)
from ...expect import Failure, show
from ...work import LOCAL, Work
from .. import public
from .call_tool import _json
from .capstone import SHOP_TOOLS, Call, check_call_result, own_server

INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"  # pinned, as bench/install_corpus.sh installs it


INSPECTOR_BIN = Path(__file__).resolve().parents[4] / "build/corpus/npm/node_modules/.bin/mcp-inspector"


# Seconds for one run of the installed Inspector (about one when quiet). It is run only on a server
# that has just answered initialize, so a generous bound costs a mute server nothing, and a busy
# machine (a class graded four cells at a time) never turns Node.js's start-up into a verdict.
INSPECTOR_TIMEOUT = 45.0


INSPECTOR_CONNECT_MS = "30000"


ANSWER_WITHIN = 10.0  # seconds for the server's reply to initialize before the Inspector is run


NPX_TIMEOUT = 75.0  # seconds with npx, whose first run downloads the Inspector (about 20 s)


class InspectorUnavailable(RuntimeError):
    """The MCP Inspector cannot run on this machine. Never a verdict on the learner's server: when
    grading it is an error of the grading ('grading failed'), not a Failure."""


def _unavailable(work: Work, summary: str, **details: Any) -> Exception:
    """A missing Inspector: on the learner's own machine a failure that says what to install (the
    ``inspector`` lesson); when grading, :class:`InspectorUnavailable`."""
    if work.runner is LOCAL:
        return Failure("inspector", summary, **details)
    return InspectorUnavailable(f"{summary} {details.get('stderr', '')}".strip())


def inspector_command(work: Work) -> tuple[list[str], float]:
    """The Inspector's command (the corpus's pinned copy, else npx) and how long one run may take."""
    if INSPECTOR_BIN.exists():
        return [str(INSPECTOR_BIN)], INSPECTOR_TIMEOUT
    npx = shutil.which("npx")
    if npx is not None:
        return [npx, "-y", INSPECTOR], NPX_TIMEOUT
    raise _unavailable(work, "the MCP Inspector needs Node.js: npx is not on this machine's PATH")


def _kill_group(child: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signal.SIGKILL)


def _envelope_error(stderr: str) -> str | None:
    """The message of the Inspector's error envelope (its last stderr line, ``{"error": {...}}``), if any."""
    for line in reversed(stderr.strip().splitlines()):
        found = _json(line)
        if isinstance(found, dict) and isinstance(found.get("error"), dict):
            return str(found["error"].get("message", found["error"]))
    return None


TOOL_IS_ERROR = '"code":"tool_is_error"'  # the Inspector CLI's error envelope for a result with isError


def launch_inspector(
    work: Work, options: list[str], *, check: str, shown: str, stderr: Callable[[bytes], str]
) -> tuple[bytes, bytes, int]:
    """Run ``mcp-inspector OPTIONS`` to its end: its stdout, its stderr and its exit status. Bounded:
    past its time, its whole process group is killed (the server it started too) and ``check`` fails
    with ``shown`` as what was sent and ``stderr(...)`` of what it wrote as the server's words."""
    inspector, limit = inspector_command(work)
    try:
        child = subprocess.Popen(
            [*inspector, *options],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        raise _unavailable(work, f"the MCP Inspector could not start: {exc}") from None
    try:
        out, err = child.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        _kill_group(child)
        out, err = child.communicate()
        if inspector[0] != str(INSPECTOR_BIN):  # npx may be downloading still: no verdict on the server
            raise _unavailable(work, f"npx did not run the MCP Inspector within {limit:.0f} s") from None
        what = f"the MCP Inspector had no answer from your server within {limit:.0f} s"
        raise Failure(check, what, sent=shown, stderr=stderr(err)) from None
    finally:
        _kill_group(child)
    return out, err, child.returncode


def run_inspector(work: Work, argv: list[str], method: list[str]) -> Any:
    """``mcp-inspector --cli ARGV --method ...``: the result it printed, or a Failure that says why not."""
    shown = " ".join(["mcp-inspector --cli python3 my_server.py", *method])
    check = "tools-call-result" if "tools/call" in method else "tools-list"
    # Its options first, then "--": the server's command may hold words that look like options (bwrap's).
    options = ["--cli", "--format", "json", "-q", "--connect-timeout", INSPECTOR_CONNECT_MS, *method, "--", *argv]
    out, err, returncode = launch_inspector(
        work, options, check=check, shown=shown, stderr=lambda err: err.decode("utf-8", "replace")
    )
    stderr = err.decode("utf-8", "replace")
    found = _json(out.decode("utf-8", "replace").strip())
    # A tool result with isError: true is printed too, and the CLI then exits 5 ("tool_is_error"): the
    # hidden calls draw such calls (an unknown status, an order that does not exist).
    if isinstance(found, dict) and "result" in found and (returncode == 0 or TOOL_IS_ERROR in stderr):
        return found["result"]
    message = _envelope_error(stderr)
    if message is None:  # the Inspector itself did not run (a Node.js too old, a broken install)
        raise _unavailable(work, f"the MCP Inspector failed (exit status {returncode})", stderr=stderr)
    summary = f"the MCP Inspector could not use your server: {' '.join(message.split())[:300]}"
    raise Failure(check, summary, sent=shown, received=show(out) if out.strip() else "(nothing on stdout)")


def check_inspector(work: Work, argv: list[str], calls: list[Call], list_tools: bool = True) -> None:
    """The Inspector's CLI lists the four tools (unless ``list_tools`` is false: the hidden checks
    leave that to the public ones) and makes ``calls``: the answers are the reference's."""
    # A server that cannot answer initialize fails here, in seconds, not after the Inspector's wait.
    # Lines that are not its reply are passed over, as the Inspector passes them: they cost the
    # other cells, not this one.
    init = initialize(LATEST)
    with Probe(argv, timeout=ANSWER_WITHIN) as probe:
        if probe.exchange(init).message is None:
            raise Failure(
                "initialize-result",
                f"your server did not answer initialize within {ANSWER_WITHIN:.0f} s, so the Inspector cannot either",
                sent=show(init),
                stderr=probe.stderr_tail(),
            )
    if list_tools:
        listed = run_inspector(work, argv, ["--method", "tools/list"])
        tools = listed.get("tools") if isinstance(listed, dict) else None
        names = sorted(str(t.get("name")) for t in tools if isinstance(t, dict)) if isinstance(tools, list) else None
        if names != sorted(SHOP_TOOLS):
            what = "the MCP Inspector lists other tools than the shop's four"
            raise Failure("tools-list", what, expected=show(sorted(SHOP_TOOLS)), received=show(names or listed))
    for call in calls:
        method = ["--method", "tools/call", "--tool-name", call[0], "--tool-args-json", json.dumps(call[1])]
        result = run_inspector(work, argv, method)
        check_call_result(result, call, LATEST, " ".join(["mcp-inspector --cli python3 my_server.py", *method]))


@public("05", "test_own_server_inspector", "the MCP Inspector's CLI lists your tools and calls count_orders")
def own_server_inspector_cell(work: Work) -> None:
    with own_server(work) as argv:
        check_inspector(work, argv, [("count_orders", {"status": "paid"})])
