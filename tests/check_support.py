"""Running ``mcp-lab check`` as a real process, for the tests of its diagnosis.

>>> BAD
('fail', 'warn')
"""

from __future__ import annotations

import json
from typing import Any

from conftest import ROOT, run_cli

SERVERS = ROOT / "tests" / "servers"
CHECK_TIMEOUT = 90.0  # seconds for one whole `mcp-lab check` run (a bound, not a measure)
BAD = ("fail", "warn")


def check(argv: list[str], *options: str, text: bool = False) -> tuple[Any, int]:
    """The checker's report on ``argv``: the JSON object, or the text with ``text``."""
    words = ["check", *([] if text else ["--json"]), *options, "--", *argv]
    done = run_cli(words, timeout=CHECK_TIMEOUT)
    assert done.returncode in (0, 1), done.stderr.decode("utf-8", "replace")
    out = done.stdout.decode("utf-8")
    return (out if text else json.loads(out)), done.returncode


def by_id(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["id"]: c for c in report["checks"]}


def causes(report: dict[str, Any]) -> dict[str, str]:
    return {c["id"]: c["caused_by"] for c in report["checks"] if "caused_by" in c}
