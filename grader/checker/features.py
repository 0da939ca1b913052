"""Resources and prompts: judged on servers that declare them, over stdio and over HTTP alike.

A server that declares ``resources`` gets ``resources-list`` (every page of resources/list, and
resources/templates/list where it is served) and ``resources-read`` (up to three listed resources
read, then a URI that names nothing, which should get -32002); one that declares ``prompts`` gets
``prompts-list`` and ``prompts-get`` (up to three prompts got, made-up values for their required
arguments, then an unknown prompt and a missing argument, which should get -32602). A server that
declares neither gets a skip for each: both features are optional.

Shapes follow the revision's schema (a failure); error codes are SHOULDs (a warning); only
silence fails there, as a request MUST get a response.

    >>> resource_problem({"uri": "shop://schema", "name": "schema"}), resource_problem({"uri": "x"})
    (None, 'no "name" string')
    >>> contents_problem({"contents": [{"uri": "a://b", "blob": "not base64!"}]})
    ('blob', 'contents[0].blob is not base64')
    >>> message_problem({"role": "user", "content": {"type": "text", "text": "hi"}}) is None
    True
"""

from __future__ import annotations

import base64
import binascii
import itertools
from typing import Any

from .context import no_reply_evidence, why_no_reply
from .probe import Probe, Reply, show_json
from .tool_calls import CONTENT_TYPES
from .verdicts import Findings

MAX_PAGES = 20
MAX_READS = 3  # listed resources read, prompts got
UNKNOWN_URI = "mcp-lab-check://no-such-resource/1"
UNKNOWN_PROMPT = "mcp_lab_no_such_prompt"
MADE_UP = "1"  # the value given to a prompt's required arguments (prompt arguments are strings)
NOT_FOUND = -32002
INVALID_PARAMS = -32602
_ids = itertools.count(1)


def _request(probe: Probe, method: str, params: dict[str, Any] | None = None) -> Reply:
    return probe.request(method, params, id=f"{method.replace('/', '-')}-{next(_ids)}")


def _is_str(value: Any) -> bool:
    return isinstance(value, str)


def resource_problem(item: Any) -> str | None:
    if not isinstance(item, dict):
        return "not an object"
    if not _is_str(item.get("uri")) or not item["uri"]:
        return 'no "uri" string'
    if not _is_str(item.get("name")):
        return 'no "name" string'
    if "mimeType" in item and not _is_str(item["mimeType"]):
        return '"mimeType" is not a string'
    return None


def template_problem(item: Any) -> str | None:
    if not isinstance(item, dict):
        return "not an object"
    if not _is_str(item.get("uriTemplate")) or not item["uriTemplate"]:
        return 'no "uriTemplate" string'
    if not _is_str(item.get("name")):
        return 'no "name" string'
    return None


def contents_problem(result: Any) -> tuple[str, str] | None:
    """(rule, what is wrong) with a ReadResourceResult, or None."""
    contents = result.get("contents") if isinstance(result, dict) else None
    if not isinstance(contents, list):
        return "main", 'the result has no "contents" list'
    for n, item in enumerate(contents):
        if not isinstance(item, dict) or not _is_str(item.get("uri")):
            return "main", f'contents[{n}] has no "uri" string'
        text, blob = item.get("text"), item.get("blob")
        if _is_str(text) == _is_str(blob):
            return "main", f'contents[{n}] must have either a "text" or a "blob" string'
        if _is_str(blob):
            try:
                base64.b64decode(blob, validate=True)
            except (binascii.Error, ValueError):
                return "blob", f"contents[{n}].blob is not base64"
    return None


def prompt_problem(item: Any) -> str | None:
    if not isinstance(item, dict) or not _is_str(item.get("name")):
        return 'no "name" string'
    arguments = item.get("arguments", [])
    if not isinstance(arguments, list):
        return '"arguments" is not a list'
    for n, argument in enumerate(arguments):
        if not isinstance(argument, dict) or not _is_str(argument.get("name")):
            return f'arguments[{n}] has no "name" string'
        if "required" in argument and not isinstance(argument["required"], bool):
            return f"arguments[{n}].required is not true or false"
    return None


def content_problem(content: Any) -> str | None:
    if not isinstance(content, dict) or content.get("type") not in CONTENT_TYPES:
        return f"content is not a content block (type one of {', '.join(sorted(CONTENT_TYPES))})"
    kind = content["type"]
    if kind == "text" and not _is_str(content.get("text")):
        return 'a text block without a "text" string'
    if kind in ("image", "audio") and not (_is_str(content.get("data")) and _is_str(content.get("mimeType"))):
        return f'an {kind} block needs "data" (base64) and "mimeType" strings'
    if kind == "resource" and (problem := contents_problem({"contents": [content.get("resource")]})):
        return f"an embedded resource: {problem[1].replace('contents[0]', 'resource')}"
    if kind == "resource_link" and (problem := resource_problem(content)):
        return f"a resource link: {problem}"
    return None


