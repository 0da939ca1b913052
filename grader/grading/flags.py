"""What grading reports beside a score: the signs of a grade not earned, and of grading that failed.

A flag is never a verdict by itself: the score comes from the checks. A flag tells the instructor
where to look. Some are read from the learner's files (parsed, never run), some from what the
guard refused while their code ran, some from the gradebook after grading:

    >>> [f.kind for f in scan("02", {"messages": "import reference.dispatch\\n"})]
    ['answer-key']
    >>> [f.kind for f in scan("03", {"server": "from reference.dispatch import Dispatcher\\n"})]
    []
    >>> [f.kind for f in scan("05", {"shop_server": "open('../gradebook.db', 'w')\\n"})]
    ['course-files']
"""

from __future__ import annotations

import ast
import contextlib
import re
from dataclasses import asdict, dataclass
from typing import Any

from grader.course import runtime
from grader.course.pysource import parse as parse_source

# What each kind of flag means, for the grading table's legend.
KINDS = {
    "answer-key": "the submission's code imports or runs the course's answer key (reference) or the grader, by name, "
    "through a name built of pieces, or as data (marshal, an import hook, a large encoded literal)",
    "tampering": "a cell of the notebook tries to change the course's checks, the kernel's input or graded cells "
    "(it has no effect on the grade: the notebook is not run when graded), or the submission's code wrote on "
    "the guard's pipe what the guard did not write (or closed it)",
    "course-files": "the submission names course files (the gradebook, source/, release/, nbgrader), holds a copy "
    "of one (the secret, an instructor's notebook), or its output held the secret",
    "links": "the submission is not plain files (a symbolic or hard link, a device, a FIFO): refused, never run",
    "refused": "the guard refused the submission's code something while it ran (see why)",
    "dynamic-code": "the submission's code builds code at run time (exec, eval, __import__): read it",
    "copied": "the submission's answers are another student's (the same code and data, layout and comments aside)",
    "similar": "the submission's code is another student's but for the names it chose (renamed variables)",
    "over-maximum": "the score is above the maximum the stage allows",
    "extra-credit": "the gradebook holds extra credit for this submission",
    "grading-failed": "grading could not finish (a crash or a time-out of the grader, not a zero)",
    "not-submitted": "no notebook was handed in",
    "unreadable": "the notebook could not be read as a notebook",
}
_COURSE_WORDS = ("gradebook", "nbgrader", "source/", "release/", "autograded/", "submitted/", "feedback/")
_DYNAMIC = {"exec", "eval", "compile", "__import__"}
# The course's command where it runs or reveals the answer key: the program itself (an argv's
# "mcp-lab", ".../bin/mcp-lab") or one of those actions ("mcp-lab serve", "mcp-lab clinic key",
# "mcp-lab gallery list --reveal"). Not a mere mention: an error message that says "make a copy
# first (mcp-lab db build COPY)", the README's own advice, is honest; nor a name that contains it
# (the checker's probe notification "notifications/mcp-lab/unknown" is a fair clinic reproducer).
_COMMAND = re.compile(r"(?<![\w/-])mcp-lab\s+(serve|clinic|gallery|course)\b")
_PROGRAM = re.compile(r"^\s*(\S*/)?mcp-lab\s*$")
# The answer key's file named by its path (loaded with importlib's spec_from_file_location, read and
# exec'd): graded, the sandbox shows no such file, and the try loses its points, but it is an attempt
# the instructor should see, as an import of the module by its name is.
_REFERENCE_FILE = re.compile(r"(?:^|[/\\])reference[/\\](\w+)\.pyc?(?!\w)")
ENCODED = 1024  # characters of a base64 or hex literal that are data the scan cannot read
_ENCODED = re.compile(r"^[A-Za-z0-9+/=_\-\s]+$")


