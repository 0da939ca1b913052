"""Streamable HTTP in the modern era (MCP 2026-07-28): the era probe, and the transport's modern rules.

A modern client sends every message as a POST of its own, with no session: the envelope in
``params._meta``, and the request metadata headers (``MCP-Protocol-Version`` equal to ``_meta``'s
version, ``Mcp-Method``, and ``Mcp-Name`` for ``tools/call``, ``resources/read``, ``prompts/get``).
The session here (:class:`ModernHttp`, one :class:`~grader.checker.http_probe.HttpProbe` that never
initializes) opens with ``server/discover``, as the spec's Backward Compatibility says a dual-era
client does: a DiscoverResult, or a recognised modern error in a 4xx body, means the endpoint
speaks the modern era (:func:`speaks_modern`). Where it does, it lists and calls what discover
declares, then sends what a careless client or a confused proxy would, and judges four checks:

- ``http-modern-headers``: a missing or mismatched routing header gets 400 with -32020; a
  ``=?base64?...?=`` Mcp-Name is decoded and served;
- ``http-modern-status``: -32602 and -32022 come with 400, an unknown method with 404 and -32601,
  a notification with 202 (or an error status), GET and DELETE with 405 (a SHOULD);
- ``http-modern-no-session``: no ``Mcp-Session-Id`` minted or echoed, a stale one ignored (SHOULD);
- ``http-modern-result``: ``resultType`` on every result, the caching hints on the cacheable ones,
  discover's required fields.

    >>> from grader.checker.http_probe import Exchange
    >>> sent = Exchange("modern", "POST", {}, b"{}", 0.0)
    >>> sent.status, sent.messages = 400, [{"jsonrpc": "2.0", "id": 1, "error": {"code": -32022, "message": "no"}}]
    >>> speaks_modern(sent, 1), miss(sent, 1, 400, HEADER_MISMATCH)
    (True, 'HTTP 400 with error -32022, not 400 with -32020')
    >>> header_value("get_order"), header_value("Grüße")
    ('get_order', '=?base64?R3LDvMOfZQ==?=')
"""

from __future__ import annotations

import base64
import re
from typing import Any

from reference import errors
from reference.framing import encode
from reference.mcp_headers import METHOD_HEADER, NAME_HEADER, NAMED_BY
from reference.stateless import MODERN

from .http_probe import FOREIGN_ORIGIN, SESSION_HEADER, SSE_TYPE, VERSION_HEADER, Exchange
from .main_session import judge_tools
from .modern_checks import cacheable_problems, discover_problems, result_type_problem
from .modern_session import MODERN_ERRORS, UNKNOWN_VERSION, Revised, meta
from .probe import show_json
from .tool_calls import example_arguments, is_shop, result_problem, safe_to_call

HEADER_MISMATCH = errors.HEADER_MISMATCH.code  # -32020
INVALID_PARAMS, METHOD_NOT_FOUND = errors.INVALID_PARAMS.code, errors.METHOD_NOT_FOUND.code
UNSUPPORTED = errors.UNSUPPORTED_VERSION.code  # -32022
UNKNOWN_METHOD = "mcp-lab-check/no-such-method"
STALE_SESSION = "mcp-lab-check-stale-session"
OTHER_NAME = "mcp-lab-check-other-name"
LEGACY_HEADER = "2025-11-25"  # a legacy revision in the header of a modern body: a mismatch
MODERN_HTTP_CHECKS = ("http-modern-headers", "http-modern-status", "http-modern-no-session", "http-modern-result")
_SAFE_VALUE = re.compile(r"[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?")


def header_value(value: str) -> str:
    """A value as a client writes it in Mcp-Name: as it is when plain visible ASCII, else ``=?base64?...?=``."""
    if _SAFE_VALUE.fullmatch(value) and not value.startswith("=?base64?"):
        return value
    return "=?base64?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="


def forced_base64(value: str) -> str:
    """``value`` in the Base64 sentinel form even when it need not be (a server MUST decode it)."""
    return "=?base64?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="


