"""Grades an instructor can trust: cheats submitted to stages 02, 05, 06 and 08, graded with ``mcp-lab course grade``.

Every cheat starts from the untouched release (no real work) and adds the trick: patched course
helpers, an input transformer, a write to the gradebook (from a notebook cell and from the
learner's own module), the instructor's source read from disk, the answer key imported or run, a
graded cell the course does not have, a fork bomb, a friend's answers, answers computed by the
grading side. Each must gain no point and show its flag. The answer key keeps full marks, the
untouched release scores zero, and grading changes nothing in ``source/``, ``release/`` or the
gradebook's rows of anyone else.
"""

from __future__ import annotations

import ast
import base64
import hashlib
import io
import json
import marshal
import os
import pickle
import secrets as tokens
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import types
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from course_support import api, notebook_text, submit

import reference
from grader.checker.check import run_check
from grader.course import build, clinic
from grader.course.clinic import draw_for
from grader.course.practice import PRACTICE
from grader.grading import secret
from grader.grading.clinic_key import reproducer, solution_value
from grader.grading.command import Row, grade_stage, table
from grader.grading.sandbox import detect

pytestmark = pytest.mark.timeout(900)
STAGES = {s.name: s for s in build.stages() if s.name[:2] in ("02", "05", "06", "08")}


def cell(source: str, **nbgrader: Any) -> dict[str, Any]:
    meta = {"nbgrader": {"schema_version": 3, **nbgrader}} if nbgrader else {}
    return {"cell_type": "code", "execution_count": None, "metadata": meta, "outputs": [], "source": source}


def release(course: Path, stage: str, *extra: dict[str, Any], answers: str = "") -> str:
    """The untouched release of ``stage`` with cells of the learner's own added at the end."""
    notebook = json.loads((course / "release" / stage / f"{stage}.ipynb").read_text(encoding="utf-8"))
    notebook["cells"].extend(extra)
    if answers:
        notebook["cells"].append(cell(answers))
    return json.dumps(notebook)


PATCHED_HELPERS = cell(
    "import grader.course.checks as checks\n"
    "from grader.course import expect\n"
    "checks.run = lambda cell, work: None\n"
    "lab.check = lambda grade_id: print('public checks passed')\n"
    "expect.Failure = Exception\n"
)
INPUT_TRANSFORMER = cell("get_ipython().input_transformers_cleanup.append(lambda lines: ['pass\\n'])\n")
GRADEBOOK_FROM_A_CELL = cell(
    "import sqlite3, pathlib\n"
    "for path in pathlib.Path('/').glob('**/gradebook.db'):\n"
    "    db = sqlite3.connect(path)\n"
    "    db.execute('UPDATE grade SET extra_credit = 250')\n"
    "    db.commit()\n"
)
FORGED_GRADED_CELL = cell(
    "print('all good')", grade=True, grade_id="test_bonus", points=100, locked=True, solution=False
)

# A module that goes looking for the course: the gradebook to write, the instructor's source to run.
GRADEBOOK_FROM_A_MODULE = """%%module messages
import os, sqlite3
for root, dirs, files in os.walk("/"):
    if "gradebook.db" in files:
        db = sqlite3.connect(os.path.join(root, "gradebook.db"))
        db.execute("UPDATE grade SET extra_credit = 400")
        db.commit()
def handle_line(line, methods):
    raise NotImplementedError
"""
SOURCE_READER = """%%module messages
import json, os
found = None
for root, dirs, files in os.walk("/"):
    if root.endswith("source/02-messages") and "02-messages.ipynb" in files:
        found = os.path.join(root, "02-messages.ipynb")
if found:
    cells = json.load(open(found))["cells"]
    exec(next(c["source"] for c in cells if c["source"].startswith("%%module messages")).split("\\n", 1)[1])
"""
ANSWER_KEY_IMPORTED = """%%module messages
from reference.dispatch import Dispatcher
from reference.envelope import error_message, result_message

def handle_line(line, methods):
    return Dispatcher(methods, {}).handle_line(line)
"""
FORK_BOMB = """%%module messages
import os
while True:
    os.fork()
"""
REFERENCE_RUN = """%%module shop_server
import os, sys
if __name__ == "__main__":
    os.execv(sys.executable, [sys.executable, "-m", "reference.server"])
"""
# Stage 06 teaches the dual-era client: the reference's (reference.client, reference.era_probe) stands in.
CLIENT_IMPORTED = """%%module mcp_client
from reference.client import Client, ClientError, same_id
from reference.era_probe import MODERN_ERRORS
"""
REFERENCE_IMPORTED = """%%module shop_server
import sys
from reference.server import make_server
if __name__ == "__main__":
    sys.exit(make_server().serve(sys.stdin.buffer, sys.stdout.buffer))
"""
GRADING_SIDE = cell(
    "from grader.grading.clinic_key import reproducer, solution_value\n"
    "from grader.course import clinic\n"
    "diagnosis = solution_value(clinic.salt(), clinic.student())\n"
)

# What comes back from the sandbox is the learner's: a forged guard channel, ANSI escapes, an
# exception named after a module the grader would import, answers of any shape.
FORGED_GUARD = """%%module messages
import os
ESC = chr(27)
for fd in range(3, 64):  # the guard's pipe among them: lines added, none erased
    try:
        os.write(fd, ('{"event":"x","why":"' + ESC + '[2J' + ESC + '[H all clear"}\\n').encode())
    except OSError:
        pass
try:
    open(os.environ.get("MCP_LAB_GUARD_PIPE", "/grading/guard.pipe"), "w").write("erased")
except OSError:
    pass
try:
    import grader
except ImportError:
    pass
def handle_line(line, methods):
    raise NotImplementedError
"""
EXCEPTION_NAMED_THIS = """%%module messages
class Zen(Exception):
    pass
Zen.__module__ = "this"
Zen.__qualname__ = "s"
def handle_line(line, methods):
    raise Zen("imported?")
"""
NBGRADER_METADATA_LIST = {**cell("%%module messages\ndef handle_line(line, methods):\n    return None\n")}
NBGRADER_METADATA_LIST["metadata"] = {"nbgrader": ["grade", True, "points", 100]}
RULE_AS_A_LIST = (
    "diagnosis = {"
    + ", ".join(f"'case-{n:02d}': {{'rule': ['stdout-json-lines'], 'line': 1}}" for n in range(1, 11))
    + "}"
)
DEEP_LINE = (
    "diagnosis = {"
    + ", ".join(
        f"'case-{n:02d}': {{'rule': 'stdout-json-lines', 'reproduce': ['{'[' * 8000}{']' * 8000}']}}"
        for n in range(1, 11)
    )
    + "}"
)

# The grader's environment, read by the learner's code and sent back in a failure's text.
PLANTED = "MCP_LAB_PLANTED_TOKEN"
ENVIRONMENT_PROBE = """%%module messages
import os
def handle_line(line, methods):
    raise RuntimeError("ENVIRONMENT " + repr(sorted(os.environ.items())))
"""


