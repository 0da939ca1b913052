"""The checks of stage 12 (Streamable HTTP and auth).

The learner's ``mcp_http.py`` is a transport: an ``http.server`` in front of the course's
dispatcher (one ``reference.server.Server`` per session). Every check runs it as a server, built
by its own ``make_server(address, token)`` in a process of its own (in the grading sandbox too),
reached at a URL of this machine through :mod:`grader.course.http_bridge`, and speaks real HTTP to
it: one cell per group of rules (POST and its answers, sessions, the headers a request must pass,
SSE, the bearer token), then the whole server through ``mcp-lab check --url``, the official SDK's
Streamable HTTP client and the MCP Inspector's CLI (``--transport http``). A failure shows the HTTP
request sent and the response that came, and names the rule (the checker's ids where it has one).
The hidden cells draw the token, the origins, the session ids, the request ids and the tool calls.

One module per group of rules, on :mod:`.client` (HTTP with its evidence): :mod:`.modern`,
:mod:`.headers`, :mod:`.sessions`, :mod:`.origin`, :mod:`.sse`, :mod:`.auth`, :mod:`.whole` (the
checker and the SDK) and :mod:`.inspector`. Importing the package registers every cell; the names
the hidden checks use are here:

    >>> from grader.course.checks import cells
    >>> len(cells("12"))
    9
"""

from __future__ import annotations

from . import (
    auth,
    client,
    headers,
    inspector,
    modern,
    origin,
    sessions,
    sse,
    whole,
)  # importing them registers the cells
from .auth import check_auth, drawn_token, wrong_tokens
from .client import message, running
from .headers import check_header_problem, check_headers_served, header_cases
from .inspector import check_inspector
from .modern import check_modern_post
from .origin import check_origin, drawn_origins
from .sessions import check_post, check_sessions, drawn_session_id
from .sse import check_sse_event, check_sse_stream
from .whole import check_sdk, check_session_calls

__all__ = [
    "auth",
    "check_auth",
    "check_header_problem",
    "check_headers_served",
    "check_inspector",
    "check_modern_post",
    "check_origin",
    "check_post",
    "check_sdk",
    "check_session_calls",
    "check_sessions",
    "check_sse_event",
    "check_sse_stream",
    "client",
    "drawn_origins",
    "drawn_session_id",
    "drawn_token",
    "header_cases",
    "headers",
    "inspector",
    "message",
    "modern",
    "origin",
    "running",
    "sessions",
    "sse",
    "whole",
    "wrong_tokens",
]
