"""The checks of stage 10 (resources and prompts).

The learner's ``match``, ``read_resource`` and ``get_prompt`` are compared with the reference's
(:mod:`reference.resources`, :mod:`reference.prompts`) on the same database: the same values and
the same error codes; a prompt's text is the learner's own, its structure and its embedded order
are not. Then the course's server, with the learner's resources and prompts in it (stage 10's
runtime), is driven over the wire in both eras (2026-07-28: results complete and cacheable, an
unknown resource -32602 with its URI; legacy: -32002), examined by ``mcp-lab check`` and used by
the official SDK client in its default mode (it must stay on 2026-07-28) and its legacy mode.

The learner's ``read_resource`` serves both eras, so it raises the era-neutral
``RESOURCE_NOT_FOUND`` (-32002, the reference's too): the server's era layer
(:mod:`reference.stateless`) writes it as -32602 for a 2026-07-28 request.
"""

from __future__ import annotations

import json
import random
import string
from typing import Any

from grader.checker.catalogue import CATALOGUE
from reference.catalog import STATUSES
from reference.database import ensure_default, open_readonly
from reference.errors import RpcError
from reference.prompts import Prompts
from reference.resources import ORDER_TEMPLATE, PRODUCT_TEMPLATE, Resources, match

from ..calls import call, outcome
from ..drive import Server, expect_checks, initialize, modern, notification, request, sdk_client
from ..expect import Failure, rule_and_fix, same_json, show
from ..remote import is_a
from ..work import Work
from . import public

TWO_VARIABLES = "shop://orders/{order_id}/items/{product_id}"
VISIBLE_MATCHES: list[tuple[str, str]] = [
    (ORDER_TEMPLATE, "shop://orders/7"),
    (ORDER_TEMPLATE, "shop://orders/%37"),
    (ORDER_TEMPLATE, "shop://orders/abc"),
    (ORDER_TEMPLATE, "shop://orders/a%2Fb"),
    (ORDER_TEMPLATE, "shop://orders/7/items"),
    (ORDER_TEMPLATE, "shop://orders/"),
    (ORDER_TEMPLATE, "shop://orders"),
    (ORDER_TEMPLATE, "shop://orders/7?full=1"),
    (ORDER_TEMPLATE, "shop://products/7"),
    (PRODUCT_TEMPLATE, "shop://products/42"),
    (PRODUCT_TEMPLATE, "xshop://products/42"),
    (TWO_VARIABLES, "shop://orders/7/items/66"),
]
VISIBLE_URIS = [
    "shop://schema",
    "shop://orders/7",
    "shop://orders/3000",
    "shop://products/3",
    "shop://orders/0",
    "shop://orders/3001",
    "shop://orders/007",
    "shop://orders/%37",
    "shop://orders/-7",
    "shop://orders/seven",
    "shop://products/9999",
    "shop://orders/7/items",
    "shop://customers/1",
    "file:///etc/passwd",
    "shop://schema/",
]
VISIBLE_PROMPTS: list[dict[str, Any]] = [
    {"name": "summarise_order", "arguments": {"order_id": "7"}},
    {"name": "summarise_order", "arguments": {"order_id": "3000"}},
    {"name": "status_report"},
    {"name": "status_report", "arguments": None},
    {"name": "status_report", "arguments": {"status": "paid"}},
    {"name": "refund_order", "arguments": {}},
    {"arguments": {}},
    {"name": "summarise_order"},
    {"name": "summarise_order", "arguments": {}},
    {"name": "summarise_order", "arguments": {"order_id": 7}},
    {"name": "summarise_order", "arguments": {"order_id": "7", "tone": "warm"}},
    {"name": "summarise_order", "arguments": {"order_id": "99999"}},
    {"name": "summarise_order", "arguments": {"order_id": "seven"}},
    {"name": "status_report", "arguments": {"status": "lost"}},
    {"name": "status_report", "arguments": ["paid"]},
]


@public("10", "test_match", "match() on twelve template and URI pairs: a value is one path segment, percent-decoded")
def match_cell(work: Work) -> None:
    check_match(work.module("shop_resources").match, VISIBLE_MATCHES)


@public(
    "10",
    "test_read_resource",
    "read_resource(): the schema, orders and products as the shop holds them; RESOURCE_NOT_FOUND for URIs that "
    "name nothing",
)
def read_cell(work: Work) -> None:
    check_read(work, VISIBLE_URIS)


