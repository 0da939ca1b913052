"""Stage 12's bridge on real processes: the learner's HTTP server reached through its pipes, bounded.

The checks of stage 12 speak HTTP to the learner's server, which runs (when graded) in a sandbox
with a network namespace of its own. ``grader/course/http_bridge.py`` listens on this machine's
loopback and relays each connection through the pipes of ``lab_runtime/http_host.py``, which runs
the learner's ``make_server`` inside. Here: bytes pass both ways unchanged (keep-alive, a body
split across sends, a response ended by closing); what the learner prints never mixes with the
relay; a ``make_server`` that never returns, a module that crashes, a stub and a server that
floods each end in bounded time with a message that says so; and, in the sandbox, the learner's
server reaches nothing outside it, neither this machine's ports nor the internet.
"""

from __future__ import annotations

import http.client
import shutil
import socket
import sys
import textwrap
import time
from pathlib import Path

import pytest

from grader.course import http_bridge
from grader.course.checks import stage12
from grader.course.expect import Failure
from grader.course.work import Work
from grader.grading import sandbox

pytestmark = pytest.mark.timeout(120)

# A small learner's module: GET answers with what the path asks for (an echo, a flood, a probe of
# the network), POST echoes its body; print() to stdout on the way, as careless code does.
SERVER = textwrap.dedent(
    """
    import socket
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    print("a careless print at import")


    def reach(host, port):
        try:
            socket.create_connection((host, port), timeout=2).close()
            return "reached"
        except OSError as exc:
            return f"refused: {type(exc).__name__}"


    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"]))
            print("a careless print in a handler")
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            if self.path == "/flood":
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                while True:
                    self.wfile.write(b"x" * 65536)
            if self.path.startswith("/reach/"):
                host, port = self.path[len("/reach/"):].rsplit(":", 1)
                body = reach(host, int(port)).encode()
            else:
                body = b"closing"
            self.send_response(200)
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)


    def make_server(address, token=None):
        return ThreadingHTTPServer(address, Handler)
    """
)


def folder_with(tmp_path: Path, text: str, name: str = "mcp_http") -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / f"{name}.py").write_text(text, encoding="utf-8")
    return folder


def get(port: int, path: str, timeout: float = 10) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def test_bytes_pass_both_ways_and_prints_stay_out_of_the_relay(tmp_path: Path) -> None:
    with Work(folder_with(tmp_path, SERVER), "12") as work, http_bridge.serve(work, "mcp_http") as bridge:
        conn = http.client.HTTPConnection("127.0.0.1", bridge.port, timeout=10)
        big = bytes(range(256)) * 4096  # 1 MiB, every byte value: many frames of the relay
        for body in (b'{"jsonrpc":"2.0","id":1,"method":"ping"}', big, b"\r\n\r\n"):
            conn.request("POST", "/mcp", body=body)  # one keep-alive connection for all three
            response = conn.getresponse()
            assert (response.status, response.read()) == (200, body)
        conn.close()
        assert get(bridge.port, "/closing") == (200, b"closing")  # a response ended by closing
        assert "a careless print in a handler" in bridge.stderr_tail()
        assert "a careless print at import" in bridge.stderr_tail(20000)


def test_a_make_server_that_never_returns_fails_in_bounded_time(tmp_path: Path) -> None:
    text = SERVER.replace(
        "    return ThreadingHTTPServer(address, Handler)", "    ThreadingHTTPServer(address, Handler).serve_forever()"
    )
    started = time.monotonic()
    with Work(folder_with(tmp_path, text), "12") as work, pytest.raises(Failure) as failed:
        http_bridge.HttpBridge(http_bridge.host_command(work, "mcp_http"), "mcp_http", start_timeout=2.0)
    assert failed.value.check == "http-server"
    assert "did not return within 2 s" in failed.value.summary
    assert time.monotonic() - started < 30


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            "import json\nraise RuntimeError('broken at import')\n",
            "building your server failed: RuntimeError: broken at import",
        ),
        ("def make_server(address, token=None):\n    raise NotImplementedError()\n", "make_server is not written yet"),
        (
            "def make_server(address, token=None):\n    raise SystemExit(3)\n",
            "building your server failed: SystemExit: 3",
        ),
        ("x = 1\n", "defines no make_server"),
    ],
    ids=["crash-at-import", "stub", "exit", "no-make-server"],
)
def test_a_server_that_cannot_start_says_why(tmp_path: Path, text: str, said: str) -> None:
    with Work(folder_with(tmp_path, text), "12") as work, pytest.raises(Failure) as failed:
        http_bridge.serve(work, "mcp_http")
    assert failed.value.check == "http-server"
    assert said in failed.value.text()


