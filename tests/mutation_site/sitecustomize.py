"""Loaded by every child Python under ``make mutate`` (see tests/mutation_support.py).

While mutmut collects stats, each function of the mutated ``reference/`` that this process
reaches is appended to ``$MUTMUT_CHILD_HITS/<pid>.hits``, written at once (a child may be killed
rather than exit), for the parent's plugin to hand to mutmut. Each name is written once per file:
when the plugin takes the file (at a test's teardown) the next hits start a new one, so a server
that outlives one test reports to the next test what it reaches for it.

A module run with ``python -m reference.server`` is ``__main__`` to Python, while mutmut names its
functions and mutants ``reference.server.*``: hits are renamed to the module's real name, and the
mutant under test is renamed to ``__main__.*`` when it belongs to the module this process runs.
"""

from __future__ import annotations

import itertools
import os
import sys


def _main_module() -> str | None:
    """The module given to ``python -m``, if this process was started that way."""
    argv = getattr(sys, "orig_argv", [])
    for flag, value in itertools.pairwise(argv):
        if flag == "-m":
            return value
    return None


def _record_child_hits(folder: str, main_module: str | None) -> None:
    from mutmut.mutation import trampoline

    seen: set[str] = set()
    path = os.path.join(folder, f"{os.getpid()}.hits")

    def record(name: str, caller: str | None = None) -> None:
        if main_module and name.startswith("__main__."):
            name = main_module + name[len("__main__") :]
        if not os.path.exists(path):
            seen.clear()  # the plugin took the file: a new test
        if name in seen:
            return
        seen.add(name)
        with open(path, "a", encoding="utf-8") as file:
            file.write(name + "\n")

    trampoline.record_trampoline_hit = record  # type: ignore[assignment]


def _setup() -> None:
    mutant = os.environ.get("MUTANT_UNDER_TEST", "")
    main_module = _main_module()
    if mutant == "stats" and os.environ.get("MUTMUT_CHILD_HITS"):
        _record_child_hits(os.environ["MUTMUT_CHILD_HITS"], main_module)
    elif main_module and mutant.startswith(main_module + "."):
        os.environ["MUTANT_UNDER_TEST"] = "__main__" + mutant[len(main_module) :]


_setup()
