"""The checks of stage 05 (tools/call).

The learner's tools are compared with the reference's on the same database (the reference's
answers are themselves tested against plain SQL); the hidden cells choose the arguments at random.
``call_tool`` answers by the revision a request is served under: ``resultType`` on every result of
MCP 2026-07-28, never on a legacy one. The whole server is then run as a process: a session of
calls that must leave the database byte-identical, the official SDK client in its default mode
(2026-07-28 on the wire), and every check of ``mcp-lab check`` in both eras.

The capstone, ``my_server.py``, is the learner's own server from end to end, in both eras:
standard library only (its text is read first), run from a copy that cannot import the reference,
and graded by the whole checker (both eras judged, whatever the server speaks), raw sessions in
2026-07-28 and the legacy revisions, the SDK client in its default and its legacy mode, and the MCP
Inspector's CLI (Node.js; the corpus's pinned copy or npx).

One module per part graded: :mod:`.tools` (the four tools), :mod:`.call_tool`, :mod:`.served` (the
server as a process), :mod:`.capstone` (``my_server.py``) and :mod:`.inspector`. Importing the
package registers every cell; the names the hidden checks, stage 12 and the notebooks use are
here:

    >>> from grader.course.checks import cells
    >>> sorted(cells("05"))[:3]
    ['test_call_tool', 'test_count_orders', 'test_get_order']
"""

from __future__ import annotations

from . import call_tool, capstone, inspector, served, tools  # importing them registers the cells
from .call_tool import MODERN
from .capstone import SHOP_TOOLS, Call, check_own_calls, check_own_sdk, own_imports, own_server
from .inspector import INSPECTOR, INSPECTOR_BIN, InspectorUnavailable, check_inspector
from .tools import check_tool, hidden_arguments

__all__ = [
    "INSPECTOR",
    "INSPECTOR_BIN",
    "MODERN",
    "SHOP_TOOLS",
    "Call",
    "InspectorUnavailable",
    "call_tool",
    "capstone",
    "check_inspector",
    "check_own_calls",
    "check_own_sdk",
    "check_tool",
    "hidden_arguments",
    "inspector",
    "own_imports",
    "own_server",
    "served",
    "tools",
]
