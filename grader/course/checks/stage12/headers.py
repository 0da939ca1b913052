"""Stage 12's request metadata headers (cell ``test_headers``): ``MCP-Protocol-Version``,
``Mcp-Method`` and ``Mcp-Name`` checked against the body, a disagreement answered 400 with -32020,
and headers that agree served.

    >>> [agree for _, _, agree in header_cases("get_order", "count_orders", 3)].count(True) >= 1
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from grader.checker.http_probe import Exchange

from ...calls import call
from ...expect import Failure, describe_id, same_json, show
from ...work import Work
from .. import public
from .client import MODULE, VERSION, failure, running
from .modern import HEADER_MISMATCH, METHOD_HEADER, NAME_HEADER, ModernClient, _base64, modern_message, routing

HeaderCase = tuple[dict[str, str], dict[str, Any], bool]  # (headers, the request, whether they agree)


def header_cases(name: str, other: str, id: Any) -> list[HeaderCase]:
    """Headers that agree with their request, and headers that do not (missing, another value, another
    version), around a tools/call of ``name`` (``other``: a name it is not)."""
    call = modern_message("tools/call", id, {"name": name, "arguments": {}})
    listing = modern_message("tools/list", id)
    read = modern_message("resources/read", id, {"uri": f"shop://orders/{len(name)}"})
    good = routing(call)
    cases: list[HeaderCase] = [
        (good, call, True),
        ({**good, NAME_HEADER: _base64(name)}, call, True),
        (routing(listing), listing, True),
        (routing(read), read, True),
        ({k: v for k, v in good.items() if k != NAME_HEADER}, call, False),
        ({**good, NAME_HEADER: other}, call, False),
        ({**good, NAME_HEADER: _base64(other)}, call, False),
        ({**good, METHOD_HEADER: "tools/list"}, call, False),
        ({k: v for k, v in good.items() if k != METHOD_HEADER}, call, False),
        ({**routing(listing), METHOD_HEADER: "prompts/list"}, listing, False),
        ({k: v for k, v in good.items() if k != VERSION}, call, False),
        ({**good, VERSION: "2025-11-25"}, call, False),
        ({**routing(read), NAME_HEADER: "shop://orders/0"}, read, False),
    ]
    return cases


def check_header_problem(work: Work, cases: Sequence[HeaderCase]) -> None:
    """header_problem(headers, message): None exactly when every routing header is there and agrees."""
    header_problem = work.module(MODULE).header_problem
    for headers, sent, agree in cases:
        given = work.stdlib("email.message.Message")()  # as http.server's self.headers: names in any case
        for key, value in headers.items():
            given.add_header(key, value)
        found = call(header_problem, "http-modern-headers", given, sent)
        if agree and found is not None:
            raise Failure("http-modern-headers", "header_problem refused headers that agree with the body",
                          sent=show(headers), expected="None", received=show(found), request=show(sent))  # fmt: skip
        if not agree and not (isinstance(found, str) and found):
            raise Failure("http-modern-headers", "header_problem let through headers that do not agree with the body",
                          sent=show(headers), expected="a sentence saying which header is wrong", received=show(found),
                          request=show(sent))  # fmt: skip


def check_headers_served(work: Work, other: str, id: Any) -> None:
    """Over HTTP: a count_orders call whose headers disagree (``other``: another tool's name) gets 400 with
    -32020 and its own id, in its JSON type; the same call with its name in Base64, or with an Mcp-Param
    header no tool designates, is served. Once with ``id``, once with the id 0 (an id like any other)."""
    with running(work) as bridge:
        client = ModernClient(bridge)
        for request_id in [id] if same_json(id, 0) else [id, 0]:
            sent = modern_message("tools/call", request_id, {"name": "count_orders", "arguments": {}})
            client.served(sent, "http-modern-headers", **{NAME_HEADER: _base64("count_orders")})
            client.served(sent, "http-modern-headers", **{"Mcp-Param-Region": "us-west1"})
            changes: dict[str, str | None]
            for changes in ({METHOD_HEADER: "tools/list"}, {NAME_HEADER: other}, {NAME_HEADER: None}, {VERSION: None}):
                got = client.modern(sent, "http-modern-headers", **changes)
                _header_mismatch(got, request_id, changes)


def _header_mismatch(got: Exchange, id: Any, changes: dict[str, str | None]) -> None:
    """``got`` is 400 with a -32020 error that carries ``id``, the same value in the same JSON type."""
    errors = [m for m in got.messages if isinstance(m, dict) and isinstance(m.get("error"), dict)]
    code = errors[0]["error"].get("code") if errors else None
    what = ", ".join(f"{k}: {v}" if v else f"no {k}" for k, v in changes.items())
    expected = f"HTTP/1.1 400 Bad Request, error -32020 with id {describe_id(id)}"
    if got.status != 400 or code != HEADER_MISMATCH:
        summary = f"a request with {what} gets 400 with -32020 (HeaderMismatch)"
        if same_json(id, 0) and got.status == 200:
            summary += ": this request's id is 0, and a message with an id member is a request, whatever its value"
        raise failure("http-modern-headers", summary, got, expected)
    echoed = errors[0].get("id", MISSING)
    if echoed is MISSING or not same_json(echoed, id):
        raise failure(
            "id-echo",
            f"the -32020 error for a request with {what} carries id {describe_id(echoed, echoed is not MISSING)}, "
            f"not the request's {describe_id(id)}",
            got,
            expected,
            hint='copy message["id"] into the error unchanged: no str(), no int(), no `or`-default (0 is a valid id)',
        )


MISSING = object()


@public("12", "test_headers", "MCP-Protocol-Version, Mcp-Method, Mcp-Name checked against the body: 400 with -32020")
def headers_cell(work: Work) -> None:
    check_header_problem(work, header_cases("get_order", "count_orders", 3))
    check_headers_served(work, "get_order", "h")