def folded(node: ast.AST) -> str | None:
    """The text of a string expression built from literals ("refer" + "ence", f"{'__imp'}ort__",
    "".join([...])), or None.

    >>> folded(ast.parse('"__imp" + "ort__"', mode="eval").body)
    '__import__'
    """
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = folded(node.left), folded(node.right)
        return left + right if left is not None and right is not None else None
    if isinstance(node, ast.JoinedStr):
        parts = [folded(v.value if isinstance(v, ast.FormattedValue) else v) for v in node.values]
        return "".join(parts) if all(p is not None for p in parts) else None  # type: ignore[arg-type]
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "join"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.List | ast.Tuple)
    ):
        sep, parts = folded(node.func.value), [folded(e) for e in node.args[0].elts]
        return sep.join(parts) if sep is not None and all(p is not None for p in parts) else None  # type: ignore[arg-type]
    return None


def _encoded(value: str | bytes) -> str:
    """What a literal holds, as far as the scan can tell: "code" (code as data: marshalled, or a pickle
    that makes code or imports, raw or encoded in base64 or hex, compressed or not), "data" (a large
    encoded literal of something else), or "" (text, or data too small to hide a module in)."""
    raw = value
    if isinstance(value, str):
        try:
            raw = value[:1_000_000].encode("latin-1")  # a str can hold the bytes as well (pickle protocol 0 is text)
        except UnicodeEncodeError:
            raw = b""
    if _code_data(raw):  # type: ignore[arg-type]
        return "code"
    text = value.decode("ascii", "replace") if isinstance(value, bytes) else value
    if len(text) < SMALL or not _ENCODED.match(text[:100_000]):
        return ""
    import base64
    import binascii
    import zlib

    decoded = b""
    compact = re.sub(r"\s+", "", text)
    for decode in (bytes.fromhex, base64.b64decode, base64.urlsafe_b64decode):
        try:
            decoded = decode(compact)  # type: ignore[operator]
            break
        except (ValueError, binascii.Error):
            continue
    if decoded[:1] == b"x":
        with contextlib.suppress(zlib.error):
            decoded = zlib.decompress(decoded)
    if _code_data(decoded) or (len(text) >= ENCODED and (b"def " in decoded or b"import " in decoded)):
        return "code"
    return "data" if len(text) >= ENCODED else ""


SMALL = 24  # characters of an encoded literal worth decoding: a pickle that names types.CodeType is short
# What a pickle names when it makes code, imports or runs text (pickle's find_class would look them up).
_PICKLED_CODE = (
    b"CodeType", b"FunctionType", b"LambdaType", b"marshal", b"exec", b"eval", b"compile", b"__import__",
    b"importlib", b"import_module", b"getattr", b"runpy", b"subprocess", b"system", b"ctypes", b"_loads",
)  # fmt: skip


def _code_data(raw: bytes) -> str:
    """What ``raw`` holds of code: "marshal" (marshal data of a code object), "pickle" (a pickle that looks up
    a callable that makes code or imports, read by :mod:`pickletools`, never loaded), or "" (neither)."""
    for at in (21, 25):  # 3.11's code: 5 longs, then co_code as bytes ('s'); 3.8-3.10: 6 longs
        if raw[:1] in (b"\xe3", b"c") and len(raw) > at + 5 and raw[at] in (0x73, 0xF3):
            counts = [int.from_bytes(raw[1 + 4 * k : 5 + 4 * k], "little") for k in range(3)]
            if all(c < 256 for c in counts):
                return "marshal"
    if len(raw) < 8 or not (raw[:1] == b"\x80" or raw[:1] in (b"c", b"(", b"]", b"}")):
        return ""
    import pickletools

    named = False
    try:
        for opcode, _, _ in pickletools.genops(raw[:1_000_000]):
            named = named or opcode.name in ("GLOBAL", "STACK_GLOBAL", "INST")
    except Exception:  # genops reads any bytes: what is not a pickle raises something
        return ""
    return "pickle" if named and any(name in raw for name in _PICKLED_CODE) else ""


@dataclass(frozen=True)
class Flag:
    kind: str
    why: str

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


def _imported(tree: ast.AST) -> list[str]:
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module)
            if node.module == "reference":
                names += [f"reference.{alias.name}" for alias in node.names]
    return names


# Files that must stand alone (the standard library only), whatever their stage's runtime lends
# the learner's other files: stage 05's capstone server.
STANDALONE: dict[str, frozenset[str]] = {"05": frozenset({"my_server.py"})}


