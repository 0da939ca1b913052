"""The stdio MCP server over the shop: the loop that ties framing, dispatch and the tools together.

It reads one message per line from stdin and writes one reply per request to stdout, flushing
each. Logs go to stderr only: stdout is the protocol channel and carries nothing else. At end
of input (the client closed our stdin) it exits with status 0; a closed stdout ends it quietly.

Beside the tools it serves the shop's resources and prompts (:mod:`reference.resources`,
:mod:`reference.prompts`) and declares exactly what it serves in ``capabilities``. With
``--allow-writes`` and a database copy it also offers the audited write tools
(:mod:`reference.writes`); with ``--http`` the same server speaks Streamable HTTP
(:mod:`reference.streamable_http`), one :class:`Server` per session. In the 2026-07-28 era a
``subscriptions/listen`` request stays open while the loop serves the next lines: its messages
wait in an outbox, written after each line (:mod:`reference.subscriptions`).

    $ mcp-lab serve                      # the embedded shop, built on first use
    $ mcp-lab serve --db /tmp/shop.db    # or python -m reference.server --db /tmp/shop.db
    $ mcp-lab serve --allow-writes --db /tmp/shop.db --http 127.0.0.1:8000 --auth-token TOKEN

    >>> import io
    >>> out = io.BytesIO()
    >>> make_server().serve(io.BytesIO(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\\n'), out)
    0
    >>> out.getvalue()
    b'{"jsonrpc":"2.0","id":1,"result":{}}\\n'
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, NoReturn

from . import database, envelope, mrtr, stateless, subscriptions
from .dispatch import LATER, Dispatcher, Handler, Later
from .errors import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, RpcError
from .framing import read_frame, write_frame
from .lifecycle import SUPPORTED, Session

if TYPE_CHECKING:
    from .audit import Provenance
    from .prompts import Prompts
    from .resources import Resources
    from .tools import Toolbox
    from .writes import Writes

SERVER_INFO = {"name": "mcp-wire-lab-shop", "title": "MCP Wire Lab shop", "version": "0.1.0"}
INSTRUCTIONS = (
    "A read-only view of a small online shop: customers, products and orders. Use count_orders "
    "and list_orders for questions about orders by status, get_order for one order's items, and "
    "search_products to find products. Money is in integer cents."
)
WRITE_INSTRUCTIONS = (
    "A view of a small online shop, on a copy of its database that may be changed: customers, "
    "products and orders. Use count_orders and list_orders for questions about orders by status, "
    "get_order for one order's items, and search_products to find products. cancel_order and "
    "add_order_note change the copy: ask the user first; every attempt is audited. Money is in "
    "integer cents."
)


def log(message: str) -> None:
    """One line to stderr, never to stdout."""
    sys.stderr.write(f"[mcp-lab serve] {message}\n")
    sys.stderr.flush()


class Server:
    # The loop's pieces. The course runs a learner's piece inside this loop by replacing one of
    # them on an instance (grader/course/host.py): the rest stays the answer key's.
    read_frame = staticmethod(read_frame)
    write_frame = staticmethod(write_frame)
    log = staticmethod(log)  # where the server's own log lines go (stderr)

    def __init__(
        self,
        toolbox: Toolbox | None,
        resources: Resources | None = None,
        prompts: Prompts | None = None,
        writes: Writes | None = None,
        transport: str = "stdio",
        hub: subscriptions.Hub | None = None,
        sealer: mrtr.Sealer | None = None,
    ) -> None:
        # No toolbox: the tools/list and tools/call handlers are plugged in by whoever runs the
        # loop (stage 05 of the course plugs in the learner's; until then both are refused).
        # No resources or prompts: their methods are not served (-32601) and not declared.
        self.session = Session()  # the connection's, once an initialize chose the legacy era
        self.modern = False  # a request with the 2026-07-28 _meta chose the modern era for this connection
        self.request: stateless.RequestMeta | None = None  # the modern request being served
        self.toolbox = toolbox
        self.resources = resources
        self.prompts = prompts
        self.writes = writes
        self.transport = transport  # for the write audit: how the client reached us
        # 2026-07-28's streams and round trips. The hub and the sealer's key belong to the process:
        # one Server per HTTP connection still hears every write, and opens every state it sealed.
        self.hub = hub if hub is not None else subscriptions.Hub(self.log)
        self.sealer = sealer if sealer is not None else mrtr.Sealer()
        self.listening: dict[str, subscriptions.Subscription] = {}  # this connection's open streams, by id
        # Messages owed outside any reply (a stream's notifications): stdio writes them after each
        # line it serves. HTTP replaces deliver with the listen request's own stream.
        self.outbox: list[dict[str, Any]] = []
        self.deliver: subscriptions.Deliver = self.outbox.append
        methods: dict[str, Callable[[Any], Any]] = {
            "initialize": self.initialize,
            "server/discover": self.discover,
            "ping": lambda params: {},
            "tools/list": self.list_tools,
            "tools/call": self.call_tool,
        }
        if resources is not None:
            methods["resources/list"] = resources.list
            methods["resources/templates/list"] = resources.templates
            methods["resources/read"] = resources.read
        if prompts is not None:
            methods["prompts/list"] = prompts.list
            methods["prompts/get"] = prompts.get
        self.dispatcher = Dispatcher(
            methods=methods,
            notifications={
                "notifications/initialized": self.initialized,
                # Every request but a listen stream is answered before the next line is read:
                # only a stream is left to stop when a cancellation arrives.
                "notifications/cancelled": self.cancelled,
            },
            batches_allowed=lambda: self.session.batches_allowed,
            log=self.log,
            route=self.route,
        )

    # The era (basic/versioning, Backward Compatibility): a request whose _meta carries the
    # 2026-07-28 fields is served statelessly; an initialize chooses the legacy era at the revision
    # it negotiates. The first of them fixes the era of this connection, as both official SDKs do:
    # a client speaks one era per process, so the other era's traffic is a confused client, and it
    # gets an error that says so. Before either, a plain request is served as it always was.
    def route(self, request: envelope.Request) -> Handler | None:
        method, legacy = request.method, self.session.initialize_seen
        if stateless.is_modern(request.params):
            if legacy:
                raise RpcError(
                    INVALID_REQUEST,
                    f"this connection was initialized (revision {self.session.version}): a {stateless.MODERN} "
                    "request with _meta needs a connection of its own",
                )
            self.modern = True
            return self.modern_handler(request)
        if self.modern:
            if method == "initialize":
                # A dual-era client whose discover probe timed out may still send its fallback
                # initialize: -32022 naming the modern versions tells it to stay modern (mcp 2.x does).
                asked = request.params.get("protocolVersion") if isinstance(request.params, dict) else None
                why = "on this connection: its first request chose 2026-07-28; initialize needs a connection of its own"
                raise stateless.unsupported(asked, why)
            raise RpcError(
                INVALID_PARAMS,
                f"this connection speaks {stateless.MODERN} (its first request did): every request needs params._meta "
                f'with "{stateless.PROTOCOL_VERSION}" and "{stateless.CLIENT_CAPABILITIES}"',
            )
        if method in stateless.ADDED:
            if legacy:
                raise RpcError(
                    METHOD_NOT_FOUND,
                    f"{method} is a {stateless.MODERN} method; this connection negotiated {self.session.version}",
                )
            return self.modern_handler(request)  # no _meta: refused for it, -32602
        return self.dispatcher.methods.get(method)

    def modern_handler(self, request: envelope.Request) -> Handler:
        """The handler of one 2026-07-28 request: its _meta checked first, its result marked complete."""
        meta = stateless.read_meta(request.params)
        method = request.method
        if method in stateless.REMOVED:
            raise stateless.removed(method)
        if method == "subscriptions/listen":
            return lambda params: self.listen(request.id, params)
        handler = self.dispatcher.methods.get(method)
        if handler is None:
            raise RpcError(METHOD_NOT_FOUND, method)
        ttl = stateless.READ_TTL_MS if method == "resources/read" and self.writes is not None else None

        def serve(params: Any) -> Any:
            self.request = meta
            try:
                result = handler(params)
            except RpcError as exc:
                raise stateless.not_found_in_modern(exc) from None
            finally:
                self.request = None
            return stateless.complete(method, result, SERVER_INFO, ttl)

        return serve

    @property
    def context(self) -> Session:
        """The revision and the client a request is served for: the connection's in the legacy era,
        the request's own in the modern one (never an earlier request's)."""
        meta = self.request
        if meta is None:
            return self.session
        return Session(version=meta.version, client_name=meta.client_name, client_version=meta.client_version)

    def instructions(self) -> str:
        return WRITE_INSTRUCTIONS if self.writes is not None and self.writes.allowed else INSTRUCTIONS

    def discover(self, params: dict[str, Any]) -> dict[str, Any]:
        """server/discover (2026-07-28): the versions, capabilities and identity of this server."""
        return stateless.discover(self.capabilities(modern=True), SERVER_INFO, self.instructions())

    def capabilities(self, modern: bool = False) -> dict[str, Any]:
        """What this server serves, and nothing else: a client believes the list.

        ``resources.subscribe``: in 2026-07-28, subscriptions/listen watches the shop's resources; the
        legacy era's resources/subscribe is not served. No list ever changes: ``listChanged`` false.
        """
        capabilities: dict[str, Any] = {"tools": {"listChanged": False}}
        if self.resources is not None:
            capabilities["resources"] = {"subscribe": modern, "listChanged": False}
        if self.prompts is not None:
            capabilities["prompts"] = {"listChanged": False}
        return capabilities

    def initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        result = self.session.initialize(params, SERVER_INFO, self.capabilities(), self.instructions())
        self.log(f"initialize: client {self.session.client_name or '?'}, revision {self.session.version}")
        return result

    def initialized(self, params: Any) -> None:
        self.session.initialized = True

    def list_tools(self, params: dict[str, Any]) -> dict[str, Any]:
        if self.toolbox is None:
            raise RpcError(METHOD_NOT_FOUND, "tools/list: this server has no tools plugged in")
        return self.toolbox.list(params, self.context.structured_output)

    def call_tool(self, params: dict[str, Any]) -> dict[str, Any]:
        if self.toolbox is None:
            raise RpcError(METHOD_NOT_FOUND, "tools/call: this server has no tools plugged in")
        session = self.context
        name, writes = params.get("name"), self.writes
        if writes is not None and isinstance(name, str) and name in writes.names:
            from .audit import Provenance  # the advanced track's: a server without writes never loads it

            who = Provenance(session.client_name, session.client_version, self.transport)
            before = self.watched_before(params)
            try:
                if writes.allowed:
                    return self.write(params, who, session)
                writes.refuse(params, who)  # audited, then answered below as the unknown tool it is here
            finally:
                self.announce_changes(before)
        return self.toolbox.call(params, session.bad_arguments_are_tool_errors, session.structured_output)

    def write(self, params: dict[str, Any], who: Provenance, session: Session) -> dict[str, Any]:
        """A write tool's call. In 2026-07-28, cancel_order first asks the user (reference.confirm):
        the first call answers input_required, the retry is carried out only when the user agreed.
        Every refusal is audited; the question itself writes and decides nothing, and is not."""
        assert self.writes is not None and self.toolbox is not None
        writes, name = self.writes, params["name"]
        # A Writes without reject (stage 11's runtime wraps the learner's own) cannot audit a refusal
        # it did not make: such a server writes as the legacy era does, without the question.
        reject = getattr(writes, "reject", None)
        from .confirm import ASKS_FIRST, Confirmation

        if self.request is not None and name in ASKS_FIRST and reject is not None:
            tool = self.toolbox.tools.get(name)
            gate = Confirmation(self.sealer, self.describe_order)
            try:
                decision = gate.decide(params, self.request.capabilities, tool.input_schema if tool else {})
            except RpcError as exc:
                reject(params, who, exc.detail or exc.message)  # refused: nothing is written
                raise
            if decision.refused:
                reject(params, who, decision.refused)
            if not decision.proceed:
                assert decision.result is not None
                return decision.result
            params = {key: value for key, value in params.items() if key not in ("inputResponses", "requestState")}
        return writes.call(params, who, session.bad_arguments_are_tool_errors, session.structured_output)

    def describe_order(self, order_id: int) -> dict[str, Any] | None:
        """The order as shop://orders/N reads (for the question); ``None``: there is no such order."""
        if self.resources is None:
            return {"id": order_id}  # nothing to describe it with: ask about it by its id
        text = self.read_text(f"shop://orders/{order_id}")
        return None if text is None else json.loads(json.loads(text)[0]["text"])

    # -- subscriptions/listen (2026-07-28; reference.subscriptions) ------------------------------
    def listen(self, request_id: Any, params: dict[str, Any]) -> Later:
        """Open a stream: acknowledged now (through deliver), answered only when it ends."""
        key = json.dumps(request_id)
        if key in self.listening:
            raise RpcError(
                INVALID_REQUEST,
                f"id {key[:40]} already names an open subscriptions/listen stream on this connection: "
                "a new stream needs an id of its own",
            )
        if len(self.listening) >= subscriptions.MAX_STREAMS:
            # A limit, not a fault: -32600 (the request cannot be taken as it is) rather than the
            # -32603 of a server that broke; the message says how to go on.
            raise RpcError(
                INVALID_REQUEST,
                f"this connection has {subscriptions.MAX_STREAMS} open subscriptions/listen streams, the most it "
                "keeps: end one with notifications/cancelled, or watch more URIs on one stream",
            )
        wanted = subscriptions.read_filter(params)
        honoured = wanted.honoured(lambda uri: self.read_text(uri) is not None)
        self.listening[key] = self.hub.open(request_id, honoured, self.deliver)
        return LATER

    def cancelled(self, params: Any) -> None:
        """notifications/cancelled: a stream it names ends, and nothing more is sent for it (stdio).
        Any other id, and a malformed notification, is ignored (basic/patterns/cancellation)."""
        if not isinstance(params, dict):
            return
        stream = self.listening.pop(json.dumps(params.get("requestId")), None)
        if stream is not None:
            self.hub.drop(stream)

    def end_streams(self) -> None:
        """The server ends every open stream of this connection (its input has closed)."""
        for stream in self.listening.values():
            self.hub.drop(stream)
            stream.close({stateless.SERVER_INFO: SERVER_INFO})
        self.listening.clear()

    def read_text(self, uri: str) -> str | None:
        """A resource's contents as JSON text (to compare them), or ``None`` when it does not exist."""
        if self.resources is None:
            return None
        try:
            return json.dumps(self.resources.read({"uri": uri})["contents"], ensure_ascii=False)
        except RpcError:
            return None

    def watched_before(self, params: dict[str, Any]) -> dict[str, str | None]:
        """Before a write tool runs: the contents of each resource it may change that a stream
        watches (the order it names; the schema, which gains a table on a copy's first write)."""
        watched = self.hub.watched()
        if not watched:
            return {}
        arguments = params.get("arguments")
        order_id = arguments.get("order_id") if isinstance(arguments, dict) else None
        may_change = {"shop://schema"}
        if isinstance(order_id, int) and not isinstance(order_id, bool):
            may_change.add(f"shop://orders/{order_id}")
        return {uri: self.read_text(uri) for uri in may_change & watched}

    def announce_changes(self, before: dict[str, str | None]) -> None:
        """After it ran: notifications/resources/updated for each of them that changed."""
        for uri, text in before.items():
            if self.read_text(uri) != text:
                self.hub.resource_updated(uri)

    def handle_line(self, line: bytes) -> Any:
        """The reply to one line (``None`` when nothing is owed)."""
        return self.dispatcher.handle_line(line)

    def serve(self, stdin: BinaryIO, stdout: BinaryIO) -> int:
        """Serve until stdin ends; return the exit status."""
        while True:
            try:
                line = self.read_frame(stdin)
            except ValueError as exc:  # FrameError, or any framing's way of refusing a line
                reply: Any = envelope.error_message(None, PARSE_ERROR, str(exc))
            else:
                if line is None:
                    self.end_streams()
                    self.flush_outbox(stdout)
                    return 0
                if not line.strip():
                    continue  # a blank line carries no message
                reply = self.handle_line(line)
            if reply is not None:
                self.write_frame(stdout, reply)
            self.flush_outbox(stdout)

    def flush_outbox(self, stdout: BinaryIO) -> None:
        """Write the messages owed outside replies (a stream's acknowledgement, its notifications)."""
        while self.outbox:
            self.write_frame(stdout, self.outbox.pop(0))


