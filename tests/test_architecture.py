"""The architecture in the folders: no import circles, and each floor imports only the floors below it.

The floors, lowest first: ``reference`` (the answer key) <- ``grader.checker`` (``mcp-lab check``) <-
``grader.course`` (what the notebooks import) <- ``grader.grading`` (nbgrader's side) <- ``grader.cli``
(the ``mcp-lab`` command over all of them). A module imports modules of its own floor or below, never
above, and no two modules import each other, however long the way round.

The graph is read from the source with ``ast``, not from ``sys.modules``: every ``import`` counts,
at module level and inside functions alike (an import moved into a function to dodge a circle is
still a circle), except those under ``if TYPE_CHECKING:``, which Python never runs. Not counted:
a package's implicit import by its submodules (a package that imports its own modules is no
circle), and modules loaded by name (``importlib.import_module``), which no source line names.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("reference", "grader")

# Circles still allowed in the tree: none (issue 34 cut the last, the stage-08 checks <-> the clinic).
# A new circle anywhere fails the test.
ALLOWED_CIRCLES: list[set[str]] = []

# Floors, lowest first. A module's floor is that of the longest prefix listed here; the package
# ``grader`` itself (a docstring) has none.
FLOORS = {
    "reference": 0,
    "grader.checker": 1,
    "grader.gallery": 1,  # broken servers built on the reference; the course and the CLI show them
    "grader.course": 2,
    "grader.grading": 3,
    "grader.cli": 4,
    "grader.cli_errors": 4,
    "grader.clinic_cli": 4,
}

# Imports that reach a floor above their own in today's tree, (importer, imported). Each is to go.
ALLOWED_UPWARD: set[tuple[str, str]] = set()


def module_name(path: Path) -> str:
    """The dotted name of a source file under ROOT (a package's ``__init__`` is the package)."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def all_modules() -> dict[str, Path]:
    """Every module of the packages under test, by dotted name."""
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            found[module_name(path)] = path
    return found


def is_type_checking(test: ast.expr) -> bool:
    """Whether an ``if`` test is ``TYPE_CHECKING`` or ``typing.TYPE_CHECKING``."""
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def runtime_imports(tree: ast.AST):
    """Every import statement Python may run: anywhere in the tree but under ``if TYPE_CHECKING:``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        if isinstance(node, ast.If) and is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))


def resolve(importer: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module a ``from ... import`` names, its relative dots resolved."""
    if not node.level:
        return node.module or ""
    base = importer.split(".")
    if not is_package:
        base.pop()
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imported_modules(importer: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules of the packages under test that ``importer`` imports at run time."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    targets = set()
    for node in runtime_imports(tree):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
            continue
        source = resolve(importer, path.name == "__init__.py", node)
        for alias in node.names:
            submodule = f"{source}.{alias.name}"
            # `from pkg import sub` imports the submodule; `from mod import name` the module itself.
            targets.add(submodule if submodule in known else source)
    return {target for target in targets if target in known and target != importer}


def import_graph() -> dict[str, set[str]]:
    """Module -> the modules it imports, for every module of reference and grader."""
    known = all_modules()
    return {name: imported_modules(name, path, known) for name, path in known.items()}


def circles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def floor(module: str) -> int | None:
    """The floor of a module: that of the longest listed prefix, None where none is listed."""
    for prefix in sorted(FLOORS, key=len, reverse=True):
        if module == prefix or module.startswith(prefix + "."):
            return FLOORS[prefix]
    return None


@pytest.fixture(scope="module")
def graph():
    return import_graph()


def test_the_reader_counts_what_runs(tmp_path: Path) -> None:
    """Imports in functions count, relative ones resolve, and ``if TYPE_CHECKING:`` is skipped."""
    source = tmp_path / "mod.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "from . import sibling\n"
        "from .other import name\n"
        "if TYPE_CHECKING:\n"
        "    from .typed import Hint\n"
        "else:\n"
        "    import pkg.fallback\n"
        "def late():\n"
        "    from ..top import thing\n",
        encoding="utf-8",
    )
    known = dict.fromkeys(["pkg.sub.sibling", "pkg.sub.other", "pkg.sub.typed", "pkg.fallback", "pkg.top"], source)
    found = imported_modules("pkg.sub.mod", source, known)
    assert found == {"pkg.sub.sibling", "pkg.sub.other", "pkg.fallback", "pkg.top"}


def test_circles_are_found_however_long() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert circles(graph) == [{"a", "b", "c"}]


def test_the_graph_sees_the_packages(graph):
    """The test reads the real tree: the CLI imports the checker (in a function), the checker the reference."""
    assert {"grader.checker.check", "grader.clinic_cli"} <= graph["grader.cli"]
    assert "reference.framing" in graph["grader.checker.http_checks"]


def test_no_import_circles(graph):
    """No module imports itself back through others, but for the circles still allowed above."""
    found = circles(graph)
    new = [sorted(component) for component in found if component not in ALLOWED_CIRCLES]
    assert not new, f"import circles: {new}"
    gone = [sorted(component) for component in ALLOWED_CIRCLES if component not in found]
    assert not gone, f"these circles are gone: remove them from ALLOWED_CIRCLES: {gone}"


def test_each_floor_imports_only_floors_below(graph):
    """reference <- checker <- course <- grading <- CLI: no import reaches a floor above its own."""
    upward = {
        (importer, target)
        for importer, targets in graph.items()
        for target in targets
        if floor(importer) is not None and floor(target) is not None and floor(target) > floor(importer)
    }
    assert upward <= ALLOWED_UPWARD, f"imports from a floor above: {sorted(upward - ALLOWED_UPWARD)}"
    gone = ALLOWED_UPWARD - upward
    assert not gone, f"these imports are gone: remove them from ALLOWED_UPWARD: {sorted(gone)}"
