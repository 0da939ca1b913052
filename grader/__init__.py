"""The examiner of MCP Wire Lab: the probe harness, the check catalogue, the gallery, the CLI.

It is built from the reference's small pieces (framing, envelope, error table, child process),
never from a copy of them.
"""