@public("10", "test_get_prompt", "get_prompt(): both prompts, and -32602 for every bad request")
def prompt_cell(work: Work) -> None:
    check_prompts(work, VISIBLE_PROMPTS)


@public("10", "test_served", "your resources and prompts in the course's server, then mcp-lab check's checks of them")
def served_cell(work: Work) -> None:
    check_served(work.host("shop_resources"), "shop://products/0", "summarise_order")


@public("10", "test_sdk_client", "the official MCP SDK's client reads an order through its template, gets both prompts")
def sdk_cell(work: Work) -> None:
    check_sdk_client(work.host("shop_resources"), 7, "shipped")


# -- the reference's answers -------------------------------------------------------------------------
def _reference() -> tuple[Resources, Prompts]:
    conn = open_readonly(ensure_default())
    resources = Resources(conn)
    return resources, Prompts(conn, resources)


def _answer(method: Any, params: dict[str, Any]) -> tuple[Any, RpcError | None]:
    try:
        return method(params), None
    except RpcError as exc:
        return None, exc


def _connection(work: Work) -> Any:
    """A read-only connection in the learner's process, for their functions to use."""
    return work.stdlib("sqlite3.connect")(f"file:{work.inside(work.db)}?mode=ro", uri=True)


def _refused(error: Any, code: int) -> bool:
    return is_a(error, "RpcError") and getattr(error, "code", None) == code


def _got(value: Any, error: Any) -> str:
    return show(value) if error is None else f"{type(error).__name__}: {error}"


# -- match -------------------------------------------------------------------------------------------
def check_match(function: Any, cases: list[tuple[str, str]]) -> None:
    for template, uri in cases:
        want = match(template, uri)
        got = call(function, "resource-template", template, uri)
        if not same_json(got, want):
            raise Failure(
                "resource-template",
                f"match({template!r}, {uri!r}) returned {show(got)}",
                expected=show(want),
                hint="None: the URI does not fit" if want is None else "each value percent-decoded",
            )


def hidden_matches(rng: random.Random, count: int = 16) -> list[tuple[str, str]]:
    """Templates of one or two variables under other names, and URIs that fit them or nearly do."""
    letters = string.ascii_lowercase
    safe = string.ascii_letters + string.digits + "-._~"
    cases = []
    for _ in range(count):
        names = rng.sample(["id", "sku", "order_id", "product_id", "n", "page"], rng.choice([1, 2]))
        scheme = "".join(rng.choices(letters, k=rng.randint(3, 6)))
        words = ["".join(rng.choices(letters, k=rng.randint(2, 7))) for _ in names]
        template = f"{scheme}://" + "/".join(f"{w}/{{{n}}}" for w, n in zip(words, names, strict=True))
        values = ["".join(rng.choices(safe, k=rng.randint(1, 8))) for _ in names]
        if rng.random() < 0.3:
            values[0] += "%" + rng.choice(["2F", "20", "41", "7E"])
        shape = rng.choice(["fit", "fit", "slash", "empty", "query", "space", "prefix", "tail"])
        if shape == "slash":
            values[-1] += "/" + rng.choice(safe)
        elif shape == "empty":
            values[0] = ""
        elif shape == "query":
            values[-1] += "?x=1"
        elif shape == "space":
            values[0] = values[0][:1] + " " + values[0][1:]
        uri = f"{scheme}://" + "/".join(f"{w}/{v}" for w, v in zip(words, values, strict=True))
        if shape == "prefix":
            uri = "x" + uri
        elif shape == "tail":
            uri += "/"
        cases.append((template, uri))
    return cases


# -- read_resource -----------------------------------------------------------------------------------
def check_read(work: Work, uris: list[str]) -> None:
    read = work.module("shop_resources").read_resource
    resources, _ = _reference()
    conn = _connection(work)
    try:
        for params in [{"uri": uri} for uri in uris] + [{}, {"uri": None}, {"uri": 7}]:
            want, refusal = _answer(resources.read, params)
            got, error = outcome(read, "resources-read", conn, params)
            shown = f"read_resource(conn, {json.dumps(params)})"
            if refusal is not None:
                if refusal.code == -32002:
                    _not_found(shown, params["uri"], got, error)
                elif not _refused(error, refusal.code):
                    raise Failure(
                        "resources-read",
                        f"{shown}: a request without a uri string is malformed: raise RpcError(INVALID_PARAMS, ...)",
                        received=_got(got, error),
                    )
                continue
            if error is not None:
                raise Failure("resources-read", f"{shown} raised {type(error).__name__}: {error}")
            _same_contents(shown, got, want)
    finally:
        conn.close()


