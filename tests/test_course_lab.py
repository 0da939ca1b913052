"""`mcp-lab lab` opens a real JupyterLab on the workspace, with the Validate button's server side.

JupyterLab is started the way `make lab` starts it (plus --no-browser, a loopback port it picks and a
token), then asked over HTTP: the server is up, the nbgrader Validate endpoint validates a stage
notebook with the course's config, and the instructor's formgrader is not there. The browser-level
test of the same lab is tests/test_course_browser.py; this one needs no browser.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from conftest import ROOT
from course_support import python_env

from grader.course import build

pytestmark = pytest.mark.timeout(300)
TOKEN = "mcp-wire-lab-test"


def start_lab(workspace: Path, log: Path, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """``mcp-lab lab`` as ``make lab`` runs it, on a loopback port the server picks itself (port 0).

    A port chosen here and handed over would be free only until JupyterLab binds it, seconds later:
    another process could take it first, and JupyterLab would move to the next port (its port
    retries) where the test would never look. :func:`wait_up` reads the port from the lab's own line."""
    command = [sys.executable, "-m", "grader.cli", "lab", "--workspace", str(workspace), "--",
               "--no-browser", "--ServerApp.ip=127.0.0.1", "--ServerApp.port=0",
               f"--IdentityProvider.token={TOKEN}"]  # fmt: skip
    out = open(log, "w", encoding="utf-8")  # noqa: SIM115 - the child writes it; read by wait_up and on failure
    try:
        return subprocess.Popen(command, cwd=ROOT, env=env or python_env(), stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)  # fmt: skip
    finally:
        out.close()


def wait_up(lab: subprocess.Popen[bytes], log: Path, within: float = 180) -> str:
    """The lab's base URL (``http://127.0.0.1:PORT``), once ``mcp-lab lab`` says it is running: it
    says so after JupyterLab answered ``/api/status``."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline and lab.poll() is None:
        found = re.search(r"JupyterLab is running: (http://127\.0\.0\.1:\d+)/", log.read_text(encoding="utf-8"))
        if found:
            return found.group(1)
        time.sleep(0.5)
    pytest.fail(f"JupyterLab did not come up:\n{log.read_text(encoding='utf-8')[-3000:]}")


def http(url: str, data: dict[str, str] | None = None, timeout: float = 120) -> tuple[int, str]:
    body = urllib.parse.urlencode(data).encode() if data is not None else None
    request = urllib.request.Request(url, data=body, headers={"Authorization": f"token {TOKEN}"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode("utf-8", "replace")


@pytest.mark.slow
def test_the_lab_serves_the_workspace_with_validate_and_without_formgrader(tmp_path: Path) -> None:
    log = tmp_path / "lab.log"
    lab = start_lab(tmp_path / "workspace", log)
    try:
        base = wait_up(lab, log, within=120)
        status, _ = http(f"{base}/api/status", timeout=10)
        assert status == 200, f"JupyterLab said it was running, and /api/status answered {status}"

        stage = build.stages()[1]
        status, body = http(f"{base}/assignments/validate", {"path": f"{stage.name}/{stage.notebook}"})
        assert status == 200, body[:2000]
        answer = json.loads(body)
        assert answer["success"], answer
        failed = answer["value"].get("failed", [])
        assert failed, "the untouched release must fail its public checks"
        assert any("not written yet" in cell.get("error", "") for cell in failed), json.dumps(failed)[:2000]

        status, _ = http(f"{base}/formgrader")
        assert status == 404, "the instructor's formgrader must not be in the learner's lab"
        status, page = http(f"{base}/lab")
        assert status == 200
        match = re.search(r'<script id="jupyter-config-data" type="application/json">(.*?)</script>', page, re.S)
        assert match, "no page config in /lab"
        disabled = set(json.loads(match.group(1))["disabledExtensions"])
        assert {"@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment"} <= disabled
        assert "@jupyterlab/apputils-extension:announcements" in disabled  # no news pop-up
        assert "@jupyter/nbgrader:validate-assignment" not in disabled
    finally:
        stop(lab)


def stop(process: subprocess.Popen[bytes]) -> None:
    """JupyterLab and every kernel it started (they share its session) are gone afterwards."""
    for sig, wait in ((signal.SIGTERM, 20), (signal.SIGKILL, 10)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        try:
            process.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue
