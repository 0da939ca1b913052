"""The learner kit: what a graded class installs for its learners, and nothing that grades them.

A self-paced learner has the whole repository, the reference included: it is the course's answer
key and its best documentation. A graded class must not have it. ``mcp-lab course kit DIR`` writes
the part a learner's notebooks, ``mcp-lab check``, ``mcp-lab clinic`` and ``mcp-lab progress``
need, and leaves out what grading alone uses:

- ``grader/`` without ``grader/grading/`` (the secret's keys, the hidden checks, the clinic's and
  the repairs' answer keys, ``mcp-lab course grade``);
- ``reference/`` compiled to bytecode, without its source (the servers the notebooks talk to run;
  the answer key is no longer a file to read);
- ``data/`` (the shop's schema and seed) and the files the stages hand out beside their notebooks
  (stage 09's servers), never a stage's notebook text (its solutions are inside);
- ``bin/mcp-lab`` (the CLI with the kit on the import path) and ``requirements.txt``.

    $ mcp-lab course kit /srv/mcp-lab-kit
    $ pip install -r /srv/mcp-lab-kit/requirements.txt
    $ PYTHONPATH=/srv/mcp-lab-kit jupyter lab        # or /srv/mcp-lab-kit/bin/mcp-lab check -- ...

Bytecode hides the reference's text, not its behaviour: a determined learner can disassemble it,
as they can read any server's wire. What grading trusts is not secrecy of the reference but that
the learner's code runs without it (:mod:`grader.course.runtime`) and is judged outside the kernel,
where the guard refuses the reference in any form, bytecode carried as data included
(:mod:`grader.course.lab_runtime.codeguard`).
The bytecode is for the Python that builds the kit: build it with the version the learners run.

The clinic (stage 08) runs its case servers on the learner's machine, so the kit holds each case's
defect; it does not hold the rule each defect breaks (the answer): every module of the kit's
``grader/course/clinic/defects/`` is written with every rule and every "also right" rule blank
(the families are those of the package's table, ``FAMILIES``), so no script over ``draw_for``,
``Case.defect`` or ``clinic.key()`` reads the diagnosis off.

    >>> from grader.course.clinic.defects import FAMILIES, ids
    >>> blind = blank_rules(Path(ids.__file__).read_text(), set(FAMILIES))
    >>> [rule for rule in ("id-echo", "invalid-request") if rule in blind]
    []
"""

from __future__ import annotations

import ast
import py_compile
import shutil
import sys
import tomllib
from pathlib import Path

from .build import ROOT, stages

MARKER = "LEARNER_KIT"  # in the kit's grader/: the CLI refuses what only the repository may do there

_LAUNCHER = """#!/bin/sh
# mcp-lab from the learner kit: the kit first on the import path, then the Python on PATH.
KIT="$(cd "$(dirname "$0")/.." && pwd)"
PYTHONPATH="$KIT${PYTHONPATH:+:$PYTHONPATH}" exec "${PYTHON:-python3}" -c \
    'import sys; from grader.cli import main; sys.exit(main())' "$@"
"""


def is_kit() -> bool:
    """Whether this ``grader`` is a learner kit's (made by :func:`make_kit`)."""
    return (Path(__file__).resolve().parents[1] / MARKER).is_file()


def make_kit(target: Path, root: Path = ROOT) -> list[str]:
    """Write the learner kit into ``target`` (which must not exist); return its files, relative."""
    if target.exists():
        raise FileExistsError(f"{target} exists (the kit is written into a new folder)")
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache")
    shutil.copytree(root / "grader", target / "grader", ignore=skip)
    shutil.rmtree(target / "grader" / "grading")
    (target / "grader" / MARKER).write_text(f"made by mcp-lab course kit with Python {_version()}\n")

    clinic = target / "grader" / "course" / "clinic" / "defects"
    families = family_names((clinic / "__init__.py").read_text(encoding="utf-8"))
    for module in sorted(clinic.glob("*.py")):
        module.write_text(blank_rules(module.read_text(encoding="utf-8"), families) + "\n", encoding="utf-8")

    package = target / "reference"
    package.mkdir()
    shutil.copyfile(root / "reference" / "__init__.py", package / "__init__.py")  # a docstring: the module index
    for source in sorted((root / "reference").glob("*.py")):
        if source.name != "__init__.py":
            # Legacy (sourceless) placement: reference/name.pyc beside no name.py imports as the module.
            py_compile.compile(str(source), cfile=str(package / f"{source.stem}.pyc"), doraise=True)

    shutil.copytree(root / "data", target / "data", ignore=shutil.ignore_patterns("build", "__pycache__"))
    for stage in stages(root / "notebooks"):
        for item in stage.extras():
            (target / "notebooks" / stage.name).mkdir(parents=True, exist_ok=True)
            shutil.copyfile(item, target / "notebooks" / stage.name / item.name)

    launcher = target / "bin" / "mcp-lab"
    launcher.parent.mkdir()
    launcher.write_text(_LAUNCHER)
    launcher.chmod(0o755)
    (target / "requirements.txt").write_text("\n".join(requirements(root)) + "\n")
    return sorted(str(p.relative_to(target)) for p in target.rglob("*") if p.is_file())


def family_names(text: str) -> set[str]:
    """The defect families a module's ``FAMILIES`` table names (its keys written as strings)."""
    tree = ast.parse(text)
    families: set[str] = set()
    for node in ast.walk(tree):
        target = (
            node.targets[0]
            if isinstance(node, ast.Assign)
            else node.target
            if isinstance(node, ast.AnnAssign)
            else None
        )
        if isinstance(target, ast.Name) and target.id == "FAMILIES" and isinstance(node.value, ast.Dict):  # type: ignore[union-attr]
            families |= {k.value for k in node.value.keys if isinstance(k, ast.Constant)}  # type: ignore[union-attr]
    return families


def blank_rules(text: str, families: set[str] | None = None) -> str:
    """A module of the clinic's defects with the rule of every defect made blank (see the module's text):
    of every family in ``families``, by default those of the module's own ``FAMILIES`` table."""
    tree = ast.parse(text)
    families = family_names(text) if families is None else families
    nothing = ast.parse("frozenset()", mode="eval").body
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and len(node.args) >= 2 and isinstance(node.args[0], ast.Constant):
            if node.args[0].value in families:
                node.args[1] = ast.Constant("")
                node.keywords = [k for k in node.keywords if k.arg != "also"]
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "also" for t in node.targets):
            node.value = nothing
    body = tree.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body[0].value = ast.Constant(
            "The clinic's defects, as the learner kit holds them: the rule each breaks is blank."
        )
    return ast.unparse(tree)


def requirements(root: Path = ROOT) -> list[str]:
    """What the kit needs installed: the project's own dependencies and the course extra."""
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    wanted = [*project["dependencies"], *project["optional-dependencies"]["course"]]
    return sorted(dict.fromkeys(w.split("#")[0].strip() for w in wanted))


def _version() -> str:
    return f"{sys.version_info.major}.{sys.version_info.minor}"