def _not_found(shown: str, uri: str, got: Any, error: Any) -> None:
    # The handler serves both eras: it raises the course's era-neutral RESOURCE_NOT_FOUND (-32002 inside
    # the server), which the server writes as each request's era wants it.
    expected = (
        f"RpcError(RESOURCE_NOT_FOUND, data={{'uri': {uri!r}}}): code -32002 inside the server, written -32602 "
        "on a 2026-07-28 request and -32002 on a legacy (2025-11-25) one"
    )
    if _refused(error, -32602):
        raise Failure(
            "resource-not-found",
            f"{shown}: -32602 is what a 2026-07-28 request must get, but your handler serves both eras and a "
            "legacy (2025-11-25) request must get -32002: raise RpcError(RESOURCE_NOT_FOUND, data={'uri': uri}) "
            "and the server writes the code of the request's era (a plain -32602 cannot be told from a malformed "
            "request)",
            expected=expected,
            received=_got(got, error),
        )
    if not _refused(error, -32002):
        raise Failure(
            "resource-not-found",
            f"{shown}: {uri!r} names nothing the shop has, in the form the server writes: "
            "raise RpcError(RESOURCE_NOT_FOUND, data={'uri': uri}) (never an empty contents list)",
            expected=expected,
            received=_got(got, error),
        )
    data = getattr(error, "data", None)
    if not same_json(data, {"uri": uri}):
        raise Failure(
            "resource-not-found",
            f"{shown}: the error's data names the URI, as the spec's example error does (the course requires it)",
            expected=show({"uri": uri}),
            received=show(data),
        )


def _same_contents(shown: str, got: Any, want: dict[str, Any]) -> None:
    """The learner's contents against the reference's: the same uri and type; the same text, or for
    JSON the same value."""
    (expected,) = want["contents"]
    items = got.get("contents") if isinstance(got, dict) else None
    if not (isinstance(items, list) and len(items) == 1 and isinstance(items[0], dict)):
        raise Failure(
            "resources-read",
            f'{shown}: a result is {{"contents": [one item]}}',
            expected=show(want),
            received=show(got),
        )
    item = items[0]
    for key in ("uri", "mimeType"):
        if item.get(key) != expected[key]:
            raise Failure(
                "resources-read",
                f"{shown}: the item's {key} must be {expected[key]!r}",
                expected=show(expected),
                received=show(item),
            )
    text = item.get("text")
    if expected["mimeType"] == "application/json":
        same = isinstance(text, str) and same_json(_json(text), json.loads(expected["text"]))
    else:
        same = isinstance(text, str) and text.split() == expected["text"].split()
    if not same:
        raise Failure(
            "resources-read",
            f"{shown}: the text is not what the shop holds",
            expected=show(expected),
            received=show(item),
        )


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def hidden_uris(rng: random.Random) -> list[str]:
    order, other, product = rng.randint(1, 3000), rng.randint(1, 3000), rng.randint(1, 100)
    return [
        f"shop://orders/{order}",
        f"shop://orders/{other}",
        f"shop://products/{product}",
        f"shop://orders/{rng.randint(3001, 10**9)}",
        f"shop://products/{rng.randint(101, 10**6)}",
        f"shop://orders/{'0' * rng.randint(1, 3)}{order}",
        "shop://orders/" + "".join(f"%{ord(c):02X}" for c in str(product)),
        f"shop://orders/+{order}",
        f"shop://orders/{order}.0",
        f"shop://products/{product}/",
        f"shop://Orders/{order}",
        f"shop://orders/{10 ** rng.randint(10, 30)}",
        f"shop://{rng.choice(['customers', 'order', 'items'])}/{order}",
    ]


