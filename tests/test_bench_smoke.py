"""Smoke test of the benchmark: ``bench/bench.py --quick --json`` measures all three servers in both eras.

It asserts only that every number is there and positive, never how fast anything is: timings
belong in the benchmark's report, not in a test that a busy machine would make flaky.

    $ .venv/bin/python -m pytest tests/test_bench_smoke.py
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench" / "bench.py"
SERVERS = ("reference", "sdk", "echo")
MEASURES = ("cold_start_ms", "p50_us", "p99_us", "calls_per_s", "peak_rss_mb")


@pytest.mark.slow
def test_quick_run_measures_all_three_servers_in_both_eras() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--quick", "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,  # a quick run takes a few seconds per era; this only stops a hang
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert set(report["eras"]) == {"legacy", "modern"}
    for era, measured in report["eras"].items():
        assert set(measured["servers"]) == set(SERVERS)
        for name in SERVERS:
            server = measured["servers"][name]
            assert server["errors"] == [], (era, name, server["errors"])
            for measure in MEASURES:
                value = server[measure]
                assert isinstance(value, int | float) and value > 0, (era, name, measure, value)
            assert server["calls"] == report["config"]["calls"]
        assert measured["answers_identical"] is True, era
        verdicts = [target["verdict"] for target in measured["targets"]]
        assert len(verdicts) == 4 and set(verdicts) <= {"PASS", "MISS"}, verdicts


def test_the_bytecode_benchmark_measures_both_kinds_of_start() -> None:
    """``bench/bytecode_starts.py``: each kind of start measured with its bytecode and without (numbers only)."""
    done = subprocess.run(
        [sys.executable, str(BENCH.with_name("bytecode_starts.py")), "--starts", "2", "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,  # a few seconds; this only stops a hang
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert set(report["kinds"]) == {"project", "runtime"}
    for kind, row in report["kinds"].items():
        for name in ("median", "least"):
            for measure in ("with_ms", "without_ms", "ratio"):
                value = row[f"{name}_{measure}"]
                assert isinstance(value, int | float) and value > 0, (kind, name, measure, value)
