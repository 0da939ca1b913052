"""Stage 05's capstone on real processes: my_server.py, the learner's own server, standard library only.

Each verdict is a graded cell run as grading runs it (the public checks, then the hidden ones with a
drawn ``rng``) on a temporary folder that holds the one file. The instructor's solution passes the
three cells, here and in the grading sandbox; the release's stubs pass none; a server that leans on
the answer key loses all three (and the flags show it where they can); a server with one defect
loses only the cells whose rule it breaks. A missing Node.js is the learner's message in their
notebook and a grading error when graded, never their zero. And ``mcp-lab check -- python3
my_server.py`` works from a workspace folder, as the notebook teaches, with no ``MCP_LAB_DB``.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader.checker.catalogue import MODERN_CHECKS
from grader.course import build
from grader.course.checks import cells, run
from grader.course.checks import stage05 as capstone
from grader.course.expect import Failure
from grader.course.notebook import modules, parse
from grader.course.work import LOCAL, Runner, Work
from grader.grading import flags, grade, sandbox, secret
from grader.grading.hidden import for_stage
from grader.grading.submission import Submission
from reference import database

pytestmark = pytest.mark.timeout(300)

CELLS = ("test_own_server_check", "test_own_server_sdk", "test_own_server_inspector")
STAGE = next(s for s in build.stages() if s.name.startswith("05"))
SOLUTION = modules(parse(STAGE.text.read_text(encoding="utf-8"), STAGE.name))["my_server"]
MCP_LAB = str(Path(sys.executable).parent / "mcp-lab")
HAS_INSPECTOR = capstone.INSPECTOR_BIN.exists() or shutil.which("npx") is not None
needs_inspector = pytest.mark.skipif(not HAS_INSPECTOR, reason="no MCP Inspector here: Node.js (npx) is needed")


def edit(text: str, *pairs: tuple[str, str]) -> str:
    for old, new in pairs:
        assert text.count(old) == 1, f"the variant no longer matches the solution: {old[:70]!r}"
        text = text.replace(old, new)
    return text


def stubbed(text: str) -> str:
    """The solution as the release hands it out: each solution region replaced as nbgrader replaces it."""
    region = re.compile(r"^( *)### BEGIN SOLUTION\n.*?^ *### END SOLUTION\n", re.S | re.M)
    return region.sub(lambda m: f"{m[1]}# YOUR CODE HERE\n{m[1]}raise NotImplementedError()\n", text)


def verdicts(text: str, folder: Path, runner: Runner = LOCAL, seed: int | None = None) -> dict[str, str]:
    """Each capstone cell on ``text`` as my_server.py: "" when it passes, else the check its failure names.
    ``seed``: the hidden checks too, with that draw."""
    folder.mkdir(parents=True)
    (folder / "my_server.py").write_text(text, encoding="utf-8")
    found = {}
    for grade_id in CELLS:
        try:
            with Work(folder, "05", runner) as work:
                run(cells("05")[grade_id], work)
                if seed is not None:
                    for_stage("05")[grade_id](work, random.Random(seed))
        except Failure as failure:
            found[grade_id] = failure.check
        else:
            found[grade_id] = ""
    return found


def lost(found: dict[str, str]) -> set[str]:
    return {grade_id for grade_id, check in found.items() if check}


# -- the instructor's solution ---------------------------------------------------------------------
def test_the_solution_is_standard_library_only_and_unflagged() -> None:
    capstone.own_imports(SOLUTION)
    assert flags.scan("05", {"my_server": SOLUTION}) == []


@needs_inspector
@pytest.mark.parametrize("seed", [1, 2])
def test_the_solution_passes_every_cell_public_and_hidden(tmp_path: Path, seed: int) -> None:
    assert verdicts(SOLUTION, tmp_path / "work", seed=seed) == dict.fromkeys(CELLS, "")


@needs_inspector
def test_the_solution_passes_in_the_grading_sandbox(tmp_path: Path) -> None:
    runner = sandbox.detect(slot=7)
    assert verdicts(SOLUTION, tmp_path / "work", runner, seed=3) == dict.fromkeys(CELLS, ""), runner.isolation


def test_the_release_passes_no_cell(tmp_path: Path) -> None:
    release = stubbed(SOLUTION)
    assert "raise NotImplementedError()" in release and "### BEGIN SOLUTION" not in release
    capstone.own_imports(release)  # the stubs import the standard library only: the server itself fails
    assert lost(verdicts(release, tmp_path / "work")) == set(CELLS)


# -- the answer key, imported or run ---------------------------------------------------------------
IMPORTS_THE_KEY = edit(SOLUTION, ("import json\n", "import json\n\nfrom reference.server import Server\n"))
RUNS_THE_KEY = edit(
    SOLUTION,
    (
        'if __name__ == "__main__":\n    sys.exit(main())',
        'if __name__ == "__main__":\n    os.execv(sys.executable, [sys.executable, "-m", "reference.server"])',
    ),
)
IMPORTS_IT_BY_NAME = edit(
    SOLUTION,
    ("import json\n", 'import importlib\nimport json\n\nServer = importlib.import_module("reference.server")\n'),
)
HIDES_THE_NAME = edit(
    SOLUTION,
    ("def main():\n", 'def main():\n    importlib.import_module("refer" + "ence.server").main()\n'),
    ("import json\n", "import importlib\nimport json\n"),
)


@pytest.mark.parametrize(
    ("text", "failure", "flagged"),
    [
        # Stage 05's runtime lends reference.server to shop_server.py, never to my_server.py.
        (IMPORTS_THE_KEY, "own-server", {"answer-key"}),
        (RUNS_THE_KEY, "own-server", {"answer-key"}),
        (IMPORTS_IT_BY_NAME, "own-server", {"answer-key", "dynamic-code"}),
        # The name built of literals: the scan reads through it; the copy's own reference package refuses it.
        (HIDES_THE_NAME, "", {"answer-key", "dynamic-code"}),
    ],
    ids=["imported", "run", "imported-by-name", "name-hidden"],
)
def test_the_answer_key_loses_every_cell(tmp_path: Path, text: str, failure: str, flagged: set[str]) -> None:
    found = verdicts(text, tmp_path / "work")
    assert lost(found) == set(CELLS), found
    if failure:
        assert set(found.values()) == {failure}, found
    assert {f.kind for f in flags.scan("05", {"my_server": text})} == flagged


def test_a_piece_of_ones_own_from_another_file_must_be_pasted_in() -> None:
    with pytest.raises(Failure) as raised:
        capstone.own_imports("import json\nfrom shop_server import call_tool\n")
    assert raised.value.check == "own-server" and "standard library" in raised.value.summary
    assert "paste" in raised.value.text()


# -- one defect, its own cells ---------------------------------------------------------------------
DEFECTS: dict[str, tuple[str, set[str]]] = {
    "a banner on stdout": (
        edit(
            SOLUTION,
            (
                '    log(f"serving the shop at {path}; stdin closed ends the server")\n',
                '    print("my shop is ready", flush=True)\n',
            ),
        ),
        {"test_own_server_check"},  # the SDK client and the Inspector skip a line that is not JSON
    ),
    "a tool execution error sent as a protocol error": (
        edit(
            SOLUTION,
            (
                "        return tool_result(str(failed), True)\n",
                "        raise RpcError(INVALID_PARAMS, str(failed))\n",
            ),
        ),
        {"test_own_server_check"},
    ),
    "results without structuredContent": (
        edit(SOLUTION, ('    if version >= "2025-06-18":\n        result["structuredContent"] = value\n', "")),
        set(CELLS),  # the SDK client and the Inspector hold a result to its tool's outputSchema too
    ),
    # The modern era's (MCP 2026-07-28). The SDK client in its default mode refuses a result without
    # resultType (its failure names that rule); the Inspector speaks the legacy era.
    "2026-07-28 results without resultType": (
        edit(
            SOLUTION,
            ('        return lambda params: {"resultType": "complete", **handler(params)}', "        return handler"),
        ),
        {"test_own_server_check", "test_own_server_sdk"},
    ),
    "resultType on legacy tool results": (
        edit(
            SOLUTION,
            (
                "    result = tool_result(json.dumps(value, ensure_ascii=False), False)\n",
                "    result = tool_result(json.dumps(value, ensure_ascii=False), False)\n"
                '    result["resultType"] = "complete"\n',
            ),
        ),
        {"test_own_server_check"},
    ),
    "the envelope not checked": (
        edit(
            SOLUTION, ("        session.modern = True\n        read_meta(params)\n", "        session.modern = True\n")
        ),
        {"test_own_server_check"},
    ),
    # Stage 03 left out: server/discover is -32601, so the SDK client falls back to the handshake.
    "a legacy-only server": (
        edit(
            SOLUTION,
            ("    if is_modern(params):\n        if session.initialize_seen:", "    if False:\n        if True:"),
        ),
        {"test_own_server_check", "test_own_server_sdk"},
    ),
    "a debug line to stderr": (
        edit(SOLUTION, ("def main():\n", 'def main():\n    print("debug: starting", file=sys.stderr)\n')),
        set(),
    ),
    # No call writes: only the connection open_shop returns shows it, and its check is the capstone's own.
    "the shop opened with mode=rwc": (
        edit(SOLUTION, ('.as_uri() + "?mode=ro", uri=True)', '.as_uri() + "?mode=rwc", uri=True)')),
        {"test_own_server_check"},
    ),
}


@needs_inspector
@pytest.mark.parametrize("defect", DEFECTS)
def test_one_defect_loses_only_its_cells(tmp_path: Path, defect: str) -> None:
    text, expected = DEFECTS[defect]
    assert lost(verdicts(text, tmp_path / "work")) == expected


# -- no Node.js --------------------------------------------------------------------------------------
@pytest.fixture
def no_inspector(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(capstone.inspector, "INSPECTOR_BIN", tmp_path / "not-installed" / "mcp-inspector")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))


def test_no_nodejs_is_a_message_in_the_notebook(tmp_path: Path, no_inspector: None) -> None:
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "my_server.py").write_text(SOLUTION, encoding="utf-8")
    with Work(folder, "05") as work, pytest.raises(Failure) as raised:
        run(cells("05")["test_own_server_inspector"], work)
    assert raised.value.check == "inspector"
    assert "Node.js" in raised.value.text() and "npx" in raised.value.text()


def test_no_nodejs_is_a_grading_error_when_graded(tmp_path: Path, no_inspector: None) -> None:
    submission = Submission("learner", "05", tmp_path / "05-tools-call.ipynb", modules={"my_server": SOLUTION})
    keys = secret.Keys(b"a course secret", "learner", "05")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    verdict, _ = grade.grade_cell(submission, "test_own_server_inspector", 1.0, keys, scratch, slot=7)
    assert verdict.status == "error", verdict
    assert verdict.text.startswith("grading failed (not a verdict on your code)") and "Node.js" in verdict.text


# -- from a terminal, in the workspace ---------------------------------------------------------------
@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A course folder as make lab leaves it: workspace/05-tools-call/my_server.py (the file alone) and
    the course's database in data/build/ (here a link to the one mcp-lab check reads with no MCP_LAB_DB)."""
    course_db = database.DATA_DIR / "build" / "shop.db"
    if not course_db.exists():
        database.build(course_db)
    (tmp_path / "data" / "build").mkdir(parents=True)
    (tmp_path / "data" / "build" / "shop.db").symlink_to(course_db)
    stage = tmp_path / "workspace" / "05-tools-call"
    stage.mkdir(parents=True)
    (stage / "my_server.py").write_text(SOLUTION, encoding="utf-8")
    return stage