# -- prompts -----------------------------------------------------------------------------------------
def check_prompts(work: Work, requests: list[dict[str, Any]]) -> None:
    get = work.module("shop_prompts").get_prompt
    resources, prompts = _reference()
    conn = _connection(work)
    try:
        for params in requests:
            want, refusal = _answer(prompts.get, params)
            got, error = outcome(get, "prompts-get", conn, params)
            shown = f"get_prompt(conn, {json.dumps(params)})"
            if refusal is not None:
                if not _refused(error, -32602):
                    raise Failure(
                        "prompt-arguments",
                        f"{shown}: raise RpcError(INVALID_PARAMS, ...) with a text that says what to send",
                        expected=f"error -32602, such as: {refusal.message}",
                        received=_got(got, error),
                    )
                continue
            if error is not None:
                raise Failure("prompts-get", f"{shown} raised {type(error).__name__}: {error}")
            if params["name"] == "summarise_order":
                _summary_prompt(shown, got, resources, params["arguments"]["order_id"])
            elif not same_json(got, want):
                raise Failure(
                    "prompts-get", f"{shown} is not status_report's result", expected=show(want), received=show(got)
                )
    finally:
        conn.close()


def _messages(shown: str, got: Any) -> list[dict[str, Any]]:
    messages = got.get("messages") if isinstance(got, dict) else None
    well_formed = isinstance(messages, list) and messages
    well_formed = well_formed and all(
        isinstance(m, dict)
        and m.get("role") in ("user", "assistant")
        and isinstance(m.get("content"), dict)
        and isinstance(m["content"].get("type"), str)
        for m in messages
    )
    if not well_formed or not isinstance(got.get("description", ""), str):
        raise Failure(
            "prompts-get",
            f'{shown}: a result is {{"description": ..., "messages": [{{"role": "user", "content": '
            '{"type": ...}}, ...]}',
            received=show(got),
        )
    return messages


def _summary_prompt(shown: str, got: Any, resources: Resources, order_id: str) -> None:
    messages = _messages(shown, got)
    (expected,) = resources.read({"uri": f"shop://orders/{order_id}"})["contents"]
    texts = [m["content"] for m in messages if m["content"]["type"] == "text"]
    if not any(isinstance(t.get("text"), str) and order_id in t["text"] for t in texts):
        raise Failure(
            "prompts-get", f"{shown}: a text block tells the model what to do with order {order_id}", received=show(got)
        )
    embedded = [m["content"].get("resource") for m in messages if m["content"]["type"] == "resource"]
    if len(embedded) != 1:
        raise Failure(
            "prompts-get",
            f'{shown}: one message embeds the order: {{"type": "resource", "resource": {{...}}}}',
            expected=show(expected),
            received=show(got),
        )
    (resource,) = embedded
    _same_contents(f"{shown}, its embedded resource", {"contents": [resource]}, {"contents": [expected]})


def hidden_prompts(rng: random.Random) -> list[dict[str, Any]]:
    order = str(rng.randint(1, 3000))
    other = str(rng.randint(1, 3000))
    status = rng.choice(STATUSES)
    word = "".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 9)))
    return [
        {"name": "summarise_order", "arguments": {"order_id": order}},
        {"name": "summarise_order", "arguments": {"order_id": other}},
        {"name": "status_report", "arguments": {"status": status}},
        {"name": "status_report", "arguments": {}},
        {"name": word, "arguments": {"order_id": order}},
        {"name": "summarise_order", "arguments": {"id": order}},
        {"name": "summarise_order", "arguments": {"order_id": int(order)}},
        {"name": "summarise_order", "arguments": {"order_id": order, word: "x"}},
        {"name": "summarise_order", "arguments": {"order_id": str(rng.randint(3001, 10**6))}},
        {"name": "summarise_order", "arguments": {"order_id": f"{order}.5"}},
        {"name": "summarise_order", "arguments": {"order_id": ""}},
        {"name": "status_report", "arguments": {"status": status.upper()}},
        {"name": "status_report", "arguments": {"status": [status]}},
        {"name": "summarise_order", "arguments": "7"},
    ]


# -- the server --------------------------------------------------------------------------------------
MODERN = "2026-07-28"
# The results 2026-07-28 makes cacheable (Server Utilities > Caching, Cacheable Results) that this stage's
# functions answer: the three lists and resources/read. prompts/get is not among them.
CACHEABLE = ("resources/list", "resources/templates/list", "prompts/list")
# The rule each era's session judges "a URI that names nothing" by (the checker's ids and rule texts).
NOT_FOUND = {
    MODERN: ("modern-resource-not-found", "main", -32602),
    "2025-11-25": ("resources-read", "not-found", -32002),
}


