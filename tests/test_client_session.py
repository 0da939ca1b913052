"""reference.child, reference.client and reference.session (and ``mcp-lab session``).

The child: bounded reads, stderr drained, long lines cut but counted, the shutdown order
(stdin, SIGTERM, SIGKILL) reaching whatever the server forked. The client: replies matched by
id and JSON type (tiny stdlib fake servers written to tmp_path answer out of order, talk first,
ask the client things), timeouts and dead servers raise ClientError promptly. The session:
a transcript against the reference server, and ``!!`` for a banner on stdout.
"""

from __future__ import annotations

import io
import json
import os
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import ROOT, ShopOracle, module_argv, run_cli, script_argv, tool_json

from reference.child import MAX_LINE_KEPT, MAX_STDOUT_KEPT, STDERR_TAIL, ChildProcess, child_environment
from reference.client import Client, ClientError
from reference.session import SHOP_CALLS, run_session
from reference.stateless import PROTOCOL_VERSION

# A net only: every wait on a child here is bounded in seconds by the test (the slowest test takes
# about 3 s); this stops a hang in code under test (a mutant) in a minute, not pytest's 300 s.
pytestmark = pytest.mark.timeout(60)

FAKE_SERVER = r"""
import json, sys

mode = sys.argv[1]
out = sys.stdout.buffer


def send(message):
    out.write(json.dumps(message).encode() + b"\n")
    out.flush()


def read():
    line = sys.stdin.buffer.readline()
    return json.loads(line) if line else None


if mode == "reverse":
    # Answers two requests in reverse order, after a reply carrying the right value as a string.
    first = read()
    second_id = first["id"] + 1
    send({"jsonrpc": "2.0", "id": str(first["id"]), "result": {"n": "wrong type"}})
    send({"jsonrpc": "2.0", "id": second_id, "result": {"n": second_id}})
    send({"jsonrpc": "2.0", "id": first["id"], "result": {"n": first["id"]}})
    second = read()
    assert second["id"] == second_id, second
elif mode == "aliases":
    # Before the first reply, replies whose ids Python finds equal to the next request's id (1)
    # though JSON does not (true, 1.0, "1"), or that Python cannot hash (a list, an object).
    first = read()
    send({"jsonrpc": "2.0", "result": {"n": "no id"}})  # answers nothing: dropped
    for alias in (True, 1.0, "1", [1], {"id": 1}, None):
        send({"jsonrpc": "2.0", "id": alias, "result": {"n": repr(alias)}})
    send({"jsonrpc": "2.0", "id": first["id"], "result": {"n": first["id"]}})
    second = read()
    send({"jsonrpc": "2.0", "id": second["id"], "result": {"n": second["id"]}})
elif mode == "notes":
    # Answers the first request with every notification that came before it, as it came.
    seen = []
    while "id" not in (message := read()):
        seen.append(message)
    send({"jsonrpc": "2.0", "id": message["id"], "result": {"seen": seen}})
elif mode == "chatty":
    out.write(b"Starting the fake server, v1 ...\n\xff\xfe not UTF-8\n")
    out.flush()
    first = read()
    send({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hi"}})
    send({"jsonrpc": "2.0", "id": "s1", "method": "ping"})
    ping_answer = read()
    send({"jsonrpc": "2.0", "id": "s2", "method": "sampling/createMessage", "params": {}})
    refusal = read()
    send({"jsonrpc": "2.0", "id": first["id"], "result": {"ping": ping_answer, "refusal": refusal}})
elif mode == "error":
    first = read()
    send({"jsonrpc": "2.0", "id": first["id"], "error": {"code": -32601, "message": "no such method"}})
elif mode == "die":
    read()
    sys.stderr.write("fatal: the fake server gave up\n")
    sys.exit(3)
elif mode == "die-loudly":
    read()
    sys.stderr.write("".join(f"log line {n:07d}\n" for n in range(100_000)))  # 1.7 MB
    sys.stderr.write("fatal: the last words\n")
    sys.exit(3)
for _ in sys.stdin.buffer:
    pass
"""


@pytest.fixture
def fake_server(tmp_path: Path) -> Path:
    path = tmp_path / "fake_server.py"
    path.write_text(FAKE_SERVER)
    return path


