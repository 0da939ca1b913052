"""``mcp-lab check``: run every probe against a server command and collect the verdicts.

The probes run in parallel, each in a fresh process of the server; every wait is bounded, so a
server that hangs, floods, crashes or forks gives verdicts, never a hung checker. A launcher
(npx, uvx, pipx run, ...) is started once alone first, so that it downloads only once. The main
session starts first and alone until initialize is answered (the start-up timing); then the
probes of the other revisions join it: five processes in all, more only when a bad input kills one.

    >>> import sys
    >>> report = run_check([sys.executable, "-m", "reference.server"])
    >>> report.counts["fail"], report.counts["warn"]
    (0, 0)
"""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import CALL_TIMEOUT
from .context import STARTUP_WARN, Context
from .flush import judge_flush
from .language import server_language
from .launcher import is_launcher, warm_up
from .main_session import MainSession
from .root_cause import diagnose
from .shop_contract import ShopTruth, judge_digest
from .stdout_rules import judge_lines
from .verdicts import STATUSES, Result
from .versions import PROPOSALS, Negotiation, judge_negotiation, run_version


@dataclass
class Report:
    command: list[str]
    results: list[Result]
    wall_seconds: float = 0.0
    probes: list[str] = field(default_factory=list)
    internal_errors: list[str] = field(default_factory=list)  # checker bugs, for stderr
    language: str = "python"  # the server's language, as far as the command tells (for fix wording)

    @property
    def counts(self) -> dict[str, int]:
        return {s: sum(r.status == s for r in self.results) for s in STATUSES}

    @property
    def exit_code(self) -> int:
        return 1 if self.counts["fail"] else 0

    def as_json(self) -> dict[str, Any]:
        return {
            "command": self.command,
            "checks": [r.as_json() for r in self.results],
            "counts": self.counts,
        }


def run_check(
    argv: Sequence[str], timeout: float = 3.0, call_tools: bool = False, call_timeout: float = CALL_TIMEOUT
) -> Report:
    """Check ``argv`` as a stdio MCP server. Raises OSError if the command cannot be started."""
    started = time.monotonic()
    ctx = Context(list(argv), timeout=timeout, call_tools=call_tools, call_timeout=call_timeout)
    language = ctx.language = server_language(argv)
    truth = ShopTruth.load()
    digest = truth.digest()
    negotiation = Negotiation()
    main = MainSession(ctx, truth)
    # Five processes: the main session (bad input last), and one per other proposed revision;
    # for a Python server the 2024-11-05 one runs under PYTHONIOENCODING=cp1252.
    jobs: list[Callable[[], None]] = [main.run, *[lambda v=v: run_version(ctx, v, negotiation) for v in PROPOSALS]]
    errors: list[OSError] = []
    internal: list[str] = []

    def guarded(job: Callable[[], None]) -> None:
        try:
            job()
        except OSError as exc:  # the command cannot be started: a usage error
            errors.append(exc)
        except Exception:  # a checker bug: the other probes' verdicts still make a report
            internal.append(traceback.format_exc(limit=-3))

    threads = [threading.Thread(target=guarded, args=(job,), daemon=True) for job in jobs]
    try:
        if is_launcher(argv):
            guarded(lambda: warm_up(ctx))  # the launcher downloads once, alone
        if not errors:
            # The start-up probe runs alone until initialize is answered, so that the other
            # processes starting at the same moment on a small machine do not slow its timing.
            threads[0].start()
            ctx.first_up.wait(STARTUP_WARN)
            for thread in threads[1:]:
                thread.start()
            for thread in threads:
                thread.join()
    except BaseException:
        # Ctrl-C (or a checker bug) in the main thread: the servers run in sessions of their
        # own, out of reach of the terminal's signal, so end them here or they outlive us.
        ctx.closed = True
        for probe in list(ctx.probes):
            probe.child.kill()
        raise
    for probe in ctx.probes:
        probe.close()  # idempotent: every probe is closed, whatever happened
    if errors:
        raise errors[0]
    received = [(item, probe.revision) for probe in ctx.probes for item in probe.received]
    judge_lines((i.line for i, _ in received), ((i.message, r) for i, r in received if i.json_ok), ctx.findings)
    judge_flush(ctx.probes, ctx.findings)
    judge_negotiation(ctx, main.negotiated, negotiation)
    if main.shop:
        judge_digest(truth, digest, ctx.findings)
    results = diagnose(ctx.probes, ctx.findings)  # root causes first, consequences marked
    elapsed = time.monotonic() - started
    return Report(list(argv), results, elapsed, [p.name for p in ctx.probes], internal, language)