def message_problem(message: Any) -> str | None:
    if not isinstance(message, dict):
        return "not an object"
    if message.get("role") not in ("user", "assistant"):
        return f'role must be "user" or "assistant", found {show_json(message.get("role"), 40)}'
    return content_problem(message.get("content"))


def _code(reply: Reply) -> Any:
    return reply.code if reply.error is not None else None


def _no_reply(f: Findings, check: str, probe: Probe, reply: Reply, what: str, expected: str) -> None:
    f.failed(check, why_no_reply(probe, reply, what), no_reply_evidence(probe, reply, expected), rule="no-reply")


def _pages(probe: Probe, method: str, key: str) -> tuple[list[Any] | None, Reply]:
    """Every item of a paginated list (None when a page is not a result with the list)."""
    items: list[Any] = []
    cursor = None
    reply = _request(probe, method)
    for _page in range(MAX_PAGES):
        if reply.message is None or reply.error is not None:
            return None, reply
        page = reply.result.get(key) if isinstance(reply.result, dict) else None
        if not isinstance(page, list):
            return None, reply
        items += page
        cursor = reply.result.get("nextCursor")
        if not cursor:
            break
        reply = _request(probe, method, {"cursor": cursor})
    return items, reply


# -- resources --------------------------------------------------------------------------------
def judge_resources(probe: Probe, capabilities: Any, f: Findings) -> None:
    if not isinstance(capabilities, dict) or "resources" not in capabilities:
        for check in ("resources-list", "resources-read"):
            f.skipped(check, 'the server does not declare the "resources" capability (resources are optional)')
        return
    resources, reply = _pages(probe, "resources/list", "resources")
    if resources is None:
        _list_failed(f, "resources-list", probe, reply, "resources/list", '{"resources": [...]}')
        f.skipped("resources-read", "not judged: resources/list gave no list")
        return
    problems = [f"resources[{n}]: {p}" for n, item in enumerate(resources) if (p := resource_problem(item))]
    templates, reply = _pages(probe, "resources/templates/list", "resourceTemplates")
    served_templates = templates is not None
    if templates is None and reply.message is not None and reply.error is None:
        got = show_json(reply.result, 120)
        problems.append(f'resources/templates/list: the result has no "resourceTemplates" list ({got})')
    for n, item in enumerate(templates or []):
        if problem := template_problem(item):
            problems.append(f"resourceTemplates[{n}]: {problem}")
    if problems:
        f.failed("resources-list", problems[0], {"problems": problems, "expected": CHECK_SHAPES["resources-list"]})
    else:
        also = f" and {len(templates or [])} template(s)" if served_templates else " (no resources/templates/list)"
        f.passed("resources-list", f"{len(resources)} resource(s){also}, each with its uri and name")
    judge_read(probe, [r for r in resources if resource_problem(r) is None], f)


def judge_read(probe: Probe, resources: list[dict[str, Any]], f: Findings) -> None:
    shape: list[tuple[str, str]] = []  # (rule, problem)
    unreadable: list[str] = []
    read = 0
    for resource in resources[:MAX_READS]:
        reply = _request(probe, "resources/read", {"uri": resource["uri"]})
        if reply.message is None:
            return _no_reply(f, "resources-read", probe, reply, f"resources/read {resource['uri']}", "a result")
        if reply.error is not None:
            unreadable.append(f"{resource['uri']}: error {reply.code} {show_json(reply.error.get('message'), 100)}")
            continue
        read += 1
        if problem := contents_problem(reply.result):
            shape.append((problem[0], f"{resource['uri']}: {problem[1]} (received {show_json(reply.result, 150)})"))
    reply = _request(probe, "resources/read", {"uri": UNKNOWN_URI})
    evidence = {"sent": show_json(reply.sent), "received": show_json(reply.message), "expected": "error -32002"}
    if reply.message is None:
        return _no_reply(f, "resources-read", probe, reply, "resources/read of an unknown URI", "error -32002")
    if shape:
        rule, first = shape[0]
        f.failed("resources-read", first, {"problems": [p for _, p in shape]}, rule=rule)
    elif unreadable:
        f.warned(
            "resources-read",
            f"a listed resource could not be read: {unreadable[0]}",
            {"problems": unreadable},
            rule="listed",
        )
    if reply.error is None:
        f.warned("resources-read", f"a URI that names nothing ({UNKNOWN_URI}) got a result", evidence, rule="not-found")
    elif _code(reply) != NOT_FOUND:
        f.warned(
            "resources-read",
            f"a URI that names nothing got error {_code(reply)}, not -32002 (Resource not found)",
            evidence,
            rule="not-found",
        )
    elif not shape and not unreadable:
        listed = f"{read} listed resource(s) read" if read else "no resource listed to read"
        f.passed("resources-read", f"{listed}; an unknown URI gets -32002")


