"""reference.client in both eras: the server/discover probe, the fallback, the modern envelope, MRTR.

Servers no one here wrote: the official SDK 2.x ``MCPServer`` (both eras: the modern path and an
``input_required`` round trip through its own elicitation API) and the SDK 1.x ``FastMCP`` (legacy
only: it answers the probe with -32602). Small stdlib servers in tests/servers/ for what the SDKs
do not do: silence on the probe, exiting on it, -32022 with a supported list, odd result types.
The reference server is legacy-only today and modern after the dual-era merge: its test follows
whichever era the probe finds and checks that era's wire.

Timeouts are generous and nothing asserts speed; the silent server's probe is bounded by its
probe timeout, and the order of the frames is what is checked.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import MCP_LAB, ROOT, module_argv, run_cli

from reference import database
from reference.child import child_environment
from reference.client import CLIENT_INFO, MAX_INPUT_ROUNDS, Client, ClientError
from reference.stateless import CLIENT_CAPABILITIES, PROTOCOL_VERSION

pytestmark = pytest.mark.timeout(120)

SERVERS = ROOT / "tests" / "servers"
SDK_SERVER = [sys.executable, str(SERVERS / "sdk_dual_era.py")]
SDK1 = ROOT / "build" / "sdk1" / "bin" / "python"
MODERN = "2026-07-28"
TIMEOUT = 30.0  # per reply: the SDK's servers start slowly on a busy machine
ENVELOPE = {PROTOCOL_VERSION: MODERN, CLIENT_CAPABILITIES: {}, "io.modelcontextprotocol/clientInfo": CLIENT_INFO}


class Wire:
    """The frames a client saw, decoded."""

    def __init__(self) -> None:
        self.frames: list[tuple[str, str]] = []

    def __call__(self, direction: str, text: str) -> None:
        self.frames.append((direction, text))

    def sent(self) -> list[dict[str, Any]]:
        return [json.loads(t) for d, t in self.frames if d == "->"]

    def received(self) -> list[dict[str, Any]]:
        return [json.loads(t) for d, t in self.frames if d == "<-"]

    def methods(self) -> list[str]:
        return [m.get("method", "(reply)") for m in self.sent()]


def yes(asked: list[tuple[str, dict[str, Any]]]) -> Any:
    def on_input(key: str, request: dict[str, Any]) -> dict[str, Any]:
        asked.append((key, request))
        return {"action": "accept", "content": {"confirm": True}}

    return on_input


def recorded(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


# -- the official SDK 2.x MCPServer: modern ------------------------------------------------------
def test_the_sdk_server_is_found_modern_and_every_request_carries_the_envelope() -> None:
    wire = Wire()
    with Client(SDK_SERVER, timeout=TIMEOUT, on_frame=wire) as client:
        result = client.connect()
        assert (client.era, client.version) == ("modern", MODERN)
        assert result["supportedVersions"] == [MODERN] and result["resultType"] == "complete"
        assert client.connect() is result  # the era is cached: no second probe
        tools = client.request("tools/list")
        assert {t["name"] for t in tools["tools"]} == {"count_orders", "cancel_order"}
        answer = client.request(
            "tools/call",
            {"name": "count_orders", "arguments": {"status": "paid"}, "_meta": {"progressToken": "p1"}},
        )
        assert answer["content"][0]["text"] == "paid: 3" and answer["resultType"] == "complete"
    sent = wire.sent()
    assert wire.methods() == ["server/discover", "tools/list", "tools/call"]  # no initialize, no ping
    assert sent[0] == {"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {"_meta": ENVELOPE}}
    assert sent[1]["params"] == {"_meta": ENVELOPE}
    assert sent[2]["params"] == {
        "name": "count_orders",
        "arguments": {"status": "paid"},
        "_meta": {"progressToken": "p1", **ENVELOPE},  # the caller's key kept beside the envelope
    }


def test_the_sdk_servers_input_required_round_trip() -> None:
    wire, asked = Wire(), []
    with Client(SDK_SERVER, timeout=TIMEOUT, on_frame=wire, on_input=yes(asked)) as client:
        client.connect()
        params = {"name": "cancel_order", "arguments": {"order_id": 9, "reason": "test"}}
        answer = client.request("tools/call", params)
        assert answer["content"][0]["text"] == "order 9 cancelled (test)"
    sent, received = wire.sent(), wire.received()
    assert wire.methods() == ["server/discover", "tools/call", "tools/call"]
    assert sent[0]["params"]["_meta"][CLIENT_CAPABILITIES] == {"elicitation": {"form": {}}}  # declared: on_input
    first, retry = sent[1], sent[2]
    interim = next(m for m in received if m["id"] == first["id"])["result"]
    assert interim["resultType"] == "input_required"
    assert [(key, request["method"]) for key, request in asked] == [
        (key, "elicitation/create") for key in interim["inputRequests"]
    ]
    assert asked[0][1]["params"]["message"] == "Cancel order 9?"
    assert retry["id"] != first["id"]  # a new request, not the same one again
    assert retry["params"] == {
        **params,
        "inputResponses": {key: {"action": "accept", "content": {"confirm": True}} for key in interim["inputRequests"]},
        "requestState": interim["requestState"],  # echoed as received
        "_meta": first["params"]["_meta"],
    }
    assert [t for d, t in wire.frames if d == "->"][2].count(interim["requestState"]) == 1


def test_without_on_input_no_elicitation_is_declared_and_the_sdk_refuses() -> None:
    wire = Wire()
    with Client(SDK_SERVER, timeout=TIMEOUT, on_frame=wire) as client:
        client.connect()
        with pytest.raises(ClientError) as caught:
            client.request("tools/call", {"name": "cancel_order", "arguments": {"order_id": 9, "reason": "x"}})
        assert caught.value.code == -32021  # MissingRequiredClientCapability: the SDK's answer
    assert all(m["params"]["_meta"][CLIENT_CAPABILITIES] == {} for m in wire.sent())


def test_the_sdk_server_asks_again_in_a_version_its_32022_lists() -> None:
    wire = Wire()
    with Client(SDK_SERVER, timeout=TIMEOUT, on_frame=wire, modern_versions=("2099-01-01", MODERN)) as client:
        client.connect()
        assert (client.era, client.version) == ("modern", MODERN)
        client.request("tools/list")
    sent, received = wire.sent(), wire.received()
    assert wire.methods() == ["server/discover", "server/discover", "tools/list"]  # no fallback to initialize
    assert received[0]["error"]["code"] == -32022 and MODERN in received[0]["error"]["data"]["supported"]
    assert [m["params"]["_meta"][PROTOCOL_VERSION] for m in sent] == ["2099-01-01", MODERN, MODERN]


def test_the_sdk_server_in_the_legacy_era_asks_by_a_request_of_its_own() -> None:
    wire, asked = Wire(), []
    with Client(SDK_SERVER, timeout=TIMEOUT, on_frame=wire, on_input=yes(asked), era="legacy") as client:
        result = client.connect()
        assert client.era == "legacy" and result["protocolVersion"] == "2025-11-25"
        answer = client.request("tools/call", {"name": "cancel_order", "arguments": {"order_id": 4, "reason": "r"}})
        assert answer["content"][0]["text"] == "order 4 cancelled (r)" and "resultType" not in answer
    sent = wire.sent()
    assert wire.methods()[:3] == ["initialize", "notifications/initialized", "tools/call"]
    assert sent[0]["params"]["capabilities"] == {"elicitation": {}}
    question = next(m for m in wire.received() if m.get("method") == "elicitation/create")
    assert asked == [(json.dumps(question["id"]), {"method": "elicitation/create", "params": question["params"]})]
    assert {
        "jsonrpc": "2.0",
        "id": question["id"],
        "result": {"action": "accept", "content": {"confirm": True}},
    } in sent


# -- legacy servers: the fallback -----------------------------------------------------------------------
def test_the_reference_server_is_probed_then_spoken_to_in_its_era(shop_db: Path) -> None:
    wire = Wire()
    with Client(module_argv(shop_db), timeout=TIMEOUT, on_frame=wire) as client:
        client.connect()
        answer = client.request("tools/call", {"name": "count_orders", "arguments": {"status": "paid"}})
        assert json.loads(answer["content"][0]["text"])["status"] == "paid"
        era = client.era
    sent, received = wire.sent(), wire.received()
    assert sent[0]["method"] == "server/discover"
    if era == "legacy":  # today's reference: -32601 for a method it does not know
        assert received[0]["error"]["code"] == -32601
        assert wire.methods() == ["server/discover", "initialize", "notifications/initialized", "tools/call"]
        assert sent[1]["params"] == {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": CLIENT_INFO}
    else:  # the dual-era reference: no handshake at all
        assert era == "modern" and received[0]["result"]["resultType"] == "complete"
        assert wire.methods() == ["server/discover", "tools/call"]
        assert sent[1]["params"]["_meta"] == ENVELOPE


@pytest.mark.skipif(not SDK1.exists(), reason="the SDK 1.x venv is not installed: run bench/install_corpus.sh")
def test_the_sdk1_server_answers_the_probe_with_32602_and_gets_the_handshake() -> None:
    wire = Wire()
    with Client([str(SDK1), str(SERVERS / "sdk1_legacy.py")], timeout=TIMEOUT, on_frame=wire) as client:
        client.connect()
        assert client.era == "legacy" and "-32602" in client.era_reason
        assert client.request("tools/call", {"name": "echo", "arguments": {"text": "hi"}})["content"][0]["text"] == "hi"
    assert wire.methods() == ["server/discover", "initialize", "notifications/initialized", "tools/call"]
    assert wire.received()[0]["error"]["code"] == -32602  # not -32601: the fallback keys on no one code


def test_a_server_silent_on_the_probe_gets_the_handshake_after_the_probe_timeout() -> None:
    wire = Wire()
    argv = [sys.executable, str(SERVERS / "legacy_odd.py"), "silent"]
    with Client(argv, timeout=TIMEOUT, probe_timeout=1.0, on_frame=wire) as client:
        client.connect()
        assert client.era == "legacy" and client.era_reason.startswith("no answer to server/discover within 1 s")
        assert client.request("tools/call", {"name": "echo", "arguments": {"text": "x"}})["content"][0]["text"] == "x"
    assert wire.methods() == ["server/discover", "initialize", "notifications/initialized", "tools/call"]
    assert [m["id"] for m in wire.received()] == [1, 2]  # the probe (id 0) was never answered


def test_a_result_that_is_no_discover_result_means_legacy() -> None:
    wire = Wire()
    with Client([sys.executable, str(SERVERS / "legacy_odd.py"), "empty-result"], timeout=TIMEOUT, on_frame=wire) as c:
        c.connect()
        assert c.era == "legacy" and "a result that is not a DiscoverResult" in c.era_reason
    assert wire.methods() == ["server/discover", "initialize", "notifications/initialized"]


@pytest.mark.parametrize("mode", ["exits", "answers-then-exits"])
def test_a_server_killed_by_the_probe_is_started_again_for_the_handshake(tmp_path: Path, mode: str) -> None:
    pids = tmp_path / "pids"
    wire = Wire()
    with Client([sys.executable, str(SERVERS / "legacy_odd.py"), mode, str(pids)], timeout=TIMEOUT, on_frame=wire) as c:
        result = c.connect()
        assert c.era == "legacy" and result["serverInfo"]["name"] == f"legacy-{mode}"
        assert c.restarts == 1 and "started it again for the initialize handshake" in c.era_reason
        assert c.request("tools/call", {"name": "echo", "arguments": {"text": "ok"}})["content"][0]["text"] == "ok"
        assert c.child is not None and c.child.pid == int(pids.read_text().split()[-1])  # the second start
    assert len(pids.read_text().split()) == 2
    assert wire.methods() == ["server/discover", "initialize", "notifications/initialized", "tools/call"] or (
        mode == "answers-then-exits"
        and wire.methods() == ["server/discover", "initialize", "initialize", "notifications/initialized", "tools/call"]
    )


def test_era_modern_forced_does_not_fall_back(tmp_path: Path) -> None:
    wire = Wire()
    argv = [sys.executable, str(SERVERS / "legacy_odd.py"), "answers-then-exits"]
    with Client(argv, timeout=TIMEOUT, on_frame=wire, era="modern") as client:
        with pytest.raises(ClientError, match="era forced to modern, but server/discover got -32002"):
            client.connect()
        assert client.era is None
    assert wire.methods() == ["server/discover"]


def test_an_unknown_era_is_refused() -> None:
    with pytest.raises(ValueError, match="era must be one of auto, modern, legacy"):
        Client(["true"], era="stateless")


# -- a modern-only stdlib server: -32022, MRTR's corners, result types -------------------------------------
@pytest.fixture
def modern(tmp_path: Path) -> tuple[list[str], Path]:
    record = tmp_path / "record.jsonl"
    return [sys.executable, str(SERVERS / "modern_only.py"), str(record)], record


def test_32022_with_a_supported_list_means_modern_and_a_second_probe(modern: tuple[list[str], Path]) -> None:
    argv, record = modern
    with Client(argv, timeout=TIMEOUT, modern_versions=("2099-01-01", MODERN)) as client:
        client.connect()
        assert (client.era, client.version) == ("modern", MODERN)
        assert "-32022" in client.era_reason or client.era_reason.startswith("server/discover answered")
    seen = recorded(record)
    assert [(m["method"], m["params"]["_meta"][PROTOCOL_VERSION]) for m in seen] == [
        ("server/discover", "2099-01-01"),
        ("server/discover", MODERN),
    ]


def test_a_modern_server_too_slow_for_the_probe_is_still_found_modern(modern: tuple[list[str], Path]) -> None:
    # The probe gives up after 0.5 s; the server answers it after 3 s, then refuses the initialize
    # that went out meanwhile. The late DiscoverResult decides: modern, with no second handshake.
    argv, record = modern
    wire = Wire()
    with Client([*argv, "--slow-start", "3"], timeout=TIMEOUT, probe_timeout=0.5, on_frame=wire) as client:
        result = client.connect()
        assert client.era == "modern" and result["supportedVersions"] == [MODERN]
        assert client.era_reason.startswith("server/discover answered after the 0.5 s probe timeout")
        assert client.request("tools/list")["resultType"] == "complete"
    assert wire.methods() == ["server/discover", "initialize", "tools/list"]
    assert [m["method"] for m in recorded(record)] == ["server/discover", "initialize", "tools/list"]


def test_32022_with_no_version_in_common_is_an_error_not_a_fallback(modern: tuple[list[str], Path]) -> None:
    argv, record = modern
    client = Client(argv, timeout=TIMEOUT, modern_versions=("2099-01-01",))
    with client, pytest.raises(ClientError, match=r"no version in common .*do not fall back to initialize"):
        client.connect()
    assert [m["method"] for m in recorded(record)] == ["server/discover"]


def test_a_32022_mid_session_switches_to_a_listed_version(modern: tuple[list[str], Path]) -> None:
    argv, record = modern
    with Client(argv, timeout=TIMEOUT, modern_versions=("2099-01-01", MODERN)) as client:
        client.connect()
        client.version = "2099-01-01"  # as if the server had been replaced by an older one
        assert client.request("tools/list")["resultType"] == "complete"
        assert client.version == MODERN
    assert [m["params"]["_meta"][PROTOCOL_VERSION] for m in recorded(record)][-2:] == ["2099-01-01", MODERN]


def test_request_state_is_echoed_exactly_and_answers_go_under_the_same_keys(modern: tuple[list[str], Path]) -> None:
    argv, record = modern
    asked: list[tuple[str, dict[str, Any]]] = []
    with Client(argv, timeout=TIMEOUT, on_input=yes(asked)) as client:
        client.connect()
        answer = client.request("tools/call", {"name": "confirm", "arguments": {"a": 1}})
    assert json.loads(answer["content"][0]["text"]) == {
        "state_intact": True,
        "answers": {"ok?": {"action": "accept", "content": {"confirm": True}}},
    }
    assert [key for key, _ in asked] == ["ok?"]
    calls = [m for m in recorded(record) if m["method"] == "tools/call"]
    assert len(calls) == 2 and calls[0]["id"] != calls[1]["id"]
    assert "requestState" not in calls[0]["params"] and "inputResponses" not in calls[0]["params"]
    assert {k: v for k, v in calls[1]["params"].items() if k not in ("requestState", "inputResponses")} == calls[0][
        "params"
    ]


def test_an_input_required_with_state_only_is_retried_without_input_responses(modern: tuple[list[str], Path]) -> None:
    argv, _ = modern
    with Client(argv, timeout=TIMEOUT) as client:  # no on_input: none is needed
        client.connect()
        answer = client.request("tools/call", {"name": "state_only"})
    assert json.loads(answer["content"][0]["text"]) == {"state": "s1", "has_responses": False}


def test_a_modern_servers_own_elicitation_request_is_refused(modern: tuple[list[str], Path]) -> None:
    argv, _ = modern
    asked: list[tuple[str, dict[str, Any]]] = []
    with Client(argv, timeout=TIMEOUT, on_input=yes(asked)) as client:
        client.connect()
        answer = client.request("tools/call", {"name": "old_way"})
    refusal = json.loads(answer["content"][0]["text"])
    assert refusal["id"] == "srv-1" and refusal["error"]["code"] == -32601 and asked == []


def test_a_result_without_result_type_is_complete(modern: tuple[list[str], Path]) -> None:
    argv, _ = modern
    with Client(argv, timeout=TIMEOUT) as client:
        client.connect()
        assert client.request("tools/call", {"name": "plain"}) == {"content": [{"type": "text", "text": "plain"}]}


@pytest.mark.parametrize(
    ("method", "params", "message"),
    [
        ("tools/call", {"name": "task"}, r'resultType "task" is not one this client knows'),
        ("tools/call", {"name": "forever"}, rf"still input_required after {MAX_INPUT_ROUNDS} rounds"),
        ("prompts/list", None, r"prompts/list answered input_required: only tools/call"),
        ("tools/call", {"name": "rude"}, r"elicitation/create, which this client did not declare"),
    ],
)
def test_invalid_modern_results_raise(
    modern: tuple[list[str], Path], method: str, params: dict[str, Any] | None, message: str
) -> None:
    argv, record = modern
    with Client(argv, timeout=TIMEOUT) as client:
        client.connect()
        with pytest.raises(ClientError, match=message) as caught:
            client.request(method, params)
        assert caught.value.code is None
    if params == {"name": "forever"}:
        assert len([m for m in recorded(record) if m["method"] == "tools/call"]) == MAX_INPUT_ROUNDS + 1


def test_era_legacy_forced_against_a_modern_only_server_fails_on_initialize(modern: tuple[list[str], Path]) -> None:
    argv, record = modern
    with Client(argv, timeout=TIMEOUT, era="legacy") as client:
        with pytest.raises(ClientError, match="initialize failed: -32601") as caught:
            client.connect()
        assert "2026-07-28" in caught.value.error["message"] and client.era is None
    assert [m["method"] for m in recorded(record)] == ["initialize"]


# -- mcp-lab session -------------------------------------------------------------------------------------
def transcript(text: str) -> tuple[list[dict[str, Any]], list[str]]:
    sent = [json.loads(line[3:]) for line in text.splitlines() if line.startswith("-> ")]
    remarks = [line[3:] for line in text.splitlines() if line.startswith("## ")]
    return sent, remarks


def test_cli_session_yes_against_the_sdk_server_is_modern_and_confirms() -> None:
    done = run_cli(["session", "--yes", "--timeout", str(TIMEOUT), "--", *SDK_SERVER], timeout=120)
    assert done.returncode == 0, done.stdout.decode()[-2000:]
    sent, remarks = transcript(done.stdout.decode())
    assert [m.get("method") for m in sent][:2] == ["server/discover", "tools/list"]
    assert "initialize" not in [m.get("method") for m in sent] and "ping" not in [m.get("method") for m in sent]
    assert remarks[0] == "era: modern (2026-07-28): server/discover answered: a modern server, speaking 2026-07-28"
    cancels = [m for m in sent if m.get("params", {}).get("name") == "cancel_order"]
    assert len(cancels) == 2 and "requestState" in cancels[1]["params"]
    assert any(r.startswith("the server asks (elicitation/create, ") and '"Cancel order 9?"' in r for r in remarks)
    assert '"order 9 cancelled (confirmed with mcp-lab session --yes)"' in done.stdout.decode()


def test_cli_session_without_yes_calls_no_write_and_declares_nothing() -> None:
    done = run_cli(["session", "--timeout", str(TIMEOUT), "--", *SDK_SERVER], timeout=120)
    assert done.returncode == 0, done.stdout.decode()[-2000:]
    sent, _ = transcript(done.stdout.decode())
    assert "cancel_order" not in [m.get("params", {}).get("name") for m in sent]
    assert all(m["params"]["_meta"][CLIENT_CAPABILITIES] == {} for m in sent if "id" in m)


def test_cli_session_era_legacy_yes_against_the_sdk_server() -> None:
    done = run_cli(["session", "--era", "legacy", "--yes", "--timeout", str(TIMEOUT), "--", *SDK_SERVER], timeout=120)
    assert done.returncode == 0, done.stdout.decode()[-2000:]
    sent, remarks = transcript(done.stdout.decode())
    assert [m.get("method") for m in sent][:3] == ["initialize", "notifications/initialized", "ping"]
    assert remarks[0].startswith("era: legacy (2025-11-25): era forced to legacy")
    assert any(r.startswith("the server asks (elicitation/create, ") for r in remarks)
    assert '"order 9 cancelled (confirmed with mcp-lab session --yes)"' in done.stdout.decode()


def test_cli_session_yes_cancels_an_order_on_a_writable_reference(tmp_path: Path) -> None:
    # The legacy reference cancels at once; the dual-era one asks first (input_required) in the
    # modern era: either way the order ends cancelled, and a question asked is answered and retried.
    copy = database.build(tmp_path / "shop.db")
    argv = [*module_argv(copy), "--allow-writes"]
    done = run_cli(["session", "--yes", "--timeout", str(TIMEOUT), "--", *argv], timeout=120)
    assert done.returncode == 0, done.stdout.decode()[-2000:]
    text = done.stdout.decode()
    sent, remarks = transcript(text)
    cancels = [m for m in sent if m.get("params", {}).get("name") == "cancel_order"]
    replies = {m["id"]: m for m in (json.loads(line[3:]) for line in text.splitlines() if line.startswith("<- "))}
    final = replies[cancels[-1]["id"]]["result"]
    assert final["structuredContent"] == {"order_id": 9, "status": "cancelled", "previous_status": "paid",
                                          "rows_changed": 2}  # fmt: skip
    asked = [r for r in remarks if r.startswith("the server asks")]
    if len(cancels) == 1:
        assert asked == []  # answered at once: no question
    else:
        interim = replies[cancels[0]["id"]]["result"]
        assert interim["resultType"] == "input_required" and len(asked) == len(interim.get("inputRequests", {}))
        assert cancels[1]["params"].get("requestState") == interim.get("requestState")
    with sqlite3.connect(copy) as conn:
        assert conn.execute("SELECT status FROM orders WHERE id = 9").fetchone() == ("cancelled",)


def test_cli_session_restarts_a_server_the_probe_killed(tmp_path: Path) -> None:
    argv = [sys.executable, str(SERVERS / "legacy_odd.py"), "exits", str(tmp_path / "pids")]
    done = run_cli(["session", "--timeout", str(TIMEOUT), "--", *argv], timeout=120)
    assert done.returncode == 0, done.stdout.decode()[-2000:]
    _, remarks = transcript(done.stdout.decode())
    assert remarks[0] == (
        "era: legacy (2025-11-25): the server exited on server/discover: a legacy server (stdio, Backward "
        "Compatibility); started it again for the initialize handshake"
    )


def test_cli_session_whose_reader_goes_away_ends_quietly(tmp_path: Path) -> None:
    # `mcp-lab session -- SERVER | head -1`: the transcript's reader closes the pipe after a line.
    argv = [sys.executable, str(SERVERS / "legacy_odd.py"), "silent"]
    with subprocess.Popen(
        [MCP_LAB, "session", "--timeout", "1", "--", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=child_environment(),
    ) as process:
        assert process.stdout is not None and process.stdout.readline().startswith(b"-> ")
        process.stdout.close()
        _, stderr = process.communicate(timeout=60)
    assert process.returncode == 141 and stderr == b""  # 128 + SIGPIPE; no "cannot start" line


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["session", "--era", "stateless", "--", "x"], b"mcp-lab session: argument --era: invalid choice"),
        (["session", "--yes"], b"mcp-lab session: no server command given"),
        (["session", "--yes", "--", str(ROOT / "no-such-server")], b"mcp-lab session: cannot start"),
    ],
)
def test_cli_session_wrong_invocation_is_one_line_and_exit_2(args: list[str], message: bytes) -> None:
    done = run_cli(args)
    assert done.returncode == 2 and done.stdout == b""
    assert done.stderr.startswith(message) and done.stderr.count(b"\n") == 1