def wait_for_stderr(child: ChildProcess, text: str, timeout: float = 10.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        tail = child.stderr_tail()
        if text in tail:
            return tail
        time.sleep(0.02)
    pytest.fail(f"{text!r} never appeared on stderr: {child.stderr_tail()!r}")


# -- child ----------------------------------------------------------------------------------
def test_child_environment_drops_pythonunbuffered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONUNBUFFERED", "1")
    env = child_environment({"EXTRA": "x"})
    assert "PYTHONUNBUFFERED" not in env and env["EXTRA"] == "x"
    with ChildProcess([sys.executable, "-c", "import os; print(os.environ.get('PYTHONUNBUFFERED'))"]) as child:
        line = child.read_line(10)
        assert line is not None and line.data == b"None"


def test_child_read_line_times_out_without_hanging() -> None:
    child = ChildProcess([sys.executable, "-c", "import sys; sys.stdin.read()"])
    try:
        started = time.monotonic()
        assert child.read_line(0.3) is None
        assert time.monotonic() - started < 5
        assert not child.stdout_closed.is_set()
    finally:
        assert child.close() == 0


def test_child_drains_stderr() -> None:
    # 4 MiB on stderr before the answer: a host that did not drain stderr would deadlock here.
    code = "import sys; sys.stderr.write('e' * (4 << 20)); sys.stderr.flush(); print('done', flush=True)"
    with ChildProcess([sys.executable, "-c", code]) as child:
        line = child.read_line(20)
        assert line is not None and line.data == b"done"
        assert child.wait(10) == 0
        deadline = time.monotonic() + 10
        while child.stderr_bytes < 4 << 20 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert child.stderr_bytes == 4 << 20
        assert child.stderr_tail(10) == "e" * 10


def test_child_cuts_long_lines_but_counts_them_and_keeps_a_last_partial_line() -> None:
    code = "import sys; sys.stdout.write('x' * 5000 + '\\n' + 'tail'); sys.stdout.flush()"
    with ChildProcess([sys.executable, "-c", code], max_line=100) as child:
        first = child.read_line(10)
        assert first is not None and first.data == b"x" * 100 and first.size == 5000 and first.cut
        last = child.read_line(10)
        assert last is not None and last.data == b"tail" and not last.complete
        assert child.read_line(10) is None and child.stdout_closed.is_set()


def wait_for_stderr_bytes(child: ChildProcess, size: int, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while child.stderr_bytes < size and time.monotonic() < deadline:
        time.sleep(0.02)
    assert child.stderr_bytes == size


def test_child_keeps_only_the_tail_of_a_long_stderr() -> None:
    # 1.7 MB of numbered lines: all counted, only the last STDERR_TAIL bytes or so kept, in order.
    written = "".join(f"log line {n:07d}\n" for n in range(100_000))
    code = "import sys; sys.stderr.write(''.join(f'log line {n:07d}\\n' for n in range(100_000)))"
    with ChildProcess([sys.executable, "-c", code]) as child:
        assert child.wait(20) == 0
        wait_for_stderr_bytes(child, len(written))
        kept = child.stderr_tail(len(written))
        assert STDERR_TAIL <= len(kept) <= STDERR_TAIL + (64 << 10)  # one pipe read of slack at most
        assert written.endswith(kept)
        assert child.stderr_tail(17) == written[-17:]


def test_child_keeps_at_most_max_stdout_kept_but_counts_everything() -> None:
    # 40 lines of just under 1 MiB: lines are kept until MAX_STDOUT_KEPT (32 MiB) is reached,
    # then counted only; the end of stdout is still reported.
    size, count = MAX_LINE_KEPT - 1, 40
    code = f"import sys\nfor n in range({count}): sys.stdout.write(str(n % 10) * {size} + '\\n')\nsys.stdout.flush()"
    with ChildProcess([sys.executable, "-c", code]) as child:
        kept: list[bytes] = []
        while (line := child.read_line(20)) is not None:
            assert line.size == size and not line.cut
            kept.append(line.data)
        assert child.stdout_closed.is_set()
        assert child.stdout_bytes == count * (size + 1)
        assert [data[:1] for data in kept] == [str(n % 10).encode() for n in range(len(kept))]  # the first ones
        assert MAX_STDOUT_KEPT <= sum(map(len, kept)) < MAX_STDOUT_KEPT + MAX_LINE_KEPT
        assert child.wait(10) == 0


def test_child_send_to_a_dead_child_returns_false() -> None:
    child = ChildProcess([sys.executable, "-c", "pass"])
    assert child.wait(10) == 0
    assert not child.send(b"x" * (1 << 20))
    assert child.close() == 0


def test_child_close_kills_what_the_server_forked(tmp_path: Path) -> None:
    code = textwrap.dedent(
        """
        import subprocess, sys, time
        grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        sys.stderr.write(f"grandchild {grandchild.pid}\\n")
        sys.stderr.flush()
        sys.stdin.read()
        """
    )
    child = ChildProcess([sys.executable, "-c", code])
    tail = wait_for_stderr(child, "grandchild ")
    pid = int(tail.split("grandchild ")[1].split()[0])
    assert child.close(grace=5) == 0
    assert dies_within(pid, 10), "the grandchild outlived close()"


def test_child_kill_ends_it_and_what_it_forked_at_once() -> None:
    code = textwrap.dedent(
        """
        import signal, subprocess, sys, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        sys.stderr.write(f"grandchild {grandchild.pid}\\n")
        sys.stderr.flush()
        time.sleep(60)
        """
    )
    child = ChildProcess([sys.executable, "-c", code])
    try:
        pid = int(wait_for_stderr(child, "grandchild ").split("grandchild ")[1].split()[0])
        started = time.monotonic()
        child.kill()
        assert child.process.poll() == -9  # SIGKILL, not a polite SIGTERM, and waited for
        assert time.monotonic() - started < 5
        assert dies_within(pid, 10), "the grandchild outlived kill()"
    finally:
        assert child.close() == -9


def dies_within(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process_alive(pid):
        time.sleep(0.05)
    return not process_alive(pid)


def process_alive(pid: int) -> bool:
    """True if ``pid`` runs (a zombie waiting for its reaper counts as dead)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


# -- client against the reference ------------------------------------------------------------------
def test_client_full_session(shop_db: Path, oracle: ShopOracle) -> None:
    frames: list[tuple[str, str]] = []
    client = Client(module_argv(shop_db), timeout=10, on_frame=lambda d, t: frames.append((d, t)))
    with client:
        result = client.initialize()
        assert result["protocolVersion"] == "2025-11-25"
        assert client.request("ping") == {}
        answer = client.request("tools/call", {"name": "count_orders", "arguments": {"status": "paid"}})
        assert tool_json(answer) == oracle.count_orders("paid")
        with pytest.raises(ClientError) as caught:
            client.request("tools/call", {"name": "no_such_tool"})
        assert caught.value.code == -32602
        with pytest.raises(ClientError) as caught:
            client.request("resources/subscribe", {"uri": "shop://schema"})
        assert caught.value.code == -32601
        assert client.notifications == [] and client.noise == []
        child = client.child
    assert child is not None and child.process.returncode == 0
    sent = [json.loads(text) for direction, text in frames if direction == "->"]
    requests = [m for m in sent if "id" in m]
    assert [m["id"] for m in requests] == list(range(len(requests)))  # fresh ids from 0
    assert sent[0] == {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "mcp-wire-lab-client", "version": "0.1.0"},
        },
    }
    assert sent[1] == {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert frames[2] == ("->", '{"jsonrpc":"2.0","method":"notifications/initialized"}')  # the line, no "\n"
    received = [json.loads(text) for direction, text in frames if direction == "<-"]
    assert [m["id"] for m in received] == [m["id"] for m in requests]
    assert {d for d, _ in frames} == {"->", "<-"}


@pytest.mark.parametrize("version", ["2025-03-26", "2024-11-05"])
def test_client_initialize_with_an_older_revision(shop_db: Path, version: str) -> None:
    with Client(module_argv(shop_db), timeout=10) as client:
        assert client.initialize(version)["protocolVersion"] == version


def test_close_without_start_and_twice(shop_db: Path) -> None:
    assert Client(module_argv(shop_db)).close() is None
    client = Client(module_argv(shop_db), timeout=10).start()
    assert client.close(grace=10) == 0  # closed at once: the grace covers its start-up on a loaded machine
    assert client.close() is None


# -- client against fake servers ---------------------------------------------------------------------
def test_client_matches_replies_by_id_and_type(fake_server: Path) -> None:
    with Client([sys.executable, str(fake_server), "reverse"], timeout=10) as client:
        assert client.request("first") == {"n": 0}
        # The second reply came before the second request: it was kept, not lost or mixed up.
        assert [m["id"] for m in client.early] == ["0", 1] and client.early[1]["result"] == {"n": 1}
        assert client.request("second", timeout=0.5) == {"n": 1}
        assert client.early == [{"jsonrpc": "2.0", "id": "0", "result": {"n": "wrong type"}}]  # "0" is not 0


def test_client_takes_no_reply_whose_id_differs_in_json_type(fake_server: Path) -> None:
    with Client([sys.executable, str(fake_server), "aliases"], timeout=10) as client:
        assert client.request("first") == {"n": 0}
        # The early replies with ids true, 1.0 and "1" are not the reply to request 1; a result
        # without an id answers no request and is not kept.
        assert client.request("second", timeout=5) == {"n": 1}
        assert [m["id"] for m in client.early] == [True, 1.0, "1", [1], {"id": 1}, None]


def test_client_copes_with_noise_notifications_and_server_requests(fake_server: Path) -> None:
    frames: list[tuple[str, str]] = []
    with Client(
        [sys.executable, str(fake_server), "chatty"], timeout=10, on_frame=lambda d, t: frames.append((d, t))
    ) as client:
        result = client.request("hello")
        assert result["ping"] == {"jsonrpc": "2.0", "id": "s1", "result": {}}
        refusal = result["refusal"]
        assert refusal == {
            "jsonrpc": "2.0",
            "id": "s2",
            "error": {"code": -32601, "message": "Method not found: sampling/createMessage"},
        }
        assert client.notifications == [
            {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hi"}}
        ]
        assert client.noise == [b"Starting the fake server, v1 ...", b"\xff\xfe not UTF-8"]
    assert ("!!", "Starting the fake server, v1 ...") in frames
    assert ("!!", "\ufffd\ufffd not UTF-8") in frames  # shown with replacement characters, never a crash


def test_client_notifications_are_sent_as_given_and_get_no_reply(fake_server: Path) -> None:
    with Client([sys.executable, str(fake_server), "notes"], timeout=10) as client:
        client.notify("notifications/cancelled", {"requestId": 5, "reason": "user"})
        client.notify("notifications/initialized")
        assert client.request("tell") == {
            "seen": [
                {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5, "reason": "user"}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},  # no params member at all
            ]
        }


def test_client_error_reply_raises_with_the_code(fake_server: Path) -> None:
    with Client([sys.executable, str(fake_server), "error"], timeout=10) as client:
        with pytest.raises(ClientError) as caught:
            client.request("anything")
        assert caught.value.code == -32601
        assert caught.value.error == {"code": -32601, "message": "no such method"}
        assert str(caught.value) == "anything failed: -32601 no such method"


def test_client_dead_server_raises_with_its_stderr(fake_server: Path) -> None:
    client = Client([sys.executable, str(fake_server), "die"], timeout=10).start()
    try:
        with pytest.raises(ClientError, match="closed stdout") as caught:
            client.request("anything")
        assert caught.value.code is None
        # The reader may see stdout close before the last stderr bytes: check the tail directly.
        assert client.child is not None
        wait_for_stderr(client.child, "the fake server gave up")
        with pytest.raises(ClientError, match="stopped reading"):
            for _ in range(100):  # the pipe may take a write or two to report the dead reader
                client.notify("notifications/initialized")
                time.sleep(0.01)
    finally:
        assert client.close() == 3


def test_client_error_quotes_a_bounded_stderr_tail(fake_server: Path) -> None:
    with Client([sys.executable, str(fake_server), "die-loudly"], timeout=10) as client:
        assert client.child is not None
        with pytest.raises(ClientError, match="closed stdout"):
            client.request("anything")
        wait_for_stderr(client.child, "fatal: the last words")
        with pytest.raises(ClientError, match="stopped reading") as caught:
            for _ in range(100):  # the pipe may take a write or two to report the dead reader
                client.notify("notifications/initialized")
                time.sleep(0.01)
        message = str(caught.value)
        assert message.endswith("fatal: the last words") and "log line 0099999" in message
        assert len(message) < 600, "at most 500 bytes of stderr in a message"


def test_client_timeout_is_prompt() -> None:
    client = Client([sys.executable, "-c", "import time; time.sleep(60)"], timeout=0.5).start()
    try:
        started = time.monotonic()
        with pytest.raises(ClientError, match="no reply") as caught:
            client.request("ping")
        assert time.monotonic() - started < 5
        assert caught.value.code is None
        assert str(caught.value) == "no reply to ping (id 0) within 0.5 s"  # no stderr: no hint about it
    finally:
        started = time.monotonic()
        code = client.close(grace=0.5)
        assert code is not None and code < 0  # ended by a signal: it never read its stdin
        assert time.monotonic() - started < 10


def test_client_timeout_counts_from_the_request() -> None:
    # Two seconds after the start, a request with its own 0.5 s timeout still waits 0.5 s (not the
    # client's 10 s, nor a deadline counted from the start).
    client = Client([sys.executable, "-c", "import time; time.sleep(60)"], timeout=10).start()
    try:
        time.sleep(2.0)
        started = time.monotonic()
        with pytest.raises(ClientError, match=r"no reply to ping \(id 0\) within 0.5 s"):
            client.request("ping", timeout=0.5)
        assert 0.4 < time.monotonic() - started < 2.0
    finally:
        client.close(grace=0.5)


def test_client_close_ends_a_server_that_ignores_sigterm_and_eof() -> None:
    code = textwrap.dedent(
        """
        import signal, sys, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        sys.stderr.write("ready\\n")
        sys.stderr.flush()
        while True:
            time.sleep(1)
        """
    )
    client = Client([sys.executable, "-c", code], timeout=1).start()
    assert client.child is not None
    child = client.child
    wait_for_stderr(child, "ready")
    started = time.monotonic()
    status = client.close(grace=0.5)
    assert time.monotonic() - started < 10
    assert status == -9  # SIGTERM was ignored: SIGKILL ended it
    assert child.process.poll() is not None


def test_client_passes_its_environment_to_the_server() -> None:
    code = (
        "import json, os, sys\n"
        "request = json.loads(sys.stdin.readline())\n"
        "value = {k: os.environ.get(k) for k in ('MCP_LAB_TEST_VAR', 'PYTHONUNBUFFERED')}\n"
        "print(json.dumps({'jsonrpc': '2.0', 'id': request['id'], 'result': value}), flush=True)\n"
    )
    with Client([sys.executable, "-c", code], timeout=10, env={"MCP_LAB_TEST_VAR": "x\u00e9"}) as client:
        assert client.request("env") == {"MCP_LAB_TEST_VAR": "x\u00e9", "PYTHONUNBUFFERED": None}


def test_client_start_of_a_missing_command_raises_oserror(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        Client([str(tmp_path / "no-such-server")]).start()


# -- session -----------------------------------------------------------------------------------
def parse_transcript(text: str) -> list[tuple[str, str]]:
    lines = text.splitlines()
    assert lines, "empty transcript"
    parsed = []
    for line in lines:
        direction, _, rest = line.partition(" ")
        assert direction in ("->", "<-", "!!", "##"), line
        parsed.append((direction, rest))
    return parsed


def check_reference_transcript(parsed: list[tuple[str, str]], oracle: ShopOracle) -> None:
    """The session's transcript against the reference, in whichever era the reference speaks.

    The probe comes first either way; a legacy reference answers it with an error and gets the
    handshake, a modern one (the lead's dual-era server) gets no initialize at all.
    """
    sent = [json.loads(rest) for d, rest in parsed if d == "->"]
    received = [json.loads(rest) for d, rest in parsed if d == "<-"]
    era = next(rest for d, rest in parsed if d == "##" and rest.startswith("era: "))
    assert sent[0]["method"] == "server/discover"
    if era.startswith("era: legacy"):
        assert "error" in received[0] and sent[1]["method"] == "initialize"
        assert sent[2] == {"jsonrpc": "2.0", "method": "notifications/initialized"}
    else:
        assert era.startswith("era: modern (2026-07-28)") and received[0]["result"]["supportedVersions"]
        assert "initialize" not in [m.get("method") for m in sent]
        assert all(m["params"]["_meta"][PROTOCOL_VERSION] == "2026-07-28" for m in sent if "id" in m)
    assert [m["params"]["name"] for m in sent if m.get("method") == "tools/call"] == [n for n, _ in SHOP_CALLS]
    assert len(received) == len([m for m in sent if "id" in m])
    by_id = {m["id"]: m for m in received}
    for message in sent:
        if message.get("method") != "tools/call":
            continue
        name, arguments = message["params"]["name"], message["params"]["arguments"]
        reply = by_id[message["id"]]
        if name == "no_such_tool":
            assert reply["error"]["code"] == -32602
        elif name == "count_orders" and arguments["status"] in oracle.statuses():
            assert tool_json(reply["result"]) == oracle.count_orders(arguments["status"])
        elif name == "count_orders":
            assert reply["result"]["isError"] is True
        else:
            assert reply["result"]["isError"] is False
    assert ("##", "server exited with status 0") in parsed


def test_run_session_against_the_reference(shop_db: Path, oracle: ShopOracle) -> None:
    out = io.StringIO()
    assert run_session(module_argv(shop_db), out=out, timeout=10) == 0
    parsed = parse_transcript(out.getvalue())
    assert not [rest for d, rest in parsed if d == "!!"]
    check_reference_transcript(parsed, oracle)


def test_run_session_against_a_silent_server() -> None:
    out = io.StringIO()
    started = time.monotonic()
    code = run_session([sys.executable, "-c", "import time; time.sleep(60)"], out=out, timeout=0.5)
    assert code == 1
    assert time.monotonic() - started < 10
    assert "## session failed: no reply to initialize" in out.getvalue()


@pytest.mark.parametrize("server", ["module", "console-script"])
def test_cli_session_prints_the_transcript(shop_db: Path, oracle: ShopOracle, server: str) -> None:
    argv = module_argv(shop_db) if server == "module" else script_argv(shop_db)
    done = run_cli(["session", "--timeout", "10", "--", *argv], timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr == b""
    check_reference_transcript(parse_transcript(done.stdout.decode()), oracle)


def test_cli_session_marks_a_banner(tmp_path: Path, shop_db: Path, oracle: ShopOracle) -> None:
    banner = tmp_path / "banner_server.py"
    banner.write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "sys.stdout.write('Shop server 1.0 starting...\\n')\n"
        "sys.stdout.flush()\n"
        "from reference.server import main\n"
        f"sys.exit(main(['--db', {str(shop_db)!r}]))\n"
    )
    done = run_cli(["session", "--", sys.executable, str(banner)], timeout=60)
    parsed = parse_transcript(done.stdout.decode())
    assert ("!!", "Shop server 1.0 starting...") in parsed
    assert ("##", "1 stdout line(s) were not JSON-RPC messages (marked !!)") in parsed
    check_reference_transcript(parsed, oracle)
    assert done.returncode == 0


def test_cli_session_against_a_server_that_never_answers() -> None:
    done = run_cli(["session", "--timeout", "0.5", "--", sys.executable, "-c", "import time; time.sleep(60)"])
    assert done.returncode == 1
    assert b"## session failed" in done.stdout


# A child whose own child leaves the session and keeps the stdout pipe open, then the child exits.
LEAKER = (
    "import subprocess, sys\n"
    "keeper = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], start_new_session=True)\n"
    "print(keeper.pid, flush=True)\n"
)


def test_a_pipe_still_read_is_not_closed_under_its_reader() -> None:
    """close() closes a pipe only once its reader has ended: a pipe another process still holds stays
    open, so its number is never reused by the next child's pipe while this reader reads it (it then
    took that child's lines: a grading cell waited 30 s for a "ready" line another reader had read)."""
    child = ChildProcess([sys.executable, "-c", LEAKER])
    keeper = int(child.read_line(30).data)
    try:
        assert child.close() == 0
        assert child.process.stdout is not None and not child.process.stdout.closed
        following = ChildProcess([sys.executable, "-c", "print('mine', flush=True)"])
        try:
            line = following.read_line(30)
            assert line is not None and line.data == b"mine"
        finally:
            following.close()
    finally:
        os.kill(keeper, 9)
    deadline = time.monotonic() + 10
    while child.process.stdout is not None and not child.stdout_closed.is_set() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert child.stdout_closed.is_set(), "the reader ends when the last writer is gone"
