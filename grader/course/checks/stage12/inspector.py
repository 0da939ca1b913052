"""The MCP Inspector's CLI over HTTP (cell ``test_inspector``), with the token: it lists the learner's
tools and calls one (launched as stage 05's :mod:`grader.course.checks.stage05.inspector` launches it).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from reference.lifecycle import LATEST

from ...expect import Failure, show
from ...http_bridge import HttpBridge
from ...work import Work
from .. import public
from ..stage05.capstone import SHOP_TOOLS, Call, check_call_result
from ..stage05.inspector import TOOL_IS_ERROR, _envelope_error, _unavailable, launch_inspector
from .client import TOKEN, _json, running


def run_inspector(work: Work, bridge: HttpBridge, token: str, method: list[str]) -> Any:
    """``mcp-inspector --cli --transport http --server-url URL --header 'Authorization: ...' --method ...``:
    the result it printed, or a Failure that says why not. Bounded, its process group killed."""
    shown = " ".join(["mcp-inspector --cli --transport http --server-url URL", *method])
    options = [
        "--cli", "--format", "json", "-q", "--connect-timeout", "10000", "--transport", "http",
        "--server-url", bridge.url, "--stored-auth-only", "--header", f"Authorization: Bearer {token}", *method,
    ]  # fmt: skip
    out, err, returncode = launch_inspector(
        work, options, check="http-client", shown=shown, stderr=lambda _: bridge.stderr_tail()
    )
    found = _json(out.decode("utf-8", "replace").strip())
    stderr = err.decode("utf-8", "replace")
    # A tool result with isError: true is printed too, and the CLI then exits 5 ("tool_is_error").
    if isinstance(found, dict) and "result" in found and (returncode == 0 or TOOL_IS_ERROR in stderr):
        return found["result"]
    text = _envelope_error(stderr)
    if text is None:  # the Inspector itself did not run (a Node.js too old, a broken install)
        raise _unavailable(work, f"the MCP Inspector failed (exit status {returncode})", stderr=stderr)
    stub = bridge.not_written()
    if stub is not None:
        raise Failure("http-client", f"{stub} is not written yet (it raises NotImplementedError)")
    summary = f"the MCP Inspector could not use your server: {' '.join(text.split())[:300]}"
    raise Failure("http-client", summary, sent=shown, stderr=bridge.stderr_tail())


def check_inspector(work: Work, bridge: HttpBridge, token: str, calls: Sequence[Call]) -> None:
    listed = run_inspector(work, bridge, token, ["--method", "tools/list"])
    tools = listed.get("tools") if isinstance(listed, dict) else None
    names = sorted(str(t.get("name")) for t in tools if isinstance(t, dict)) if isinstance(tools, list) else None
    if names != sorted(SHOP_TOOLS):
        what = "the MCP Inspector lists other tools than the shop's four"
        raise Failure("tools-list", what, expected=show(sorted(SHOP_TOOLS)), received=show(names or listed))
    for tool, arguments in calls:
        method = ["--method", "tools/call", "--tool-name", tool, "--tool-args-json", json.dumps(arguments)]
        result = run_inspector(work, bridge, token, method)
        check_call_result(result, (tool, arguments), LATEST, " ".join(["mcp-inspector --cli ... ", *method]))


@public("12", "test_inspector", "the MCP Inspector's CLI over HTTP, with the token, lists your tools and calls one")
def inspector_cell(work: Work) -> None:
    with running(work, TOKEN) as bridge:
        check_inspector(work, bridge, TOKEN, [("count_orders", {"status": "paid"})])
