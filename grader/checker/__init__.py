"""``mcp-lab check``: the conformance checker, for any stdio MCP server or Streamable HTTP endpoint.

It starts the server as a child process (several times), probes it over real pipes with every wait
bounded, judges what came back against the catalogue's rules (``catalogue.py``), and reports check
by check (``report.py``); ``check.run_check`` is the whole run. Over HTTP, ``check.run_http_check``
speaks to the endpoint in several sessions (``http_probe.py``, ``http_session.py``) and adds the
transport's own checks (``http_checks.py``):

    $ mcp-lab check -- python3 -m reference.server
    $ mcp-lab check --url http://127.0.0.1:8000/mcp

It is built from the reference's small pieces (framing, envelope, error table, child process),
never from a copy of them. It knows nothing of the course: the course uses it, not the other way.
"""

# Seconds one tools/call may take before the checker cancels it and goes on (mcp-lab check
# --call-timeout). Here, not in context.py, so that the CLI can show it without importing the probes.
CALL_TIMEOUT = 30.0