def check_served(argv: list[str], unknown_uri: str, prompt: str, checker: bool = True) -> None:
    """A 2026-07-28 session and a legacy one over the wire; then (``checker``) mcp-lab check's resources,
    prompts and 2026-07-28 checks."""
    served_modern(argv, unknown_uri, prompt)
    served_legacy(argv, unknown_uri, prompt)
    if checker:
        expect_checks(
            argv,
            [
                "capabilities-match",
                "resources-list",
                "resources-read",
                "prompts-list",
                "prompts-get",
                "modern-result-type",
                "modern-cacheable",
                "modern-resource-not-found",
            ],
        )


def _declares_all(reply: dict[str, Any], method: str, rule: str) -> None:
    result = reply.get("result")
    capabilities = result.get("capabilities") if isinstance(result, dict) else None
    capabilities = capabilities if isinstance(capabilities, dict) else {}
    for feature in ("tools", "resources", "prompts"):
        if not isinstance(capabilities.get(feature), dict):
            raise Failure(rule, f"{method} does not declare {feature}", received=show(reply))


def _not_found_on_the_wire(server: Server, read: dict[str, Any], uri: str, era: str) -> None:
    """A read of a URI that names nothing, judged by the rule of the era the request speaks: its code
    (2026-07-28: -32602; 2025-11-25: -32002), then the URI in data (the course's demand, as the spec's
    example error shows it)."""
    check, rule_name, code = NOT_FOUND[era]
    how = (
        "a 2026-07-28 request (its _meta names the revision)"
        if era == MODERN
        else "a legacy request (no _meta, in a session that began with initialize at 2025-11-25; a SHOULD there, "
        "which the course holds you to)"
    )
    server.send(read)
    reply = server.next_line(read, check)
    error = reply.get("error") if isinstance(reply, dict) else None
    got = error.get("code") if isinstance(error, dict) else None
    if not same_json(reply.get("id") if isinstance(reply, dict) else None, read["id"]) or got != code:
        what = "a result" if isinstance(reply, dict) and "result" in reply else f"error {show(got)}"
        empty = ""
        if what == "a result":
            empty = " (an empty contents list says nothing: a resource with no content, or none)"
        raise Failure(
            check,
            f"judged as {era}'s rule, since this is {how}: a URI that names nothing gets error {code}, not {what}"
            f"{empty}",
            sent=show(read),
            expected=show({"jsonrpc": "2.0", "id": read["id"], "error": {"code": code, "data": {"uri": uri}}}),
            received=show(reply),
            **followed_rule_of(check, rule_name),
        )
    if not same_json(error.get("data"), {"uri": uri}):
        raise Failure(
            "resource-not-found",
            f'{era} ({how}): the error names the URI in "data", as the spec\'s example error does (the course '
            "requires it: a client tells a URI that names nothing from a malformed request by it)",
            sent=show(read),
            expected=show({"code": code, "data": {"uri": uri}}),
            received=show(reply),
        )


def followed_rule_of(check: str, name: str) -> dict[str, str]:
    """The rule ``name`` of the checker's ``check``, and the lesson's fix, as Failure details."""
    rule = CATALOGUE[check].rule_named(name)
    # The fix is the lesson's: the handler raises one error, and the server writes each era's code.
    return {"rule": f"{rule.source} ({rule.keyword}): {rule.text}", "fix": rule_and_fix("resource-not-found")[1]}


def _complete_and_cacheable(sent: dict[str, Any], result: Any) -> None:
    """A 2026-07-28 result of one of the six cacheable operations: complete, with its caching hints."""
    method = sent["method"]
    if not isinstance(result, dict) or result.get("resultType") != "complete":
        raise Failure(
            "modern-result-type",
            f'a 2026-07-28 {method} result carries "resultType": "complete"',
            sent=show(sent),
            received=show(result),
        )
    ttl, scope = result.get("ttlMs"), result.get("cacheScope")
    if not (type(ttl) is int and ttl >= 0 and scope in ("public", "private")):
        raise Failure(
            "modern-cacheable",
            f"a 2026-07-28 {method} result is cacheable (Server Utilities > Caching lists it): an integer ttlMs "
            '>= 0 and a cacheScope of "public" or "private"',
            sent=show(sent),
            received=show({"ttlMs": ttl, "cacheScope": scope}),
        )


