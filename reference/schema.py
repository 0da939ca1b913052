"""The small part of JSON Schema that the shop's tool arguments need, checked by hand.

A tool's ``inputSchema`` is a promise to the model: these properties, these types, these ranges.
``problems`` lists every way the arguments break it, in words a model can act on.

    >>> schema = {"type": "object", "properties": {"limit": {"type": "integer", "minimum": 1}},
    ...           "required": ["limit"], "additionalProperties": False}
    >>> problems(schema, {"limit": 0, "colour": "red"})
    ['limit must be at least 1', 'unexpected argument colour']
    >>> problems(schema, {})
    ['missing required argument limit']
"""

from __future__ import annotations

from typing import Any

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
}


def _is_type(value: Any, name: str) -> bool:
    if isinstance(value, bool):
        return name == "boolean"  # in Python a bool is an int; in JSON it is not a number
    if name == "integer" and isinstance(value, float):
        return value.is_integer()  # JSON Schema: 3.0 is an integer
    return isinstance(value, _TYPES[name])


def problems(schema: dict[str, Any], value: Any, where: str = "") -> list[str]:
    """Every way ``value`` breaks ``schema`` (an empty list when it fits)."""
    label = where or "arguments"
    expected = schema.get("type")
    if expected is not None and not _is_type(value, expected):
        return [f"{label} must be {'an' if expected[0] in 'aeiou' else 'a'} {expected}"]
    found: list[str] = []
    if "enum" in schema and value not in schema["enum"]:
        found.append(f"{label} must be one of {', '.join(map(str, schema['enum']))}")
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            found.append(f"{label} must be at least {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            found.append(f"{label} must be at most {schema['maximum']}")
    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            found.append(f"{label} must have at least {schema['minLength']} characters")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            found.append(f"{label} must have at most {schema['maxLength']} characters")
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        for name in schema.get("required", []):
            if name not in value:
                found.append(f"missing required argument {name}")
        for name, item in value.items():
            if name in properties:
                found.extend(problems(properties[name], item, name))
            elif schema.get("additionalProperties") is False:
                found.append(f"unexpected argument {name}")
    return found