def test_a_flooding_server_costs_bounded_time(tmp_path: Path) -> None:
    started = time.monotonic()
    with Work(folder_with(tmp_path, SERVER), "12") as work, http_bridge.serve(work, "mcp_http") as bridge:
        conn = http.client.HTTPConnection("127.0.0.1", bridge.port, timeout=5)
        conn.request("GET", "/flood")
        response = conn.getresponse()
        got = 0
        while got < 8 << 20:  # read 8 MiB of it, then hang up
            got += len(response.read1(1 << 16))
        conn.close()
        assert get(bridge.port, "/closing") == (200, b"closing")  # the relay still serves others
    assert bridge.process.poll() is not None, "close() ends the host and the learner's server"
    assert time.monotonic() - started < 60


def test_a_stub_of_the_release_is_named_by_the_checks(tmp_path: Path) -> None:
    handler = "    def do_POST(self):\n"
    assert SERVER.count(handler) == 1
    text = SERVER.replace(handler, handler + "        raise NotImplementedError()\n")
    with Work(folder_with(tmp_path, text), "12") as work, pytest.raises(Failure) as failed:
        stage12.check_post(work, [1, 2], [])
    assert failed.value.summary == "do_POST is not written yet (it raises NotImplementedError)"


@pytest.mark.skipif(shutil.which("bwrap") is None or sys.platform != "linux", reason="no bubblewrap here")
def test_in_the_sandbox_the_server_reaches_nothing_outside(tmp_path: Path) -> None:
    runner = sandbox.detect(slot=9)
    if not isinstance(runner, sandbox.Bubblewrap):
        pytest.skip(runner.isolation)
    outside = socket.create_server(("127.0.0.1", 0))  # a port of this machine, as another submission's would be
    try:
        port = outside.getsockname()[1]
        with Work(folder_with(tmp_path, SERVER), "12", runner) as work, http_bridge.serve(work, "mcp_http") as bridge:
            assert get(bridge.port, "/closing") == (200, b"closing")
            for target in (f"127.0.0.1:{port}", f"127.0.0.1:{bridge.port}", "1.1.1.1:53", f"[::1]:{port}"):
                status, body = get(bridge.port, f"/reach/{target.replace('[', '').replace(']', '')}")
                assert status == 200 and body.startswith(b"refused"), (target, body)
    finally:
        outside.close()


def test_the_lessons_sdk_snippet_runs_as_shown(tmp_path: Path) -> None:
    """Stage 12's snippet of the official SDK's HTTP client is a whole program: saved as it is shown
    (its imports and all), with only the URL pointed at a running server, it runs and calls the tool."""
    import subprocess

    from http_support import HttpServer

    from grader.course.build import stages
    from grader.course.notebook import parse

    stage = next(s for s in stages() if s.name == "12-streamable-http")
    cells = parse(stage.text.read_text(encoding="utf-8"), stage.name)["cells"]
    markdown = "\n".join(c["source"] for c in cells if c["cell_type"] == "markdown")
    blocks = [b for b in markdown.split("```python\n")[1:] if "streamable_http_client" in b]
    assert len(blocks) == 1, "stage 12 shows one snippet of the SDK's HTTP client"
    snippet = blocks[0].split("```")[0]
    shown = "http://127.0.0.1:8000/mcp"
    assert shown in snippet and "Bearer s3cret" in snippet
    server = HttpServer(["--auth-token", "s3cret"])
    try:
        program = tmp_path / "snippet.py"
        program.write_text(snippet.replace(shown, server.url), encoding="utf-8")
        done = subprocess.run([sys.executable, str(program)], capture_output=True, text=True, timeout=60)
    finally:
        assert server.stop() == 0, server.stderr()
    assert done.returncode == 0, done.stderr[-2000:]
    assert "'count': 341" in done.stdout, done.stdout[-2000:]
