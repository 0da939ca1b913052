"""How long `mcp-lab check` takes, side by side: the reference, the official SDK server, the corpus.

    .venv/bin/python bench/check_speed.py              # reference and SDK, 3 runs each
    .venv/bin/python bench/check_speed.py --corpus     # and every installed corpus server
    .venv/bin/python bench/check_speed.py --runs 5
    .venv/bin/python bench/check_speed.py --http       # the checker over HTTP (mcp-lab check --url)

Each run is the whole command as a user types it (`mcp-lab check --json -- SERVER`), timed from
start to exit, so it includes the checker's own start-up. Prints the median and the spread, the
server processes the checker started, and its fails and warns. Targets: 1 s on the reference,
2 s on a Python SDK server. A report, not a test: it exits 0 whatever it measured.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import corpus

TARGETS = {"reference": 1.0, "sdk-shop": 2.0}


def servers(with_corpus: bool) -> dict[str, list[str]]:
    chosen = {"reference": [sys.executable, "-m", "reference.server"], "sdk-shop": corpus.COMMANDS["sdk-shop"]}
    if with_corpus:
        if not corpus.installed():
            print(f"(the corpus is not installed: run {corpus.INSTALL})", file=sys.stderr)
        else:
            chosen.update(corpus.COMMANDS)
    return chosen


def run_once(argv: list[str]) -> tuple[float, dict[str, int], list[str]]:
    """One run; ``argv`` is the server command, or ``["--url", URL]``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    start = time.monotonic()
    target = argv if argv[:1] == ["--url"] else ["--", *argv]
    done = subprocess.run(
        [sys.executable, "-m", "grader.cli", "check", "--json", *target],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=corpus.ROOT,
    )
    wall = time.monotonic() - start
    report = json.loads(done.stdout)
    found = [f"{c['status']} {c['id']} [{c['evidence'].get('keyword')}]" for c in report["checks"]]
    return wall, report["counts"], [f for f in found if f.startswith(("fail", "warn"))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per server (default 3)")
    parser.add_argument("--corpus", action="store_true", help="also every installed corpus server")
    parser.add_argument("--http", action="store_true", help="the HTTP servers instead (each started once)")
    args = parser.parse_args()
    print(f"{'server':<22} {'median s':>8} {'min-max s':>11} {'target':>7}  fails and warns (keyword)")
    if args.http:
        for name in corpus.HTTP_SERVERS:
            if "npm" in corpus.HTTP_SERVERS[name][0][0] and not corpus.installed():
                print(f"(the corpus is not installed: run {corpus.INSTALL})", file=sys.stderr)
                continue
            with corpus.serve_http(name) as url:
                report(name, [run_once(["--url", url]) for _ in range(args.runs)])
        return 0
    for name, argv in servers(args.corpus).items():
        report(name, [run_once(argv) for _ in range(args.runs)])
    return 0


def report(name: str, runs: list[tuple[float, dict[str, int], list[str]]]) -> None:
    walls = [wall for wall, _, _ in runs]
    found = runs[-1][2]
    target = f"{TARGETS[name]:.1f}" if name in TARGETS else "-"
    spread = f"{min(walls):.2f}-{max(walls):.2f}"
    print(f"{name:<22} {statistics.median(walls):>8.2f} {spread:>11} {target:>7}  {'; '.join(found) or 'none'}")


if __name__ == "__main__":
    sys.exit(main())