def scan(stage: str, files: dict[str, str]) -> list[Flag]:
    """Flags read from the learner's files (``{module name or file name: text}``)."""
    lent = runtime.plan(stage).may_import
    flags: list[Flag] = []
    for name, text in sorted(files.items()):
        where = name if name.endswith(".py") else f"{name}.py"
        allowed = frozenset() if where in STANDALONE.get(stage, ()) else lent
        try:
            tree = parse_source(text)
        except (SyntaxError, ValueError):
            continue  # it does not run either: the checks say so
        for imported in _imported(tree):
            flag = _imported_as(where, imported, allowed, lent)
            if flag is not None:
                flags.append(flag)
        flags += _read_through(where, tree, allowed, lent)
        # A docstring or a bare string statement runs nothing: quoting the README there is honest.
        prose = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
        for node in ast.walk(tree):
            value = folded(node) if isinstance(node, ast.Constant | ast.BinOp | ast.JoinedStr) else None
            if id(node) in prose:
                value = None
            if value is not None:
                if "reference.server" in value or "-m reference" in value or _COMMAND.search(value):
                    flags.append(Flag("answer-key", f"{where} mentions {value[:60]!r}"))
                elif _PROGRAM.match(value):
                    flags.append(Flag("answer-key", f"{where} names the course's command {value[:60]!r}"))
                for module in _REFERENCE_FILE.findall(value):
                    flag = _imported_as(where, f"reference.{module}", allowed, lent, "names the file of")
                    if flag is not None:
                        flags.append(flag)
                hits = [w for w in _COURSE_WORDS if w in value]
                if hits:
                    flags.append(Flag("course-files", f"{where} mentions {value[:60]!r}"))
            if isinstance(node, ast.Constant) and isinstance(node.value, str | bytes):
                kind = _encoded(node.value)
                if kind:
                    what = f"{where} line {node.lineno}: a literal of {len(node.value)} characters of {kind} as data"
                    flags.append(Flag("answer-key" if kind == "code" else "dynamic-code", what))
            elif isinstance(node, ast.Call):
                func = node.func
                called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
                if called in _DYNAMIC or called == "import_module":
                    flags.append(Flag("dynamic-code", f"{where} line {node.lineno}: {called}(...)"))
    return _unique(flags)


def _imported_as(
    where: str, name: str, allowed: frozenset[str], lent: frozenset[str], how: str = "imports"
) -> Flag | None:
    """The flag for importing ``name`` (by a statement, or by a call with its name as data; ``how``:
    what ``where`` does with it, "names the file of" for a path to the module's file)."""
    top, _, rest = name.partition(".")
    piece = rest.partition(".")[0]
    if top == "nbgrader" or (top == "grader" and not where.startswith("cell ")):
        return Flag("answer-key", f"{where} imports {name}")
    if top == "reference" and piece and piece not in allowed:
        teaches = runtime.TEACHES.get(piece)
        what = f"the answer key of stage {teaches}" if teaches else "not part of this stage's runtime"
        if piece in lent:
            what = f"{where} must stand alone: the standard library only"
        return Flag("answer-key", f"{where} {how} {name} ({what})")
    if top in ("ctypes", "_ctypes"):
        return Flag("answer-key", f"{where} imports {name} (ctypes patches the interpreter the guard runs in)")
    return None


def _read_through(where: str, tree: ast.AST, allowed: frozenset[str], lent: frozenset[str]) -> list[Flag]:
    """What name-building hides: ``getattr(builtins, "__imp" + "ort__")``, ``import_module("refer" +
    "ence.server")``, code made from data (``marshal.loads``, ``types.FunctionType``), import hooks."""
    found: list[Flag] = []
    aliases: dict[str, str] = {}  # a name bound to a dynamic function: imp = getattr(builtins, "__import__")
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = node.value
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "getattr":
                name = folded(value.args[1]) if len(value.args) > 1 else None
                if name is not None:
                    aliases[node.targets[0].id] = name
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in ("meta_path", "path_hooks", "path_importer_cache"):
            found.append(Flag("answer-key", f"{where} line {node.lineno}: changes sys.{node.attr} (an import hook)"))
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        owner = func.value.id if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) else ""
        if called == "getattr" and len(node.args) > 1:
            name = folded(node.args[1])
            if name is None:
                found.append(
                    Flag("dynamic-code", f"{where} line {node.lineno}: getattr(...) with a name built at run time")
                )
            elif name in _DYNAMIC or name in ("import_module", "loads", "FunctionType", "CodeType"):
                found.append(Flag("dynamic-code", f"{where} line {node.lineno}: getattr(..., {name!r})"))
        if isinstance(func, ast.Call) and isinstance(func.func, ast.Name) and func.func.id == "getattr":
            called = folded(func.args[1]) if len(func.args) > 1 else None or ""  # getattr(builtins, "...")(...)
        called = aliases.get(called, called) or ""
        if called in ("__import__", "import_module") and node.args:
            name = folded(node.args[0])
            flag = _imported_as(where, name, allowed, lent) if name else None
            if flag is not None:
                found.append(flag)
        if (owner == "marshal" and called in ("loads", "load")) or called in ("FunctionType", "CodeType"):
            shown = f"{owner}.{called}" if owner else called
            found.append(Flag("answer-key", f"{where} line {node.lineno}: {shown}(...) makes code from data"))
    return found


