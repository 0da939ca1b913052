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

import socket
import threading
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import CALL_TIMEOUT
from .catalogue import CATALOGUE, CHECKS, MODERN_CHECKS
from .context import STARTUP_WARN, Context
from .era import Eras
from .flush import judge_flush
from .language import server_language
from .launcher import is_launcher, warm_up
from .main_session import MainSession
from .modern_session import ModernSession
from .root_cause import diagnose, order
from .shop_contract import ShopTruth, judge_digest
from .stdout_rules import judge_lines
from .verdicts import STATUSES, Findings, Result
from .versions import PROPOSALS, Negotiation, judge_negotiation, run_version

JOIN_STEP = 0.2  # seconds: the main thread wakes this often to take a Ctrl-C delivered to another thread


@dataclass
class Report:
    command: list[str]
    results: list[Result]
    wall_seconds: float = 0.0
    probes: list[str] = field(default_factory=list)
    internal_errors: list[str] = field(default_factory=list)  # checker bugs, for stderr
    language: str = "python"  # the server's language, as far as the command tells (for fix wording)
    url: str | None = None  # the MCP endpoint, for a check over Streamable HTTP (command is then [url])
    eras: str = ""  # for the text report: the eras the server speaks and those judged (era.py)

    @property
    def counts(self) -> dict[str, int]:
        return {s: sum(r.status == s for r in self.results) for s in STATUSES}

    @property
    def exit_code(self) -> int:
        return 1 if self.counts["fail"] else 0

    def as_json(self) -> dict[str, Any]:
        """The contract: ``command`` (a list) for a stdio server, ``url`` instead over HTTP."""
        target: dict[str, Any] = {"url": self.url} if self.url is not None else {"command": self.command}
        return {**target, "checks": [r.as_json() for r in self.results], "counts": self.counts}


def run_check(
    argv: Sequence[str],
    timeout: float = 3.0,
    call_tools: bool = False,
    call_timeout: float = CALL_TIMEOUT,
    era: str = "auto",
) -> Report:
    """Check ``argv`` as a stdio MCP server in ``era`` ("auto": every era it speaks; "modern",
    "legacy" or "both"). Raises OSError if the command cannot be started."""
    started = time.monotonic()
    findings = Findings([*CHECKS, *MODERN_CHECKS])
    ctx = Context(list(argv), timeout=timeout, call_tools=call_tools, call_timeout=call_timeout, findings=findings)
    ctx.eras = Eras(era)
    language = ctx.language = server_language(argv)
    truth = ShopTruth.load()
    digest = truth.digest()
    negotiation = Negotiation()
    main = MainSession(ctx, truth)
    # Six processes: the main session (bad input last), one per other proposed revision (for a
    # Python server the 2024-11-05 one runs under PYTHONIOENCODING=cp1252), and the modern session.
    legacy: list[Callable[[], None]] = [main.run, *[lambda v=v: run_version(ctx, v, negotiation) for v in PROPOSALS]]
    modern = [ModernSession(ctx).run]
    if not ctx.eras.asked("legacy"):
        jobs: list[Callable[[], None]] = modern
    else:
        jobs = legacy + (modern if ctx.eras.asked("modern") else [])
    errors: list[OSError] = []
    internal: list[str] = []
    # A launcher downloads once, alone, first.
    warm = (lambda: warm_up(ctx)) if is_launcher(argv) else None
    run_jobs(ctx, jobs, guard(errors, internal), errors, warm)
    if errors:
        raise errors[0]
    skip_unjudged(ctx.eras, findings)
    received = [(item, probe.revision) for probe in ctx.probes for item in probe.received]
    judge_lines((i.line for i, _ in received), ((i.message, r) for i, r in received if i.json_ok), ctx.findings)
    judge_flush(ctx.probes, ctx.findings)
    if ctx.eras.judged("legacy"):
        judge_negotiation(ctx, main.negotiated, negotiation)
    if main.shop:
        judge_digest(truth, digest, ctx.findings)
    results = diagnose(ctx.probes, ctx.findings)  # root causes first, consequences marked
    elapsed = time.monotonic() - started
    report = Report(list(argv), results, elapsed, [p.name for p in ctx.probes], internal, language)
    report.eras = ctx.eras.describe()
    return report


def skip_unjudged(eras: Eras, findings: Findings) -> None:
    """Every check of an era not judged is skipped, saying why (a modern-only server, --era ...)."""
    for era in ("legacy", "modern"):
        if eras.judged(era):
            continue
        why = eras.skip_reason(era)
        for check in findings.checks:
            if CATALOGUE[check].era == era:
                findings.skipped(check, why)


def guard(errors: list[OSError], internal: list[str]) -> Callable[[Callable[[], None]], None]:
    """Run a job, keeping an OSError (a usage error) or a checker bug (for stderr) instead of raising."""

    def guarded(job: Callable[[], None]) -> None:
        try:
            job()
        except OSError as exc:  # the command cannot be started: a usage error
            errors.append(exc)
        except Exception:  # a checker bug: the other probes' verdicts still make a report
            internal.append(traceback.format_exc(limit=-3))

    return guarded