def answer(sent: Exchange, id: Any) -> dict[str, Any] | None:
    """The JSON-RPC response in the exchange's body: the one with ``id``, else an error without one."""
    replies = [m for m in sent.messages if isinstance(m, dict) and "method" not in m]
    return next((m for m in replies if m.get("id") == id), None) or next(
        (m for m in replies if m.get("id") is None and isinstance(m.get("error"), dict)), None
    )


def error_code(sent: Exchange, id: Any) -> Any:
    found = answer(sent, id)
    error = found.get("error") if found else None
    return error.get("code") if isinstance(error, dict) else None


def speaks_modern(sent: Exchange, id: Any) -> bool:
    """What a dual-era client concludes from its server/discover: a result, or a recognised modern
    error in a 4xx body (streamable-http, Backward Compatibility)."""
    found = answer(sent, id)
    if sent.status is None or found is None:
        return False
    if 200 <= sent.status < 300:
        return isinstance(found.get("result"), dict)
    return 400 <= sent.status < 500 and error_code(sent, id) in MODERN_ERRORS


def got(sent: Exchange, id: Any) -> str:
    """What came, in a few words: ``HTTP 400 with error -32020``."""
    if sent.status is None:
        return f"no response ({sent.error})"
    code = error_code(sent, id)
    found = answer(sent, id)
    body = f"error {code}" if code is not None else "a result" if found and "result" in found else "no JSON-RPC reply"
    return f"HTTP {sent.status} with {body}"


def miss(sent: Exchange, id: Any, status: int, code: int) -> str | None:
    """Why the exchange is not ``status`` with error ``code`` (None when it is)."""
    if sent.status == status and error_code(sent, id) == code:
        return None
    return f"{got(sent, id)}, not {status} with {code}"


class Stalled(Exception):
    """A modern POST that got no whole response in time."""

    def __init__(self, method: str, sent: Exchange) -> None:
        super().__init__(method)
        self.method, self.sent = method, sent


