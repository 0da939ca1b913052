"""Shared helpers for the reference test suite.

- ``shop_db``: a shop database built once per session in a temporary directory;
- ``oracle``: the tools' expected answers, computed with SQL run directly on that file;
- ``Wire`` / ``server`` / ``start_server``: a real server child process (reference.child) spoken
  to in JSON lines, every read bounded by a timeout, stderr always drained;
- ``run_cli``: the ``mcp-lab`` console script run to completion with a timeout.

Framing is never re-implemented here: bytes are made and read with reference.framing.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from grader.checker import schema_formats
from reference import database
from reference.child import ChildProcess, child_environment
from reference.framing import FrameError, decode, encode

# jsonschema's optional format libraries (rfc3987_syntax alone: 1.3 s of CPU building a grammar) serve
# formats that neither nbformat's schema nor any check validates: each worker leaves them out, as grading does.
schema_formats.leave_out()

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent  # the venv's bin directory (not resolved: keep the venv)
MCP_LAB = str(BIN / "mcp-lab")
LATEST = "2025-11-25"
REVISIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
READ_TIMEOUT = 10.0  # generous: a loaded 2-core CI machine is slow, a hang is still caught


def module_argv(db: Path | str | None = None) -> list[str]:
    """``python -m reference.server [--db DB]``."""
    return [sys.executable, "-m", "reference.server", *(["--db", str(db)] if db is not None else [])]


def script_argv(db: Path | str | None = None) -> list[str]:
    """The ``mcp-lab serve [--db DB]`` console script of the venv."""
    return [MCP_LAB, "serve", *(["--db", str(db)] if db is not None else [])]


def file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def is_valid_id(value: Any) -> bool:
    """MCP ids: strings or integers (a JSON ``true`` is not an integer)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def check_envelope(message: Any) -> dict[str, Any]:
    """Assert that one message from the server is a well-formed JSON-RPC response; return it."""
    assert isinstance(message, dict), f"not a JSON object: {message!r}"
    assert message.get("jsonrpc") == "2.0", message
    assert "method" not in message, f"the server sent a request or notification: {message!r}"
    assert ("result" in message) != ("error" in message), f"need exactly one of result/error: {message!r}"
    assert "id" in message, message
    assert message["id"] is None or is_valid_id(message["id"]), message
    if "error" in message:
        error = message["error"]
        assert isinstance(error, dict), message
        assert type(error.get("code")) is int, message
        assert isinstance(error.get("message"), str) and error["message"], message
        assert message["id"] is not None or error["code"] in (-32700, -32600), message
    extra = set(message) - {"jsonrpc", "id", "result", "error"}
    assert not extra, f"unexpected members {extra}: {message!r}"
    return message


def same_id(a: Any, b: Any) -> bool:
    """Same value *and* same JSON type: 7 and "7" are different ids, so are 1 and true."""
    return type(a) is type(b) and a == b


def error_code(message: dict[str, Any]) -> int | None:
    return message["error"]["code"] if "error" in message else None


def tool_json(result: dict[str, Any]) -> Any:
    """The JSON answer inside a successful tools/call result (one text item)."""
    assert result.get("isError") is False, result
    (item,) = result["content"]
    assert item["type"] == "text"
    return json.loads(item["text"])


def tool_error_text(result: dict[str, Any]) -> str:
    assert result.get("isError") is True, result
    (item,) = result["content"]
    assert item["type"] == "text" and isinstance(item["text"], str)
    return item["text"]


