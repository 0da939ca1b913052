"""Benchmark: the reference server against the official SDK's and against a bare echo floor.

All three run in one go, side by side, as real child processes over pipes, spawned and read by
the course's own host code (:class:`reference.child.ChildProcess`: ``PYTHONUNBUFFERED`` removed,
stderr drained, every read bounded by a timeout) and spoken to with :mod:`reference.framing`.

Both eras of MCP are measured (``--era``, default both), each with its own table: **legacy** (the
``initialize`` handshake, then plain requests) and **modern** (MCP 2026-07-28: no handshake, a
``server/discover`` first and the ``_meta`` envelope on every request). The SDK's server speaks both.

- **cold start**: from spawn to the first reply (``initialize``, or ``server/discover`` in the
  modern era), the median of ``--starts`` fresh
  processes; each round starts the three servers one after another (in a rotating order), so
  whatever noise the machine makes falls on all three alike;
- **latency**: ``--calls`` sequential ``tools/call count_orders {"status": "paid"}`` per server
  (the echo floor gets the same frames), after the handshake and ``--warmup`` calls; measured in
  blocks that rotate between the servers. One call is timed from just before its frame is
  written to the moment the client's reader thread has its reply line: p50 and p99;
- **calls/s**: the same calls divided by the wall time of the blocks that made them (one request
  in flight, client overhead included);
- **peak RSS**: ``VmHWM`` from ``/proc/<pid>/status`` of the server process, read after the calls
  and before it is closed.

It then prints the ratios against the targets (reference calls/s >= 5x the SDK's, cold start <=
1/8 of the SDK's, peak RSS <= 1/3 of the SDK's, p50 <= 3x the echo floor's). It is a report, not
a test: it exits 0 whatever it measured unless ``--strict`` is given. A server that fails is
reported as failed; the run goes on with the others.

    $ make bench                                   # .venv/bin/python bench/bench.py
    $ .venv/bin/python bench/bench.py --quick      # small counts: a smoke run in a few seconds
    $ .venv/bin/python bench/bench.py --calls 20000 --starts 20 --json > bench/results/run.json
    $ .venv/bin/python bench/bench.py --era modern  # one era only
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from a checkout that is not installed
    sys.path.insert(0, str(ROOT))

from reference import PROTOCOL_REVISION, database, stateless  # noqa: E402
from reference.child import ChildProcess  # noqa: E402
from reference.framing import FrameError, decode, encode  # noqa: E402

BENCH = Path(__file__).resolve().parent
SERVERS = ("reference", "sdk", "echo")
TOOL_CALL = {"name": "count_orders", "arguments": {"status": "paid"}}
CLIENT_INFO = {"name": "mcp-wire-lab-bench", "version": "0.1.0"}
BLOCK = 100  # calls per server before the latency loop moves on to the next server
QUICK = {"calls": 200, "starts": 2, "warmup": 20}

Progress = Callable[[str], None]


class BenchError(Exception):
    """One server failed one measurement: it is reported, and the run goes on."""


def commands(db: Path) -> dict[str, list[str]]:
    """How each server is started: this interpreter, no wrapper, so the pid is the server's."""
    python = sys.executable
    return {
        "reference": [python, "-m", "reference.server", "--db", str(db)],
        "sdk": [python, str(BENCH / "sdk_shop_server.py"), "--db", str(db)],
        "echo": [python, str(BENCH / "echo_server.py")],
    }


# -- talking to one server ------------------------------------------------------------------


ERAS = ("legacy", "modern")
# The 2026-07-28 envelope every modern request carries (reference/stateless.py).
MODERN_META = {
    stateless.PROTOCOL_VERSION: stateless.MODERN,
    stateless.CLIENT_CAPABILITIES: {},
    stateless.CLIENT_INFO: CLIENT_INFO,
}


def initialize_frame(request_id: int, era: str = "legacy") -> bytes:
    """The first request of a session: ``initialize``, or ``server/discover`` in the modern era."""
    if era == "modern":
        return encode(
            {"jsonrpc": "2.0", "id": request_id, "method": "server/discover", "params": {"_meta": MODERN_META}}
        )
    return encode(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "initialize",
            "params": {"protocolVersion": PROTOCOL_REVISION, "capabilities": {}, "clientInfo": CLIENT_INFO},
        }
    )


def call_frame(request_id: int, era: str = "legacy") -> bytes:
    params = {**TOOL_CALL, "_meta": MODERN_META} if era == "modern" else TOOL_CALL
    return encode({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})


