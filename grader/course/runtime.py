"""Each stage's runtime: the only folder, besides their own, that the learner's code imports from.

A stage stands alone: the course's finished pieces do everything the stage does not teach. But the
pieces it *does* teach must not be within reach, or a learner's ``handle_line`` could simply call
the reference's. So the learner's code never runs in a process that can import the reference
package as a whole: it runs with ``python -S`` (no site-packages) and this folder as its import
path, which holds

- ``reference/``: the reference modules of the stage's plan, without the ones the stage teaches;
  where the course's own server needs a taught module, the learner's module stands in for it
  (a *shim*: in stage 01, ``reference.framing`` is the learner's ``framing.py``);
- ``lab_runtime/``: the guard, the harness, the stage hosts and the peers (:mod:`grader.course.lab_runtime`).

    >>> plan("02").absent >= {"dispatch", "envelope"}
    True
    >>> sorted(plan("02").may_import)
    ['errors', 'framing']
    >>> plan("01").shims
    {'framing': 'framing'}
    >>> sorted(plan("11").shims), "resources" in plan("11").may_import, "writes" in plan("11").may_import
    (['audit', 'confirm', 'mrtr', 'writes'], True, False)

The same runtime serves the learner's notebook (their own machine, no sandbox) and grading (inside
the sandbox), so a check passes or fails alike in both.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib.util
import json
import os
import py_compile
import shutil
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

import reference

CHECKED = py_compile.PycInvalidationMode.CHECKED_HASH
REFERENCE = Path(reference.__file__).resolve().parent
LAB_RUNTIME = Path(__file__).resolve().with_name("lab_runtime")

# The stage that teaches each reference module (None: given to every stage that has a runtime).
TEACHES: dict[str, str | None] = {
    "errors": None,
    "schema": None,
    "database": "00",
    "framing": "01",
    "envelope": "02",
    "dispatch": "02",
    "lifecycle": "03",
    "stateless": "03",
    "server": "03",
    "catalog": "04",
    "tools": "05",
    "shop": "05",
    "child": "06",
    "thread_state": "06",
    "client": "06",
    "era_probe": "06",
    "session": "06",
    # The advanced track: resources and prompts (10), audited writes (11), Streamable HTTP (12).
    "resources": "10",
    "prompts": "10",
    "writes": "11",
    "audit": "11",
    "mrtr": "11",
    "confirm": "11",
    "subscriptions": "11",
    "streamable_http": "12",
    "http_guard": "12",
    "mcp_headers": "12",
    "sse": "12",
}


@dataclass(frozen=True)
class Plan:
    absent: frozenset[str]  # reference modules left out of the runtime ("*": all of them)
    shims: dict[str, str] = field(default_factory=dict)  # reference module -> the learner's module standing in
    may_import: frozenset[str] = frozenset()  # reference modules the learner's own files may import


def _before(stage: str) -> frozenset[str]:
    return frozenset(m for m, s in TEACHES.items() if s is None or s < stage)


ALL = frozenset({"*"})
PLANS: dict[str, Plan] = {
    # Stage 00 uses no reference at all: its pipe talks to a standard-library peer.
    "00": Plan(ALL),
    "01": Plan(frozenset(), {"framing": "framing"}, frozenset()),
    "02": Plan(
        frozenset({"envelope", "dispatch", "server", "client", "session"}), {}, frozenset({"errors", "framing"})
    ),
    "03": Plan(
        frozenset({"lifecycle", "stateless", "server"}), {}, frozenset({"errors", "framing", "envelope", "dispatch"})
    ),
    "04": Plan(frozenset(), {"catalog": "catalog"}, frozenset({"errors"})),
    "05": Plan(frozenset({"shop", "tools"}), {}, _before("05")),
    "06": Plan(frozenset({"child", "thread_state", "client", "era_probe", "session"}), {}, frozenset()),
    "07": Plan(frozenset(), {}, _before("07")),
    # The clinic: a diagnosis is data; a repaired server is a whole server of the learner's, which may
    # use the shop's answers (as the handed-out ones do) but no server of the course's.
    "08": Plan(ALL),
    "09": Plan(
        frozenset(
            {"server", "dispatch", "envelope", "lifecycle", "client", "era_probe", "session", "child", "thread_state"}
        ),
        {},
        frozenset({"errors", "schema", "database", "catalog", "tools", "shop"}),
    ),
    # The advanced track: the course's server serves the learner's resources and prompts (10), runs
    # the learner's write tools and audit (11); the answer key of each stands in as the learner's.
    "10": Plan(frozenset(), {"resources": "resources", "prompts": "prompts"}, _before("10")),
    # In 11 the 2026-07-28 question before cancel_order (confirm) and its sealed state (mrtr) are the
    # learner's shop_state.py too: the shims hold only the course's plumbing.
    "11": Plan(
        frozenset(), {"writes": "writes", "audit": "audit", "mrtr": "mrtr", "confirm": "confirm"}, _before("11")
    ),
    # Streamable HTTP (12): the learner's transport in front of the course's dispatcher (reference.server,
    # one Server per session); the reference's transport is not there to call.
    "12": Plan(frozenset({"streamable_http", "http_guard", "mcp_headers", "sse"}), {}, _before("12")),
}


def plan(stage: str) -> Plan:
    return PLANS.get(stage, Plan(frozenset(), {}, frozenset(TEACHES)))


def reference_modules() -> list[str]:
    # In a learner kit (:mod:`grader.course.kit`) the reference is bytecode without its source.
    return sorted({p.stem for p in [*REFERENCE.glob("*.py"), *REFERENCE.glob("*.pyc")]} - {"__init__"})


def _module_file(name: str) -> Path:
    source = REFERENCE / f"{name}.py"
    return source if source.is_file() else REFERENCE / f"{name}.pyc"


def build(stage: str, target: Path) -> Path:
    """Write stage ``stage``'s runtime into ``target`` (which must not exist); return it."""
    chosen = plan(stage)
    target.mkdir(parents=True)
    copied = _copy_package(LAB_RUNTIME, target / "lab_runtime")
    # What the stage teaches, for the guard: asking for one of these is asking for the answer key.
    absent = set(TEACHES) if chosen.absent == ALL else chosen.absent
    answers = sorted(m for m, s in TEACHES.items() if s == stage and m in absent)
    (target / "lab_runtime" / "stage.json").write_text(json.dumps({"stage": stage, "answers": answers}) + "\n")
    if chosen.absent != ALL:
        package = target / "reference"
        package.mkdir()
        modules = {package / "__init__.py": REFERENCE / "__init__.py"}
        for name in reference_modules():
            if name in chosen.shims:
                modules[package / f"{name}.py"] = LAB_RUNTIME / "shims" / f"{chosen.shims[name]}.py"
            elif name not in chosen.absent:
                modules[package / _module_file(name).name] = _module_file(name)
        for copy, original in modules.items():
            shutil.copy2(original, copy)  # its time too: the original's bytecode then fits the copy
        copied.update(modules)
    for copy, original in copied.items():
        if copy.suffix == ".py":
            _bytecode(original, copy)
    return target


