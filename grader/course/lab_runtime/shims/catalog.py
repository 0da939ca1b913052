"""reference.catalog, in stage 04's runtime: the learner's tool_list.py stands in for the answer key.

The course's server lists the learner's tools (``all_tools()``, through ``list_tools(params)``) and
answers a call with the course's queries, checking the arguments against the learner's schemas.
A declaration missing a member the server needs to start gets a neutral stand-in, so that one
slip costs the checks of that member, not every check.
"""

from typing import Any

import tool_list as _learner  # the learner's tool_list.py, first on the import path

from .errors import json_type  # noqa: F401 - the module's interface, as in the reference

STATUSES = ("pending", "paid", "shipped", "delivered", "cancelled", "refunded")
STATUS_TEXT = ", ".join(STATUSES)
MAX_ID = 2**31 - 1
READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}


def _complete(tool: Any) -> dict[str, Any]:
    tool = dict(tool) if isinstance(tool, dict) else {}
    name = tool.get("name") if isinstance(tool.get("name"), str) else "unnamed"
    return {
        "name": name,
        "title": tool.get("title", name),
        "description": tool.get("description", ""),
        "inputSchema": tool.get("inputSchema") if isinstance(tool.get("inputSchema"), dict) else {"type": "object"},
        "outputSchema": tool.get("outputSchema"),
        "annotations": tool.get("annotations") if isinstance(tool.get("annotations"), dict) else {},
    }


TOOLS = [_complete(tool) for tool in _learner.all_tools()]


def list_result(tools: list[dict[str, Any]], params: dict[str, Any]) -> dict[str, Any]:
    return _learner.list_tools(params)


def listing(params: dict[str, Any], structured_output: bool = True) -> dict[str, Any]:
    return _learner.list_tools(params)
