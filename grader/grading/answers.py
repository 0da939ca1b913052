"""Answers that are values (stage 08's ``diagnosis``), checked for their shape before any check reads them.

The checks read a learner's answer as data: a dict, its rule a check id, its evidence lines of
text. An answer can be any literal at all (a list where a rule goes, a line nested 8000 deep, a
value of a hundred megabytes), and a check that meets one it never expected must not crash the
grader: that would say "grading failed" where the learner's answer is simply wrong. So each answer
is read here first; what is malformed fails the cells it breaks, with a message that says why, and
the checks never see it.

    >>> malformed("08", {"diagnosis": {"case-01": {"rule": ["id-echo"]}, "case-02": {"rule": "id-echo"}}})
    {'test_case_01': "case-01: the rule must be a check id written as text ('id-echo'), not a list"}
    >>> deep = {"case-03": {"rule": "x", "reproduce": ["[" * 5000 + "]" * 5000]}}
    >>> malformed("08", {"diagnosis": deep})["test_case_03"][:60]
    'case-03: a line of your evidence nests 5000 levels deep: no '
    >>> malformed("02", {})
    {}
"""

from __future__ import annotations

from typing import Any

MAX_DEPTH = 32  # levels of nesting in an answer (stage 08's is three deep)
MAX_NESTING = 64  # levels of brackets in one JSON line of evidence (a message is a few deep)
MAX_ITEMS = 10_000  # values in one answer


def _depth(value: Any, level: int = 0) -> int:
    """The nesting of ``value`` (stopping at :data:`MAX_DEPTH` + 1, without recursion's limits)."""
    deepest, todo = level, [(value, level)]
    seen = 0
    while todo:
        item, at = todo.pop()
        seen += 1
        deepest = max(deepest, at)
        if deepest > MAX_DEPTH or seen > MAX_ITEMS:
            return MAX_DEPTH + 1
        if isinstance(item, dict):
            todo += [(v, at + 1) for v in item.values()] + [(k, at + 1) for k in item]
        elif isinstance(item, list | tuple | set | frozenset):
            todo += [(v, at + 1) for v in item]
    return deepest


def brackets(line: str | bytes) -> int:
    """How deep the brackets of a JSON line nest (strings aside)."""
    text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
    depth = deepest = 0
    quoted = escaped = False
    for c in text:
        if quoted:
            escaped, quoted = (False, quoted) if escaped else (c == "\\", c != '"')
        elif c == '"':
            quoted = True
        elif c in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "]}":
            depth -= 1
    return deepest


def _kind(value: Any) -> str:
    return {list: "a list", dict: "a dict", tuple: "a tuple", set: "a set"}.get(type(value), type(value).__name__)


def _clinic(diagnosis: Any) -> dict[str, str]:
    if not isinstance(diagnosis, dict):
        return {}  # the checks say so, cell by cell
    found: dict[str, str] = {}
    for name, entry in diagnosis.items():
        if not (isinstance(name, str) and name.startswith("case-") and name[5:].isdigit()):
            continue  # not a case: the checks never read it
        cell = f"test_case_{name[5:]}"
        if not isinstance(entry, dict):
            continue  # "no answer for case-NN": the checks say so
        rule = entry.get("rule")
        if rule is not None and not isinstance(rule, str):
            found[cell] = f"{name}: the rule must be a check id written as text ('id-echo'), not {_kind(rule)}"
            continue
        lines = entry.get("reproduce")
        if isinstance(lines, list | tuple):
            for line in lines:
                if isinstance(line, str | bytes) and brackets(line) > MAX_NESTING:
                    found[cell] = (
                        f"{name}: a line of your evidence nests {brackets(line)} levels deep: no defect of the "
                        f"clinic needs more than {MAX_NESTING}; send the lines that show the case's defect"
                    )
                    break
    return found


def malformed(stage: str, values: dict[str, Any]) -> dict[str, str]:
    """``{grade id: why}`` for each cell whose checks cannot read the learner's answers as they are."""
    found: dict[str, str] = {}
    for name, value in values.items():
        if _depth(value) > MAX_DEPTH:
            why = f"{name} nests deeper than {MAX_DEPTH} levels or holds more than {MAX_ITEMS} values: not an answer"
            return {"*": why}
    if stage == "08":
        found.update(_clinic(values.get("diagnosis")))
    return found
