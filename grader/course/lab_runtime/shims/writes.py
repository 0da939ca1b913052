"""reference.writes, in stage 11's runtime: the learner's shop_writes.py stands in for the answer key.

The course's server lists the learner's write tools (``write_tools()``, their annotations the
learner's), refuses to write what ``writable_copy`` refuses, and hands every call of a write tool
to the learner's ``call_write``, which runs it and audits it (with their shop_audit.py). A call
made while writes are off goes to ``call_write`` too (``allowed`` false): it must be audited, and
the server then answers it as the unknown tool it is. In MCP 2026-07-28, a ``cancel_order`` the
user is asked about first (:mod:`reference.confirm`, the learner's ``ask_first``) and then refuses is
audited here with the learner's ``record``.
"""

import contextlib
from typing import Any

import shop_writes as _learner  # the learner's shop_writes.py, first on the import path

from .tools import TOOL_NAME, Tool


def why_not_writable(path: Any) -> Any:
    return _learner.writable_copy(None if path is None else str(path))


def _complete(tool: Any) -> dict[str, Any]:
    """A declaration the server can list: a missing member gets a neutral stand-in (one slip costs
    the checks of that member, not the server)."""
    tool = dict(tool) if isinstance(tool, dict) else {}
    name = tool.get("name") if isinstance(tool.get("name"), str) else "unnamed"
    return {
        "name": name,
        "title": tool.get("title", name),
        "description": tool.get("description", ""),
        "inputSchema": tool.get("inputSchema") if isinstance(tool.get("inputSchema"), dict) else {"type": "object"},
        "outputSchema": tool.get("outputSchema"),
        "annotations": tool.get("annotations") if isinstance(tool.get("annotations"), dict) else {},
    }


def _version(bad_arguments_are_tool_errors: bool, structured_output: bool) -> str:
    """The session's revision, as far as a tools/call result depends on it."""
    if bad_arguments_are_tool_errors:
        return "2025-11-25"
    return "2025-06-18" if structured_output else "2025-03-26"


def _refused_by_design(args: Any) -> Any:
    raise RuntimeError("a write tool runs through call_write, which audits it")


class Writes:
    """The course's server's view of the learner's write tools, over one database copy."""

    def __init__(self, path: Any, allowed: bool, audit: Any = None, log: Any = None) -> None:
        self.path = str(path)
        self.allowed = allowed
        self.declared = [_complete(tool) for tool in _learner.write_tools()]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(tool["name"] for tool in self.declared)

    def tools(self) -> list[Tool]:
        return [Tool.declared(tool, _refused_by_design) for tool in self.declared if TOOL_NAME.match(tool["name"])]

    @staticmethod
    def _who(who: Any) -> dict[str, str]:
        return {"name": who.client_name, "version": who.client_version, "transport": who.transport}

    def refuse(self, params: dict[str, Any], who: Any) -> None:
        # The refusal itself is an RpcError: the server then answers the unknown tool it is here.
        with contextlib.suppress(Exception):
            _learner.call_write(self.path, params, self._who(who), False, "2025-11-25")

    def reject(self, params: dict[str, Any], who: Any, reason: str) -> None:
        """Audit, with the learner's record, a 2026-07-28 cancel_order the question refused (a decline, a
        bad requestState, a client that cannot be asked): nothing was written, and call_write never saw it."""
        import shop_audit  # the learner's, first on the import path

        arguments = params.get("arguments")
        with contextlib.suppress(Exception):
            shop_audit.record(self.path, params.get("name"), {} if arguments is None else arguments,
                              self._who(who), "rejected", reason, 0)  # fmt: skip

    def call(
        self,
        params: dict[str, Any],
        who: Any,
        bad_arguments_are_tool_errors: bool = True,
        structured_output: bool = True,
    ) -> Any:
        version = _version(bad_arguments_are_tool_errors, structured_output)
        return _learner.call_write(self.path, params, self._who(who), True, version)

    def close(self) -> None:
        pass