_TAMPER_WORDS = ("input_transformers", "ast_transformers", "register_magic_function", "events.register")


def _bound_to_course(tree: ast.AST) -> set[str]:
    """Names a cell binds to the course's own modules (``from grader.course import lab`` binds ``lab``)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {(a.asname or a.name).partition(".")[0] for a in node.names if a.name.startswith("grader")}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("grader"):
            names |= {a.asname or a.name for a in node.names}
    return names | {"lab", "clinic"}  # the names the set-up cell binds


def scan_notebook(
    stage: str, notebook: dict[str, Any], graded: set[str], course_cells: frozenset[str] = frozenset()
) -> list[Flag]:
    """Flags read from the notebook's own cells (the learner's, not the locked ones; never run).

    ``graded``: the grade ids of the stage's graded cells, from the instructor's source;
    ``course_cells``: the text of the release's own code cells (the lesson's examples), which are
    the course's, not the learner's."""
    flags: list[Flag] = []
    for number, cell in enumerate(notebook.get("cells", []), 1):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("grade") and meta.get("grade_id") not in graded:
            flags.append(Flag("tampering", f"cell {number} claims to be a graded cell ({meta.get('grade_id')!r})"))
        if cell.get("cell_type") != "code" or (meta.get("locked") and not meta.get("solution")):
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        if source.lstrip().startswith("%%module") or source.strip() in course_cells:
            continue  # a module (scanned with the learner's files), or one of the lesson's own cells
        code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
        try:
            tree = parse_source(code)
        except SyntaxError:
            continue
        course = _bound_to_course(tree)
        for node in ast.walk(tree):
            target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
            if isinstance(node, ast.AugAssign | ast.Delete):
                target = node.target if isinstance(node, ast.AugAssign) else node.targets[0]
            if isinstance(target, ast.Attribute):
                base = target.value
                while isinstance(base, ast.Attribute):
                    base = base.value
                if isinstance(base, ast.Name) and base.id in course:
                    flags.append(Flag("tampering", f"cell {number} changes {ast.unparse(target)}"))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr":
                flags.append(Flag("tampering", f"cell {number} line {node.lineno}: setattr(...)"))
        if any(word in code for word in _TAMPER_WORDS):
            flags.append(Flag("tampering", f"cell {number} changes how the kernel reads the cells that follow"))
        for flag in scan(stage, {f"cell {number}": code}):
            if flag.kind != "dynamic-code":
                flags.append(Flag(flag.kind, flag.why.replace(".py", "", 1)))
        if any(imported.startswith(("grader.grading", "grader.checker.catalogue")) for imported in _imported(tree)):
            flags.append(Flag("answer-key", f"cell {number} imports the grading side of the course"))
    return _unique(flags)


def refused(whys: list[str]) -> list[Flag]:
    """Flags from what the guard refused in one grading (:mod:`.refusals`): each refusal, once; what
    was on the guard's pipe that the guard did not write is ``tampering``."""
    from .refusals import TAMPERED

    return _unique([Flag("tampering", w) if w.startswith(TAMPERED) else Flag("refused", w) for w in whys])


def _unique(flags: list[Flag]) -> list[Flag]:
    return list(dict.fromkeys(flags))