def served_modern(argv: list[str], unknown_uri: str, prompt: str) -> None:
    """2026-07-28: every request carries _meta; the lists and a read are complete and cacheable; an unknown
    resource is -32602 with the URI in data."""
    with Server(argv) as server:
        discover = modern("server/discover")
        reply = server.expect(discover, {"jsonrpc": "2.0", "id": discover["id"]}, "discover-result")
        _declares_all(reply, "server/discover", "discover-result")
        for method in CACHEABLE:
            listing = modern(method)
            rule = "prompts-list" if method.startswith("prompts") else "resources-list"
            result = server.expect(listing, {"jsonrpc": "2.0", "id": listing["id"]}, rule).get("result")
            if not isinstance(result, dict):
                raise Failure(rule, f"{method} answers with a result object", sent=show(listing), received=show(result))
            _complete_and_cacheable(listing, result)
        known = modern("resources/read", params={"uri": "shop://schema"})
        result = server.expect(known, {"jsonrpc": "2.0", "id": known["id"]}, "resources-read").get("result")
        _complete_and_cacheable(known, result)
        read = modern("resources/read", params={"uri": unknown_uri})
        _not_found_on_the_wire(server, read, unknown_uri, MODERN)
        get = modern("prompts/get", params={"name": prompt, "arguments": {}})
        server.expect(get, {"jsonrpc": "2.0", "id": get["id"], "error": {"code": -32602}}, "prompt-arguments")


def served_legacy(argv: list[str], unknown_uri: str, prompt: str) -> None:
    """Before 2026-07-28: initialize declares the features; an unknown resource is -32002 with the URI."""
    with Server(argv) as server:
        init = initialize()
        reply = server.expect(init, {"jsonrpc": "2.0", "id": init["id"]}, "capabilities-match")
        _declares_all(reply, "initialize", "capabilities-match")
        server.send(notification("notifications/initialized"))
        read = request("resources/read", params={"uri": unknown_uri})
        _not_found_on_the_wire(server, read, unknown_uri, "2025-11-25")
        get = request("prompts/get", params={"name": prompt, "arguments": {}})
        server.expect(get, {"jsonrpc": "2.0", "id": get["id"], "error": {"code": -32602}}, "prompt-arguments")


def check_sdk_client(argv: list[str], order_id: int, status: str) -> None:
    """The SDK's client, in its default mode (it probes, and must stay on 2026-07-28) and in its legacy
    mode: its types are the spec's schema, so a result of the wrong shape fails there."""
    for mode in ("auto", "legacy"):
        sdk_reads(argv, order_id, status, mode)


def sdk_reads(argv: list[str], order_id: int, status: str, mode: str) -> None:
    uri = f"shop://orders/{order_id}"

    async def steps(client: Any) -> dict[str, Any]:
        templates = await client.list_resource_templates()
        order = await client.read_resource(uri)
        summary = await client.get_prompt("summarise_order", {"order_id": str(order_id)})
        report = await client.get_prompt("status_report", {"status": status})
        return {
            "version": client.protocol_version,
            "templates": templates,
            "order": order,
            "summary": summary,
            "report": report,
        }

    def dumped(model: Any) -> Any:
        """A result as it came over the wire (the SDK's own members, such as resultType, left out)."""
        found = model.model_dump(mode="json", by_alias=True, exclude_none=True)
        return {k: v for k, v in found.items() if k in ("resourceTemplates", "contents", "description", "messages")}

    seen = sdk_client(argv, steps, "resources-read", f"read {uri} and get both prompts", mode=mode)
    if mode == "auto" and seen.get("version") != MODERN:
        raise Failure(
            "discover-result",
            f"the SDK's client, in its default mode, fell back to the handshake ({seen.get('version')}): its "
            "server/discover probe did not get a DiscoverResult",
        )
    who = f"(the SDK client, {mode} mode)"
    templates = sorted(t.get("uriTemplate") for t in dumped(seen["templates"]).get("resourceTemplates", []))
    if templates != sorted([ORDER_TEMPLATE, PRODUCT_TEMPLATE]):
        raise Failure("resources-list", f"{who} sees other templates", received=show(templates))
    resources, prompts = _reference()

    _same_contents(f"{who} read_resource({uri!r})", dumped(seen["order"]), resources.read({"uri": uri}))
    _summary_prompt(
        f"{who} get_prompt('summarise_order', {{'order_id': '{order_id}'}})",
        dumped(seen["summary"]),
        resources,
        str(order_id),
    )
    want = prompts.get({"name": "status_report", "arguments": {"status": status}})
    if not same_json(dumped(seen["report"]), want):
        raise Failure(
            "prompts-get",
            f"{who} got another status_report for {status!r}",
            expected=show(want),
            received=show(dumped(seen["report"])),
        )
