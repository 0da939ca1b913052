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


def assert_leads_with_its_own_check(report: dict[str, Any], check: str, expect: str) -> None:
    """A gallery exhibit's report names its root cause: the first check that fails (the first that does
    not pass, where the exhibit only warns) is the exhibit's own ``check``, no consequence; every check
    marked ``caused_by`` names a root that fails or warns in the same report and is no consequence
    itself; roots come first, then consequences, then the checks that pass or were skipped."""
    wanted = ("fail",) if expect == "fail" else BAD
    first = next(c for c in report["checks"] if c["status"] in wanted)
    assert first["id"] == check, f"the report leads with {first['id']}: {first['summary']}"
    assert "caused_by" not in first
    found = by_id(report)
    for check_id, root in causes(report).items():
        assert found[check_id]["status"] in BAD, check_id
        assert found[root]["status"] in BAD and "caused_by" not in found[root], (check_id, root)
        assert found[check_id]["evidence"]["because"], check_id
    groups = [(c["status"] not in BAD) * 2 or ("caused_by" in c) for c in report["checks"]]
    assert groups == sorted(groups), [c["id"] for c in report["checks"]]
