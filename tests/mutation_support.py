"""A pytest plugin for ``make mutate`` only: mutmut 3 learns which tests reach which function.

mutmut runs each mutant against the tests that reached the mutated function while it collected
its stats. It records those hits in its own process, but the reference mostly runs in child
processes (a server spoken to over real pipes), whose hits it never sees: a function reached
only by a child would count as "no tests" and its mutants would never run. So, while mutmut
collects stats (``MUTANT_UNDER_TEST=stats``), every child loads ``mutation_site/sitecustomize.py``
(through ``PYTHONPATH``), which appends the names it reaches to a file of its own; before each
test's teardown this plugin hands those names to mutmut, as if the test had reached them itself.

``PYTHONPATH`` also puts the mutated copy of ``reference/`` first for children that do not
start in it (the ``mcp-lab`` console script), so that every child runs the mutant under test.

Loaded by ``pytest_add_cli_args`` in pyproject's ``[tool.mutmut]``; never in ``make test``. Run as a
script (the last step of ``make mutate``) it prints the score of the results in ``mutants/``.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

HITS_ENV = "MUTMUT_CHILD_HITS"
SITE = Path(__file__).resolve().parent / "mutation_site"
MUTANTS_ROOT = Path(__file__).resolve().parent.parent  # the mutated copy (mutants/), where pytest runs


def pytest_configure(config: pytest.Config) -> None:
    hits = MUTANTS_ROOT / "child-hits"  # inside mutants/, which make mutate removes first
    hits.mkdir(exist_ok=True)
    os.environ[HITS_ENV] = str(hits)
    path = [str(SITE), str(MUTANTS_ROOT)]
    if os.environ.get("PYTHONPATH"):
        path.append(os.environ["PYTHONPATH"])
    os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(path))


def _take_child_hits() -> set[str]:
    names: set[str] = set()
    folder = Path(os.environ[HITS_ENV])
    for file in folder.glob("*.hits"):
        taken = file.with_suffix(".taken")
        try:
            file.rename(taken)  # a child still running starts a new file on its next new hit
        except FileNotFoundError:
            continue
        names.update(n for n in taken.read_text(encoding="utf-8").splitlines() if n)
        taken.unlink()
    return names


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    if os.environ.get("MUTANT_UNDER_TEST") == "stats":
        from mutmut.state import state

        state()._stats.update(_take_child_hits())
    yield


def pytest_unconfigure(config: pytest.Config) -> None:
    if os.environ.get("MUTANT_UNDER_TEST") == "stats":
        _take_child_hits()  # hits after the last test belong to none


# -- the score (python tests/mutation_support.py [MUTANTS_DIR]) ---------------------------------------
# mutmut's exit codes per mutant (mutmut.stats.status_by_exit_code), as the words the score uses.
STATUS = {1: "killed", 3: "killed", 0: "survived", 5: "no tests", 33: "no tests", 34: "skipped", 36: "timeout"}
STATUS |= {-24: "timeout", 24: "timeout", 152: "timeout", 255: "timeout", -11: "segfault", -9: "segfault"}


def status_of(code: int | None) -> str:
    return STATUS.get(code, "suspicious") if code is not None else "not checked"


def score(mutants: Path) -> tuple[dict[str, Counter[str]], list[str]]:
    """Per source file, how many mutants ended how; and the names of those no test killed."""
    by_file: dict[str, Counter[str]] = {}
    alive: list[str] = []
    for meta in sorted(mutants.rglob("*.py.meta")):
        codes = json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"]
        name = str(meta.relative_to(mutants))[: -len(".meta")]
        by_file[name] = Counter(status_of(code) for code in codes.values())
        alive += sorted(key for key, code in codes.items() if status_of(code) in ("survived", "no tests"))
    return by_file, alive


def main(argv: list[str]) -> int:
    mutants = Path(argv[0] if argv else "mutants")
    by_file, alive = score(mutants)
    if not by_file:
        print(f"no mutmut results in {mutants}/", file=sys.stderr)
        return 1
    total: Counter[str] = Counter()
    print(f"{'file':28} {'mutants':>7} {'killed':>7} {'timeout':>7} {'survived':>8} {'no tests':>8} {'score':>6}")
    for name, counts in [*by_file.items(), ("all", sum(by_file.values(), total))]:
        checked = sum(n for status, n in counts.items() if status not in ("not checked", "skipped"))
        caught = counts["killed"] + counts["timeout"]
        shown = f"{100 * caught / checked:5.1f}%" if checked else "    -"
        print(
            f"{name:28} {sum(counts.values()):7} {counts['killed']:7} {counts['timeout']:7} "
            f"{counts['survived']:8} {counts['no tests']:8} {shown:>6}"
        )
    print("score: (killed + timeout) / checked; `mutmut show NAME` shows a mutant. Not killed:")
    print("\n".join(f"  {name}" for name in alive) or "  (none)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
