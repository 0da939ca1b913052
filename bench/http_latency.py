"""The reference server over Streamable HTTP against the same server on stdio: round trips.

    .venv/bin/python bench/http_latency.py [--calls N] [--db PATH]

Starts ``mcp-lab serve --http 127.0.0.1:0`` and ``mcp-lab serve`` as real child processes,
initialises each, then times N ``ping`` and N ``tools/call count_orders`` round trips one at a
time: over HTTP on one keep-alive connection (http.client), on stdio over the pipes
(reference.child). Prints p50 and p99 in microseconds and the HTTP/stdio ratio. A report, not a
test: it exits 0 whatever it measured.
"""

from __future__ import annotations

import argparse
import http.client
import json
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from reference import database  # noqa: E402
from reference.child import ChildProcess  # noqa: E402
from reference.framing import decode, encode  # noqa: E402

MCP_LAB = str(Path(sys.executable).parent / "mcp-lab")
INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}
CALLS = {
    "ping": ("ping", {}),
    "count_orders": ("tools/call", {"name": "count_orders", "arguments": {"status": "paid"}}),
}


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered) * 1e6, ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1e6


def over_http(db: Path, calls: int) -> dict[str, list[float]]:
    child = ChildProcess([MCP_LAB, "serve", "--http", "127.0.0.1:0", "--db", str(db)], cwd=str(ROOT))
    try:
        deadline = time.monotonic() + 30
        while not (found := re.search(r"http://127\.0\.0\.1:(\d+)/mcp", child.stderr_tail())):
            if time.monotonic() > deadline or child.process.poll() is not None:
                raise SystemExit(f"the HTTP server did not start: {child.stderr_tail()}")
            time.sleep(0.02)
        conn = http.client.HTTPConnection("127.0.0.1", int(found.group(1)), timeout=30)
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}

        def post(message: dict[str, object]) -> http.client.HTTPResponse:
            conn.request("POST", "/mcp", json.dumps(message), headers)
            reply = conn.getresponse()
            reply.read()
            return reply

        reply = post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT})
        headers["Mcp-Session-Id"] = reply.getheader("Mcp-Session-Id") or ""
        post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        times: dict[str, list[float]] = {}
        for name, (method, params) in CALLS.items():
            samples = []
            for i in range(calls):
                started = time.perf_counter()
                reply = post({"jsonrpc": "2.0", "id": i + 1, "method": method, "params": params})
                samples.append(time.perf_counter() - started)
                assert reply.status == 200
            times[name] = samples
        conn.close()
        return times
    finally:
        child.process.terminate()
        child.close(grace=0)


def over_stdio(db: Path, calls: int) -> dict[str, list[float]]:
    with ChildProcess([MCP_LAB, "serve", "--db", str(db)], cwd=str(ROOT)) as child:

        def ask(message: dict[str, object]) -> None:
            child.send(encode(message))
            line = child.read_line(30)
            assert line is not None, child.stderr_tail()
            decode(line.data)

        ask({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT})
        child.send(encode({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        times: dict[str, list[float]] = {}
        for name, (method, params) in CALLS.items():
            samples = []
            for i in range(calls):
                started = time.perf_counter()
                ask({"jsonrpc": "2.0", "id": i + 1, "method": method, "params": params})
                samples.append(time.perf_counter() - started)
            times[name] = samples
        return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000, help="timed calls per kind (default 2000)")
    parser.add_argument("--db", type=Path, help="the shop database (default: the embedded one)")
    args = parser.parse_args()
    db = args.db or database.ensure_default()
    http_times, stdio_times = over_http(db, args.calls), over_stdio(db, args.calls)
    print(f"{'call':<14} {'http p50':>10} {'http p99':>10} {'stdio p50':>10} {'stdio p99':>10} {'p50 ratio':>10}")
    for name in CALLS:
        h50, h99 = percentiles(http_times[name])
        s50, s99 = percentiles(stdio_times[name])
        print(f"{name:<14} {h50:>8.0f}us {h99:>8.0f}us {s50:>8.0f}us {s99:>8.0f}us {h50 / s50:>9.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
