"""The learner's JupyterLab in a real browser: a stage notebook runs, the wire inspector shows frames,
nbgrader's Validate answers, and nothing is left running afterwards.

JupyterLab is started the way ``make lab`` starts it (``mcp-lab lab`` on a fresh workspace, plus
--no-browser, a loopback port it picks itself and a token), and Debian's Chromium (``/usr/bin/chromium``, no
browser download) is driven through Playwright. The notebook is stage 02 (messages and ids): its
inspector cell comes before the learner's first cell, so the untouched release shows what "no
cell shows an error" can mean when the stubs raise. *Run All Cells* runs the notebook as a learner
would; JupyterLab stops at the first cell that raises. So the test demands: every cell up to and
including the inspector ran without an error; exactly one cell shows an error, and it is the first
cell that calls the learner's stub (``NotImplementedError``); the inspector rendered as a widget,
with frames, a frame pretty-prints on a click, and a typed line gets its reply from a live server.
Validate must report failing tests (the untouched release fails every graded test). Screenshots go
to the test's temporary folder, their paths printed.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from course_support import python_env
from test_course_lab import TOKEN, http, start_lab, stop, wait_up

pytestmark = pytest.mark.timeout(600)

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
STAGE = "02-messages"
STUB_CELL = "print(handle_line("  # the first cell that calls the learner's code (the "try it" cell)


def browser() -> Any:
    """Playwright's sync API, or a skip that says what is missing."""
    if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):
        pytest.skip("no browser: /usr/bin/chromium is missing (apt-get install -y chromium; .ci/run installs it)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (it is in the test extra: pip install -e '.[test]')")
    return sync_playwright


