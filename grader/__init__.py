"""The examiner of MCP Wire Lab: the probe harness, the check catalogue, the gallery, the CLI.

It is built from the reference's small pieces (framing, envelope, error table, child process),
never from a copy of them.
"""

# Seconds one tools/call may take before the checker cancels it and goes on (mcp-lab check
# --call-timeout). Here, not in context.py, so that the CLI can show it without importing the probes.
CALL_TIMEOUT = 30.0