# Links and copies that bring course files in, as nbgrader's exchange can hand them over.
def linked(how: str) -> Any:
    """A maker that lays the submission's folder out itself (``how``) and returns None."""

    def make(course: Path, stage: str, student: str) -> None:
        folder = course / "submitted" / student / stage
        notebook = f"{stage}.ipynb"
        if how == "folder":  # the whole stage folder is another student's
            folder.parent.mkdir(parents=True, exist_ok=True)
            folder.symlink_to(course / "submitted" / "answer-key" / stage)
            return
        folder.mkdir(parents=True)
        if how == "notebook":
            (folder / notebook).symlink_to(course / "source" / stage / notebook)
        elif how == "source-copy":  # what nbgrader collect makes of that link
            shutil.copyfile(course / "source" / stage / notebook, folder / notebook)
        elif how == "hard-link":
            os.link(course / "release" / stage / notebook, folder / notebook)  # chowned to the sandbox user, once
        else:
            (folder / notebook).write_text(release(course, stage), encoding="utf-8")
            if how == "secret-copy":
                shutil.copyfile(secret.path(course), folder / "notes.txt")
            elif how == "secret-link":
                (folder / "notes.txt").symlink_to(secret.path(course))
            elif how == "fifo":
                os.mkfifo(folder / "notes.txt")

    return make


# The answer key carried as data: the kit's bytecode of the modules a stage teaches, base64 in a
# %%module cell, served by a sys.meta_path finder (marshal.loads + types.FunctionType), or its
# source text decoded and exec'd, or run in a child Python the guard does not start.
def kit_bytecode(name: str) -> str:
    """What the learner kit ships as reference/NAME.pyc, less its 16-byte header: marshal data of code."""
    source = Path(reference.__file__).with_name(f"{name}.py")
    return base64.b64encode(marshal.dumps(compile(source.read_text(encoding="utf-8"), str(source), "exec"))).decode()


# An import hook over BLOBS (module name -> encoded code); the line that runs a module's code follows.
FINDER = (
    "class Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):\n"
    "    def find_spec(self, name, path, target=None):\n"
    "        return importlib.util.spec_from_loader(name, self) if name in BLOBS else None\n"
    "    def create_module(self, spec):\n"
    "        return None\n"
    "    def exec_module(self, module):\n"
)


def carried(module: str, names: list[str], tail: str, how: str = "bytecode") -> str:
    blobs = {f"reference.{n}": kit_bytecode(n) for n in names}
    if how == "source":
        blobs = {
            f"reference.{n}": base64.b64encode(Path(reference.__file__).with_name(f"{n}.py").read_bytes()).decode()
            for n in names
        }
    load = (
        "types.FunctionType(marshal.loads(base64.b64decode(BLOBS[module.__name__])), module.__dict__)()"
        if how == "bytecode"
        else "exec(base64.b64decode(BLOBS[module.__name__]).decode(), module.__dict__)"
    )
    return (
        f"%%module {module}\n"
        "import base64, importlib.abc, importlib.util, marshal, sys, types\n"
        f"BLOBS = {blobs!r}\n" + FINDER + f"        {load}\n"
        "sys.meta_path.insert(0, Finder())\n"
        f"{tail}"
    )


DISPATCH_TAIL = (
    "from reference.dispatch import Dispatcher\n"
    "def handle_line(line, methods):\n"
    "    return Dispatcher(methods, {}).handle_line(line)\n"
)
SERVER_TAIL = (
    "from reference.server import make_server\n"
    "if __name__ == '__main__':\n"
    "    sys.exit(make_server().serve(sys.stdin.buffer, sys.stdout.buffer))\n"
)
BUILTINS_TRICK = """%%module messages
import builtins
load = getattr(builtins, "__imp" + "ort__")
dispatch = load("refer" + "ence.dispatch", fromlist=["Dispatcher"])
def handle_line(line, methods):
    return dispatch.Dispatcher(methods, {}).handle_line(line)
"""
# A child Python started by the learner's server: the guard goes with it (the argv is rewritten).
CHILD_PYTHON = (
    "%%module shop_server\n"
    "import os, subprocess, sys\n"
    'CODE = \'import base64, marshal, types; m = types.ModuleType("x"); print("child ran", flush=True)\'\n'
    "CODE += '; types.FunctionType(marshal.loads(base64.b64decode(\"' + "
    + repr(kit_bytecode("errors"))
    + " + '\")), m.__dict__)()'\n"
    "if __name__ == '__main__':\n"
    "    done = subprocess.run([sys.executable, '-c', CODE], capture_output=True, text=True)\n"
    "    print(done.stdout, done.stderr[-300:], file=sys.stderr)\n"
    "    sys.exit(0 if 'Traceback' in done.stderr else 3)\n"
)

# The kit's bytecode re-pickled so that the pure-Python unpickler rebuilds it (types.CodeType from
# pickle.py's own frames), a raw b'...' literal in the cell, each module's code run as a function
# (types.FunctionType) over a module put in sys.modules by hand: no import hook, no name to scan.
CODE_FIELDS = (
    "co_argcount", "co_posonlyargcount", "co_kwonlyargcount", "co_nlocals", "co_stacksize", "co_flags",
    "co_code", "co_consts", "co_names", "co_varnames", "co_filename", "co_name", "co_qualname",
    "co_firstlineno", "co_linetable", "co_exceptiontable", "co_freevars", "co_cellvars",
)  # fmt: skip


def kit_pickled(name: str) -> bytes:
    """reference/NAME's code as a pickle whose loading calls types.CodeType for it and each code inside it."""
    source = Path(reference.__file__).with_name(f"{name}.py")
    code = compile(source.read_text(encoding="utf-8"), str(source), "exec")

    class Repickler(pickle._Pickler):  # type: ignore[name-defined]  # the pure-Python one: its save_global
        def reducer_override(self, obj: Any) -> Any:
            if isinstance(obj, types.CodeType):
                return types.CodeType, tuple(getattr(obj, field) for field in CODE_FIELDS)
            return NotImplemented

        def save_global(self, obj: Any, name: str | None = None) -> None:
            if obj is not types.CodeType:  # the class is builtins.code, which no unpickler finds: say types
                return super().save_global(obj, name)
            self.save("types")
            self.save("CodeType")
            self.write(pickle.STACK_GLOBAL)
            self.memoize(obj)
            return None

    out = io.BytesIO()
    Repickler(out, protocol=4).dump(code)
    return out.getvalue()


