"""Calling a server's tools safely, and judging what comes back.

The checker calls a tool only when that is safe: it is annotated ``readOnlyHint: true``, it is
one of the known read-only shop tools, or the user passed ``--call-tools``. Arguments are built
from the tool's inputSchema.

    >>> example_arguments({"type": "object", "properties": {"n": {"type": "integer", "minimum": 3}},
    ...                    "required": ["n"]})
    {'n': 3}
    >>> violating_arguments({"type": "object", "properties": {"n": {"type": "integer"}}})
    {'n': 'not-a-number'}
"""

from __future__ import annotations

from typing import Any

SHOP_TOOLS = frozenset({"count_orders", "list_orders", "get_order", "search_products"})
CONTENT_TYPES = frozenset({"text", "image", "audio", "resource_link", "resource"})
# Free text for string parameters: non-ASCII on purpose, so that every tool call also tests UTF-8.
EXAMPLE_TEXT = "mcp-lab ü ☕ 桜"
SCHEMA_TYPES = frozenset({"object", "array", "string", "integer", "number", "boolean", "null"})


def is_shop(tools: Any) -> bool:
    return tool_names(tools) >= SHOP_TOOLS


def tool_names(tools: Any) -> set[str]:
    """The string names among ``tools`` (anything else there is tools-list's to report)."""
    if not isinstance(tools, list):
        return set()
    return {t["name"] for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)}


def safe_to_call(tool: dict[str, Any], shop: bool, call_tools: bool) -> bool:
    annotations = tool.get("annotations") if isinstance(tool.get("annotations"), dict) else {}
    return call_tools or annotations.get("readOnlyHint") is True or (shop and tool.get("name") in SHOP_TOOLS)


def _example(schema: Any) -> Any:
    if not isinstance(schema, dict):
        return EXAMPLE_TEXT
    if "default" in schema:
        return schema["default"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind in ("integer", "number"):
        low, high = schema.get("minimum"), schema.get("maximum")
        value = max(low, 1) if _is_number(low) else 1
        return min(value, high) if _is_number(high) else value
    if kind == "boolean":
        return False
    if kind == "array":
        return []
    if kind == "object":
        return example_arguments(schema)
    return EXAMPLE_TEXT


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def example_arguments(schema: Any) -> dict[str, Any]:
    """Values for the required properties of an object schema."""
    if not isinstance(schema, dict):
        return {}
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    required = schema.get("required") if isinstance(schema.get("required"), list) else []
    return {name: _example(properties.get(name)) for name in required if isinstance(name, str)}


WRONG_TYPE = {"integer": "not-a-number", "number": "not-a-number", "string": 12345, "boolean": "yes"}


def violating_arguments(schema: Any) -> dict[str, Any] | None:
    """Arguments that break ``schema`` for sure (a wrong type), or None if none can be made."""
    if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
        return None
    for name, prop in schema["properties"].items():
        if isinstance(prop, dict) and isinstance(prop.get("type"), str) and prop["type"] in WRONG_TYPE:
            arguments = example_arguments(schema)
            arguments[name] = WRONG_TYPE[prop["type"]]
            return arguments
    return None


def schema_problem(schema: Any) -> str | None:
    """Why ``schema`` is not a usable tool inputSchema, or None. A structural check of JSON Schema."""
    if not isinstance(schema, dict):
        return "inputSchema is not an object"
    if schema.get("type") != "object":
        return f'inputSchema "type" must be "object", found {schema.get("type")!r}'
    properties = schema.get("properties", {})
    if not isinstance(properties, dict):
        return '"properties" must be an object'
    for name, prop in properties.items():
        if not isinstance(prop, dict | bool):
            return f"property {name!r} must be a schema object"
        kind = prop.get("type") if isinstance(prop, dict) else None
        kinds = kind if isinstance(kind, list) else [kind] if kind is not None else []
        if any(not isinstance(k, str) or k not in SCHEMA_TYPES for k in kinds):
            return f"property {name!r} has an unknown type {kind!r}"
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        return '"required" must be a list of property names'
    if "additionalProperties" in schema and not isinstance(schema["additionalProperties"], bool | dict):
        return '"additionalProperties" must be a boolean or a schema'
    return None


def result_problem(result: Any) -> str | None:
    """Why a tools/call result is not a CallToolResult, or None."""
    if not isinstance(result, dict):
        return f"the result is a {type(result).__name__}, not an object"
    content = result.get("content")
    if not isinstance(content, list):
        return f'"content" must be a list of content items, found {type(content).__name__}'
    for i, item in enumerate(content):
        if not isinstance(item, dict) or item.get("type") not in CONTENT_TYPES:
            return f"content[{i}] is not a typed content item (type one of {', '.join(sorted(CONTENT_TYPES))})"
        if item["type"] == "text" and not isinstance(item.get("text"), str):
            return f'content[{i}] is a text item without a "text" string'
    if "isError" in result and not isinstance(result["isError"], bool):
        return '"isError" must be true or false'
    return None


def result_text(result: Any) -> str:
    """All text items of a result, joined (empty for a malformed result)."""
    if not isinstance(result, dict) or not isinstance(result.get("content"), list):
        return ""
    return "\n".join(
        item["text"] for item in result["content"] if isinstance(item, dict) and isinstance(item.get("text"), str)
    )
