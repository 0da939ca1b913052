"""The checks of stage 04 (tools/list).

A tool description is checked the way a host and a model meet it: the input schema must be a
valid JSON Schema (2020-12) of an object that accepts the arguments the shop takes and refuses
the ones it does not (sets the learner has not seen, in the hidden cells); the output schema must
accept what the shop's tools really return and refuse what they never would.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from typing import Any

from reference.catalog import STATUSES
from reference.database import open_readonly
from reference.lifecycle import LATEST
from reference.shop import shop_tools

from ..calls import call, outcome
from ..drive import Server, expect_checks, initialize, notification, request
from ..expect import Failure, show
from ..remote import is_a
from ..work import Work
from . import public

NAMES_OK = ["count_orders", "list-orders", "a", "A9_z-", "x" * 64, "getOrder2"]
NAMES_BAD = ["", "x" * 65, "files.read", "count orders", "count,orders", "naïve", "tool/1", "emoji🙂", "tab\t"]


@public("04", "test_names", "valid_tool_name on six good names and nine bad ones")
def names_cell(work: Work) -> None:
    check_names(
        work.module("tool_list").valid_tool_name, [(n, True) for n in NAMES_OK] + [(n, False) for n in NAMES_BAD]
    )


def _tool_cell(name: str) -> None:
    @public("04", f"test_{name}", f"{name}_tool(): name, description, both schemas (on fixed arguments), annotations")
    def run(work: Work) -> None:
        check_tool(getattr(work.module("tool_list"), f"{name}_tool"), name, ARGUMENTS[name], random.Random(4))


for _name in ("count_orders", "list_orders", "get_order", "search_products"):
    _tool_cell(_name)


@public("04", "test_list_tools", 'list_tools({}) is {"tools": all_tools()}, with no nextCursor; cursors refused')
def list_tools_cell(work: Work) -> None:
    tool_list = work.module("tool_list")
    check_list_tools(tool_list.list_tools, tool_list.all_tools)


@public(
    "04", "test_caching", "list_tools with a 2026-07-28 _meta: ttlMs and cacheScope, the same list in the same order"
)
def caching_cell(work: Work) -> None:
    tool_list = work.module("tool_list")
    check_caching(tool_list.list_tools, tool_list.all_tools)


@public("04", "test_served", "your list in the course's server: tools/list, then mcp-lab check's tools checks")
def served_cell(work: Work) -> None:
    check_served(work.host("tool_list"))


def random_names(rng: random.Random, n: int) -> list[tuple[str, bool]]:
    good = string.ascii_letters + string.digits + "_-"
    cases = []
    for _ in range(n):
        length = rng.choice([1, 2, 10, 63, 64, 65, 80])
        name = "".join(rng.choice(good) for _ in range(length))
        if rng.random() < 0.4:
            position = rng.randrange(len(name))
            name = name[:position] + rng.choice(".:/ é@") + name[position + 1 :]
        cases.append((name, len(name) <= 64 and all(c in good for c in name)))
    return cases


# The spec's naming rule is a SHOULD (mcp-lab check only warns); stage 04 teaches a stricter form, and
# a learner who loses points on it must read why (the lesson's section 2 says the same).
COURSE_ASKS_NAMES = (
    "a SHOULD in the spec, on which mcp-lab check only warns; this course asks the strict form (stage 04, "
    "section 2): letters, digits, _ and -, 1 to 64 characters, unique, because hosts that pass your tools to "
    "a model API accept only ^[a-zA-Z0-9_-]{1,64}$"
)


def check_names(valid_tool_name: Callable[[str], Any], cases: list[tuple[str, bool]]) -> None:
    for name, want in cases:
        got = call(valid_tool_name, "tool-names", name)
        if bool(got) is not want:
            raise Failure(
                "tool-names",
                f"valid_tool_name({name!r}) returned {got!r}; that name is {'valid' if want else 'not valid'}",
                course=COURSE_ASKS_NAMES,
            )


# Arguments each tool must accept, and must refuse, by its inputSchema.
ARGUMENTS: dict[str, tuple[list[dict[str, Any]], list[Any]]] = {
    "count_orders": ([{}, {"status": "paid"}, {"status": "lost"}], [{"status": 7}, {"state": "paid"}, [], "paid"]),
    "list_orders": (
        [{}, {"status": "shipped"}, {"customer_id": 3}, {"limit": 1}, {"limit": 100, "offset": 0}, {"limit": 5.0}],
        [{"limit": 0}, {"limit": 101}, {"offset": -1}, {"customer_id": 0}, {"limit": "5"}, {"limt": 5}],
    ),
    "get_order": ([{"order_id": 1}, {"order_id": 3000}], [{}, {"order_id": 0}, {"order_id": "7"}, {"id": 7}]),
    "search_products": (
        [{"query": "mug"}, {"query": "m"}, {"query": "mug", "limit": 50}, {"query": "x" * 100}],
        [{}, {"query": ""}, {"query": "x" * 101}, {"query": "mug", "limit": 51}, {"query": 7}],
    ),
}


def hidden_arguments(rng: random.Random, tool: str) -> tuple[list[dict[str, Any]], list[Any]]:
    """Random argument sets with a known verdict."""
    good: list[dict[str, Any]] = []
    bad: list[Any] = [{"unexpected": True}, None, 3]
    if tool == "count_orders":
        good = [{"status": rng.choice(STATUSES)}, {"status": "".join(rng.sample("abcdef", 3))}]
        bad += [{"status": None}, {"status": [rng.choice(STATUSES)]}]
    elif tool == "list_orders":
        good = [{"limit": rng.randint(1, 100), "offset": rng.randint(0, 10**6), "customer_id": rng.randint(1, 48)}]
        good.append({"status": rng.choice(STATUSES), "limit": rng.randint(1, 100)})
        bad += [{"limit": rng.randint(101, 10**4)}, {"offset": -rng.randint(1, 99)}, {"customer_id": rng.random() + 1}]
        bad += [{"limit": True}]
    elif tool == "get_order":
        good = [{"order_id": rng.randint(1, 3000)}, {"order_id": rng.randint(3001, 10**6)}]
        bad += [{"order_id": -rng.randint(0, 99)}, {"order_id": rng.random() + 1}, {"order_id": None}]
        bad += [{"order_id": 1, "status": "paid"}]
    elif tool == "search_products":
        good = [{"query": "".join(rng.choices("abcdé桜", k=rng.randint(1, 100))), "limit": rng.randint(1, 50)}]
        bad += [{"query": "mug", "limit": rng.randint(51, 999)}, {"query": "mug", "limit": 0}, {"limit": 5}]
    return good, bad


def real_results(rng: random.Random, tool: str) -> list[dict[str, Any]]:
    """What the shop's tool really returns (the reference, in this process), for arguments chosen at random."""
    from reference.database import ensure_default

    tools = {t.name: t for t in shop_tools(open_readonly(ensure_default()))}
    if tool == "count_orders":
        args = [{}, {"status": rng.choice(STATUSES)}]
    elif tool == "list_orders":
        args = [{"limit": rng.randint(1, 5), "offset": rng.randint(0, 2990)}, {"status": "refunded", "limit": 3}]
        args.append({"customer_id": 999})  # no orders at all: an empty list
    elif tool == "get_order":
        args = [{"order_id": rng.randint(1, 3000)} for _ in range(3)]
    else:
        args = [{"query": rng.choice(["mug", "garden", "桜", "zzz-nothing"]), "limit": rng.randint(1, 5)}]
    return [tools[tool].run(a) for a in args]


