"""Grading without bubblewrap: the learner's code still never runs as root and never sees the course.

A real child process in the sandbox that :mod:`grader.grading.unshared` makes (namespaces and a private
root with util-linux's ``unshare``, ``mount`` and ``pivot_root``) looks for the course in every way a
determined learner did (its absolute path, ``/proc/*/cwd`` and ``/proc/*/root``, a port of this
machine) and finds nothing; where no sandbox can be made, ``mcp-lab course grade`` refuses with one
line and exit 2 unless the instructor names the risk (``--unsafe-no-sandbox``), and even then never
runs the learner's code as root.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from grader.grading import sandbox
from grader.grading.confinement import python_executable
from grader.grading.unshared import Unshared

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="namespaces are Linux's")

PROBE = r"""
import json, os, socket, sys
found = {"uid": os.getuid(), "euid": os.geteuid(), "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit())}
secret = sys.argv[1]
try:
    found["secret"] = open(secret).read()
except OSError as exc:
    found["secret"] = None
seen = []
for pid in found["pids"]:
    for link in ("cwd", "root"):
        try:
            seen += os.listdir(f"/proc/{pid}/{link}")
        except OSError:
            pass
found["through_proc"] = sorted(set(seen))
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[2])), timeout=2).close()
    found["port"] = "reached"
except OSError:
    found["port"] = "unreachable"
for where in ("/work/mine", "/tmp/mine", "/usr/mine", "/mine"):
    try:
        open(where, "w").close()
        found.setdefault("writable", []).append(where)
    except OSError:
        pass
print(json.dumps(found))
"""


def unshared_or_skip() -> Unshared:
    runner = Unshared.detect(slot=5)
    if runner is None:
        pytest.skip("unshare cannot make the namespaces here")
    return runner


def test_the_sandbox_without_bubblewrap_shows_no_course(tmp_path: Path) -> None:
    runner = unshared_or_skip()
    course = tmp_path / "course"
    (course / "grading").mkdir(parents=True)
    (course / "grading" / "secret").write_text("the course secret\n")
    work = tmp_path / "scratch" / "work"
    work.mkdir(parents=True)
    (work / "probe.py").write_text(PROBE)
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    db = tmp_path / "shop.db"
    db.write_bytes(b"")
    runner.prepare(work, runtime, db)
    listening = socket.create_server(("127.0.0.1", 0))  # a port of this machine: another submission's, say
    try:
        argv = runner.wrap(
            [
                python_executable(),
                "/work/probe.py",
                str(course / "grading" / "secret"),
                str(listening.getsockname()[1]),
            ],
            {},
        )
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    finally:
        listening.close()
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["secret"] is None  # the course's path names nothing in the sandbox
    # What /proc's links show is the sandbox's own root and /work, never the host's folders.
    assert not {"course", "scratch"} & set(found["through_proc"]), found["through_proc"]
    assert found["port"] == "unreachable"  # no network but its own loopback
    assert found["writable"] == ["/work/mine", "/tmp/mine"], found  # the system is read-only
    assert len(found["pids"]) <= 3, found["pids"]  # its own pid namespace: the host's processes are not there
    if os.geteuid() == 0:
        assert found["uid"] != 0 and found["euid"] != 0, found  # a user of its own, never root


def test_the_sandbox_without_bubblewrap_lets_a_server_listen_on_its_loopback(tmp_path: Path) -> None:
    """Stage 12's server listens inside the sandbox: its loopback is up, as under bubblewrap."""
    runner = unshared_or_skip()
    work = tmp_path / "work"
    work.mkdir()
    (work / "serve.py").write_text(
        "import socket\ns = socket.create_server(('127.0.0.1', 0))\n"
        "c = socket.create_connection(s.getsockname())\nprint('listening and reached')\n"
    )
    runner.prepare(work, tmp_path, work / "serve.py")
    argv = runner.wrap([python_executable(), "/work/serve.py"], {})
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "listening and reached", done.stderr