@dataclass
class Shop:
    """The shop's pieces, opened once and shared by every session (stdio has one, HTTP one per client)."""

    toolbox: Toolbox
    resources: Resources
    prompts: Prompts
    writes: Writes | None  # only for a writable copy; its tools are offered only when writes.allowed
    hub: subscriptions.Hub = field(default_factory=subscriptions.Hub)  # every connection's listen streams

    def server(self, transport: str = "stdio") -> Server:
        return Server(self.toolbox, self.resources, self.prompts, self.writes, transport, self.hub)

    def server_factory(self, transport: str) -> Callable[[], Server]:
        return lambda: self.server(transport)


def open_shop(db: Path | str | None = None, allow_writes: bool = False, shared: bool = False) -> Shop:
    """Open the shop at ``db`` (default: the embedded one). ``shared``: for several threads (HTTP).

    Raises ``ValueError`` for ``allow_writes`` without a writable copy of the shop.
    """
    # Here, not at the top: the loop runs without the shop too.
    from .prompts import Prompts
    from .resources import Resources
    from .shop import shop_tools
    from .tools import Toolbox
    from .writes import Writes, why_not_writable

    refusal = why_not_writable(db)
    if allow_writes and refusal is not None:
        raise ValueError(refusal)
    path = Path(db) if db is not None else database.ensure_default()
    # A copy may be written (by the write tools, or by the audit of a refused write): its reads
    # must see every commit. The embedded database never changes under us: immutable.
    copy = db is not None and refusal is None
    conn = database.open_readonly(path, immutable=not copy, shared=shared)
    writes = Writes(path, allowed=allow_writes) if copy else None
    tools = shop_tools(conn) + (writes.tools() if writes is not None and allow_writes else [])
    resources = Resources(conn)
    return Shop(Toolbox(tools), resources, Prompts(conn, resources), writes)


