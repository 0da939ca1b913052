"""The broken-server gallery: its catalogue, its exhibit files, and the checker's verdict on each.

- the catalogue covers every row of research/field-failures.md and follows the API the CLI uses;
- every exhibit is a short standard-library program that subclasses the healthy base server,
  whose docstring gives nothing away, and that starts and answers without a traceback;
- THE MAIN TEST: ``mcp-lab check`` gives each exhibit's check the expected verdict, and the
  healthy base passes every check;
- (slow) three runs over the whole gallery give the same verdicts.
"""

from __future__ import annotations

import ast
import functools
import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from check_support import assert_leads_with_its_own_check

from grader import gallery
from grader.checker.catalogue import CATALOGUE, CHECKS, MODERN_CHECKS
from reference.child import ChildProcess, child_environment

ROOT = Path(__file__).resolve().parent.parent
GALLERY_DIR = ROOT / "grader" / "gallery"
FIELD_FAILURE_ROWS = 24
# research/field-failures.md is kept with the project's research notes, outside the package.
FIELD_FAILURES_CANDIDATES = [
    ROOT / "research" / "field-failures.md",
    ROOT / "docs" / "research" / "field-failures.md",
    ROOT.parent / "shared" / "research" / "field-failures.md",
]
# The stable check ids (tests/test_checker.py holds the catalogue to design.md's list).
CHECK_IDS = set(CHECKS) | set(MODERN_CHECKS)
CHECK_TIMEOUT = 60.0  # seconds for one whole `mcp-lab check` run
EXHIBITS = gallery.exhibits()
NAMES = [e.name for e in EXHIBITS]


# -- the catalogue ---------------------------------------------------------------------------
def field_failure_rows(text: str) -> set[int]:
    """The numbers in the first column of the markdown table."""
    return {int(m.group(1)) for m in re.finditer(r"^\|\s*(\d+)\s*\|", text, re.MULTILINE)}


def test_catalogue_covers_every_field_failure_row() -> None:
    covered = {e.field_failure for e in EXHIBITS if e.field_failure is not None}
    assert covered == set(range(1, FIELD_FAILURE_ROWS + 1))


def test_catalogue_matches_the_field_failures_table() -> None:
    found = next((p for p in FIELD_FAILURES_CANDIDATES if p.is_file()), None)
    if found is None:
        pytest.skip("research/field-failures.md is not available here")
    rows = field_failure_rows(found.read_text(encoding="utf-8"))
    assert rows == set(range(1, FIELD_FAILURE_ROWS + 1)), "the table changed: update FIELD_FAILURE_ROWS"
    assert {e.field_failure for e in EXHIBITS} - {None} == rows


def test_catalogue_api() -> None:
    assert sorted(NAMES) == NAMES and len(set(NAMES)) == len(NAMES)
    for exhibit in EXHIBITS:
        assert gallery.get(exhibit.name) is exhibit
        assert exhibit.path == GALLERY_DIR / f"{exhibit.name}.py"
        assert gallery.command(exhibit.name) == [sys.executable, str(exhibit.path)]
        assert exhibit.check in CHECK_IDS, exhibit
        assert exhibit.expect in ("fail", "warn"), exhibit
        assert exhibit.symptom and "\n" not in exhibit.symptom, exhibit
        assert len(exhibit.explanation) > len(exhibit.symptom), exhibit
    assert gallery.BASE == GALLERY_DIR / "base.py" and gallery.BASE.is_file()
    with pytest.raises(KeyError, match="banner"):
        gallery.get("no_such_exhibit")


def test_every_exhibit_file_is_catalogued() -> None:
    files = {p.stem for p in GALLERY_DIR.glob("*.py")} - {"__init__", "base", "modern_base"}
    assert files == set(NAMES)


def test_modern_exhibits_are_catalogued_with_their_era() -> None:
    modern = [e for e in EXHIBITS if e.era == "modern"]
    assert len(modern) >= 6
    for exhibit in EXHIBITS:
        assert exhibit.era in ("legacy", "modern")
        assert CATALOGUE[exhibit.check].era in ("both", exhibit.era), exhibit
        assert set(exhibit.options) <= {"--call-tools"}
    assert gallery.MODERN_BASE == GALLERY_DIR / "modern_base.py" and gallery.MODERN_BASE.is_file()