FORKS = r"""
import os, subprocess, sys
from pathlib import Path
from grader.grading.unshared import Unshared
work = Path(sys.argv[1])
for _ in range(3):
    pid = os.fork()
    if pid == 0:  # as a fork of the grading's fork server: a sandbox made and run, then os._exit
        code = 1
        try:
            runner = Unshared.detect(slot=5)
            runner.prepare(work, work, work / "shop.db")
            code = subprocess.run(runner.wrap(["/bin/true"], {}), capture_output=True, timeout=60).returncode
        finally:
            os._exit(code)
    assert os.waitpid(pid, 0)[1] == 0
"""


def test_sandboxes_made_in_forks_leave_no_folder_behind(tmp_path: Path) -> None:
    """The grading's fork server runs each part in a fork that ends with ``os._exit`` (no ``atexit``):
    what the sandbox needs on the host (the folder its root is mounted on) is not left by each one."""
    unshared_or_skip()
    (tmp_path / "shop.db").write_bytes(b"")
    temp = Path(tempfile.gettempdir())
    before = set(temp.glob("mcp-lab-root-*"))
    done = subprocess.run([sys.executable, "-c", FORKS, str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    left = set(temp.glob("mcp-lab-root-*")) - before
    assert left <= {temp / f"mcp-lab-root-{os.geteuid()}"}, left


def test_the_fallback_is_the_unshare_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    unshared_or_skip()
    for value in ("unshare", "none"):
        monkeypatch.setenv("MCP_LAB_SANDBOX", value)
        assert isinstance(sandbox.detect(1), sandbox.Unshared)
    monkeypatch.setenv("MCP_LAB_SANDBOX", "no-such-sandbox")
    with pytest.raises(sandbox.NoIsolation, match="MCP_LAB_SANDBOX"):
        sandbox.detect(1)


def test_no_sandbox_no_grading(tmp_path: Path) -> None:
    """Where neither bubblewrap nor unshare is on PATH: one line, exit 2, nothing graded."""
    bare = tmp_path / "bin"
    bare.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "MCP_LAB_SANDBOX"}
    env["PATH"] = env["MCP_LAB_SYSTEM_PATH"] = str(bare)
    done = subprocess.run(
        [sys.executable, "-m", "grader.cli", "course", "grade", "02-messages", "--course", str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 2, done
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "no sandbox can be made here" in lines[0] and "--unsafe-no-sandbox" in lines[0], lines
    assert "Traceback" not in done.stderr


def test_unsafe_no_sandbox_never_runs_the_code_as_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """With --unsafe-no-sandbox, grading as root with a Python no other user can run (one under /root)
    is refused: the learner's code would run as root."""
    monkeypatch.setenv("MCP_LAB_SANDBOX", sandbox.UNSAFE)
    if os.geteuid() != 0:
        assert "the grader's uid" in sandbox.detect(1).isolation
        return
    if _reachable_by_others():
        runner = sandbox.detect(1)
        assert runner.isolation.startswith("none (--unsafe-no-sandbox)") and "uid 2" in runner.isolation
        return
    with pytest.raises(sandbox.NoIsolation, match="would run as root"):
        sandbox.detect(1)


def _reachable_by_others() -> bool:
    from grader.grading.confinement import _reachable

    return _reachable(Path(python_executable()))


@pytest.mark.parametrize("form", ["hex", "base64 of the file", "base64 of the key", "base32 of the key"])
def test_the_secret_is_scrubbed_in_the_encodings_a_program_would_send_it(form: str) -> None:
    """With a sandbox the secret is out of reach; graded with --unsafe-no-sandbox, an error that carries it
    out base64'd (as a submission did) still shows it to no one."""
    import base64

    from grader.grading.grade import CellVerdict, Verdicts, scrub

    key = bytes(range(32))
    shown = {
        "hex": key.hex(),
        "base64 of the file": base64.b64encode(key.hex().encode() + b"\n").decode(),
        "base64 of the key": base64.b64encode(key).decode(),
        "base32 of the key": base64.b32encode(key).decode(),
    }[form]
    found = Verdicts("eve", "05-tools-call", cells={"a": CellVerdict("a", 1, "failed", f"ValueError: {shown}")})
    assert [f.kind for f in scrub(found, key)] == ["course-files"]
    assert shown[:40] not in found.cells["a"].text and "[the course secret]" in found.cells["a"].text
