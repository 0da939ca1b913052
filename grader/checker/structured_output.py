"""The structured-output check: results of tools that declare an ``outputSchema`` (2025-06-18 on).

A tool may declare an ``outputSchema`` from revision 2025-06-18; the server then MUST give every
successful result a ``structuredContent`` object that conforms to it, and SHOULD also put the same
JSON in a text block for clients that read only ``content``. Error results (``isError: true``)
are not judged: the spec's example of a tool execution error carries text only, and the official
SDK client validates successful results only.

Schemas are checked with ``jsonschema`` (a dependency of the checker, never of the reference), as
the official SDK client does: JSON Schema 2020-12 unless the schema names another dialect in
``$schema``. It is imported once, here, at import time: importing it lazily from the probes'
parallel threads can see a half-initialised module.

    >>> schema = {"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]}
    >>> good = {"content": [{"type": "text", "text": '{"count": 3}'}], "structuredContent": {"count": 3}}
    >>> result_problems(schema, good)
    (None, None)
    >>> result_problems(schema, {**good, "structuredContent": {"count": "3"}})[0]
    "structuredContent does not conform to the outputSchema at count: '3' is not of type 'integer'"
    >>> result_problems(schema, {"content": [], "structuredContent": {"count": 3}})[1]
    'no text block: clients before 2025-06-18 read only content'
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from jsonschema.exceptions import SchemaError, best_match
from jsonschema.validators import Draft202012Validator, validator_for

from .probe import show_json

CHECK = "structured-output"
FIRST_REVISION = "2025-06-18"


# One validator per schema, the schema checked once: checking a schema against its dialect's
# metaschema ($dynamicRef and all) was most of a checker run's jsonschema time, and a session
# judges every result of a tool against the same schema. Keyed by the schema's JSON text (a dict
# is not hashable); a schema that fails the check is not kept, so it raises again.
_VALIDATORS: dict[str, Any] = {}


def _validator(schema: dict[str, Any]) -> Any:
    key = json.dumps(schema, sort_keys=True)
    if (validator := _VALIDATORS.get(key)) is None:
        cls = validator_for(schema, default=Draft202012Validator)
        cls.check_schema(schema)  # SchemaError for a schema that is not JSON Schema
        validator = _VALIDATORS[key] = cls(schema)
    return validator


def schema_problem(schema: Any) -> str | None:
    """Why ``schema`` is not a usable outputSchema, or None."""
    if not isinstance(schema, dict):
        return f"the outputSchema is a {type(schema).__name__}, not a JSON Schema object"
    if schema.get("type") != "object":
        return f'the outputSchema\'s "type" must be "object", found {schema.get("type")!r}'
    try:
        _validator(schema)
    except SchemaError as exc:
        return f"the outputSchema is not a valid JSON Schema: {exc.message}"
    return None


def _where(path: Sequence[Any]) -> str:
    return ".".join(str(p) for p in path) or "the top level"


def result_problems(schema: dict[str, Any], result: dict[str, Any]) -> tuple[str | None, str | None]:
    """(what fails, what warns) for one successful result of a tool with a valid ``schema``."""
    if "structuredContent" not in result:
        return "the tool declares an outputSchema but the result has no structuredContent", None
    structured = result["structuredContent"]
    if not isinstance(structured, dict):
        return f"structuredContent must be a JSON object, found {show_json(structured, 80)}", None
    error = best_match(_validator(schema).iter_errors(structured))
    if error is not None:
        return f"structuredContent does not conform to the outputSchema at {_where(error.path)}: {error.message}", None
    content = result.get("content")
    if not isinstance(content, list):
        return None, None  # not a CallToolResult at all: tools-call-result says so
    texts = [i.get("text") for i in content if isinstance(i, dict) and i.get("type") == "text"]
    texts = [t for t in texts if isinstance(t, str)]
    if not texts:
        return None, f"no text block: clients before {FIRST_REVISION} read only content"
    if not any(_same_json(text, structured) for text in texts):
        return None, "no text block holds the same JSON as structuredContent"
    return None, None


def _same_json(text: str, value: Any) -> bool:
    try:
        return json.loads(text) == value
    except ValueError:
        return False


def judge_structured_output(
    version: Any, tools: list[dict[str, Any]], calls: list[tuple[str, dict[str, Any], Any]], f: Any
) -> None:
    """Judge the ``(tool name, arguments, result)`` of every call made in a session at ``version``."""
    if not isinstance(version, str) or version < FIRST_REVISION:
        f.skipped(
            CHECK,
            f"the session negotiated {version}: structured output begins with {FIRST_REVISION}",
            revision=version if isinstance(version, str) else None,
        )
        return
    schemas = {t["name"]: t["outputSchema"] for t in tools if isinstance(t.get("name"), str) and "outputSchema" in t}
    fails: list[str] = []
    warns: list[str] = []
    evidence: dict[str, Any] = {}
    judged: set[str] = set()
    results = 0

    def note(problems: list[str], name: str, arguments: Any, problem: str, result: Any) -> None:
        problems.append(f"{name}: {problem}")
        if len(problems) == 1 and not (problems is warns and fails):
            evidence.clear()
            evidence["sent"] = show_json({"name": name, "arguments": arguments})
            evidence["received"] = show_json(result, 400)
            if name in schemas:
                evidence["outputSchema"] = show_json(schemas[name], 400)

    bad_schemas = {name: problem for name, s in schemas.items() if (problem := schema_problem(s)) is not None}
    for name, arguments, result in calls:
        if not isinstance(result, dict) or result.get("isError") is True:
            continue  # protocol errors and tool execution errors are not structured results
        if name not in schemas:
            if "structuredContent" in result and not isinstance(result["structuredContent"], dict):
                note(fails, name, arguments, "structuredContent must be a JSON object", result)
            continue
        results += 1
        judged.add(name)
        if name in bad_schemas:
            continue
        failed, warned = result_problems(schemas[name], result)
        if failed:
            note(fails, name, arguments, failed, result)
        elif warned:
            note(warns, name, arguments, warned, result)
    if bad_schemas:  # a schema no result can be checked against comes first, with its own evidence
        fails[:0] = [f"{name}: {problem}" for name, problem in bad_schemas.items()]
        name = next(iter(bad_schemas))
        evidence.clear()
        evidence.update({"tool": name, "outputSchema": show_json(schemas[name], 400)})
    expected = (
        "every successful result of a tool with an outputSchema carries structuredContent (a JSON object "
        "that conforms to it) and the same JSON in a text block"
    )
    at = {"revision": version}
    if fails:
        f.failed(CHECK, f"under {version}, {fails[0]}", {**evidence, "problems": fails, "expected": expected}, **at)
    elif warns:
        evidence = {**evidence, "problems": warns, "expected": expected}
        f.warned(CHECK, f"under {version}, {warns[0]}", evidence, rule="text-block", **at)
    elif not schemas:
        f.skipped(CHECK, "no tool declares an outputSchema (structured output is optional)", **at)
    elif not results:
        f.skipped(
            CHECK,
            f"{len(schemas)} tool(s) declare an outputSchema but none was called successfully (error "
            "results are not judged; tools are called only if marked readOnlyHint, or with --call-tools)",
            **at,
        )
    else:
        f.passed(
            CHECK,
            f"under {version}, {results} result(s) of {len(judged)} tool(s) with an outputSchema carry "
            "conforming structuredContent and the same JSON as text",
            **at,
        )