# -- the exhibit files -----------------------------------------------------------------------
def imported_modules(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "relative imports break `python grader/gallery/NAME.py`"
            names.add(node.module or "")
    return names


BASES = {"grader.gallery.base", "grader.gallery.modern_base"}  # the healthy legacy and modern-only servers


def allowed_import(module: str) -> bool:
    top = module.split(".")[0]
    return module in BASES or top == "reference" or top in sys.stdlib_module_names


@pytest.mark.parametrize("name", NAMES)
def test_exhibit_source(name: str) -> None:
    path = gallery.get(name).path
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    # Neutral: the docstring names the exhibit and gives nothing away (the catalogue explains).
    assert ast.get_docstring(tree) == f"Gallery exhibit: {name}."
    bad = {m for m in imported_modules(tree) if not allowed_import(m)}
    assert not bad, f"only the standard library, grader.gallery.base and reference: {bad}"
    base = "grader.gallery.modern_base" if gallery.get(name).era == "modern" else "grader.gallery.base"
    assert base in imported_modules(tree)
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    assert [c.name for c in classes] == ["Server"]
    assert [ast.unparse(b) for b in classes[0].bases] == ["ShopServer"]
    methods = [n.name for n in classes[0].body if isinstance(n, ast.FunctionDef)]
    assert 1 <= len(methods) <= 2, f"one defect, in one (at most two) overridden methods: {methods}"
    assert "if __name__ == '__main__':" in ast.unparse(tree)
    assert len(source.splitlines()) <= 40, "exhibits stay short"


@pytest.mark.parametrize("path", [gallery.BASE, gallery.MODERN_BASE], ids=["base", "modern_base"])
def test_base_source(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bad = {m for m in imported_modules(tree) if not allowed_import(m)}
    assert not bad
    assert len(path.read_text(encoding="utf-8").splitlines()) <= 200


def start_and_ping(argv: list[str]) -> tuple[bytes, str, int]:
    """Start a server, send one ping, close stdin; return stdout, stderr and the exit status.

    Every wait is bounded: an exhibit that does not flush answers when stdin closes, one that
    never exits is ended by ChildProcess.close().
    """
    child = ChildProcess(argv, cwd=str(ROOT))
    out = b""
    try:
        child.send(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
        child.close_stdin()
        deadline = time.monotonic() + 10
        while b'"id"' not in out and (left := deadline - time.monotonic()) > 0:
            line = child.read_line(left)
            if line is None:
                break
            out += line.data + b"\n"
    finally:
        code = child.close(grace=0.5)
    return out, child.stderr_tail(4000), code


@pytest.mark.parametrize("name", ["base", "modern_base", *NAMES])
def test_exhibit_starts_and_answers(name: str) -> None:
    bases = {"base": gallery.BASE, "modern_base": gallery.MODERN_BASE}
    path = bases[name] if name in bases else gallery.get(name).path
    out, err, code = start_and_ping([sys.executable, str(path)])
    assert "Traceback" not in err, err
    assert b'"id"' in out, f"no reply to ping; stdout {out[:300]!r}; stderr {err}"
    if name != "no_exit_on_eof":
        assert code == 0, f"exit status {code}; stderr {err}"


# -- the checker's verdicts ------------------------------------------------------------------
@functools.cache
def checker_available() -> bool:
    done = subprocess.run(
        [sys.executable, "-m", "grader.cli", "check", "--help"],
        capture_output=True,
        timeout=CHECK_TIMEOUT,
        cwd=ROOT,
        check=False,
    )
    return done.returncode == 0


def run_checker(argv: list[str], *options: str) -> tuple[dict[str, Any], int]:
    done = subprocess.run(
        [sys.executable, "-m", "grader.cli", "check", "--json", *options, "--", *argv],
        capture_output=True,
        timeout=CHECK_TIMEOUT,
        env=child_environment(),
        cwd=ROOT,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr.decode("utf-8", "replace")
    return json.loads(done.stdout), done.returncode


def verdicts(report: dict[str, Any]) -> dict[str, str]:
    return {check["id"]: check["status"] for check in report["checks"]}


@pytest.fixture
def checker() -> None:
    if not checker_available():
        pytest.skip("checker not available")


# Three runs of each exhibit: the first must catch its defect, the other two give the same verdicts
# for every check (a verdict that depends on timing or luck is no verdict), and each report leads
# with the exhibit's own check, its consequences marked with their root (test_root_cause.py).
@pytest.mark.usefixtures("checker")
@pytest.mark.parametrize("name", NAMES)
def test_checker_catches_exhibit_the_same_way_every_time(name: str) -> None:
    exhibit = gallery.get(name)
    report, code = run_checker(gallery.command(name), *exhibit.options)
    found = {c["id"]: c for c in report["checks"]}
    assert exhibit.check in found, f"the checker did not report {exhibit.check}"
    got = found[exhibit.check]
    assert got["status"] == exhibit.expect, f"{exhibit.check}: {got['status']}: {got['summary']}"
    if exhibit.expect == "fail":
        assert code == 1
    assert_leads_with_its_own_check(report, exhibit.check, exhibit.expect)
    first = verdicts(report)
    for _ in range(2):
        report = run_checker(gallery.command(name), *exhibit.options)[0]
        again = verdicts(report)
        changed = {k: (first.get(k), v) for k, v in again.items() if first.get(k) != v}
        assert not changed, f"{name}: verdicts changed between runs (first, now): {changed}"
        assert_leads_with_its_own_check(report, exhibit.check, exhibit.expect)


@pytest.mark.usefixtures("checker")
def test_checker_passes_the_base_server() -> None:
    report, code = run_checker([sys.executable, str(gallery.BASE)])
    wrong = {c["id"]: c["summary"] for c in report["checks"] if c["status"] in ("fail", "warn")}
    assert not wrong
    assert code == 0
    # The base declares outputSchemas and sends conforming structuredContent: judged, not skipped.
    assert verdicts(report)["structured-output"] == "pass"


@pytest.mark.usefixtures("checker")
@pytest.mark.parametrize("options", [(), ("--call-tools",)], ids=["read-only", "call-tools"])
def test_checker_passes_the_modern_base_server(options: tuple[str, ...]) -> None:
    """The healthy modern-only server: conformant, though it refuses initialize. Its legacy checks
    are skipped with that reason; every modern check that applies passes (with --call-tools, its
    cancel_order's input_required round trip and signed requestState too)."""
    report, code = run_checker([sys.executable, str(gallery.MODERN_BASE)], *options)
    found = {c["id"]: c for c in report["checks"]}
    assert code == 0
    assert {i: c["summary"] for i, c in found.items() if c["status"] in ("fail", "warn")} == {}
    for check in found.values():
        if check["era"] == "legacy":
            assert check["status"] == "skip" and "a modern-only server" in check["summary"], check
        elif check["id"] != "modern-subscriptions" and (options or check["id"] not in MRTR):
            assert check["status"] == "pass", check
    assert found["modern-subscriptions"]["status"] == "skip"  # it declares no change notifications
    if options:
        assert "cancel_order" in found["modern-request-state"]["summary"]


MRTR = ("modern-input-required", "modern-request-state")


@pytest.mark.usefixtures("checker")
@pytest.mark.parametrize("name", [e.name for e in EXHIBITS if e.era == "modern" or e.check == "era-probe"])
def test_modern_exhibits_break_their_check_alone(name: str) -> None:
    """Each modern exhibit is the healthy modern base with one defect: one check fails (or warns)."""
    exhibit = gallery.get(name)
    report, code = run_checker(gallery.command(name), *exhibit.options)
    bad = {c["id"]: c["status"] for c in report["checks"] if c["status"] in ("fail", "warn")}
    assert bad == {exhibit.check: exhibit.expect}, [c for c in report["checks"] if c["id"] in bad]
    assert code == (1 if exhibit.expect == "fail" else 0)


STRUCTURED_EXHIBITS = {
    "structured_content_missing": "has no structuredContent",
    "structured_content_wrong_type": "'3,000' is not of type 'integer'",
}


@pytest.mark.usefixtures("checker")
@pytest.mark.parametrize("name", sorted(STRUCTURED_EXHIBITS))
def test_structured_output_exhibits_break_that_check_alone(name: str) -> None:
    assert gallery.get(name).check == "structured-output"
    report, code = run_checker(gallery.command(name))
    found = {c["id"]: c for c in report["checks"]}
    # Nothing else fails, warns or goes unjudged (resources and prompts: the shop declares neither).
    # (and the modern era's checks: the legacy base does not speak it)
    unjudged = {c for c in found if c.startswith(("resources-", "prompts-")) or CATALOGUE[c].era == "modern"}
    assert {i: c["status"] for i, c in found.items() if c["status"] != "pass" and i not in unjudged} == {
        "structured-output": "fail"
    }
    assert {found[i]["status"] for i in unjudged} == {"skip"}
    assert code == 1
    failed = found["structured-output"]
    assert STRUCTURED_EXHIBITS[name] in failed["summary"]
    assert failed["summary"].startswith(("under 2025-11-25, count_orders", "under 2025-06-18, count_orders"))
    assert '"count"' in failed["evidence"]["outputSchema"] and failed["evidence"]["rule"]