class Wire:
    """A server child process, spoken to in JSON lines; every read bounded by a timeout."""

    def __init__(
        self,
        argv: Sequence[str],
        env: Mapping[str, str] | None = None,
        timeout: float = READ_TIMEOUT,
        max_line: int = 1 << 20,
    ) -> None:
        self.argv = list(argv)
        self.child = ChildProcess(self.argv, env=env, cwd=str(ROOT), max_line=max_line)
        self.timeout = timeout
        self._ids = itertools.count(1)
        self._sync = itertools.count(1)
        self.lines: list[bytes] = []  # every raw stdout line received, without its "\n"

    # -- writing -------------------------------------------------------------------------
    def send_raw(self, data: bytes) -> None:
        assert self.child.send(data), f"the server stopped reading stdin; stderr: {self.stderr()}"

    def send(self, message: Any) -> None:
        self.send_raw(encode(message))

    def notify(self, method: str, params: Any = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    # -- reading -------------------------------------------------------------------------
    def recv_line(self, timeout: float | None = None) -> bytes:
        """The next raw stdout line (without "\\n"); fails the test if none comes in time."""
        wait = self.timeout if timeout is None else timeout
        line = self.child.read_line(wait)
        if line is None:
            state = "closed stdout" if self.child.stdout_closed.is_set() else f"sent nothing in {wait:g} s"
            pytest.fail(f"the server {state}; stderr tail:\n{self.stderr()}")
        assert line.complete, f"a last stdout line without its newline: {line.data[:200]!r}"
        assert not line.cut, f"a stdout line of {line.size} bytes was cut"
        self.lines.append(line.data)
        return line.data

    def recv(self, timeout: float | None = None) -> dict[str, Any] | list[Any]:
        """The next stdout line, decoded; it must be one JSON object (or a batch reply array)."""
        data = self.recv_line(timeout)
        assert not data.endswith(b"\r"), "output lines must end in \\n, not \\r\\n"
        try:
            message = decode(data)
        except FrameError as exc:
            pytest.fail(f"stdout line is not JSON ({exc}): {data[:200]!r}")
        if isinstance(message, list):
            assert message, "never reply with an empty array"
            for item in message:
                check_envelope(item)
        else:
            check_envelope(message)
        return message

    def no_line(self, wait: float = 0.3) -> None:
        """Assert that nothing arrives on stdout within ``wait`` seconds."""
        line = self.child.read_line(wait)
        assert line is None, f"unexpected stdout line: {line.data[:200]!r}"

    # -- requests ------------------------------------------------------------------------
    def request(self, method: str, params: Any = None, id: Any = None) -> dict[str, Any]:
        """Send one request and return the whole reply, checking that its id matches."""
        request_id = next(self._ids) if id is None else id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        reply = self.recv()
        assert isinstance(reply, dict), reply
        assert same_id(reply["id"], request_id), f"sent id {request_id!r}, got {reply!r}"
        return reply

    def result(self, method: str, params: Any = None) -> Any:
        reply = self.request(method, params)
        assert "result" in reply, reply
        return reply["result"]

    def error(self, method: str, params: Any = None) -> dict[str, Any]:
        reply = self.request(method, params)
        assert "error" in reply, reply
        return reply["error"]

    def initialize(self, version: str = LATEST, client: str = "pytest") -> dict[str, Any]:
        result = self.result(
            "initialize",
            {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": client, "version": "1"}},
        )
        self.notify("notifications/initialized")
        return result

    def call_tool(self, name: str, arguments: Any = None) -> dict[str, Any]:
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        return self.result("tools/call", params)

    def sync(self, timeout: float | None = None) -> list[Any]:
        """Send a ping with a fresh id and read until its reply; return what came before it.

        A notification (or anything else owed no reply) followed by ``sync()`` must give ``[]``.
        """
        ping_id = f"sync-{next(self._sync)}-\u2603"
        self.send({"jsonrpc": "2.0", "id": ping_id, "method": "ping"})
        before: list[Any] = []
        while True:
            message = self.recv(timeout)
            if isinstance(message, dict) and same_id(message.get("id"), ping_id):
                assert message.get("result") == {}, message
                return before
            before.append(message)

    # -- ending --------------------------------------------------------------------------
    def stderr(self) -> str:
        return self.child.stderr_tail(4000)

    def stderr_with(self, text: str, timeout: float = 10.0) -> str:
        """The stderr drained so far, once it holds ``text`` (or ``timeout`` has passed): a line
        written before a reply may still be on its way through the drain thread when the reply is."""
        deadline = time.monotonic() + timeout
        while text not in (seen := self.stderr()) and time.monotonic() < deadline:
            time.sleep(0.02)
        return seen

    def alive(self) -> bool:
        return self.child.process.poll() is None

    def close(self, grace: float = 2.0) -> int:
        return self.child.close(grace)


class ShopOracle:
    """The shop tools' answers computed with SQL (and Python) straight on the database file."""

    INT64_MAX = (1 << 63) - 1

    def __init__(self, path: Path) -> None:
        self.conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        self._orders: list[dict[str, Any]] | None = None  # every order with its total, read once

    def close(self) -> None:
        self.conn.close()

    def scalar(self, sql: str, *args: Any) -> Any:
        return self.conn.execute(sql, args).fetchone()[0]

    def rows(self, sql: str, *args: Any) -> list[dict[str, Any]]:
        cursor = self.conn.execute(sql, args)
        names = [c[0] for c in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def statuses(self) -> list[str]:
        """Every status the schema allows, read from the CHECK constraint, plus any in use."""
        sql = self.scalar("SELECT sql FROM sqlite_master WHERE name = 'orders'")
        check = re.search(r"status\s+IN\s*\(([^)]*)\)", sql)
        assert check, sql
        found = re.findall(r"'([^']*)'", check.group(1))
        used = [r["status"] for r in self.rows("SELECT DISTINCT status FROM orders")]
        return sorted(set(found) | set(used))

    def count_orders(self, status: str | None = None) -> dict[str, Any]:
        if status is None:
            return {"count": self.scalar("SELECT count(*) FROM orders")}
        return {"status": status, "count": self.scalar("SELECT count(*) FROM orders WHERE status = ?", status)}

    def list_orders(
        self, status: str | None = None, customer_id: int | None = None, limit: int = 20, offset: int = 0
    ) -> dict[str, Any]:
        if self._orders is None:
            self._orders = self.rows(
                """SELECT o.id, o.status, o.created_at, o.customer_id, c.name AS customer,
                          sum(i.quantity * i.unit_price_cents) AS total_cents
                     FROM orders o JOIN customers c ON c.id = o.customer_id
                     LEFT JOIN order_items i ON i.order_id = o.id
                    GROUP BY o.id ORDER BY o.id"""
            )
        orders = [dict(o) for o in self._orders]
        chosen = [
            o
            for o in orders
            if (status is None or o["status"] == status) and (customer_id is None or o["customer_id"] == customer_id)
        ]
        return {"total": len(chosen), "offset": offset, "orders": chosen[offset : offset + limit]}

    def order_id_range(self) -> tuple[int, int]:
        return self.conn.execute("SELECT min(id), max(id) FROM orders").fetchone()

    def get_order(self, order_id: int) -> dict[str, Any] | None:
        found = self.rows(
            """SELECT o.id, o.status, o.created_at, o.customer_id, c.name AS customer, c.email
                 FROM orders o, customers c WHERE c.id = o.customer_id AND o.id = ?""",
            order_id,
        )
        if not found:
            return None
        order = found[0]
        order["items"] = self.rows(
            """SELECT p.id AS product_id, p.sku, p.name, i.quantity, i.unit_price_cents
                 FROM order_items i, products p WHERE p.id = i.product_id AND i.order_id = ?
                ORDER BY p.id""",
            order_id,
        )
        order["total_cents"] = self.scalar(
            "SELECT coalesce(sum(quantity * unit_price_cents), 0) FROM order_items WHERE order_id = ?", order_id
        )
        return order

    def search_products(self, query: str, limit: int = 10) -> dict[str, Any]:
        """Substring search, case-insensitive for ASCII letters only (as SQL LIKE is), done in Python."""
        fold = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
        needle = query.translate(fold)
        products = self.rows("SELECT id, sku, name, category, price_cents, stock FROM products ORDER BY id")
        found = [p for p in products if any(needle in p[key].translate(fold) for key in ("name", "category", "sku"))]
        return {"query": query, "products": found[:limit]}


@pytest.fixture(scope="session")
def shop_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A shop database built once for the session (the embedded default is left alone)."""
    return database.build(tmp_path_factory.mktemp("shop") / "shop.db")


@pytest.fixture(scope="session")
def shop_db_hash(shop_db: Path) -> str:
    return file_hash(shop_db)


@pytest.fixture(scope="session")
def oracle(shop_db: Path) -> Iterator[ShopOracle]:
    shop = ShopOracle(shop_db)
    yield shop
    shop.close()


@pytest.fixture
def start_server(shop_db: Path, shop_db_hash: str) -> Iterator[Callable[..., Wire]]:
    """A factory of server children (default: ``python -m reference.server --db SHOP``).

    Every child still running at teardown is closed; the database must be unchanged.
    """
    started: list[Wire] = []

    def start(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None, **kwargs: Any) -> Wire:
        wire = Wire(argv if argv is not None else module_argv(shop_db), env=env, **kwargs)
        started.append(wire)
        return wire

    yield start
    for wire in started:
        wire.close()
    assert file_hash(shop_db) == shop_db_hash, "the shop database changed"


@pytest.fixture
def server(start_server: Callable[..., Wire]) -> Iterator[Wire]:
    """One reference server child; at teardown it must exit with status 0 on stdin EOF."""
    wire = start_server()
    yield wire
    code = wire.close()
    assert code == 0, f"exit status {code}; stderr tail:\n{wire.stderr()}"


def run_cli(
    args: Sequence[str],
    input: bytes = b"",
    timeout: float = 30.0,
    env: Mapping[str, str] | None = None,
    argv0: Sequence[str] = (MCP_LAB,),
) -> subprocess.CompletedProcess[bytes]:
    """Run ``mcp-lab ARGS`` (or ``argv0 ARGS``) to completion, PYTHONUNBUFFERED removed."""
    return subprocess.run(
        [*argv0, *args],
        input=input,
        capture_output=True,
        timeout=timeout,
        env=child_environment(env),
        cwd=str(ROOT),
        check=False,
    )


# -- test distribution (make test: pytest -n 4 --dist loadgroup --no-loadscope-reorder) ----------
# A test that uses a module-scoped fixture (a graded class, a running server, a built kit) runs on the
# worker that built it: all of its file's tests that use one are a group. The course pipeline, the
# longest file by far, is a group per stage (its course fixture is session-scoped: a worker builds the
# nbgrader course once, whichever stages it gets). Every other test goes to whichever worker is free,
# so that no long file becomes one worker's serial tail. Without xdist the marks do nothing.
#
# The order work is handed out in: the machine has two cores and five workers. Most groups keep the
# CPU busy (grading a stage); the files of WAITING mostly wait (on a server's time-out, a hub, a
# cluster). Handed out in collection order, the waiting files ran side by side on all the workers at
# the end, and the CPU sat idle a tenth of the run. So their tests come in slices, and one slice goes
# out after every few busy groups: about one worker waits while the others keep the CPU busy.
# Each file: how many slices its tests of no group make (the others are one group already), in the
# order they go out: the longest first.
WAITING = {"test_jupyterhub": 1, "test_gallery": 3, "test_clinic_evidence": 2, "test_grading_cluster": 1}
WAITING |= {"test_root_cause": 2}


def _uses_module_fixture(item: pytest.Item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    defs = info.name2fixturedefs.values() if info is not None else []
    return any(d and d[-1].scope == "module" for d in defs)


def _module_name(item: pytest.Item) -> str:
    module = getattr(item, "module", None)
    return module.__name__ if module is not None else item.nodeid.split("::")[0]


def _file(item: pytest.Item) -> str:
    """The test file's module name without its package: the key of WAITING."""
    return _module_name(item).rpartition(".")[2]


def _group(item: pytest.Item) -> str | None:
    marker = item.get_closest_marker("xdist_group")
    return str(marker.args[0]) if marker is not None and marker.args else None


def handout_order(items: list[pytest.Item]) -> list[pytest.Item]:
    """``items`` in the order xdist (``--no-loadscope-reorder``) hands their groups out: the busy groups,
    largest first (xdist's own order), with a unit that mostly waits after every few of them (a slice of
    a WAITING file, or a test of no group marked ``slow``), then the other tests of no group, one file's
    after another's in turn (a file's waits do not pile up either)."""
    units: dict[str, list[pytest.Item]] = {}
    for item in items:
        units.setdefault(_group(item) or item.nodeid, []).append(item)
    grouped = [unit for unit in units.values() if _group(unit[0]) is not None]
    rank = {name: at for at, name in enumerate(WAITING)}
    waiting = sorted((unit for unit in grouped if _file(unit[0]) in rank), key=lambda unit: rank[_file(unit[0])])
    busy = sorted((unit for unit in grouped if _file(unit[0]) not in rank), key=lambda unit: -len(unit))
    # The slow tests of no group are spread as the slices are, each list dealt over the whole run: handed
    # out last, one kept a worker waiting 40 s after the other three had run dry; handed out together,
    # four waited side by side.
    slow: list[list[pytest.Item]] = []
    alone: dict[str, list[list[pytest.Item]]] = {}
    for unit in units.values():
        if _group(unit[0]) is None and unit[0].get_closest_marker("slow"):
            slow.append(unit)
        elif _group(unit[0]) is None:
            alone.setdefault(_module_name(unit[0]), []).append(unit)
    share = [(at / len(waiting), unit) for at, unit in enumerate(waiting)]
    share += [(at / len(slow), unit) for at, unit in enumerate(slow)]
    extras = [unit for _, unit in sorted(share, key=lambda pair: pair[0])]
    order: list[list[pytest.Item]] = []
    every = max(1, len(busy) // max(1, len(extras)))
    for at, unit in enumerate(busy):
        if at % every == 0 and extras:
            order.append(extras.pop(0))
        order.append(unit)
    order += extras
    order += [unit for turn in itertools.zip_longest(*alone.values()) for unit in turn if unit is not None]
    return [item for unit in order for item in unit]


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Any:
    """Collect with pytest's rewritten test modules saved. Where PYTHONDONTWRITEBYTECODE is set (CI, this
    machine), pytest rewrote the asserts of every test module again in each worker at each run: about
    3 s of CPU a worker (``pytest --collect-only``: 6.5 s, 3.8 s once saved). Only collection writes:
    the tests then import their folders' modules as before, and their children keep the variable."""
    was = sys.dont_write_bytecode
    sys.dont_write_bytecode = False
    try:
        return (yield)
    finally:
        sys.dont_write_bytecode = was


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which reads the marks to group the tests
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    sliced: dict[str, int] = {}
    for item in items:
        group, name = _module_name(item), _file(item)
        if group.endswith("test_course_pipeline"):
            callspec = getattr(item, "callspec", None)
            stage = str(callspec.params.get("name", "")) if callspec is not None else ""
            group += f"-{stage[:2] or 'course'}"
        elif WAITING.get(name, 1) > 1 and not _uses_module_fixture(item):
            # A WAITING file in slices, its tests dealt round: a parametrized test's long cases share out.
            sliced[name] = sliced.get(name, -1) + 1
            group = f"{name}-{sliced[name] % WAITING[name]}"
        elif not _uses_module_fixture(item):
            continue
        item.add_marker(pytest.mark.xdist_group(group))
    items[:] = handout_order(items)
