"""Fingerprints of what a submission answers, for ``copied`` and ``similar`` across a whole stage.

Two files that differ in their comments, blank lines or the order of a dict's keys give the same
answer. So a submission is fingerprinted twice, on its *normalised* answers:

- ``copied``: the syntax tree of each file (comments, layout and docstrings gone) and each answer
  that is a value as sorted data (stage 08's diagnosis);
- ``similar``: the same trees with every name the learner chose (variables, arguments, functions,
  classes) replaced by its order of first appearance: a copy with renamed variables.

    >>> a = fingerprints({"m": "def f(x):\\n    '''doc'''\\n    return x + 1  # one\\n"}, {})
    >>> b = fingerprints({"m": "def g(value):\\n    return value + 1\\n"}, {})
    >>> a["copied"] == b["copied"], a["similar"] == b["similar"]
    (False, True)
    >>> fingerprints({}, {"diagnosis": {"b": 1, "a": [2]}}) == fingerprints({}, {"diagnosis": {"a": [2], "b": 1}})
    True

Only an answer with room for variety says anything about copying. Where the task forces answers to
be alike (stage 09's repairs: the smallest fix of a file everyone was handed is the same for
everyone), a file is fingerprinted only if the learner's own part of it, what differs from the file
they were handed (``handed``), is at least :data:`MIN_VARIETY` tokens; a submission with no such
file and no value answer has no fingerprint, and no flag:

    >>> handed = {"repair_1.py": "def f(x):\\n    return x - 1\\n"}
    >>> fingerprints({"repair_1.py": "def f(x):\\n    return x + 1\\n"}, {}, handed)
    {}
"""

from __future__ import annotations

import ast
import builtins
import difflib
import hashlib
import json
import re
from typing import Any

_BUILTINS = frozenset(dir(builtins))
MIN_VARIETY = 120  # tokens of the learner's own code in a file (about ten lines) before two alike files say anything


class _Renamer(ast.NodeTransformer):
    """Every name the learner chose becomes ``n0``, ``n1``, ... in order of first appearance."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def _new(self, name: str) -> str:
        if name in _BUILTINS:
            return name
        return self.names.setdefault(name, f"n{len(self.names)}")

    def visit_Name(self, node: ast.Name) -> ast.AST:
        node.id = self._new(node.id)
        return node

    def visit_arg(self, node: ast.arg) -> ast.AST:
        node.arg = self._new(node.arg)
        node.annotation = None
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        node.name = self._new(node.name)
        node.returns = None
        self.generic_visit(node)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        node.name = self._new(node.name)
        self.generic_visit(node)
        return node


def _without_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        first = body[0] if isinstance(body, list) and body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
            node.body = body[1:] or [ast.Pass()]  # type: ignore[attr-defined,index]
    return tree


def _tree(text: str, renamed: bool) -> str:
    try:
        tree = _without_docstrings(ast.parse(text))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return "unparsed:" + text
    if renamed:
        tree = _Renamer().visit(tree)
    try:
        return ast.dump(tree, annotate_fields=False, include_attributes=False)
    except RecursionError:
        return "unparsed:" + text


def _data(value: Any) -> str:
    try:
        return json.dumps(value, sort_keys=True, default=repr)
    except (TypeError, ValueError, RecursionError):
        return repr(value)


def _normalised(text: str) -> list[str]:
    """The file's code as lines, comments, layout and docstrings gone (the text itself if it does not parse)."""
    try:
        return ast.unparse(_without_docstrings(ast.parse(text))).splitlines()
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return text.splitlines()


def own_tokens(text: str, handed: str) -> int:
    """How many tokens of ``text`` are the learner's own: in lines that differ from the ``handed`` file's."""
    mine, theirs = _normalised(text), _normalised(handed)
    matcher = difflib.SequenceMatcher(a=theirs, b=mine, autojunk=False)
    changed = [line for tag, _, _, j1, j2 in matcher.get_opcodes() if tag != "equal" for line in mine[j1:j2]]
    return sum(len(re.findall(r"\w+|[^\w\s]", line)) for line in changed)


def fingerprints(files: dict[str, str], values: dict[str, Any], handed: dict[str, str] | None = None) -> dict[str, str]:
    """``{"copied": ..., "similar": ...}`` of the learner's files (by name: text) and value answers; with
    ``handed`` (the files as the release gave them), a file whose own part is too small to vary is left
    out, and ``{}`` where nothing is left."""
    handed = handed or {}
    files = {
        name: text
        for name, text in files.items()
        if name not in handed or own_tokens(text, handed[name]) >= MIN_VARIETY
    }
    if not files and not values:
        return {}
    found = {}
    for kind, renamed in (("copied", False), ("similar", True)):
        h = hashlib.sha256()
        for name, text in sorted(files.items()):
            h.update(f"file {name}\n{_tree(text, renamed)}\n".encode("utf-8", "replace"))
        for name, value in sorted(values.items()):
            h.update(f"value {name}\n{_data(value)}\n".encode("utf-8", "replace"))
        found[kind] = h.hexdigest()[:24]
    return found