class Server:
    """One running server and the client side of its session."""

    def __init__(self, name: str, argv: Sequence[str], timeout: float, era: str = "legacy") -> None:
        self.name = name
        self.timeout = timeout
        self.era = era
        try:
            self.child = ChildProcess(argv, cwd=str(ROOT))
        except OSError as exc:
            raise BenchError(f"cannot start {argv[0]}: {exc}") from None
        self.next_id = 0

    def fail(self, what: str) -> BenchError:
        code = self.child.process.poll()
        state = f"exited with status {code}" if code is not None else "still running"
        tail = self.child.stderr_tail(600).strip()
        return BenchError(f"{what} ({state}){'; stderr: ' + tail if tail else ''}")

    def send(self, frame: bytes) -> None:
        if not self.child.send(frame):
            raise self.fail("the server stopped reading its stdin")

    def reply(self, request_id: int) -> tuple[dict[str, Any], float]:
        """The reply to ``request_id`` and when it arrived (seconds since spawn); others are skipped."""
        deadline = time.monotonic() + self.timeout
        while True:
            line = self.child.read_line(deadline - time.monotonic())
            if line is None:
                if self.child.stdout_closed.is_set():
                    raise self.fail(f"stdout closed before the reply to request {request_id}")
                raise self.fail(f"no reply to request {request_id} within {self.timeout:g} s")
            try:
                message = decode(line.data)
            except FrameError:
                continue  # noise on stdout is a bug in the server, but not ours to time
            if isinstance(message, dict) and message.get("id") == request_id and "method" not in message:
                if "result" not in message:
                    error = message.get("error")
                    raise self.fail(f"request {request_id} was answered with an error: {error}")
                return message, line.at

    def request_id(self) -> int:
        self.next_id += 1
        return self.next_id

    def handshake(self) -> dict[str, Any]:
        """The legacy handshake, or in the modern era the discover a client sends first."""
        request_id = self.request_id()
        self.send(initialize_frame(request_id, self.era))
        message, _ = self.reply(request_id)
        if self.era == "legacy":
            self.send(encode({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        return message["result"]

    def call(self) -> tuple[dict[str, Any], float]:
        """One ``tools/call``: its result and its round trip in seconds."""
        request_id = self.request_id()
        frame = call_frame(request_id, self.era)
        sent = self.child.elapsed()
        self.send(frame)
        message, arrived = self.reply(request_id)
        return message["result"], arrived - sent

    def peak_rss_kib(self) -> int | None:
        """``VmHWM`` of the server process, in KiB (None where /proc is not available)."""
        try:
            with open(f"/proc/{self.child.pid}/status", encoding="ascii", errors="replace") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1])
        except OSError:
            pass
        return None

    def close(self) -> None:
        self.child.close()


# -- measurements ---------------------------------------------------------------------------


@dataclass
class Result:
    cold_start_ms: float | None = None
    cold_starts: list[float] = field(default_factory=list)  # ms, in the order measured
    p50_us: float | None = None
    p99_us: float | None = None
    mean_us: float | None = None
    calls: int = 0
    calls_per_s: float | None = None
    peak_rss_mb: float | None = None
    answer: str | None = None  # the text of the first tools/call result
    errors: list[str] = field(default_factory=list)


def percentile(sorted_values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile of an already sorted, non-empty sequence."""
    rank = max(1, math.ceil(fraction * len(sorted_values)))
    return sorted_values[rank - 1]


def cold_start(name: str, argv: Sequence[str], timeout: float, era: str = "legacy") -> float:
    """Seconds from spawn to the first reply (``initialize``, or ``server/discover``) of a fresh process."""
    server = Server(name, argv, timeout, era)
    try:
        server.send(initialize_frame(0, era))  # written at once: it waits in the pipe until read
        _, arrived = server.reply(0)
        return arrived
    finally:
        server.close()


def measure_cold_starts(
    argvs: dict[str, list[str]],
    results: dict[str, Result],
    starts: int,
    timeout: float,
    progress: Progress,
    era: str = "legacy",
) -> None:
    for round_no in range(starts):
        shift = round_no % len(SERVERS)
        for name in SERVERS[shift:] + SERVERS[:shift]:
            try:
                results[name].cold_starts.append(cold_start(name, argvs[name], timeout, era) * 1000)
            except BenchError as exc:
                results[name].errors.append(f"cold start {round_no + 1}: {exc}")
        progress(f"cold start {round_no + 1}/{starts}")
    for result in results.values():
        if result.cold_starts:
            result.cold_start_ms = statistics.median(result.cold_starts)


def measure_calls(
    argvs: dict[str, list[str]],
    results: dict[str, Result],
    calls: int,
    warmup: int,
    timeout: float,
    progress: Progress,
    era: str = "legacy",
) -> None:
    servers: dict[str, Server] = {}
    failed: set[str] = set()
    latencies: dict[str, list[float]] = {name: [] for name in SERVERS}
    wall: dict[str, float] = dict.fromkeys(SERVERS, 0.0)
    try:
        for name in SERVERS:
            try:
                server = servers[name] = Server(name, argvs[name], timeout, era)
                server.handshake()
                answer, _ = server.call()  # untimed: the answer, kept to compare the servers
                if answer.get("isError"):
                    raise server.fail(f"the tool call failed: {_answer_text(answer)}")
                results[name].answer = _answer_text(answer)
                for _ in range(warmup):
                    server.call()
            except BenchError as exc:
                failed.add(name)
                results[name].errors.append(f"session: {exc}")
        blocks = math.ceil(calls / BLOCK)
        for block in range(blocks):
            size = min(BLOCK, calls - block * BLOCK)
            shift = block % len(SERVERS)
            for name in SERVERS[shift:] + SERVERS[:shift]:
                if name not in servers or name in failed:
                    continue
                server, times = servers[name], latencies[name]
                try:
                    started = time.perf_counter()
                    for _ in range(size):
                        times.append(server.call()[1])
                    wall[name] += time.perf_counter() - started
                except BenchError as exc:
                    failed.add(name)
                    results[name].errors.append(f"call {len(times) + 1}: {exc}")
            if block % 10 == 9 or block == blocks - 1:
                progress(f"calls {min(calls, (block + 1) * BLOCK)}/{calls}")
        for name, server in servers.items():
            rss = None if name in failed else server.peak_rss_kib()
            if rss is not None:
                results[name].peak_rss_mb = rss / 1024
    finally:
        for server in servers.values():
            server.close()
    for name, times in latencies.items():
        result = results[name]
        result.calls = len(times)
        if times and name not in failed:
            ordered = sorted(times)
            result.p50_us = percentile(ordered, 0.50) * 1e6
            result.p99_us = percentile(ordered, 0.99) * 1e6
            result.mean_us = statistics.fmean(ordered) * 1e6
            result.calls_per_s = len(times) / wall[name] if wall[name] > 0 else None


def _answer_text(result: dict[str, Any]) -> str:
    content = result.get("content") or [{}]
    return str(content[0].get("text", "")) if isinstance(content[0], dict) else ""


# -- the targets ----------------------------------------------------------------------------


@dataclass
class Target:
    name: str
    needed: str  # the condition, in words
    ratio: float | None  # oriented so that bigger is better for the reference, except "at most"
    limit: float
    at_most: bool = False

    @property
    def met(self) -> bool:
        if self.ratio is None:
            return False
        return self.ratio <= self.limit if self.at_most else self.ratio >= self.limit

    @property
    def verdict(self) -> str:
        if self.ratio is None:
            return "MISS (not measured)"
        return "PASS" if self.met else "MISS"


def same_answer(results: dict[str, Result]) -> bool | None:
    """Whether the reference and the SDK gave the same text (None if one of them gave none)."""
    ref, sdk = results["reference"].answer, results["sdk"].answer
    return None if ref is None or sdk is None else ref == sdk


def _ratio(top: float | None, bottom: float | None) -> float | None:
    return top / bottom if top is not None and bottom else None


def targets(results: dict[str, Result]) -> list[Target]:
    ref, sdk, echo = results["reference"], results["sdk"], results["echo"]
    return [
        Target("calls/s: reference / SDK", ">= 5x", _ratio(ref.calls_per_s, sdk.calls_per_s), 5.0),
        Target("cold start: SDK / reference", ">= 8x", _ratio(sdk.cold_start_ms, ref.cold_start_ms), 8.0),
        Target("peak RSS: SDK / reference", ">= 3x", _ratio(sdk.peak_rss_mb, ref.peak_rss_mb), 3.0),
        Target("p50: reference / echo", "<= 3x", _ratio(ref.p50_us, echo.p50_us), 3.0, at_most=True),
    ]


# -- report ---------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    try:
        load = list(os.getloadavg())
    except OSError:
        load = []
    try:
        sdk = importlib.metadata.version("mcp")
    except importlib.metadata.PackageNotFoundError:
        sdk = None
    return {
        "mcp_sdk": sdk,
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "loadavg": [round(x, 2) for x in load],
    }


def _fmt(value: float | None, digits: int = 1) -> str:
    return "failed" if value is None else f"{value:,.{digits}f}"


ERA_TITLES = {
    "legacy": "legacy era (2025-11-25): initialize, then plain requests",
    "modern": "modern era (2026-07-28): server/discover, then requests with the _meta envelope",
}


def render_era(era: str, results: dict[str, Result], goals: list[Target]) -> list[str]:
    lines = [
        ERA_TITLES[era],
        f"{'server':<10} {'cold start ms':>14} {'p50 µs':>9} {'p99 µs':>9} {'calls/s':>9} {'peak RSS MB':>12}",
    ]
    for name in SERVERS:
        r = results[name]
        lines.append(
            f"{name:<10} {_fmt(r.cold_start_ms):>14} {_fmt(r.p50_us):>9} {_fmt(r.p99_us):>9} "
            f"{_fmt(r.calls_per_s, 0):>9} {_fmt(r.peak_rss_mb):>12}"
        )
    lines += ["", f"{'target':<30} {'needed':>7} {'measured':>9}  verdict"]
    for goal in goals:
        measured = "-" if goal.ratio is None else f"{goal.ratio:.2f}x"
        lines.append(f"{goal.name:<30} {goal.needed:>7} {measured:>9}  {goal.verdict}")
    same = same_answer(results)
    if same is not None:
        lines += ["", f"reference and SDK answers {'identical' if same else 'DIFFER'}: {results['reference'].answer}"]
    for name in SERVERS:
        for error in results[name].errors[:5]:
            lines.append(f"!! {name}: {error}")
        if len(results[name].errors) > 5:
            lines.append(f"!! {name}: ... and {len(results[name].errors) - 5} more failures")
    return lines


def render(report: dict[str, Any], measured: dict[str, tuple[dict[str, Result], list[Target]]]) -> str:
    config, host = report["config"], report["machine"]
    lines = [
        f'MCP Wire Lab benchmark: {config["calls"]} x tools/call count_orders {{"status": "paid"}} '
        f"after {config['warmup']} warm-up calls, {config['starts']} cold starts, per era",
        f"python {host['python']}, mcp SDK {host['mcp_sdk']}, {host['platform']}, {host['cpus']} CPUs, "
        f"load average {host['loadavg_before']} -> {host['loadavg']}",
    ]
    for era, (results, goals) in measured.items():
        lines += ["", *render_era(era, results, goals)]
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Benchmark the reference MCP server against the official SDK and an echo floor."
    )
    parser.add_argument("--calls", type=int, help="timed tools/call per server (default 10000)")
    parser.add_argument("--starts", type=int, help="cold starts per server (default 10)")
    parser.add_argument("--warmup", type=int, help="untimed calls after the handshake (default 200)")
    parser.add_argument("--quick", action="store_true", help="small counts for a smoke run")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    parser.add_argument("--strict", action="store_true", help="exit 1 if a target is missed")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for any one reply")
    parser.add_argument("--db", help="the shop database (default: the embedded one, built if missing)")
    parser.add_argument(
        "--era", choices=(*ERAS, "both"), default="both", help="legacy (initialize), modern (2026-07-28), or both"
    )
    args = parser.parse_args(argv)
    defaults = QUICK if args.quick else {"calls": 10000, "starts": 10, "warmup": 200}
    for key, value in defaults.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    if args.calls < 1 or args.starts < 1 or args.warmup < 0:
        parser.error("--calls and --starts must be at least 1, --warmup at least 0")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    db = Path(args.db) if args.db else database.ensure_default()
    argvs = commands(db)

    def progress(text: str) -> None:
        if not args.json and sys.stderr.isatty():
            print(f"  {text}", file=sys.stderr, flush=True)

    host = machine()
    loadavg_before = host["loadavg"]
    measured: dict[str, tuple[dict[str, Result], list[Target]]] = {}
    for era in ERAS if args.era == "both" else (args.era,):
        results = {name: Result() for name in SERVERS}
        measure_cold_starts(argvs, results, args.starts, args.timeout, progress, era)
        measure_calls(argvs, results, args.calls, args.warmup, args.timeout, progress, era)
        measured[era] = (results, targets(results))
    host = machine() | {"loadavg_before": loadavg_before}
    report = {
        "config": {
            "calls": args.calls,
            "starts": args.starts,
            "warmup": args.warmup,
            "tool_call": TOOL_CALL,
            "commands": argvs,
        },
        "machine": host,
        "eras": {
            era: {
                "servers": {name: asdict(result) for name, result in results.items()},
                "answers_identical": same_answer(results),
                "targets": [asdict(goal) | {"verdict": goal.verdict, "met": goal.met} for goal in goals],
            }
            for era, (results, goals) in measured.items()
        },
    }
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        print(render(report, measured))
    met = all(goal.met for _, goals in measured.values() for goal in goals)
    return 1 if args.strict and not met else 0


if __name__ == "__main__":
    sys.exit(main())