# -- prompts ----------------------------------------------------------------------------------
def judge_prompts(probe: Probe, capabilities: Any, f: Findings) -> None:
    if not isinstance(capabilities, dict) or "prompts" not in capabilities:
        for check in ("prompts-list", "prompts-get"):
            f.skipped(check, 'the server does not declare the "prompts" capability (prompts are optional)')
        return
    prompts, reply = _pages(probe, "prompts/list", "prompts")
    if prompts is None:
        _list_failed(f, "prompts-list", probe, reply, "prompts/list", '{"prompts": [...]}')
        f.skipped("prompts-get", "not judged: prompts/list gave no list")
        return
    problems = [f"prompts[{n}]: {p}" for n, item in enumerate(prompts) if (p := prompt_problem(item))]
    if problems:
        f.failed("prompts-list", problems[0], {"problems": problems, "expected": CHECK_SHAPES["prompts-list"]})
    else:
        f.passed("prompts-list", f"{len(prompts)} prompt(s), each with its name and arguments")
    judge_get(probe, [p for p in prompts if prompt_problem(p) is None], f)


def _required(prompt: dict[str, Any]) -> list[str]:
    return [a["name"] for a in prompt.get("arguments", []) if a.get("required") is True]


def judge_get(probe: Probe, prompts: list[dict[str, Any]], f: Findings) -> None:
    shape: list[str] = []
    refused: list[str] = []
    got = 0
    # Prompts without required arguments first: their answer does not depend on made-up values.
    for prompt in sorted(prompts, key=lambda p: len(_required(p)))[:MAX_READS]:
        arguments = {name: MADE_UP for name in _required(prompt)}
        reply = _request(probe, "prompts/get", {"name": prompt["name"], "arguments": arguments})
        if reply.message is None:
            return _no_reply(f, "prompts-get", probe, reply, f"prompts/get {prompt['name']}", "a result")
        if reply.error is not None:
            refused.append(f"{prompt['name']} {arguments}: error {reply.code}")
            continue
        got += 1
        messages = reply.result.get("messages") if isinstance(reply.result, dict) else None
        if not isinstance(messages, list):
            got = show_json(reply.result, 150)
            shape.append(f'{prompt["name"]}: the result has no "messages" list (received {got})')
            continue
        for n, message in enumerate(messages):
            if problem := message_problem(message):
                shape.append(f"{prompt['name']}: messages[{n}]: {problem} (received {show_json(message, 150)})")
                break
    errors: list[tuple[str, dict[str, Any]]] = []
    tries = [("an unknown prompt", {"name": UNKNOWN_PROMPT, "arguments": {}})]
    needy = next((p for p in prompts if _required(p)), None)
    if needy is not None:
        tries.append((f"{needy['name']} without its required argument(s)", {"name": needy["name"], "arguments": {}}))
    for what, params in tries:
        reply = _request(probe, "prompts/get", params)
        if reply.message is None:
            return _no_reply(f, "prompts-get", probe, reply, f"prompts/get of {what}", "error -32602")
        if _code(reply) != INVALID_PARAMS:
            outcome = "a result" if reply.error is None else f"error {_code(reply)}"
            evidence = {"sent": show_json(reply.sent), "received": show_json(reply.message), "expected": "error -32602"}
            errors.append((f"{what} got {outcome}, not -32602 (Invalid params)", evidence))
    if shape:
        f.failed("prompts-get", shape[0], {"problems": shape, "expected": CHECK_SHAPES["prompts-get"]})
    elif errors:
        f.warned("prompts-get", errors[0][0], {**errors[0][1], "problems": [e for e, _ in errors]}, rule="errors")
    elif got:
        f.passed("prompts-get", f"{got} prompt(s) got, every message well-formed; bad requests get -32602")
    else:
        why = "; ".join(refused) or "none listed"
        f.passed("prompts-get", f"bad requests get -32602 (no prompt could be got with made-up arguments: {why})")


def _list_failed(f: Findings, check: str, probe: Probe, reply: Reply, method: str, expected: str) -> None:
    if reply.message is None:
        _no_reply(f, check, probe, reply, method, expected)
    elif reply.error is not None:
        f.warned(
            check,
            f"the capability is declared but {method} answered error {reply.code}",
            {"sent": show_json(reply.sent), "received": show_json(reply.message)},
            rule="unserved",
        )
    else:
        evidence = {"received": show_json(reply.result), "expected": expected}
        f.failed(check, f"{method}: the result is not {expected}", evidence)


CHECK_SHAPES = {
    "resources-list": '{"resources": [{"uri": ..., "name": ...}]}, '
    '{"resourceTemplates": [{"uriTemplate": ..., "name": ...}]}',
    "prompts-list": '{"prompts": [{"name": ..., "arguments": [{"name": ..., "required": true}]}]}',
    "prompts-get": '{"messages": [{"role": "user", "content": {"type": "text", "text": ...}}]}',
}
