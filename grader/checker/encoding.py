"""The code page: a Python server run with PYTHONIOENCODING=cp1252, as on many Windows machines.

A server that leans on the text layer (print, sys.stdout.write of str) then encodes with cp1252
and dies on the first emoji, or turns UTF-8 input into mojibake. A server that reads and writes
the binary buffers in UTF-8 does not notice. To spare a process, it is one of the version
probes (2024-11-05) that runs so, for Python servers only.
"""

from __future__ import annotations

from .context import Context, list_tools, no_reply_evidence, why_no_reply
from .main_session import UNICODE_ID, UNICODE_QUERY
from .probe import Probe, Reply
from .tool_calls import is_shop, result_text

ENV = {"PYTHONIOENCODING": "cp1252"}
CODE_PAGE = "PYTHONIOENCODING=cp1252"


def judge_code_page(ctx: Context, probe: Probe) -> None:
    """encoding-utf8 on a probe started with ENV and initialized (its initialize was answered)."""
    probe.notify("notifications/initialized")
    reply = probe.request("ping", id=UNICODE_ID)
    if reply.message is None:
        why = f"ping with id {UNICODE_ID!r}: {why_no_reply(probe, reply, 'it')}"
        return _failed(ctx, probe, reply, why, f"a reply with id {UNICODE_ID!r}")
    if is_shop(list_tools(probe)):
        arguments = {"query": UNICODE_QUERY}
        call = probe.request("tools/call", {"name": "search_products", "arguments": arguments}, id="search")
        text = result_text(call.result)
        if call.message is None or (text and UNICODE_QUERY not in text):
            why = f"search_products {UNICODE_QUERY!r} did not come back intact"
            return _failed(ctx, probe, call, why, f"a result containing {UNICODE_QUERY!r}")
    ctx.findings.passed("encoding-utf8", "non-ASCII ids and arguments round-trip, also under PYTHONIOENCODING=cp1252")


def _failed(ctx: Context, probe: Probe, reply: Reply, why: str, expected: str) -> None:
    ctx.findings.failed("encoding-utf8", f"under {CODE_PAGE}, {why}", no_reply_evidence(probe, reply, expected))