def _copy_package(source: Path, target: Path) -> dict[Path, Path]:
    """Copy the package ``source`` to ``target`` (times kept); each copied file -> its original."""
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return {copy: source / copy.relative_to(target) for copy in sorted(target.rglob("*")) if copy.is_file()}


# The learner's processes run with PYTHONDONTWRITEBYTECODE and, when graded, on a read-only
# /runtime: without a compiled file beside each source, each of them compiled the guard, the harness
# and the reference modules it imports again, about 25 ms of CPU a start, and a graded stage starts
# hundreds. The original's own (``make bytecode``, or the install's) serves its copy: the copy keeps
# its time and size, which is what Python checks. Where there is none, the source is compiled here,
# once a process (checked against its hash, so that one file serves every copy of that source).
_BYTECODE: dict[bytes, bytes] = {}  # a source's SHA-256 -> its hash-checked bytecode file


def _bytecode(original: Path, copy: Path) -> None:
    """Put the compiled file of ``copy`` (a copy of ``original``, its time kept) in its ``__pycache__``."""
    cache = Path(importlib.util.cache_from_source(str(copy)))
    saved = _fitting(Path(importlib.util.cache_from_source(str(original))), copy)
    if saved is not None:
        cache.parent.mkdir(exist_ok=True)
        cache.write_bytes(saved)
        return
    key = hashlib.sha256(copy.read_bytes()).digest()
    if key not in _BYTECODE:
        py_compile.compile(str(copy), str(cache), doraise=True, invalidation_mode=CHECKED)
        _BYTECODE[key] = cache.read_bytes()
        return
    cache.parent.mkdir(exist_ok=True)
    cache.write_bytes(_BYTECODE[key])


def _fitting(pyc: Path, source: Path) -> bytes | None:
    """``pyc`` if Python would take it for ``source`` as it is (this Python's, compiled from a file
    of the same time and size), else None."""
    try:
        data = pyc.read_bytes()
        found = source.stat()
    except OSError:
        return None
    if len(data) < 16 or data[:4] != importlib.util.MAGIC_NUMBER or data[4:8] != bytes(4):
        return None  # another Python's, or a hash-based file: compiled here instead
    fits = int.from_bytes(data[8:12], "little") == int(found.st_mtime) & 0xFFFFFFFF
    return data if fits and int.from_bytes(data[12:16], "little") == found.st_size & 0xFFFFFFFF else None


_BUILT: dict[tuple[int, str], Path] = {}  # (the process that built it, the stage) -> its runtime
# A grading runs a submission's cell parts on threads side by side, and each asks for the runtime
# at its start: without the lock, each built a copy of its own (six where one would do, 60 ms of
# CPU each), and all but the last went unrecorded until the sweep after the process.
_BUILDING = threading.Lock()
PREFIX = "mcp-lab-runtime-"


def cached(stage: str) -> Path:
    """This process's copy of stage ``stage``'s runtime (built on first use, private to its maker:
    0700; removed by :func:`clear` or at exit). A forked process builds its own: the name says whose
    (``mcp-lab-runtime-STAGE-PID-...``), so the process that forked it can remove what a crash left."""
    key = (os.getpid(), stage)
    with _BUILDING:
        if key not in _BUILT:
            if not any(pid == key[0] for pid, _ in _BUILT):
                atexit.register(clear)
            root = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{stage}-{key[0]}-"))
            _BUILT[key] = build(stage, root / "runtime")
        return _BUILT[key]


def clear(pid: int | None = None) -> int:
    """Remove the runtimes built by process ``pid`` (this one by default), also those of a process that
    died before it could; return how many went."""
    pid = os.getpid() if pid is None else pid
    roots = {path.parent for (owner, _), path in list(_BUILT.items()) if owner == pid}
    for key in [k for k in _BUILT if k[0] == pid]:
        del _BUILT[key]
    roots |= set(Path(tempfile.gettempdir()).glob(f"{PREFIX}??-{pid}-*"))  # a stage is two characters
    for root in roots:
        shutil.rmtree(root, ignore_errors=True)
    return len(roots)