def terminal_env() -> dict[str, str]:
    """A JupyterLab terminal's: the venv's bin first on PATH (python3 is its interpreter), no MCP_LAB_DB."""
    env = {k: v for k, v in os.environ.items() if k not in (database.ENV_VAR, "PYTHONPATH")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def test_mcp_lab_check_from_the_workspace(workspace: Path) -> None:
    done = subprocess.run(
        [MCP_LAB, "check", "--", "python3", "my_server.py"],
        cwd=workspace,
        env=terminal_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    summary = done.stdout.strip().splitlines()[-1]
    print(summary)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    # Both eras judged; skipped: four legacy checks of what it does not offer (resources, prompts), and
    # four modern ones (resources, subscriptions, and the two of tools that ask the user first).
    assert "judged: modern, legacy" in done.stdout, done.stdout[-3000:]
    assert re.match(r"checks: \d+ pass, 0 fail, 0 warn, 8 skip", summary), summary
    skipped = [line.split()[1] for line in done.stdout.splitlines() if line.startswith("  skip ")]
    assert sum(1 for check in skipped if check in MODERN_CHECKS) == 4, skipped


def test_mcp_lab_check_on_the_file_alone_with_the_printed_path(tmp_path: Path) -> None:
    """Elsewhere, the notebook says: write the path lab.shop_db() printed into DEFAULT_DB."""
    printed = database.DATA_DIR / "build" / "shop.db"
    default = 'DEFAULT_DB = Path(__file__).resolve().parent.parent.parent / "data" / "build" / "shop.db"\n'
    (tmp_path / "my_server.py").write_text(edit(SOLUTION, (default, f"DEFAULT_DB = {str(printed)!r}\n")))
    done = subprocess.run(
        [MCP_LAB, "check", "--", "python3", "my_server.py"],
        cwd=tmp_path,
        env=terminal_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and " 0 fail, 0 warn" in done.stdout, done.stdout[-3000:]


@pytest.mark.skipif(not capstone.INSPECTOR_BIN.exists(), reason="the pinned Inspector is not installed")
def test_the_inspector_command_of_the_notebook_from_the_workspace(workspace: Path) -> None:
    seen = []
    for method in (
        ["--method", "tools/list"],
        ["--method", "tools/call", "--tool-name", "count_orders", "--tool-arg", "status=paid"],
    ):
        command = [str(capstone.INSPECTOR_BIN), "--cli", "python3", "my_server.py", *method, "--format", "json"]
        done = subprocess.run(command, cwd=workspace, env=terminal_env(), capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr[-2000:]
        seen.append(json.loads(done.stdout)["result"])
    assert [tool["name"] for tool in seen[0]["tools"]] == capstone.SHOP_TOOLS
    assert seen[1]["structuredContent"] == {"status": "paid", "count": 341}


@pytest.mark.slow
@needs_inspector
def test_a_server_that_never_answers_costs_bounded_time(tmp_path: Path) -> None:
    """It reads every line and answers none: each cell fails well inside grading's limit for a cell."""
    mute = edit(SOLUTION, ("        if reply is not None:\n            write_frame(stdout, reply)\n", ""))
    started = time.monotonic()
    assert lost(verdicts(mute, tmp_path / "work")) == set(CELLS)
    assert time.monotonic() - started < grade.CELL_LIMIT


# -- the SDK client's first frames, as the lesson shows them ------------------------------------------
TEE = """import subprocess, sys, threading
log = open(sys.argv[1], "ab", buffering=0)
child = subprocess.Popen([sys.executable, *sys.argv[2:]], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def back():
    for line in child.stdout:
        log.write(b"<- " + line); sys.stdout.buffer.write(line); sys.stdout.buffer.flush()
threading.Thread(target=back, daemon=True).start()
for line in sys.stdin.buffer:
    log.write(b"-> " + line); child.stdin.write(line); child.stdin.flush()
child.stdin.close(); child.wait(10)
"""


def sdk_wire(folder: Path) -> list[str]:
    """The wire between the official SDK client (its default mode) and the capstone's solution, recorded
    by a tee around the server: ``-> `` and ``<- `` lines, in order."""
    import anyio
    from mcp import Client, StdioServerParameters

    (folder / "my_server.py").write_text(SOLUTION, encoding="utf-8")
    (folder / "tee.py").write_text(TEE, encoding="utf-8")
    log = folder / "wire.log"
    args = [str(folder / "tee.py"), str(log), str(folder / "my_server.py")]
    env = {**os.environ, database.ENV_VAR: str(database.ensure_default())}

    async def session() -> str:
        params = StdioServerParameters(command=sys.executable, args=args, env=env)
        with anyio.fail_after(120):
            async with Client(params, read_timeout_seconds=30) as client:
                await client.list_tools()
                await client.call_tool("count_orders", {"status": "paid"})
                return client.protocol_version

    assert anyio.run(session) == "2026-07-28"
    return log.read_text(encoding="utf-8").splitlines()


def lesson_block(marker: str) -> list[str]:
    """The ``->``/``<-`` lines of the capstone lesson's ```text block that holds ``marker``."""
    cells = parse(STAGE.text.read_text(encoding="utf-8"), STAGE.name)["cells"]
    text = "\n".join(c["source"] for c in cells if c["cell_type"] == "markdown")
    blocks = re.findall(r"^```text\n(.*?)^```", text, flags=re.S | re.M)
    block = next(b for b in blocks if marker in b and "$ python3 my_server.py" in b)
    return [line for line in block.splitlines() if line.startswith(("-> ", "<- "))]


def test_the_lesson_shows_the_sdk_clients_first_frames_from_a_real_run(tmp_path: Path) -> None:
    """The capstone lesson's block of the SDK client's first three requests is what the SDK sends to the
    solution, frame for frame, and each reply shown is in what the solution answered (an elided reply:
    its pieces, in order)."""
    from test_doc_examples import matches

    wire = sdk_wire(tmp_path)
    shown = lesson_block('"method":"server/discover"')
    sent = [json.loads(line[3:]) for line in wire if line.startswith("-> ")]
    shown_sent = [json.loads(line[3:]) for line in shown if line.startswith("-> ")]
    assert len(shown_sent) == 3 and shown_sent == sent[:3], (shown_sent, sent[:3])
    replies = [line[3:] for line in wire if line.startswith("<- ")]
    shown_replies = [line[3:] for line in shown if line.startswith("<- ")]
    assert len(shown_replies) == 3
    for shown_reply, reply in zip(shown_replies, replies, strict=False):
        matches(shown_reply, reply.encode("utf-8"))
    # Every request after the probe carries the envelope; every reply says what kind of result it is.
    assert all(m["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28" for m in sent)
    assert all(json.loads(r)["result"]["resultType"] == "complete" for r in replies)