def broken_results(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Results no honest schema of the tool accepts: its required members missing, or mistyped."""
    broken: list[dict[str, Any]] = [{}, {"unexpected": "shape"}]
    first = results[0]
    for key, value in first.items():
        if isinstance(value, int) and not isinstance(value, bool):
            broken.append({**first, key: str(value)})
    return broken


# What the shop's declarations must say beyond the spec: the spec (2026-07-28, Tools > Tool) makes title,
# description and annotations optional, and asks of a schema only that it be valid. A learner who loses points
# on these must read that they are the course's demands (stage 04's lesson says the same).
COURSE_ASKS_TOOLS = (
    "the course's shop contract, not a MUST of the spec (title, description and annotations are optional there): "
    "stage 04 asks each tool for a description a model can act on, a description per argument, a schema that "
    "takes the shop's arguments and refuses others, and the read-only annotations"
)
# An outputSchema whose root is not an object: the legacy schema's rule (the course serves both eras one list).
OUTPUT_OBJECT = (
    'MCP 2025-11-25 schema.ts Tool.outputSchema (schema): type: "object" at the root (2025-06-18 too; 2026-07-28 '
    "allows any JSON Schema, but the course's server gives one declaration to both eras)"
)


def _validator(schema: Any, where: str, check: str) -> Any:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    if not isinstance(schema, dict):
        raise Failure(check, f"{where} must be a JSON Schema object, got {show(schema)}")
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        raise Failure(check, f"{where} is not a valid JSON Schema: {exc.message}", received=show(schema)) from None
    if schema.get("type") != "object":
        details = {"rule": OUTPUT_OBJECT} if check == "structured-output" else {}
        raise Failure(check, f'{where} must have "type": "object"', received=show(schema), **details)
    return Draft202012Validator(schema)


def _first_refused(validator: Any, instances: Any) -> tuple[Any, str] | None:
    """The first of ``instances`` that ``validator`` refuses, with its first error; None if none is."""
    for instance in instances:
        errors = list(validator.iter_errors(instance))
        if errors:
            return instance, errors[0].message
    return None


def check_tool(
    describe: Callable[[], Any], name: str, arguments: tuple[list[dict[str, Any]], list[Any]], rng: random.Random
) -> None:
    tool = call(describe, "tools-list")
    if not isinstance(tool, dict):
        raise Failure("tools-list", f"{describe.__name__}() returned {type(tool).__name__}, not a dict")
    if tool.get("name") != name:
        raise Failure(
            "tool-names", f'the tool\'s "name" must be {name!r}, got {tool.get("name")!r}', course=COURSE_ASKS_NAMES
        )
    for key in ("title", "description"):
        if not isinstance(tool.get(key), str) or not tool[key].strip():
            raise Failure("shop-contract", f'{name}: "{key}" must be a non-empty string', course=COURSE_ASKS_TOOLS)
    if len(tool["description"]) < 60:
        raise Failure(
            "shop-contract",
            f"{name}: a description of {len(tool['description'])} characters does not tell a model enough",
            hint="say what the tool does, when to use it, what it returns, and what an error means",
            course=COURSE_ASKS_TOOLS,
        )
    inputs = _validator(tool.get("inputSchema"), f"{name}'s inputSchema", "tools-list")
    schema = tool["inputSchema"]
    if schema.get("additionalProperties") is not False:
        raise Failure(
            "shop-contract", f'{name}\'s inputSchema needs "additionalProperties": false', course=COURSE_ASKS_TOOLS
        )
    for prop, spec in schema.get("properties", {}).items():
        if not isinstance(spec, dict) or not isinstance(spec.get("description"), str):
            raise Failure(
                "shop-contract",
                f"{name}: the argument {prop!r} needs a description for the model",
                course=COURSE_ASKS_TOOLS,
            )
    good, bad = arguments
    if refused := _first_refused(inputs, good):
        arguments, why = refused
        raise Failure(
            "shop-contract",
            f"{name}'s inputSchema refuses arguments the tool takes: {why}",
            sent=show(arguments),
            course=COURSE_ASKS_TOOLS,
        )
    for arguments in bad:
        if inputs.is_valid(arguments):
            raise Failure(
                "shop-contract",
                f"{name}'s inputSchema accepts arguments the tool cannot take",
                sent=show(arguments),
                course=COURSE_ASKS_TOOLS,
            )
    outputs = _validator(tool.get("outputSchema"), f"{name}'s outputSchema", "structured-output")
    results = real_results(rng, name)
    if refused := _first_refused(outputs, results):
        result, why = refused
        raise Failure(
            "structured-output",
            f"{name}'s outputSchema refuses a result the tool really returns: {why}",
            received=show(result),
        )
    for result in broken_results(results):
        if outputs.is_valid(result):
            raise Failure(
                "shop-contract",
                f"{name}'s outputSchema accepts a result the tool never returns: say which members are required",
                received=show(result),
                course=COURSE_ASKS_TOOLS,
            )
    annotations = tool.get("annotations")
    want = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}
    if not isinstance(annotations, dict) or any(annotations.get(k) is not v for k, v in want.items()):
        raise Failure(
            "shop-contract",
            f"{name}: the shop's tools only read the shop: say so in its annotations (hints a client may not trust)",
            expected=show(want),
            received=show(annotations),
            course=COURSE_ASKS_TOOLS,
        )


# The rule a legacy tools/list result is judged by: its schema. Members the schema does not name (2026-07-28's
# caching hints, say) are allowed there (Result has [key: string]: unknown), so they cost nothing.
LIST_RESULT = (
    "MCP 2025-11-25 schema.ts ListToolsResult (schema): a tools/list result holds tools: Tool[], and nextCursor "
    "only where another page follows; Result allows members it does not name ([key: string]: unknown)"
)
LIST_FIX = 'return {"tools": all_tools()} (with "ttlMs" and "cacheScope" for a 2026-07-28 request); no nextCursor'


def _members(result: dict[str, Any]) -> str:
    """A list result as a learner needs to see it: every member, the tools by name (a whole list is too long)."""
    shown = {k: [t.get("name") if isinstance(t, dict) else t for t in v] if k == "tools" and isinstance(v, list) else v
             for k, v in result.items()}  # fmt: skip
    return show(shown)


def check_list_tools(list_tools: Callable[[dict[str, Any]], Any], all_tools: Callable[[], Any]) -> None:
    """tools/list of a legacy request (no _meta): all_tools() in "tools", and no nextCursor. Other members
    (2026-07-28's caching hints) break no rule of the legacy schema: they are shown, never graded."""
    got = call(list_tools, "tools-list", {})
    want = call(all_tools, "tools-list")
    if not isinstance(got, dict):
        raise Failure(
            "tools-list", f"list_tools({{}}) returned {type(got).__name__}, not an object", received=show(got)
        )
    if got.get("tools") != want:
        first = _first_difference(got.get("tools"), want)
        raise Failure(
            "tools-list",
            'list_tools({}) (a legacy request: no _meta) must return all_tools() in "tools"' + first,
            expected=_members({"tools": want}),
            received=_members(got),
            rule=LIST_RESULT,
            fix=LIST_FIX,
        )
    if "nextCursor" in got:
        raise Failure(
            "tools-list",
            "a single page has no nextCursor: a client would ask for a next page forever",
            received=_members(got),
            rule=LIST_RESULT,
            fix=LIST_FIX,
        )
    for cursor in (7, "page-2"):
        _, error = outcome(list_tools, "list-cursor", {"cursor": cursor})
        if not is_a(error, "RpcError") or getattr(error, "code", None) != -32602:
            raise Failure(
                "list-cursor",
                f"the cursor {show(cursor)} was not refused with -32602: this server never hands out a cursor",
                received="no error" if error is None else type(error).__name__,
            )


def _first_difference(got: Any, want: list[Any]) -> str:
    """Where a tool list first differs from all_tools(), in words (empty when it is not a list at all)."""
    if not isinstance(got, list):
        return ""
    for i, (mine, theirs) in enumerate(zip(got, want, strict=False)):
        if mine != theirs:
            name = theirs.get("name") if isinstance(theirs, dict) else theirs
            return f": tool {i + 1} ({name}) differs"
    return f": {len(got)} tools, all_tools() has {len(want)}"


MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def check_caching(list_tools: Callable[[dict[str, Any]], Any], all_tools: Callable[[], Any]) -> None:
    """2026-07-28 (Server > Utilities > Caching): ttlMs and cacheScope on a tools/list result, same order."""
    params = {"_meta": dict(MODERN_META)}
    got = call(list_tools, "modern-cacheable", params)
    if not isinstance(got, dict):
        raise Failure("modern-cacheable", f"list_tools returned {type(got).__name__}, not an object", sent=show(params))
    ttl = got.get("ttlMs")
    if not isinstance(ttl, int) or isinstance(ttl, bool) or ttl < 0:
        raise Failure(
            "modern-cacheable",
            'a 2026-07-28 tools/list result needs "ttlMs", an integer of 0 or more',
            received=show(got),
        )
    if got.get("cacheScope") not in ("public", "private"):
        raise Failure("modern-cacheable", '"cacheScope" must be "public" or "private"', received=show(got))
    want = call(all_tools, "tools-list")
    again = call(list_tools, "modern-cacheable", {"_meta": dict(MODERN_META)})
    if got.get("tools") != want or not isinstance(again, dict) or again.get("tools") != want:
        raise Failure(
            "modern-cacheable",
            "a 2026-07-28 tools/list lists all_tools(), in the same order each time (a cached copy must compare equal)",
            received=show(got.get("tools")),
        )


def check_served(argv: list[str]) -> None:
    """The learner's list in the course's server: a client's view, then the checker's."""
    with Server(argv) as server:
        init = initialize(LATEST)
        reply = server.expect(init, {"jsonrpc": "2.0", "id": init["id"]}, "capabilities-match")
        capabilities = reply.get("result", {}).get("capabilities", {})
        if "tools" not in capabilities:
            raise Failure("capabilities-match", "initialize does not declare the tools capability")
        server.send(notification("notifications/initialized"))
        listed = request("tools/list")
        reply = server.expect(listed, {"jsonrpc": "2.0", "id": listed["id"]}, "tools-list")
        names = [t.get("name") for t in reply.get("result", {}).get("tools", []) if isinstance(t, dict)]
    # A name that breaks the naming rule is tool-names' failure, and the checker's evidence says so:
    # that comes first, before "not the shop's four".
    expect_checks(argv, ["tools-list", "tool-names", "capabilities-match"])
    if sorted(names) != sorted(["count_orders", "list_orders", "get_order", "search_products"]):
        raise Failure("shop-contract", "tools/list does not list the four shop tools", received=show(names))