def descendants(root: int) -> dict[int, str]:
    """Every process whose chain of parents leads to ``root`` (servers in sessions of their own too),
    with its command line."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                stat = (entry / "stat").read_text()
                parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found: set[int] = set()
    frontier = {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
        found |= frontier
    commands = {}
    for pid in found:
        with contextlib.suppress(OSError):
            commands[pid] = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    return commands


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def lab_environment(folder: Path) -> dict[str, str]:
    env = python_env()
    env["JUPYTERLAB_SETTINGS_DIR"] = str(folder / "lab-settings")  # the tester's own settings stay out
    env["JUPYTER_RUNTIME_DIR"] = str(folder / "runtime")
    return env


def shut_down_kernels(base: str) -> None:
    """Ask JupyterLab to end every kernel, as its Shut Down menu does (kernels exit and clean up)."""
    status, body = http(f"{base}/api/kernels", timeout=10)
    for kernel in json.loads(body) if status == 200 else []:
        url = f"{base}/api/kernels/{kernel['id']}"
        request = urllib.request.Request(url, method="DELETE", headers={"Authorization": f"token {TOKEN}"})
        with contextlib.suppress(OSError):
            urllib.request.urlopen(request, timeout=30).close()


@pytest.mark.slow
def test_the_inspector_and_validate_work_in_a_real_browser(tmp_path: Path) -> None:
    sync_playwright = browser()
    started = time.monotonic()
    log = tmp_path / "lab.log"
    lab = start_lab(tmp_path / "workspace", log, env=lab_environment(tmp_path))
    seen: dict[int, str] = {}
    try:
        base = wait_up(lab, log)
        with sync_playwright() as playwright:
            chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
            try:
                page = chromium.new_page(viewport={"width": 1500, "height": 1000})
                page.set_default_timeout(60_000)
                try:
                    run_the_notebook(page, base, tmp_path)
                    seen |= descendants(lab.pid)
                    validate(page, tmp_path)
                    seen |= descendants(lab.pid)
                except BaseException:
                    page.screenshot(path=str(tmp_path / "failure.png"))
                    print(f"screenshot at the failure: {tmp_path / 'failure.png'}")
                    raise
            finally:
                chromium.close()
        assert any("ipykernel" in c for c in seen.values()), f"no kernel among JupyterLab's processes: {seen}"
        # The live server the Send button started is still running until its kernel ends.
        assert any("reference.server" in c for c in seen.values()), f"no inspector server: {seen}"
        shut_down_kernels(base)
    finally:
        stop(lab)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and any(alive(pid) for pid in [*seen, lab.pid]):
        time.sleep(0.2)
    left = sorted((pid, seen[pid]) for pid in seen if alive(pid))
    for pid, _ in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, 9)
    assert not left, f"processes JupyterLab started outlived it: {left}"
    print(f"browser test: {time.monotonic() - started:.1f} s in all")


def wait_for_kernel(base: str) -> None:
    """The notebook's kernel has started and is idle (asked of JupyterLab's sessions API)."""
    deadline = time.monotonic() + 120
    state = "no session"
    while time.monotonic() < deadline:
        status, body = http(f"{base}/api/sessions", timeout=10)
        sessions = [s for s in json.loads(body) if s["path"].endswith(f"{STAGE}.ipynb")] if status == 200 else []
        state = sessions[0]["kernel"]["execution_state"] if sessions else "no session"
        if state == "idle":
            return
        time.sleep(0.5)
    pytest.fail(f"the notebook's kernel is not idle after 120 s: {state}")


def run_the_notebook(page: Any, base: str, tmp_path: Path) -> None:
    page.goto(f"{base}/lab/tree/{STAGE}/{STAGE}.ipynb?token={TOKEN}")
    page.wait_for_selector(".jp-NotebookPanel .jp-CodeCell", timeout=120_000)
    wait_for_kernel(base)
    from playwright.sync_api import Error as PlaywrightError

    with contextlib.suppress(PlaywrightError):  # JupyterLab asks whether to fetch its news: no
        page.locator(".Toastify__toast").get_by_role("button", name="No", exact=True).click(timeout=5_000)
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
    inspector = page.locator(".mcp-inspector")
    inspector.wait_for(timeout=120_000)
    stub = page.locator(".jp-CodeCell", has_text=STUB_CELL)
    stub.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").wait_for(timeout=120_000)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and page.locator(".jp-InputPrompt", has_text="[*]").count():
        time.sleep(0.3)

    # The inspector is the widget (not the text fallback), with the whole scripted session in it.
    frames = inspector.locator(".mcp-recorded .mcp-frame")
    assert frames.count() == 9, f"{frames.count()} frames: 5 sent, 4 answers expected"
    assert inspector.locator(".mcp-recorded .mcp-notification").count() == 1
    assert inspector.locator(".mcp-recorded .mcp-error").count() == 3  # -32700, -32600, -32601
    first = frames.first
    first.locator("summary").click()
    pretty = first.locator("pre")
    pretty.wait_for()
    assert '"id": "7"' in pretty.inner_text() and "\n" in pretty.inner_text()  # pretty-printed on the click

    # A typed line goes to a live server and its reply comes back.
    inspector.locator(".mcp-line input").fill("hello?")
    inspector.locator(".mcp-send").click()
    live = inspector.locator(".mcp-live-view .mcp-frame")
    page.wait_for_function("document.querySelectorAll('.mcp-live-view .mcp-frame').length >= 2", timeout=30_000)
    assert "-32700" in inspector.locator(".mcp-live-view").inner_text()
    assert live.first.inner_text().count("hello?") == 1
    page.locator(".jp-CodeCell", has=inspector).evaluate("node => node.scrollIntoView({block: 'start'})")
    shot = tmp_path / "inspector.png"
    page.screenshot(path=str(shot))
    print(f"screenshot of the inspector: {shot}")

    # Errors: exactly one cell shows one, the first that calls the learner's stub; every cell before it ran.
    cells = page.locator(".jp-Notebook .jp-CodeCell")
    errors, prompts = [], []
    reached = False
    for i in range(cells.count()):
        cell = cells.nth(i)
        text = cell.locator(".jp-InputArea").text_content() or ""  # off-screen cells have no inner text
        failed = cell.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
        if failed.count():
            errors.append((text, failed.first.text_content() or ""))
        if STUB_CELL in text:
            reached = True
        elif not reached:
            prompts.append((cell.locator(".jp-InputPrompt").text_content() or "").strip())
    assert reached and prompts, "the cell that calls the learner's code was not found"
    assert all(p[1:-2].strip().isdigit() for p in prompts), f"cells before it that did not run: {prompts}"
    assert len(errors) == 1, f"cells with errors: {[(text[:80], error[-200:]) for text, error in errors]}"
    source, error = errors[0]
    assert STUB_CELL in source and "NotImplementedError" in error, (source[:200], error[-300:])


def validate(page: Any, tmp_path: Path) -> None:
    button = page.locator(".jp-NotebookPanel-toolbar jp-button", has_text="Validate")
    assert button.count() == 1, "nbgrader's Validate button is missing from the notebook toolbar"
    button.click()
    message = page.locator("#validation-message")
    message.wait_for(timeout=240_000)
    shot = tmp_path / "validate.png"
    page.screenshot(path=str(shot))
    print(f"screenshot of Validate: {shot}")
    assert "validation-failed" in (message.get_attribute("class") or ""), message.inner_text()[:2000]
    failed = message.inner_text()
    assert failed.count("The following cell failed:") >= 3, failed[:2000]
    assert "not written yet" in failed, failed[:2000]
    page.locator(".jp-Dialog-button", has_text="Ok").click()