def pickled_kit(hidden: bool = False) -> str:
    """Stage 02's answer key run from pickles (``hidden``: each pickle's bytes reversed, so that no scan
    of the literal finds it: the guard alone must refuse it)."""
    blobs = {n: kit_pickled(n)[:: -1 if hidden else 1] for n in ("envelope", "dispatch")}
    return (
        "%%module messages\n"
        "import pickle, sys, types\n"
        f"BLOBS = {blobs!r}\n"
        "for name in ('envelope', 'dispatch'):\n"
        "    module = types.ModuleType('refer' + 'ence.' + name)\n"
        "    sys.modules[module.__name__] = module\n"
        f"    blob = BLOBS[name]{'[::-1]' if hidden else ''}\n"
        "    types.FunctionType(pickle._loads(blob), module.__dict__)()\n"
        "Dispatcher = sys.modules['refer' + 'ence.' + 'dispatch'].Dispatcher\n"
        "def handle_line(line, methods):\n"
        "    return Dispatcher(methods, {}).handle_line(line)\n"
    )


# A child Python given code built at run time, on its command line and on its stdin.
CHILD_CODE_FROM_DATA = """%%module shop_server
import subprocess, sys
PARTS = ["print('child ", "ran')"]
if __name__ == "__main__":
    for argv, given in (([sys.executable, "-c", "".join(PARTS)], None), ([sys.executable], "".join(PARTS))):
        try:
            done = subprocess.run(argv, input=given, capture_output=True, text=True)
            print(done.stdout, done.stderr[-300:], file=sys.stderr)
        except PermissionError as refused:
            print(refused, file=sys.stderr)
    sys.exit(3)
"""
# The guard's pipe flooded (empty lines, a line made to look like a record) before a refused import.
FLOODED_CHANNEL = """%%module messages
import os
FAKE = b'{"g": "' + b"0" * 32 + b'", "n": 1, "why": "nothing to see"}\\n'
for fd in range(3, 64):
    try:
        os.write(fd, b"\\n" * 256 + FAKE + b"partial, no newline")
    except OSError:
        pass
try:
    import grader
except ImportError:
    pass
def handle_line(line, methods):
    raise NotImplementedError
"""

# (stage, student, how the submission is made, the flag kind it must show)
CHEATS: list[tuple[str, str, Any, str]] = [
    ("02-messages", "patched-helpers", lambda c, s: release(c, s, PATCHED_HELPERS), "tampering"),
    ("02-messages", "input-transformer", lambda c, s: release(c, s, INPUT_TRANSFORMER), "tampering"),
    ("02-messages", "gradebook-from-a-cell", lambda c, s: release(c, s, GRADEBOOK_FROM_A_CELL), "course-files"),
    ("02-messages", "forged-graded-cell", lambda c, s: release(c, s, FORGED_GRADED_CELL), "tampering"),
    (
        "02-messages",
        "gradebook-from-a-module",
        lambda c, s: release(c, s, cell(GRADEBOOK_FROM_A_MODULE)),
        "course-files",
    ),
    ("02-messages", "source-reader", lambda c, s: release(c, s, cell(SOURCE_READER)), "course-files"),
    ("02-messages", "answer-key-imported", lambda c, s: release(c, s, cell(ANSWER_KEY_IMPORTED)), "answer-key"),
    ("02-messages", "fork-bomb", lambda c, s: release(c, s, cell(FORK_BOMB)), ""),
    ("05-tools-call", "reference-run", lambda c, s: release(c, s, cell(REFERENCE_RUN)), "refused"),
    ("05-tools-call", "reference-imported", lambda c, s: release(c, s, cell(REFERENCE_IMPORTED)), "refused"),
    ("05-tools-call", "patched-helpers", lambda c, s: release(c, s, PATCHED_HELPERS), "tampering"),
    ("06-the-client", "client-imported", lambda c, s: release(c, s, cell(CLIENT_IMPORTED)), "answer-key"),
    ("08-clinic-diagnosis", "grading-side", lambda c, s: release(c, s, GRADING_SIDE), "answer-key"),
    ("08-clinic-diagnosis", "input-transformer", lambda c, s: release(c, s, INPUT_TRANSFORMER), "tampering"),
    ("02-messages", "forged-guard-channel", lambda c, s: release(c, s, cell(FORGED_GUARD)), "refused"),
    ("02-messages", "environment-probe", lambda c, s: release(c, s, cell(ENVIRONMENT_PROBE)), ""),
    ("02-messages", "exception-named-this", lambda c, s: release(c, s, cell(EXCEPTION_NAMED_THIS)), ""),
    ("02-messages", "nbgrader-metadata-list", lambda c, s: release(c, s, NBGRADER_METADATA_LIST), "tampering"),
    (
        "02-messages",
        "kit-bytecode-as-data",
        lambda c, s: release(c, s, cell(carried("messages", ["envelope", "dispatch"], DISPATCH_TAIL))),
        "answer-key",
    ),
    (
        "02-messages",
        "source-as-data",
        lambda c, s: release(c, s, cell(carried("messages", ["envelope", "dispatch"], DISPATCH_TAIL, "source"))),
        "answer-key",
    ),
    ("02-messages", "getattr-builtins", lambda c, s: release(c, s, cell(BUILTINS_TRICK)), "answer-key"),
    (
        "05-tools-call",
        "kit-bytecode-as-data",
        lambda c, s: release(c, s, cell(carried("shop_server", ["tools", "shop"], SERVER_TAIL))),
        "answer-key",
    ),
    ("05-tools-call", "child-python", lambda c, s: release(c, s, cell(CHILD_PYTHON)), "refused"),
    ("02-messages", "kit-pickled", lambda c, s: release(c, s, cell(pickled_kit())), "answer-key"),
    ("02-messages", "kit-pickled-hidden", lambda c, s: release(c, s, cell(pickled_kit(hidden=True))), "refused"),
    ("05-tools-call", "child-code-from-data", lambda c, s: release(c, s, cell(CHILD_CODE_FROM_DATA)), "refused"),
    ("02-messages", "flooded-channel", lambda c, s: release(c, s, cell(FLOODED_CHANNEL)), "tampering"),
    ("02-messages", "symlinked-notebook", linked("notebook"), "links"),
    ("02-messages", "source-copy", linked("source-copy"), "course-files"),
    ("02-messages", "symlinked-folder", linked("folder"), "links"),
    ("02-messages", "hard-link", linked("hard-link"), "links"),
    ("02-messages", "secret-copy", linked("secret-copy"), "course-files"),
    ("02-messages", "secret-link", linked("secret-link"), "links"),
    ("02-messages", "fifo", linked("fifo"), "links"),
    ("08-clinic-diagnosis", "rule-as-a-list", lambda c, s: release(c, s, answers=RULE_AS_A_LIST), ""),
    ("08-clinic-diagnosis", "deep-line", lambda c, s: release(c, s, answers=DEEP_LINE), ""),
]


def renamed_names(text: str, names: dict[str, str]) -> str:
    """``text`` with the variables ``names`` renamed (every use, f-strings included), written out anew."""
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in names:
            node.id = names[node.id]
        elif isinstance(node, ast.arg) and node.arg in names:
            node.arg = names[node.arg]
    return ast.unparse(tree) + "\n"


def digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*") if p.is_file()
    }


def gradebook_rows(course: Path, assignment: str) -> list[tuple[Any, ...]]:
    """Every grade row of ``assignment``, as stored (scores, extra credit, comments' ids...)."""
    with sqlite3.connect(course / "gradebook.db") as db:
        query = (
            "SELECT g.* FROM grade g JOIN submitted_notebook n ON g.notebook_id = n.id "
            "JOIN submitted_assignment a ON n.assignment_id = a.id "
            "JOIN assignment s ON a.assignment_id = s.id WHERE s.name = ? ORDER BY g.id"
        )
        return db.execute(query, (assignment,)).fetchall()


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, dict[str, Row]], dict[str, Any]]:
    os.environ[PLANTED] = "planted-" + tokens.token_hex(8)  # a token of the grading machine's (the forkserver's too)
    course = tmp_path_factory.mktemp("cheats") / "course"
    build.init_course(course)
    secret.create(course)
    nbgrader = api(course)
    for name in STAGES:
        assert nbgrader.generate_assignment(name, force=True, create=True)["success"]
    for name, stage in STAGES.items():
        submit(course, "answer-key", stage, notebook_text(stage, course=course, student="answer-key"))
        submit(course, "untouched", stage, release(course, name))
    salt = clinic.salt(course / "source" / "08-clinic-diagnosis")
    friend = "diagnosis = " + repr(solution_value(salt, "answer-key"))
    submit(
        course, "copied-answers", STAGES["08-clinic-diagnosis"], release(course, "08-clinic-diagnosis", answers=friend)
    )
    for name, student, make, _ in CHEATS:
        if getattr(make, "__name__", "") == "make":
            make(course, name, student)
        else:
            submit(course, student, STAGES[name], make(course, name))
    # A friend's work, normalised away: variables renamed (02), the same answers in another order (08).
    renamed = json.loads(notebook_text(STAGES["02-messages"], course=course, student="renamed-copy"))
    for one in renamed["cells"]:
        text = "".join(one["source"]) if isinstance(one["source"], list) else one["source"]
        if text.startswith("%%module messages\n"):
            one["source"] = "%%module messages\n" + renamed_names(text.split("\n", 1)[1], {"message": "msg"})
    submit(course, "renamed-copy", STAGES["02-messages"], json.dumps(renamed))
    friends = solution_value(salt, "answer-key")
    reordered = {case: dict(reversed(list(friends[case].items()))) for case in reversed(list(friends))}
    submit(
        course,
        "reordered-copy",
        STAGES["08-clinic-diagnosis"],
        release(course, "08-clinic-diagnosis", answers="diagnosis = " + repr(reordered)),
    )
    # A script over the public repository: the answer key, from the salt the release carries alone.
    released = clinic.salt(course / "release" / "08-clinic-diagnosis")
    scripted = "diagnosis = " + repr(solution_value(released, "public-script"))
    submit(
        course, "public-script", STAGES["08-clinic-diagnosis"], release(course, "08-clinic-diagnosis", answers=scripted)
    )
    copier = "diagnosis = " + repr(checkers_lead(salt, "checker-copier"))
    submit(
        course, "checker-copier", STAGES["08-clinic-diagnosis"], release(course, "08-clinic-diagnosis", answers=copier)
    )
    before = {"source": digest(course / "source"), "release": digest(course / "release")}
    rows: dict[str, dict[str, Row]] = {}
    # Stage 02 first: its gradebook rows must survive the other stages' cheats untouched.
    rows["02-messages"] = {r.student: r for r in grade_stage(course, "02-messages", 2)}
    before["02 rows"] = gradebook_rows(course, "02-messages")
    for name in ("05-tools-call", "06-the-client", "08-clinic-diagnosis"):
        rows[name] = {r.student: r for r in grade_stage(course, name, 2)}
    after = {"source": digest(course / "source"), "release": digest(course / "release")}
    after["02 rows"] = gradebook_rows(course, "02-messages")
    for name, graded_rows in rows.items():  # the instructor's tables (pytest -s shows them)
        print("\n" + table(list(graded_rows.values()), name, detect(1).isolation))
    return course, rows, {"before": before, "after": after}


