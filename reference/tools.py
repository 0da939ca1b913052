"""tools/list and tools/call, and the two kinds of error.

- A *protocol error* (a JSON-RPC ``error``) means the request itself was wrong: an unknown tool
  is -32602. The model never sees it; the host does.
- A *tool execution error* is a normal ``result`` with ``isError: true``: the tool ran and
  failed. The model reads the text and can try again, so the text says how.

Bad arguments (an object that breaks the tool's ``inputSchema``) are -32602 up to 2025-06-18, and
a tool execution error from 2025-11-25 on: the negotiated revision decides.

From 2025-06-18 a tool may declare an ``outputSchema``; its successful results then carry the
tool's JSON object as ``structuredContent`` (which MUST conform to the schema) and the same JSON as
text, for clients that only read ``content``. Sessions on 2025-03-26 or 2024-11-05 see neither:
the fields do not exist in those revisions. An error result carries text only. A request that breaks
the ``CallToolRequest`` schema itself (no ``name`` string, ``arguments`` that are not an object)
is malformed in every revision: -32602, the model never had a well-formed call to retry.

    >>> echo = Tool("echo", "Echo", "Repeat the text.",
    ...             {"type": "object", "properties": {"text": {"type": "string"}},
    ...              "required": ["text"], "additionalProperties": False},
    ...             lambda args: args["text"])
    >>> box = Toolbox([echo])
    >>> box.call({"name": "echo", "arguments": {"text": "hi"}}, tool_errors_for_bad_arguments=True)
    {'content': [{'type': 'text', 'text': 'hi'}], 'isError': False}
    >>> box.call({"name": "echo", "arguments": {}}, tool_errors_for_bad_arguments=True)["isError"]
    True
    >>> box.call({"name": "echo", "arguments": ["hi"]}, tool_errors_for_bad_arguments=True)
    Traceback (most recent call last):
    ...
    reference.errors.RpcError: Invalid params: "arguments" for echo must be an object, got array
"""

from __future__ import annotations

import json
import re
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .catalog import READ_ONLY, list_result
from .errors import INVALID_PARAMS, RpcError, json_type
from .schema import problems

# Stricter than the 2025-11-25 SHOULD (1-128 of [A-Za-z0-9_.-]): what hosts and model APIs accept.
TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_TEXT_ENCODER = json.JSONEncoder(ensure_ascii=False)  # one for the process, not one per call


class ToolError(Exception):
    """Raised by a tool when it ran and failed: becomes ``isError: true`` with this text."""


@dataclass
class Tool:
    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    run: Callable[[dict[str, Any]], Any]
    annotations: dict[str, Any] = field(default_factory=lambda: dict(READ_ONLY))
    # 2025-06-18 on: the JSON Schema of the object the tool returns (its structuredContent).
    output_schema: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if not TOOL_NAME.match(self.name):
            raise ValueError(f"tool name {self.name!r} does not match {TOOL_NAME.pattern}")

    @classmethod
    def declared(cls, declaration: dict[str, Any], run: Callable[[dict[str, Any]], Any]) -> Tool:
        """A tool from its declaration as tools/list shows it (:mod:`reference.catalog`), and its answer."""
        return cls(
            declaration["name"],
            declaration["title"],
            declaration["description"],
            declaration["inputSchema"],
            run,
            dict(declaration["annotations"]),
            declaration.get("outputSchema"),
        )

    def describe(self, structured_output: bool = True) -> dict[str, Any]:
        """The tool as tools/list shows it; ``outputSchema`` only where structured output exists."""
        described = {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": self.input_schema,
        }
        if structured_output and self.output_schema is not None:
            described["outputSchema"] = self.output_schema
        described["annotations"] = self.annotations
        return described


def text_result(value: Any, is_error: bool = False) -> dict[str, Any]:
    """A tools/call result: strings as they are, anything else as compact JSON text."""
    text = value if isinstance(value, str) else _TEXT_ENCODER.encode(value)
    return {"content": [{"type": "text", "text": text}], "isError": is_error}


def structured_result(value: dict[str, Any]) -> dict[str, Any]:
    """A successful result of a tool with an outputSchema: the object, and the same JSON as text.

    >>> structured_result({"count": 3})
    {'content': [{'type': 'text', 'text': '{"count": 3}'}], 'structuredContent': {'count': 3}, 'isError': False}
    """
    if not isinstance(value, dict):
        raise TypeError(f"structuredContent must be a JSON object, got {json_type(value)}")
    return {"content": text_result(value)["content"], "structuredContent": value, "isError": False}


class Toolbox:
    def __init__(self, tools: list[Tool]) -> None:
        self.tools = {tool.name: tool for tool in tools}
        if len(self.tools) != len(tools):
            raise ValueError("tool names must be unique")
        self._listing = [tool.describe() for tool in tools]
        self._plain_listing = [tool.describe(structured_output=False) for tool in tools]

    def list(self, params: dict[str, Any], structured_output: bool = True) -> dict[str, Any]:
        """The tools/list result. ``structured_output``: the session negotiated 2025-06-18 or later."""
        return list_result(self._listing if structured_output else self._plain_listing, params)

    def call(
        self, params: dict[str, Any], tool_errors_for_bad_arguments: bool, structured_output: bool = True
    ) -> dict[str, Any]:
        """The tools/call result. The flags say what the negotiated revision asks for:
        bad arguments as isError (2025-11-25 on), structuredContent (2025-06-18 on)."""
        name = params.get("name")
        if not isinstance(name, str):
            raise RpcError(INVALID_PARAMS, 'tools/call needs a "name" string')
        tool = self.tools.get(name)
        if tool is None:
            raise RpcError(INVALID_PARAMS, f"unknown tool {name!r}; tools/list shows {', '.join(self.tools)}")
        arguments = params.get("arguments")
        if arguments is None:  # absent, or null: lenient, the same as no arguments
            arguments = {}
        if not isinstance(arguments, dict):
            # The request breaks CallToolRequest itself: malformed, -32602 in every revision.
            raise RpcError(INVALID_PARAMS, f'"arguments" for {name} must be an object, got {json_type(arguments)}')
        found = problems(tool.input_schema, arguments)
        if found:
            message = f"invalid arguments for {name}: {'; '.join(found)}"
            if tool_errors_for_bad_arguments:
                return text_result(message + ". Check the tool's inputSchema and call again.", is_error=True)
            raise RpcError(INVALID_PARAMS, message)
        try:
            value = tool.run(arguments)
            if structured_output and tool.output_schema is not None:
                return structured_result(value)
            return text_result(value)
        except ToolError as exc:
            return text_result(str(exc), is_error=True)
        except Exception as exc:
            # Still the tool's failure, not the protocol's: tell the model, log the details.
            traceback.print_exc(file=sys.stderr)
            return text_result(f"{name} failed: {type(exc).__name__}", is_error=True)