class ModernHttp:
    """One modern client over HTTP: every request its own POST, enveloped and with its headers."""

    current = ""  # the check being judged (after discover): a hung request is its failure

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self.f = ctx.findings
        self.probe = ctx.start("modern")
        self.probe.protocol_version = MODERN  # never negotiated: the header every POST carries
        self.results: list[tuple[str, Any, str]] = []  # (method, result, the request as sent)
        self.capabilities: dict[str, Any] = {}
        self.evidence: dict[str, dict[str, Any]] = {}  # check -> the first wrong exchange's evidence
        self.named: tuple[str, dict[str, Any]] | None = None  # a request that needs Mcp-Name, served

    # -- sending ---------------------------------------------------------------------------------
    def post(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        id: Any = "m",
        headers: dict[str, str | None] | None = None,
        envelope: bool = True,
        version: str = MODERN,
        timeout: float | None = None,
    ) -> Exchange:
        """A modern POST: ``_meta`` (unless ``envelope`` is false) and the routing headers, then
        ``headers`` (None leaves one out); a result that comes back is kept for http-modern-result."""
        params = dict(params or {})
        if envelope:
            params["_meta"] = {**meta(version=version), **params.get("_meta", {})}
        body: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        if id is not None:
            body["id"] = id
        routing: dict[str, str | None] = {VERSION_HEADER: version, METHOD_HEADER: method}
        target = params.get(NAMED_BY.get(method, ""))
        if isinstance(target, str):
            routing[NAME_HEADER] = header_value(target)
        wire = self.probe.headers_for({**routing, **(headers or {})})
        sent = self.probe.http("POST", encode(body).rstrip(b"\n"), wire, "modern", timeout, want=id)
        if self.current and sent.error and "within" in sent.error:
            raise Stalled(method, sent)  # a hung request: the rest would each wait as long
        found = answer(sent, id)
        if found is not None and isinstance(found.get("result"), dict) and sent.status == 200:
            self.results.append((method, found["result"], show_json(body, 200)))
        return sent

    def evidence_of(self, sent: Exchange, expected: str) -> dict[str, Any]:
        return {
            "sent": sent.request_line(),
            "headers": "; ".join(f"{k}: {v}" for k, v in sent.sent_headers.items()),
            "received": sent.status_line(),
            "expected": expected,
        }

    # -- the conversation ------------------------------------------------------------------------
    def run(self) -> None:
        eras = self.ctx.eras
        try:
            sent = self.post("server/discover", id="discover", timeout=self.ctx.init_timeout)
            self.discover = sent
            spoken = speaks_modern(sent, "discover")
            how = f"server/discover got {got(sent, 'discover')}"
            if sent.status == 401 and not any(k.lower() == "authorization" for k in self.probe.user_headers):
                how += " (credentials needed: give them with --header 'Authorization: Bearer TOKEN')"
            eras.set_modern(spoken, how)
            if not eras.settled("modern", self.ctx.init_timeout + self.ctx.timeout + 5.0):
                return  # skipped with the reason at the end (check.skip_unjudged)
            if not spoken:
                self.not_modern(sent, how)
                return
            self.converse()
        finally:
            eras.set_modern(bool(eras.modern), eras.why.get("modern", "no answer"))  # settled, whatever happened

    def not_modern(self, sent: Exchange, how: str) -> None:
        """The modern era was asked for by name (--era modern or both), and discover found none."""
        self.f.failed(
            "http-modern-result",
            f"{how}: the endpoint does not speak {MODERN} (servers MUST implement server/discover)",
            self.evidence_of(sent, "HTTP 200 with a DiscoverResult"),
        )
        for check in MODERN_HTTP_CHECKS[:-1]:
            self.f.skipped(check, f"not judged: the endpoint does not speak {MODERN} ({how})")

    def converse(self) -> None:
        found = answer(self.discover, "discover")
        result = found.get("result") if found else None
        if isinstance(result, dict) and isinstance(result.get("capabilities"), dict):
            self.capabilities = result["capabilities"]
        try:
            self.current = "http-modern-result"  # the check a hung request is reported under
            self.features()
            self.current = "http-modern-headers"
            self.headers()
            self.current = "http-modern-status"
            self.status()
            self.current = "http-modern-no-session"
            self.no_session()
        except Stalled as stall:
            self.stalled(stall)
        self.current = ""
        self.judge_results(result)

    def stalled(self, stall: Stalled) -> None:
        """A modern request got no whole response: a failure of the check it was for (a request
        MUST get a response); the checks it kept from running are not reached."""
        why = f"{stall.method} (a {MODERN} POST) got {stall.sent.error}"
        check = self.current if self.current != "http-modern-no-session" else "http-modern-status"  # (a SHOULD)
        self.f.failed(check, f"{why}: a request MUST get a response", self.evidence_of(stall.sent, "a response"))
        for check in MODERN_HTTP_CHECKS[:-1]:
            if self.f.status(check) is None:
                self.f.skipped(check, f"not reached: {why}")

    def features(self) -> None:
        """What discover declares, listed; the safe tools called (tools-list, tool-names and
        tools-call-result, judged under 2026-07-28 as on stdio) and one resource read (Mcp-Name)."""
        caps = self.capabilities
        if "tools" in caps:
            self.tools()
        # A reply as an SSE stream, for a client that accepts only that (http-sse judges it; 406 is allowed).
        self.post("tools/list" if "tools" in caps else "server/discover", id="sse", headers={"Accept": SSE_TYPE})
        if "prompts" in caps:
            self.post("prompts/list", id="prompts-list")
        resources: list[Any] = []
        if "resources" in caps:
            sent = self.post("resources/list", id="resources-list")
            found = answer(sent, "resources-list") or {}
            result = found.get("result") if isinstance(found.get("result"), dict) else {}
            resources = [r for r in result.get("resources") or [] if isinstance(r, dict)]
            self.post("resources/templates/list", id="templates-list")
        uri = next((r["uri"] for r in resources if isinstance(r.get("uri"), str)), None)
        if uri is not None:
            sent = self.post("resources/read", {"uri": uri}, id="read")
            if self.named is None and sent.status == 200 and answer(sent, "read") is not None:
                self.named = ("resources/read", {"uri": uri})

    def tools(self) -> None:
        f = Revised(self.f)
        tools: list[Any] = []
        cursor = None
        for page in range(20):
            sent = self.post("tools/list", {"cursor": cursor} if cursor else None, id=f"tools-list-{page}")
            found = answer(sent, f"tools-list-{page}") or {}
            result = found.get("result")
            listed = result.get("tools") if isinstance(result, dict) else None
            if not isinstance(listed, list):
                why = f"{MODERN} tools/list over HTTP: {got(sent, f'tools-list-{page}')}, no tools list"
                f.failed("tools-list", why, self.evidence_of(sent, "a ListToolsResult"))
                return
            tools += listed
            cursor = result.get("nextCursor")
            if not cursor:
                break
        judge_tools(tools, f)
        named = [t for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)]
        safe = [t for t in named if safe_to_call(t, is_shop(named), self.ctx.call_tools)]
        bad: list[str] = []
        for n, tool in enumerate(safe):
            params = {"name": tool["name"], "arguments": example_arguments(tool.get("inputSchema"))}
            sent = self.post("tools/call", params, id=f"call-{n}")
            found = answer(sent, f"call-{n}")
            result = found.get("result") if found else None
            if found is None or sent.status is None:
                bad.append(f"{tool['name']}: {got(sent, f'call-{n}')}, no reply")
            elif isinstance(result, dict) and result.get("resultType") == "input_required":
                continue  # asking first: the stdio modern session judges the round trip
            elif "error" not in found and (problem := result_problem(result)):
                bad.append(f"{tool['name']}: {problem} (received {show_json(result, 150)})")
            if self.named is None and sent.status == 200 and found is not None:
                self.named = ("tools/call", params)
        if bad:
            f.failed("tools-call-result", bad[0], {"problems": bad})
        elif safe:
            f.passed(
                "tools-call-result", f"{len(safe)} tool(s) called under {MODERN} over HTTP; every result well-formed"
            )
        else:
            f.skipped("tools-call-result", "no tool is annotated readOnlyHint: true; pass --call-tools to call them")

    # -- http-modern-headers -----------------------------------------------------------------------
    def headers(self) -> None:
        f = self.f
        plain = "tools/list" if "tools" in self.capabilities else "server/discover"
        other = "prompts/list" if plain == "tools/list" else "tools/list"
        wrong: list[str] = []
        warned: list[str] = []
        passed: list[str] = []
        legacy = self.ctx.eras.wait("legacy", self.ctx.init_timeout + self.ctx.timeout + 5.0) is True
        expected = f"400 Bad Request with error {HEADER_MISMATCH} (HeaderMismatch)"

        def judge(what: str, sent: Exchange, id: Any, lenient: str = "") -> None:
            problem = miss(sent, id, 400, HEADER_MISMATCH)
            if problem is None:
                passed.append(what)
                return
            served = sent.status is not None and 200 <= sent.status < 300
            if lenient == "may" and not served and sent.status is not None and 400 <= sent.status < 500:
                passed.append(f"{what}: {got(sent, id)} (taken for a request of 2025-03-26, as the spec allows)")
                return
            if lenient and not served and sent.status is not None and 400 <= sent.status < 500:
                warned.append(f"{what}: {got(sent, id)}")
                self.evidence.setdefault("http-modern-headers-warn", self.evidence_of(sent, expected))
                return
            wrong.append(f"{what}: {'served: the header was not checked' if served else problem}")
            self.evidence.setdefault("http-modern-headers", self.evidence_of(sent, expected))

        judge("no Mcp-Method", self.post(plain, id="h1", headers={METHOD_HEADER: None}), "h1")
        judge(f"Mcp-Method: {other} on {plain}", self.post(plain, id="h2", headers={METHOD_HEADER: other}), "h2")
        # A server that keeps pre-2025-06-18 clients MAY take a request without the header for a
        # 2025-03-26 one; a dual-era server may route a 2025 header to its legacy transport.
        judge(
            f"no {VERSION_HEADER}",
            self.post(plain, id="h3", headers={VERSION_HEADER: None}),
            "h3",
            "may" if legacy else "",
        )
        # The header then also names a version not served: -32022 answers it as well as -32020.
        mismatched = self.post(plain, id="h4", headers={VERSION_HEADER: LEGACY_HEADER})
        what = f"{VERSION_HEADER}: {LEGACY_HEADER} with {MODERN} in _meta"
        if mismatched.status == 400 and error_code(mismatched, "h4") == UNSUPPORTED:
            passed.append(f"{what}: 400 with {UNSUPPORTED} (the header's version is not served)")
        else:
            judge(what, mismatched, "h4", "routed" if legacy else "")
        decoded = "not judged (no tools/call or resources/read was served)"
        if self.named is not None:
            method, params = self.named
            name = params.get("name", params.get("uri"))
            judge(
                f"{method} without {NAME_HEADER}", self.post(method, params, id="h5", headers={NAME_HEADER: None}), "h5"
            )
            judge(
                f"{method} with {NAME_HEADER}: {OTHER_NAME} (the body names {name})",
                self.post(method, params, id="h6", headers={NAME_HEADER: OTHER_NAME}),
                "h6",
            )
            encoded = forced_base64(name)
            sent = self.post(method, params, id="h7", headers={NAME_HEADER: encoded})
            if sent.status == 200 and answer(sent, "h7") is not None and error_code(sent, "h7") != HEADER_MISMATCH:
                decoded = f"{NAME_HEADER}: {encoded} decoded and served"
            else:
                wrong.append(
                    f"{method} with {NAME_HEADER}: {encoded} (Base64 of {name}): {got(sent, 'h7')}, not served"
                )
                self.evidence.setdefault(
                    "http-modern-headers", self.evidence_of(sent, f"HTTP 200: the {NAME_HEADER} value decoded")
                )
        if wrong:
            found = {**self.evidence["http-modern-headers"], "problems": wrong + warned}
            f.failed("http-modern-headers", wrong[0], found)
        elif warned:
            found = {**self.evidence["http-modern-headers-warn"], "problems": warned}
            f.warned(
                "http-modern-headers",
                f"{warned[0]}, not -32020: the 2025 header took it to the legacy transport",
                found,
                rule="routed",
            )
        else:
            f.passed("http-modern-headers", f"400 with {HEADER_MISMATCH} for {len(passed)} header faults; {decoded}")

    # -- http-modern-status ------------------------------------------------------------------------
    def status(self) -> None:
        f = self.f
        plain = "tools/list" if "tools" in self.capabilities else "server/discover"
        wrong: list[str] = []
        first: dict[str, Any] = {}
        cases = [
            (
                "no params._meta",
                self.post(plain, id="s1", envelope=False),
                "s1",
                400,
                (INVALID_PARAMS, HEADER_MISMATCH),
            ),
            (
                f"{UNKNOWN_VERSION} in _meta and header",
                self.post("server/discover", id="s2", version=UNKNOWN_VERSION),
                "s2",
                400,
                (UNSUPPORTED,),
            ),
            ("an unknown method", self.post(UNKNOWN_METHOD, id="s3"), "s3", 404, (METHOD_NOT_FOUND,)),
        ]
        foreign = self.post("server/discover", id="s4", headers={"Origin": FOREIGN_ORIGIN})
        if foreign.status != 403:
            wrong.append(f"Origin: {FOREIGN_ORIGIN}: {got(foreign, 's4')}, not 403 Forbidden")
            first = self.evidence_of(foreign, "403 Forbidden")
        for what, sent, id, status, codes in cases:
            if sent.status != status or error_code(sent, id) not in codes:
                wrong.append(f"{what}: {got(sent, id)}, not {status} with {codes[0]}")
                first = first or self.evidence_of(sent, f"HTTP {status} with error {codes[0]}")
        note = self.post("notifications/mcp-lab-check", id=None)
        if note.status is None or (note.status < 400 and (note.status != 202 or note.data)):
            body = f"a {len(note.data)}-byte body" if note.data else "no body"
            came = f"HTTP {note.status} with {body}" if note.status is not None else f"no response ({note.error})"
            wrong.append(f"a notification: {came}, not 202 Accepted and no body")
            first = first or self.evidence_of(note, "202 Accepted and no body (or an error status)")
        if wrong:
            f.failed("http-modern-status", wrong[0], {**first, "problems": wrong})
        heads = self.probe.headers_for({"Content-Type": None, SESSION_HEADER: None})
        shallow = []
        for verb in ("GET", "DELETE"):
            sent = self.probe.http(verb, b"", heads, "modern")
            if sent.status != 405:
                came = f"HTTP {sent.status}" if sent.status is not None else sent.error
                shallow.append((sent, f"{verb} with {VERSION_HEADER}: {MODERN}: {came}, not 405 Method Not Allowed"))
        if shallow and not wrong:
            f.warned(
                "http-modern-status",
                shallow[0][1],
                {**self.evidence_of(shallow[0][0], "405 Method Not Allowed"), "problems": [w for _, w in shallow]},
                rule="get-delete",
            )
        elif not wrong:
            f.passed(
                "http-modern-status",
                f"400 for -32602 and -32022, 404 with -32601 for an unknown method, 403 for Origin: {FOREIGN_ORIGIN}, "
                f"{note.status} for a notification, 405 for GET and DELETE",
            )

    # -- http-modern-no-session --------------------------------------------------------------------
    def no_session(self) -> None:
        f = self.f
        plain = "tools/list" if "tools" in self.capabilities else "server/discover"
        stale = self.post(plain, id="n1", headers={SESSION_HEADER: STALE_SESSION})
        problems: list[tuple[Exchange, str]] = []
        if not (stale.status == 200 and answer(stale, "n1") is not None and error_code(stale, "n1") is None):
            problems.append((stale, f"a request with {SESSION_HEADER}: {STALE_SESSION} got {got(stale, 'n1')}, "
                             "not served: the header should be ignored"))  # fmt: skip
        modern = [e for e in self.probe.exchanges if e.sent_headers.get(VERSION_HEADER) == MODERN]
        minted = [e for e in modern if SESSION_HEADER.lower() in e.headers]
        for sent in minted[:3]:
            value = sent.headers[SESSION_HEADER.lower()]
            echoed = " (the one sent, echoed)" if value == STALE_SESSION else ""
            problems.append((sent, f"{sent.rpc_method} ({MODERN}) was answered with {SESSION_HEADER}: {value}{echoed}"))
        if problems:
            sent = problems[0][0]
            found = {
                **self.evidence_of(sent, f"no {SESSION_HEADER} in any response"),
                "problems": [p for _, p in problems],
            }
            if minted:
                found["minted"] = f"{len(minted)} of {len(modern)} modern response(s) carried {SESSION_HEADER}"
            f.warned("http-modern-no-session", problems[0][1], found)
        else:
            f.passed(
                "http-modern-no-session",
                f"no {SESSION_HEADER} in {len(modern)} modern response(s); a stale one sent was ignored",
            )

    # -- http-modern-result ------------------------------------------------------------------------
    def judge_results(self, discover: Any) -> None:
        f = self.f
        problems = [f"server/discover: {p}" for p in discover_problems(discover)]
        problems += [f"{m}: {p} (sent {s})" for m, r, s in self.results if (p := result_type_problem(r))]
        problems += [f"{m}: {p}" for m, r, _ in self.results for p in cacheable_problems(m, r)]
        if problems:
            f.failed("http-modern-result", problems[0], {"problems": problems})
            return
        methods = sorted({m for m, _, _ in self.results})
        f.passed(
            "http-modern-result",
            f"{len(self.results)} result(s) over HTTP, each with its resultType; the caching hints where due "
            f"({', '.join(methods)})",
        )


def run_modern_http(ctx: Any) -> None:
    """The modern session over HTTP (a job of ``mcp-lab check --url``)."""
    ModernHttp(ctx).run()


def legacy_refused(ctx: Any, reply: Any, sent: Exchange | None = None) -> bool:
    """Whether the legacy session stops here: its initialize (``sent``) got no result from an
    endpoint that speaks the modern era (a modern-only server: conformant; its legacy checks are
    skipped)."""
    eras = ctx.eras
    answered = isinstance(reply.result, dict)
    what = "a result" if answered else got(sent, reply.sent.get("id")) if sent is not None else "no result"
    eras.set_legacy(answered, f"initialize got {what}")
    if answered or eras.mode != "auto":
        return False
    return eras.wait("modern", ctx.init_timeout + ctx.timeout + 5.0) is True