def make_server(db: Path | str | None = None, allow_writes: bool = False) -> Server:
    """The shop server: the loop, the lifecycle, the shop's tools, resources and prompts over ``db``."""
    return open_shop(db, allow_writes).server()


def run(
    db: Path | str | None = None,
    allow_writes: bool = False,
    http: tuple[str, int] | None = None,
    auth_token: str | None = None,
) -> int:
    """Serve on this process's stdin/stdout, or over HTTP; the entry point of ``mcp-lab serve``."""
    if db is not None and not Path(db).is_file():
        print(f"mcp-lab serve: no database at {db} (build one with: mcp-lab db build {db})", file=sys.stderr)
        return 2
    if auth_token is not None and http is None:
        print("mcp-lab serve: --auth-token protects the HTTP endpoint: use it with --http HOST:PORT", file=sys.stderr)
        return 2
    try:
        shop = open_shop(db, allow_writes, shared=http is not None)
    except ValueError as exc:
        print(f"mcp-lab serve: {exc}", file=sys.stderr)
        return 2
    except (sqlite3.Error, OSError) as exc:
        print(f"mcp-lab serve: cannot open the database: {exc}", file=sys.stderr)
        return 2
    if allow_writes:
        log(f"writes allowed on {db}: every attempt is audited (mcp-lab audit --db {db})")
    if http is not None:
        from .streamable_http import serve_http

        return serve_http(shop.server_factory("http"), http, auth_token, log)
    server = shop.server()
    log(
        f"serving the shop: {', '.join(stateless.SUPPORTED)} per request (_meta), and {', '.join(SUPPORTED)} "
        "after initialize; stdin closed ends the server"
    )
    try:
        return server.serve(sys.stdin.buffer, sys.stdout.buffer)
    except BrokenPipeError:
        # The client is gone. Point stdout at /dev/null so that the interpreter's final flush
        # does not print a second BrokenPipeError on the way out.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        return 130