def run_jobs(
    ctx: Context,
    jobs: list[Callable[[], None]],
    guarded: Callable[[Callable[[], None]], None],
    errors: list[OSError],
    first: Callable[[], None] | None = None,
) -> None:
    """``first`` alone, then the first job alone until its initialize is answered (the start-up
    timing), then the rest beside it (none after an error); every probe closed at the end."""
    threads = [threading.Thread(target=guarded, args=(job,), daemon=True) for job in jobs]
    try:
        if first is not None:
            guarded(first)
        if not errors:
            # The start-up probe runs alone until initialize is answered, so that the other
            # processes starting at the same moment on a small machine do not slow its timing.
            threads[0].start()
            ctx.first_up.wait(STARTUP_WARN)
            for thread in threads[1:]:
                thread.start()
            for thread in threads:
                # Timed waits: Ctrl-C may be delivered to a probe's thread, and a plain join()
                # in the main thread would then sleep through it until every probe had ended.
                while thread.is_alive():
                    thread.join(JOIN_STEP)
    except BaseException:
        # Ctrl-C (or a checker bug) in the main thread: the servers run in sessions of their
        # own, out of reach of the terminal's signal, so end them here or they outlive us.
        # Every group is sent SIGKILL first, then each is waited for (up to a second each): they die
        # together, so the waits after the first are short, where killing one by one waited for each.
        children = [probe.child for probe in ctx.stop_starting() if hasattr(probe, "child")]
        for child in children:
            child.kill(wait=0)
        for child in children:
            child.wait(1.0)
        raise
    for probe in ctx.probes:
        probe.close()  # idempotent: every probe is closed, whatever happened


STDIO_ONLY_WHY = "stdio only: over HTTP the server is not a process of the checker's own"


def run_http_check(
    url: str,
    headers: Mapping[str, str] | None = None,
    timeout: float = 3.0,
    call_tools: bool = False,
    call_timeout: float = CALL_TIMEOUT,
    era: str = "auto",
) -> Report:
    """Check the Streamable HTTP MCP endpoint at ``url``, sending ``headers`` with every request, in
    ``era`` ("auto": every era it speaks, as :func:`run_check`).

    Raises ``BadUrl`` (a ValueError) for a URL that is not http(s), OSError when nothing listens there.
    """
    from .catalogue import HTTP_CHECKS, STDIO_ONLY
    from .http_checks import all_exchanges, attribute_sse, judge_exchanges, judge_http_envelopes, run_transport_checks
    from .http_modern import run_modern_http
    from .http_probe import split_url
    from .http_session import HttpContext, HttpMainSession
    from .verdicts import Findings

    started = time.monotonic()
    _, host, port, _ = split_url(url)
    try:
        socket.create_connection((host, port), timeout=max(timeout, 3.0)).close()
    except OSError as exc:
        raise OSError(f"cannot reach {url}: {exc.strerror or exc}") from None
    findings = Findings([*CHECKS, "era-mixing", *HTTP_CHECKS])  # both eras' (http_modern.py: the modern era's)
    ctx = HttpContext(
        [url], timeout=timeout, call_tools=call_tools, call_timeout=call_timeout, findings=findings, url=url,
        headers=dict(headers or {}),
    )  # fmt: skip
    ctx.language = "neutral"  # nothing tells the server's language over HTTP
    ctx.eras = Eras(era)
    for check in STDIO_ONLY:
        findings.skipped(check, STDIO_ONLY_WHY)
    truth = ShopTruth.load()
    digest = truth.digest()
    negotiation = Negotiation()
    main = HttpMainSession(ctx, truth)
    legacy: list[Callable[[], None]] = [
        main.run,
        *[lambda v=v: run_version(ctx, v, negotiation) for v in PROPOSALS],
        lambda: run_transport_checks(ctx),
    ]
    modern: list[Callable[[], None]] = [lambda: run_modern_http(ctx)]
    if not ctx.eras.asked("legacy"):
        jobs = modern
        ctx.first_up.set()  # no initialize to wait for
        findings.unreached = ctx.eras.skip_reason("legacy")  # the checks the legacy session judges over HTTP
    else:
        jobs = legacy + (modern if ctx.eras.asked("modern") else [])
    errors: list[OSError] = []
    internal: list[str] = []
    run_jobs(ctx, jobs, guard(errors, internal), errors)
    if errors:
        raise errors[0]
    skip_unjudged(ctx.eras, findings)
    judge_exchanges(all_exchanges(ctx.probes), findings)
    judge_http_envelopes(ctx.probes, findings)
    if ctx.eras.judged("legacy"):
        judge_negotiation(ctx, main.negotiated, negotiation)
    if main.shop:
        judge_digest(truth, digest, findings)
    results = order(attribute_sse(list(findings.results().values())))  # root causes first
    elapsed = time.monotonic() - started
    report = Report([url], results, elapsed, [p.name for p in ctx.probes], internal, "neutral", url=url)
    report.eras = ctx.eras.describe()
    return report
