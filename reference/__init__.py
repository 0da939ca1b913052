"""The reference implementation of MCP Wire Lab: the answer key, standard library only.

One module per idea, in the order the course teaches them:

- ``database``  the shop: build the SQLite file from ``data/``, open it read-only
- ``framing``   one JSON message per line, UTF-8 on the binary buffers, a flush per message
- ``errors``    the one table of JSON-RPC error codes
- ``envelope``  what a request, a notification and a response look like; building replies
- ``dispatch``  the three branches (request, notification, parse error) and batches
- ``lifecycle`` initialize, version negotiation, what changes with the negotiated revision
- ``schema``    the small JSON Schema subset the tools validate their arguments with
- ``tools``     tools/list and tools/call: the two kinds of error
- ``shop``      the shop's tools, as the manual a model reads
- ``server``    the stdio server: the loop that ties the pieces together
- ``child``     launching a server as a child process with bounded reads
- ``thread_state`` what a child's thread is doing now: fair waits, and words for a failure
- ``client``    the client: handshake, ids, notifications, shutdown order
- ``era_probe`` which era a server speaks: the ``server/discover`` probe and its fallback

The advanced track (stages 10-12), on the same server:

- ``resources``       resources and URI templates: the shop's schema, one order, one product
- ``prompts``         prompts with arguments: ready-made messages a user picks
- ``audit``           the write audit: every attempt, who asked, a summary that keeps no long text
- ``writes``          write tools on a copy of the shop: off by default, one transaction each, audited
- ``sse``             Server-Sent Events: a JSON-RPC message as an event
- ``http_guard``      what an HTTP request must pass first: Origin, Host, token, Accept, revision
- ``streamable_http`` the same server over Streamable HTTP: one endpoint, sessions

The 2026-07-28 era, beside the legacy one:

- ``stateless``       every request's own _meta checked; resultType, caching hints, server/discover
- ``mrtr``            multi round-trip requests: input_required, a sealed requestState, the answers checked
- ``confirm``         cancel_order asks its user first, as a multi round-trip request
- ``subscriptions``   subscriptions/listen: acknowledged first, every message tagged, a watched resource announced

Run the server with ``mcp-lab serve`` (or ``python -m reference.server``).
"""

MODERN_REVISION = "2026-07-28"  # the current revision: stateless, _meta on every request
PROTOCOL_REVISION = "2025-11-25"  # the newest legacy revision: the initialize handshake