def failed_cells(course: Path, student: str, stage: str) -> list[str]:
    """What nbgrader recorded of each graded cell that failed (to say why when full marks were not kept)."""
    found = []
    for path in sorted((course / "autograded" / student / stage).glob("*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error":
                    found.append(f"{cell.get('metadata', {}).get('nbgrader', {}).get('grade_id')}: " + output["evalue"])
    return found


def test_the_answer_key_keeps_full_marks_and_the_release_scores_zero(graded: Any) -> None:
    course, rows, _ = graded
    for name, stage in STAGES.items():
        key, untouched = rows[name]["answer-key"], rows[name]["untouched"]
        assert key.score == key.max_score == stage.points(), (name, key, failed_cells(course, "answer-key", name))
        assert untouched.score == 0, (name, untouched)
        # In stage 08 a friend handed in the answer key's answers: both are flagged, the instructor looks.
        # (and in 02 a friend handed it in with its variables renamed: similar)
        assert {f["kind"] for f in key.flags} <= ({"copied"} if name.startswith("08") else {"similar"}), key.flags
        assert not untouched.flags, (name, untouched.flags)


def gradebook_scores(course: Path, assignment: str) -> list[tuple[str, float]]:
    with sqlite3.connect(course / "gradebook.db") as db:
        query = (
            "SELECT a.student_id, coalesce(sum(g.auto_score), 0) FROM grade g "
            "JOIN submitted_notebook n ON g.notebook_id = n.id JOIN submitted_assignment a ON n.assignment_id = a.id "
            "JOIN assignment s ON a.assignment_id = s.id WHERE s.name = ? GROUP BY a.student_id"
        )
        return db.execute(query, (assignment,)).fetchall()


@pytest.mark.parametrize(("name", "student", "make", "kind"), CHEATS, ids=[f"{c[0][:2]}:{c[1]}" for c in CHEATS])
def test_a_cheat_gains_nothing_and_is_flagged(graded: Any, name: str, student: str, make: Any, kind: str) -> None:
    _, rows, _ = graded
    row = rows[name][student]
    assert row.score == 0, f"{student} gained {row.score} points in {name}"
    assert row.status == "graded", row  # a verdict, not a grading failure
    if kind:
        assert kind in {f["kind"] for f in row.flags}, row.flags
    assert "grading-failed" not in {f["kind"] for f in row.flags}, row.flags


def test_the_instructors_table_carries_no_control_character(graded: Any) -> None:
    _, rows, _ = graded
    for name, graded_rows in rows.items():
        shown = table(list(graded_rows.values()), name, detect(1).isolation)
        assert not [c for c in shown if ord(c) < 32 and c != "\n"], name
    forged = rows["02-messages"]["forged-guard-channel"]
    whys = [f["why"] for f in forged.flags if f["kind"] == "refused"]
    assert any("import grader" in why for why in whys), whys  # the guard's own line came through
    assert any("guard.pipe" in why or "guard's channel" in why for why in whys), whys  # opening its pipe: refused


def test_an_exception_named_after_a_module_imports_nothing_in_the_grader() -> None:
    from grader.course import remote

    sys.modules.pop("this", None)
    raised = remote.rebuild({"kinds": [["this", "s"], ["builtins", "Exception"]], "message": "x", "fields": []})
    assert "this" not in sys.modules
    assert remote.is_a(raised, "s") and isinstance(raised, Exception)
    assert isinstance(remote.rebuild({"kinds": "junk", "message": ["not", "text"]}), Exception)


def test_a_malformed_answer_fails_the_cells_it_breaks_with_a_reason(graded: Any) -> None:
    course, _, _ = graded
    from grader.grading.nbhook import verdicts_path

    for student, words in (("rule-as-a-list", "not a list"), ("deep-line", "levels deep")):
        found = json.loads(verdicts_path(course, "08-clinic-diagnosis", student).read_text(encoding="utf-8"))
        texts = [c["text"] for c in found["cells"].values()]
        assert all(c["status"] == "failed" for c in found["cells"].values()), found
        assert all(words in text for text in texts), texts


def test_a_friends_answers_score_as_the_friends_cases_would_and_are_flagged(graded: Any) -> None:
    _, rows, _ = graded
    copied = rows["08-clinic-diagnosis"]["copied-answers"]
    assert copied.score <= 2, copied  # another learner's cases: a coincidence at most
    assert "copied" in {f["kind"] for f in copied.flags}, copied.flags


def checkers_lead(salt: str, student: str) -> dict[str, dict[str, Any]]:
    """A stage 08 answer copied from mcp-lab check: each live case's lead failure (the first one not
    caused by another) as its rule, with evidence that works (the answer key's lines, generously).
    Where the checker finds nothing, and for a host log (no server to check), the copier guesses
    the commonest rule."""
    cases = draw_for(salt, student)
    live = [c for c in cases if c.kind == "live"]
    argvs = [[sys.executable, "-m", "grader.course.clinic.server", salt, student, c.name] for c in live]
    with ThreadPoolExecutor(max_workers=2) as pool:
        reports = list(pool.map(run_check, argvs))
    answers: dict[str, dict[str, Any]] = {c.name: {"rule": "stdout-json-lines", "line": 1} for c in cases}
    for case, report in zip(live, reports, strict=True):
        lead = next((r.id for r in report.results if r.status == "fail" and not r.caused_by), None)
        if lead is None:  # a defect the checker's probes do not reach: nothing to copy, so a guess and a ping
            answers[case.name] = {
                "rule": "stdout-json-lines",
                "reproduce": ['{"jsonrpc":"2.0","id":1,"method":"ping"}'],
            }
        else:
            answers[case.name] = {"rule": lead, "reproduce": reproducer(case.defect)}
    return answers


def test_a_script_over_the_public_repository_earns_all_of_stage_08_as_the_readme_says(graded: Any) -> None:
    """Stage 08 is practice, not proof, in a graded class (README, What a script earns in stages 08
    and 09): the repository's answer key writes any student's diagnosis from the released salt."""
    _, rows, _ = graded
    scripted = rows["08-clinic-diagnosis"]["public-script"]
    assert scripted.score == scripted.max_score == STAGES["08-clinic-diagnosis"].points(), scripted
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    assert "What a script earns in stages 08 and 09: all of it." in readme
    assert "08-clinic-diagnosis" in PRACTICE and "09-clinic-repair" in PRACTICE


def test_copying_the_checkers_lead_failure_earns_at_most_half_of_the_clinic(graded: Any) -> None:
    _, rows, _ = graded
    copier = rows["08-clinic-diagnosis"]["checker-copier"]
    assert copier.status == "graded" and copier.max_score == 10, copier
    assert copier.score <= copier.max_score / 2, copier


def test_grading_changes_nothing_outside_the_grades_it_gives(graded: Any) -> None:
    _, _, seen = graded
    before, after = seen["before"], seen["after"]
    assert after["source"] == before["source"], "source/ changed while grading"
    assert after["release"] == before["release"], "release/ changed while grading"
    assert after["02 rows"] == before["02 rows"], "stage 02's grades changed while other stages were graded"


def test_no_extra_credit_reached_the_gradebook(graded: Any) -> None:
    course, _, _ = graded
    with sqlite3.connect(course / "gradebook.db") as db:
        extra = db.execute("SELECT count(*) FROM grade WHERE extra_credit IS NOT NULL AND extra_credit != 0").fetchone()
    assert extra == (0,)


def test_the_grading_machines_environment_does_not_reach_the_learners_code(graded: Any) -> None:
    course, _, _ = graded
    from grader.grading.nbhook import verdicts_path

    text = verdicts_path(course, "02-messages", "environment-probe").read_text(encoding="utf-8")
    assert "ENVIRONMENT" in text and "PYTHONPATH" in text, text[:2000]  # the probe ran and reported
    assert os.environ[PLANTED] not in text and PLANTED not in text
    for name in ("VIRTUAL_ENV", "PYTEST_CURRENT_TEST", "HOSTNAME"):
        assert f"'{name}'" not in text, name


def test_the_secret_is_in_no_verdict_and_a_link_is_never_followed(graded: Any) -> None:
    course, rows, _ = graded
    key = secret.load(course).hex()
    for path in (course / "grading").rglob("*.json"):
        assert key not in path.read_text(encoding="utf-8"), path
    for student in ("symlinked-notebook", "symlinked-folder", "hard-link", "secret-link"):
        row = rows["02-messages"][student]
        assert row.score == 0 and any("link" in f["why"] for f in row.flags), row
        # nbgrader never read it (it follows links), yet the gradebook has its 0, for export's row
        assert not (course / "autograded" / student).exists()
        assert {r[0] for r in gradebook_scores(course, "02-messages") if r[0] == student} == {student}
    for path in (course / "feedback").rglob("*.html"):
        assert key not in path.read_text(encoding="utf-8"), path


def test_the_secret_printed_by_the_learners_code_is_scrubbed() -> None:
    from grader.grading.grade import CellVerdict, Verdicts, scrub

    key = bytes(range(32))
    found = Verdicts("eve", "09-clinic-repair", cells={"a": CellVerdict("a", 1, "failed", f"printed {key.hex()}")})
    assert [f.kind for f in scrub(found, key)] == ["course-files"]
    assert key.hex() not in found.cells["a"].text


def test_without_bubblewrap_a_fork_bomb_stays_inside_its_submission(graded: Any, monkeypatch: Any) -> None:
    """``MCP_LAB_SANDBOX=unshare`` forces the sandbox made without bubblewrap (namespaces and a private
    root made with unshare): a pid namespace and a per-submission process limit (a cgroup as root, else
    RLIMIT_NPROC) hold the bomb; when grading ends, none of its processes is left."""
    from grader.grading import sandbox
    from grader.grading.grade import grade

    course, _, _ = graded
    monkeypatch.setenv("MCP_LAB_SANDBOX", "unshare")
    try:
        runner = sandbox.detect(1)
    except sandbox.NoIsolation as exc:
        pytest.skip(str(exc))
    assert isinstance(runner, sandbox.Unshared) and "pid" in runner.isolation, runner.isolation
    print("\nwithout bubblewrap (MCP_LAB_SANDBOX=unshare): " + runner.isolation)
    before = len(os.listdir("/proc"))
    found = grade(course, "02-messages", "fork-bomb", slot=1)
    assert found.isolation.startswith("unshare"), found.isolation
    assert all(c.status == "failed" for c in found.cells.values()), found.cells
    assert sum(c.points for c in found.cells.values() if c.status == "passed") == 0
    honest = grade(course, "02-messages", "answer-key", slot=1)
    assert all(c.status == "passed" for c in honest.cells.values()), honest.cells  # the fallback still grades
    sandbox.release()
    assert len(os.listdir("/proc")) < before + 50  # the bomb's processes are gone, not left to the host


# -- no false flags on honest work -------------------------------------------------------------------
README_LINES = [
    line.strip(" `$")
    for line in (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8").splitlines()
    if "mcp-lab" in line
][:40]
HONEST_ADDITIONS = {
    "a docstring quoting the README": '"""Notes from the README:\n\n'
    + "\n".join(README_LINES).replace('"""', "'''")
    + '\n"""\n',
    "an error message naming a command": (
        "def _refuse_the_original(path):\n"
        "    raise PermissionError(f'{path} is the shop itself: make a copy first (mcp-lab db build COPY)')\n"
    ),
    "a hint naming the checker": "HINT = 'run mcp-lab check -- python my_server.py to see what a host sees'\n",
    "a helper of its own named like the course's": "def handle_line_helper(raw_line):\n    return raw_line.strip()\n",
    "a dataclass and a namedtuple": (
        "import collections, dataclasses\n"
        "@dataclasses.dataclass\nclass Reply:\n    id: int\n"
        "Pair = collections.namedtuple('Pair', 'key value')\n"
    ),
}


@pytest.mark.parametrize("addition", HONEST_ADDITIONS, ids=list(HONEST_ADDITIONS))
@pytest.mark.parametrize("name", [s.name for s in build.stages() if s.name[:2] not in ("08", "09")])
def test_honest_work_written_differently_raises_no_flag(name: str, addition: str) -> None:
    """A held-out-style corpus: each stage's solution, with what an honest learner adds (the README
    quoted, commands named in messages, names of their own): not a flag."""
    from grader.course.notebook import modules
    from grader.grading import flags

    stage = next(s for s in build.stages() if s.name == name)
    solved = modules(json.loads(notebook_text(stage)))
    assert solved, name
    text = HONEST_ADDITIONS[addition]
    written = {module: text + "\n" + body for module, body in solved.items()}
    assert flags.scan(name[:2], written) == [], name


def test_the_answer_key_as_data_is_refused_in_every_process(graded: Any) -> None:
    _, rows, _ = graded
    for name, student, words in (
        ("02-messages", "kit-bytecode-as-data", "import reference.dispatch: the answer key"),  # by its name
        ("05-tools-call", "kit-bytecode-as-data", "import hook"),
        ("02-messages", "source-as-data", "import reference.dispatch: the answer key"),
        ("05-tools-call", "child-python", "python -c"),  # its text is built at run time: no child starts
    ):
        whys = [f["why"] for f in rows[name][student].flags if f["kind"] == "refused"]
        assert any(words in why for why in whys), (name, student, rows[name][student].flags)


def test_code_made_from_data_is_refused_whichever_frame_makes_it(graded: Any) -> None:
    """The kit's bytecode as a pickle the pure-Python unpickler rebuilds (types.CodeType from pickle.py's
    own frames, types.FunctionType over it): refused where the unpickler looks the class up, the
    literal flagged by the scan when it is a pickle as it stands; a child Python's -c text and stdin
    program built at run time: refused in the parent, before any child starts."""
    _, rows, _ = graded
    for name, student, words in (
        ("02-messages", "kit-pickled", "pickle.find_class types.CodeType"),
        ("02-messages", "kit-pickled-hidden", "pickle.find_class types.CodeType"),
        ("05-tools-call", "child-code-from-data", "python -c"),
        ("05-tools-call", "child-code-from-data", "from stdin"),
    ):
        whys = [f["why"] for f in rows[name][student].flags if f["kind"] == "refused"]
        assert any(words in why for why in whys), (name, student, rows[name][student].flags)
    pickled = rows["02-messages"]["kit-pickled"].flags
    assert any(f["kind"] == "answer-key" and "code as data" in f["why"] for f in pickled), pickled


def test_the_static_scan_reads_pickled_and_marshalled_code_in_raw_and_encoded_literals() -> None:
    """A b'...' literal (or a str one) holding marshal data of a code object, or a pickle that names
    types.CodeType, raw, base64 or hex, however short: answer-key. A pickle of plain data: nothing."""
    from grader.grading import flags

    def handle_line(line: bytes) -> bytes:
        return line

    code = marshal.dumps(handle_line.__code__)
    pickled = kit_pickled("envelope")
    small = b"\x80\x04\x95\x1a\x00\x00\x00\x00\x00\x00\x00\x8c\x05types\x94\x8c\x08CodeType\x94\x93\x94)R\x94."
    for literal in (
        repr(code),
        repr(pickled),
        repr(small),
        repr(base64.b64encode(small).decode()),
        repr(small.hex()),
        repr("ctypes\nCodeType\n(tR."),  # protocol 0: a pickle that is text
    ):
        found = flags.scan("02", {"messages": f"DATA = {literal}\n"})
        assert [f.kind for f in found] == ["answer-key"], (literal[:60], found)
    for honest in (pickle.dumps({"orders": [1, 2, 3], "status": "paid"}), b"\x80\x04K\x01.", b"count_orders"):
        assert flags.scan("02", {"messages": f"DATA = {honest!r}\n"}) == [], honest


def test_a_flooded_guard_pipe_is_flagged_and_loses_no_refusal(graded: Any) -> None:
    """256 empty lines and a line made to look like the guard's, written down every descriptor, then a
    refused import: the flood is flagged tampering, and the refusal after it is still there."""
    _, rows, _ = graded
    flooded = rows["02-messages"]["flooded-channel"].flags
    assert any(f["kind"] == "refused" and "import grader" in f["why"] for f in flooded), flooded
    assert any(f["kind"] == "tampering" and "did not write" in f["why"] for f in flooded), flooded
    assert not any("nothing to see" in f["why"] for f in flooded if f["kind"] == "refused"), flooded


def test_a_guard_record_is_the_guards_only_with_its_token_and_number(tmp_path: Path) -> None:
    """The grader's end of the pipe: a record is the guard's when its token was opened and its number
    comes next; a repeat, an unopened token, a number skipped, an empty line are each flagged."""
    from grader.grading.refusals import TAMPERED, Channel

    token, other = "a" * 32, "b" * 32

    def record(number: int, **fields: Any) -> bytes:
        return b"\n" + json.dumps({"g": token, "n": number, **fields}).encode() + b"\n"

    with Channel(tmp_path / "guard.pipe") as channel:
        fd = os.open(channel.path, os.O_WRONLY)
        os.write(fd, record(0, open=1) + b"half a line")  # the learner's half line ends at the guard's newline
        os.write(fd, record(1, why="import grader: refused"))
        os.write(fd, record(1, why="a repeat"))  # a copy of a number already seen
        os.write(fd, b"\n" + json.dumps({"g": other, "n": 3, "why": "unopened"}).encode() + b"\n")
        os.write(fd, record(4, why="after a gap"))
        os.close(fd)
    whys = channel.lines()
    assert [w for w in whys if not w.startswith(TAMPERED)] == ["import grader: refused", "after a gap"], whys
    tampered = " | ".join(w for w in whys if w.startswith(TAMPERED))
    assert "3 lines the guard did not write" in tampered and "half a line" in tampered, tampered
    assert "2 record(s) of the guard's were lost" in tampered, tampered


CAPSTONE_DELEGATES = """%%module my_server
import os
import runpy
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.realpath(p or ".") != os.path.realpath(HERE)]
if __name__ == "__main__":
    runpy.run_path(os.path.join(os.path.dirname(HERE), "shop_server.py"), run_name="__main__")
"""


def test_a_capstone_that_runs_another_file_of_the_submission_scores_nothing_for_it(graded: Any) -> None:
    """Stage 05's my_server.py is graded as one file of the learner's own: one that takes its scratch
    folder off sys.path and runpy's the (working) ../shop_server.py is refused and earns none of the
    capstone's points, while shop_server.py's own cells keep theirs."""
    from grader.grading.grade import grade

    course, _, _ = graded
    stage = STAGES["05-tools-call"]
    notebook = json.loads(notebook_text(stage, course=course, student="capstone-delegates"))
    for one in notebook["cells"]:
        text = "".join(one["source"]) if isinstance(one["source"], list) else one["source"]
        if text.startswith("%%module my_server"):
            one["source"] = CAPSTONE_DELEGATES
    submit(course, "capstone-delegates", stage, json.dumps(notebook))
    found = grade(course, stage.name, "capstone-delegates", slot=1)
    own = {k: c for k, c in found.cells.items() if k.startswith("test_own_server")}
    assert len(own) == 3 and not [c for c in own.values() if c.status == "passed"], own
    assert all(c.status == "passed" for k, c in found.cells.items() if k not in own), found.cells
    refused = [f["why"] for f in found.flags if f["kind"] == "refused"]
    assert any("one file of your own" in why and "shop_server.py" in why for why in refused), found.flags


def test_a_copy_normalised_away_is_flagged_copied_or_similar(graded: Any) -> None:
    _, rows, _ = graded
    renamed = rows["02-messages"]["renamed-copy"]
    assert renamed.score == renamed.max_score  # its own marks: the flag, not the score, tells
    assert any(f["kind"] == "similar" and "answer-key" in f["why"] for f in renamed.flags), renamed.flags
    reordered = rows["08-clinic-diagnosis"]["reordered-copy"]
    assert any(f["kind"] == "copied" and "answer-key" in f["why"] for f in reordered.flags), reordered.flags


def test_collect_never_follows_a_link_out_of_the_exchange(graded: Any, tmp_path: Path) -> None:
    """``nbgrader collect`` in a course made by mcp-lab course init copies plain files only: a link to
    the secret in a student's outbound folder stays in the exchange (nbgrader's own would copy the secret)."""
    course, _, _ = graded
    stamp = "2026-01-01 10:00:00.000000 UTC"
    folder = tmp_path / "exchange" / build.COURSE_ID / "inbound" / f"linker+02-messages+{stamp}+x1"
    off = "--PlainCollect.owner_check=False"  # the folder is root's, not a user linker's (test_collect_owner.py)
    folder.mkdir(parents=True)
    (folder / "02-messages.ipynb").write_text(release(course, "02-messages"), encoding="utf-8")
    (folder / "timestamp.txt").write_text(stamp, encoding="utf-8")
    (folder / "notes.txt").symlink_to(secret.path(course))
    (folder / "source").symlink_to(course / "source" / "02-messages")
    done = subprocess.run(
        [sys.executable, "-m", "nbgrader", "collect", "02-messages", f"--Exchange.root={tmp_path / 'exchange'}", off],
        cwd=course,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    target = course / "submitted" / "linker" / "02-messages"
    try:
        assert (target / "02-messages.ipynb").is_file() and (target / "timestamp.txt").is_file()
        assert not (target / "notes.txt").exists() and not (target / "source").exists(), sorted(target.rglob("*"))
        assert "not collected" in done.stderr and "notes.txt" in done.stderr, done.stderr
        key = secret.load(course).hex()
        assert not [p for p in target.rglob("*") if p.is_file() and key in p.read_text(errors="replace")]
    finally:
        shutil.rmtree(course / "submitted" / "linker", ignore_errors=True)


def test_what_a_killed_grading_left_is_swept() -> None:
    """A grading process killed (with its parent) leaves its runtime copy and cgroup: the next grading
    removes them; a running process's own are left alone."""
    import tempfile

    from grader.course import runtime
    from grader.grading import sandbox
    from grader.grading.sweep import sweep_stale

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    left = Path(tempfile.mkdtemp(prefix=f"{runtime.PREFIX}02-{pid}-"))
    (left / "runtime").mkdir()
    group = sandbox.Cgroup(f"mcp-lab-{pid}", sandbox.LIMITS)
    group.join()  # makes the cgroups where this machine lets us
    mine = runtime.cached("02")
    assert sweep_stale() >= 1
    assert not left.exists() and mine.is_dir()
    assert not any(f.is_dir() for f in group.folders)


def carried_server() -> str:
    """A whole repaired server that is the kit's answer key carried as data: the course's server as marshal
    data under names built at run time (no ``reference`` in an import), loaded by an import hook."""
    wanted = ["server", "dispatch", "envelope", "lifecycle"]
    blobs = {n: kit_bytecode(n) for n in wanted}
    return (
        '"""A repaired server."""\n'
        "import base64, importlib.abc, importlib.util, marshal, sys, types\n"
        f"BLOBS = {{'refer' + 'ence.' + name: blob for name, blob in {blobs!r}.items()}}\n"
        + FINDER
        + "        types.FunctionType(marshal.loads(base64.b64decode(BLOBS[module.__name__])), module.__dict__)()\n"
        "sys.meta_path.insert(0, Finder())\n"
        "if __name__ == '__main__':\n"
        "    core = importlib.import_module('refer' + 'ence.' + 'server')\n"
        "    sys.exit(core.main([]))\n"
    )


def test_the_answer_key_carried_in_a_repaired_server_scores_nothing(graded: Any) -> None:
    """Stage 09's repairs are whole files a learner hands in: each one the kit's server carried as data
    (an import hook over marshal data, no name that says ``reference``) is refused while it runs and
    flagged by the scan; no repair scores."""
    from course_support import handed_in

    from grader.grading.grade import grade

    course, _, _ = graded
    stage = next(s for s in build.stages() if s.name.startswith("09"))
    assert api(course).generate_assignment(stage.name, force=True, create=True)["success"]
    files = {name: carried_server() for name in handed_in(stage, course)}
    assert len(files) == 5, files
    submit(course, "kit-in-repairs", stage, release(course, stage.name), files)
    found = grade(course, stage.name, "kit-in-repairs", slot=1)
    assert sum(c.points for c in found.cells.values() if c.status == "passed") == 0, found.cells
    kinds = {f["kind"] for f in found.flags}
    assert "answer-key" in kinds or "refused" in kinds, found.flags
    whys = " ".join(f["why"] for f in found.flags)
    assert "import hook" in whys or "marshal" in whys, found.flags


# A module that fills the disk at import: files of 60 MB (under the per-file limit) until the disk says no.
DISK_FILLER = """%%module messages
import os
written = 0
try:
    for n in range(40):
        with open(f"filler-{n}.bin", "wb") as out:
            for _ in range(60):
                out.write(b"x" * (1 << 20))
                written += 1 << 20
except OSError as error:
    import sys
    print(f"stopped after {written >> 20} MiB: {error}", file=sys.stderr)
def handle_line(line, methods):
    return None
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="a tmpfs per submission needs root (grading as root holds the disk)")
def test_a_submission_that_fills_the_disk_is_held_to_its_quota(graded: Any) -> None:
    """What a submission writes in its scratch copies, all its cells together, lands on a tmpfs of
    Limits.disk bytes: the host's disk never sees it, and the mount goes when grading ends."""
    from grader.grading import sandbox
    from grader.grading.grade import grade

    course, _, _ = graded
    submit(course, "disk-filler", STAGES["02-messages"], release(course, "02-messages", cell(DISK_FILLER)))
    host = Path(tempfile.gettempdir())
    free_before = shutil.disk_usage(host).free
    seen: list[int] = []
    stop = threading.Event()

    def watch() -> None:  # the host's free space while the submission writes
        while not stop.wait(0.05):
            seen.append(shutil.disk_usage(host).free)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        found = grade(course, "02-messages", "disk-filler", slot=1)
    finally:
        stop.set()
        watcher.join()
    assert "disk per submission held by a tmpfs of 512 MiB" in found.isolation, found.isolation
    assert sum(c.points for c in found.cells.values() if c.status == "passed") == 0
    # 40 x 60 MB would be 2.4 GB; the host lost far less than the quota at any moment
    assert free_before - min(seen or [free_before]) < sandbox.LIMITS.disk, (free_before, min(seen))
    assert sandbox.disks(os.getpid()) == [], sandbox.disks(os.getpid())


@pytest.mark.skipif(os.geteuid() != 0, reason="a tmpfs per submission needs root")
def test_the_scratch_disk_stops_writes_at_its_size_and_is_swept_after_a_kill(tmp_path: Path) -> None:
    """The quota itself, on a real process run as the sandbox runs it: ENOSPC at Limits.disk; a grading
    process that died with its disk mounted has it unmounted by the sweep."""
    from grader.grading import sandbox, sweep

    limits = sandbox.Limits(disk=32 << 20)
    # The disk is named for a grading process of its own (a child here), alive while the disk is filled:
    # a sweep that another test's grading runs meanwhile must leave it alone, as it leaves any live one.
    owner = subprocess.Popen(["sleep", "600"])
    folder = tmp_path / f"mcp-lab-grade-02-{owner.pid}-x"
    folder.mkdir()
    assert sandbox.hold_disk(folder, limits)
    try:
        done = subprocess.run(
            ["dd", "if=/dev/zero", f"of={folder / 'big'}", "bs=1M", "count=64"], capture_output=True, timeout=60
        )
        assert done.returncode != 0 and b"No space left" in done.stderr, done.stderr
        assert (folder / "big").stat().st_size <= 32 << 20
        assert folder in sandbox.disks(owner.pid)
        owner.kill()
        owner.wait(10)
        # Now it is a dead grading process's disk: the sweep (this one, or another test's) takes it.
        sweep.sweep_stale()
        assert sandbox.disks(owner.pid) == []
        assert not folder.exists()
    finally:
        owner.kill()
        owner.wait(10)
        if folder in sandbox.disks():
            sandbox.free_disk(folder)


HTTP_TAIL = (
    "from reference.server import open_shop\n"
    "from reference.streamable_http import HttpServer\n"
    "def make_server(address, token=None):\n"
    "    return HttpServer(address, open_shop(shared=True).server_factory('http'), token, log=lambda _: None)\n"
    "def main(argv):\n"
    "    host, _, port = (argv[1] if len(argv) > 1 else '127.0.0.1:8000').rpartition(':')\n"
    "    httpd = make_server((host or '127.0.0.1', int(port)), argv[2] if len(argv) > 2 else None)\n"
    "    print(f'Streamable HTTP on http://127.0.0.1:{httpd.server_address[1]}/mcp; Ctrl-C ends it', file=sys.stderr)\n"
    "    httpd.serve_forever()\n"
    "if __name__ == '__main__':\n"
    "    sys.exit(main(sys.argv))\n"
)


def test_the_answer_key_carried_as_the_http_transport_scores_nothing(graded: Any) -> None:
    """Stage 12's transport is the kit's own (reference.streamable_http and its helpers as marshal data
    behind an import hook): refused while it runs, flagged, no point."""
    from grader.grading.grade import grade

    course, _, _ = graded
    stage = next(s for s in build.stages() if s.name.startswith("12"))
    assert api(course).generate_assignment(stage.name, force=True, create=True)["success"]
    carried_cell = cell(carried("mcp_http", ["streamable_http", "mcp_headers", "http_guard", "sse"], HTTP_TAIL))
    submit(course, "kit-as-transport", stage, release(course, stage.name, carried_cell))
    found = grade(course, stage.name, "kit-as-transport", slot=1)
    assert sum(c.points for c in found.cells.values() if c.status == "passed") == 0, found.cells
    whys = " ".join(f["why"] for f in found.flags)
    assert {"answer-key", "refused"} & {f["kind"] for f in found.flags}, found.flags
    assert "import hook" in whys or "marshal" in whys, found.flags
