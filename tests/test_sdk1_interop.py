"""The official Python SDK's 1.x client validates the reference's structured tool output.

The project's environment holds the SDK 2.x (tests/test_sdk_interop.py); hosts in the field still
run 1.x, whose client validates ``structuredContent`` against each tool's ``outputSchema`` too. It
lives in its own environment, build/sdk1 (bench/install_corpus.sh, which .ci/run calls), and runs
tests/clients/sdk1_session.py as a real child that drives a real server child.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from grader import gallery
from reference.child import child_environment

ROOT = Path(__file__).resolve().parents[1]
SDK1 = ROOT / "build" / "sdk1" / "bin" / "python"
SESSION = ROOT / "tests" / "clients" / "sdk1_session.py"

pytestmark = pytest.mark.skipif(
    not SDK1.exists(), reason="the SDK 1.x client is not installed: run bench/install_corpus.sh (.ci/run does)"
)


def sdk1_session(argv: list[str]) -> dict:
    done = subprocess.run(
        [str(SDK1), str(SESSION), "--", *argv],
        capture_output=True,
        text=True,
        timeout=90,
        env=child_environment(),
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def test_the_sdk1_client_is_1x() -> None:
    version = subprocess.run(
        [str(SDK1), "-c", "import importlib.metadata as m; print(m.version('mcp'))"],
        capture_output=True,
        text=True,
        timeout=30,
    ).stdout.strip()
    assert version.startswith("1."), version


def test_the_sdk1_client_validates_the_references_structured_results(shop_db: Path) -> None:
    seen = sdk1_session([sys.executable, "-m", "reference.server", "--db", str(shop_db)])
    assert seen["protocolVersion"] == "2025-11-25"
    assert all(seen["outputSchemas"].values()), seen["outputSchemas"]
    for call in seen["calls"]:
        assert "refused" not in call, call
        assert call["isError"] is False and isinstance(call["structured"], dict), call
    count = next(c for c in seen["calls"] if c["tool"] == "count_orders")
    assert count["structured"]["status"] == "shipped" and isinstance(count["structured"]["count"], int)


def test_the_sdk1_client_refuses_structured_content_that_breaks_the_schema() -> None:
    """Its validation is live: the exhibit whose count is a string is refused, its other tools are not."""
    seen = sdk1_session(gallery.command("structured_content_wrong_type"))
    refused = {c["tool"]: c.get("refused", "") for c in seen["calls"]}
    assert "Invalid structured content returned by tool count_orders" in refused["count_orders"]
    assert [t for t, why in refused.items() if why] == ["count_orders"]