class _Usage(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        usage = "[--db PATH] [--allow-writes] [--http HOST:PORT [--auth-token TOKEN]]"
        raise _Usage(f"{self.prog}: {message} (usage: {self.prog} {usage})")


def address(text: str) -> tuple[str, int]:
    """``--http HOST:PORT`` as argparse reads it."""
    from .http_guard import parse_address

    try:
        return parse_address(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_serve_options(parser: argparse.ArgumentParser) -> None:
    """The options of ``mcp-lab serve`` and ``python -m reference.server``: one list for both."""
    parser.add_argument("--db", metavar="PATH", help="the shop database (default: the embedded one)")
    parser.add_argument(
        "--allow-writes",
        action="store_true",
        help="offer the write tools, on the copy given with --db (never the embedded database); all audited",
    )
    parser.add_argument(
        "--http",
        type=address,
        metavar="HOST:PORT",
        help="serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio (port 0: any free port)",
    )
    parser.add_argument("--auth-token", metavar="TOKEN", help="with --http: require Authorization: Bearer TOKEN")


def main(argv: list[str] | None = None) -> int:
    parser = _Parser(prog="python -m reference.server", description="The reference shop server.")
    add_serve_options(parser)
    try:
        args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    except _Usage as exc:
        print(exc, file=sys.stderr)
        return 2
    return run(args.db, args.allow_writes, args.http, args.auth_token)


if __name__ == "__main__":
    sys.exit(main())
