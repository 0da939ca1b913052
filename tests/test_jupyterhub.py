"""A class on a real JupyterHub, end to end: the README's "A class on JupyterHub", as it stands.

The test starts JupyterHub (``setup/jupyterhub_config.py``, the file the README ships, its paths set
by environment variables) on the loopback, with configurable-http-proxy from ``make test``'s corpus
(``bench/install_corpus.sh``). Two learners and an instructor are system users the test creates
(and removes) and hub users who log in with their passwords (PAM). Each learner's JupyterLab runs as
their own uid (LocalProcessSpawner) on a Python that holds JupyterLab and nbgrader but not this
repository, with the learner kit first on its import path.

The instructor makes the course (``mcp-lab course init``) and releases 01 and 08 into nbgrader's
file exchange. Each learner, with a token of their own from the hub's API, fetches and submits
through the hub at ``/user/NAME/assignments/...`` (the endpoints of the Assignments tab), after
writing their answers with the contents API: ann the solutions, bob the release as it came. Stage
08's cases are printed by a cell run in each learner's kernel and compared with the draw grading
uses. Bob then hands in under ann's name (``nbgrader submit --student ann``, which is what
``JUPYTERHUB_USER=ann nbgrader submit`` does on a hub whose learners share the uid ``jovyan``):
``nbgrader collect`` refuses it and ann's own work is graded.
The instructor grades with ``mcp-lab course grade``, generates and releases feedback, and each
learner fetches their own through the hub. Bob's processes cannot read ann's submission, her
feedback or the course's ``grading/``, and bob's token opens nothing of ann's server. Chromium
(once) logs bob in and fetches and submits from the Assignments tab.

Everything runs in one module fixture (one xdist group); the hub, its proxy, the learners'
processes, the users and the folders are gone after it, also when it fails.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT
from course_support import notebook_text, python_env

from grader.course import build, clinic

CHP_INSTALLED = ROOT / "build" / "corpus" / "npm" / "node_modules" / ".bin" / "configurable-http-proxy"
CHP = str(CHP_INSTALLED) if CHP_INSTALLED.exists() else shutil.which("configurable-http-proxy")
STAGES = {s.name: s for s in build.stages()}
SOLVED, CLINIC = "01-framing", "08-clinic-diagnosis"
COURSE_ID = build.COURSE_ID
MCP_LAB = str(Path(sys.executable).parent / "mcp-lab")


def _others_can_run(path: Path) -> bool:
    """Whether a user other than root can run ``path`` (every folder above it searchable by all)."""
    path = path.resolve()
    return all(p.stat().st_mode & 0o001 for p in (path, *path.parents)) if path.exists() else False


def _shared_python() -> Path | None:
    """A Python of this one's version that the learners' uids can run: this venv's base Python, or
    the system's (the venv's own may live under /root)."""
    for candidate in (Path(getattr(sys, "_base_executable", sys.executable)), Path("/usr/bin/python3")):
        if not _others_can_run(candidate):
            continue
        done = subprocess.run([str(candidate), "-c", "import sys; print(sys.version_info[:2])"], capture_output=True)
        if done.stdout.decode().strip() == str(sys.version_info[:2]):
            return candidate
    return None


SHARED_PYTHON = _shared_python()


pytestmark = [
    pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root: it creates system users"),
    pytest.mark.skipif(shutil.which("useradd") is None, reason="needs useradd and chpasswd to create hub users"),
    pytest.mark.skipif(
        CHP is None, reason="needs configurable-http-proxy (npm; bench/install_corpus.sh installs it into build/corpus)"
    ),
    pytest.mark.skipif(
        SHARED_PYTHON is None, reason=f"needs a Python {sys.version_info[:2]} that users other than root can run"
    ),
    # A bound for a hang, not a measure: every step of the class's set-up has its own time-out (run()),
    # and the set-up is a minute of CPU, 145 s on a quiet machine, 252 s beside two CPU hogs on four
    # workers and over 400 s on five; bounded as the cheats' class is.
    pytest.mark.timeout(900),
]


PORT_TAKEN = re.compile(r"address already in use|EADDRINUSE", re.IGNORECASE)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class Answer:
    status: int
    body: Any


def call(method: str, url: str, token: str = "", body: Any = None, timeout: float = 120) -> Answer:
    """One HTTP request (JSON in and out where there is some); an HTTP error is an answer too."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    if token:
        request.add_header("Authorization", f"token {token}")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            status, text = reply.status, reply.read().decode()
    except urllib.error.HTTPError as error:
        status, text = error.code, error.read().decode(errors="replace")
    try:
        return Answer(status, json.loads(text) if text else None)
    except ValueError:
        return Answer(status, text)


def until(what: str, ready: Callable[[], Any], timeout: float, log: Path | None = None) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            found = ready()
        except OSError:  # not listening yet
            found = None
        if found:
            return found
        time.sleep(0.3)
    tail = log.read_text(errors="replace")[-4000:] if log is not None and log.exists() else ""
    pytest.fail(f"{what}: not within {timeout:g} s\n{tail}")


def run(argv: list[str], cwd: Path, timeout: float = 240, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """A command of the instructor's, in the course folder; it must succeed."""
    env = {**python_env(), **kwargs.pop("env", {})}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # nbgrader runs alembic
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, **kwargs)
    assert done.returncode == 0, f"{argv}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@dataclass
class Learner:
    name: str
    password: str
    token: str = ""
    drawn: dict[str, Any] = field(default_factory=dict)  # what a cell in their kernel printed
    feedback: dict[str, str] = field(default_factory=dict)  # stage -> feedback HTML fetched through the hub


@dataclass
class Class:
    hub: str  # the hub's URL
    public: Path  # what the learners' uids may read: the kit, their Python, the exchange, the hub's learner config
    course: Path
    learners: dict[str, Learner]
    instructor: str
    python: Path  # the learners' Python
    salt: str = ""
    collected: dict[str, subprocess.CompletedProcess[str]] = field(default_factory=dict)
    graded: dict[str, str] = field(default_factory=dict)  # stage -> mcp-lab course grade's table
    forged: str = ""  # the inbound folder bob made under ann's name

    @property
    def exchange(self) -> Path:
        return self.public / "exchange"

    def user_url(self, learner: Learner, path: str) -> str:
        return f"{self.hub}/user/{learner.name}/{path}"

    def as_user(self, name: str, code: str, env: dict[str, str] | None = None, cwd: str = "/") -> Any:
        """``code`` run by the learners' Python as system user ``name``; its stdout read as JSON."""
        base = {"PATH": f"{self.python.parent}:/usr/bin:/bin", "PYTHONPATH": str(self.public / "kit")}
        done = subprocess.run(
            [str(self.python), "-c", code],
            user=name,
            group=name,
            extra_groups=[],
            env={**base, **(env or {})},
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return json.loads(done.stdout) if done.stdout.strip() else None


# -- the set-up ---------------------------------------------------------------------------------


def make_users(names: list[str]) -> dict[str, str]:
    """System users with a home of their own (mode 700) and a password; name -> password."""
    made = {}
    for name in names:
        subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", name], check=True, capture_output=True)
        password = secrets.token_urlsafe(12)
        made[name] = password
        subprocess.run(["chpasswd"], input=f"{name}:{password}\n", text=True, check=True, capture_output=True)
        Path(f"/home/{name}").chmod(0o700)
    return made


def remove_users(names: list[str]) -> None:
    """End what still runs as the users (the hub stops their servers; a kernel may linger), then remove them."""
    uids = set()
    for name in names:
        done = subprocess.run(["id", "-u", name], capture_output=True, text=True)
        if done.returncode == 0:
            uids.add(int(done.stdout))
    for _ in range(3):
        left = [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and _owner(p) in uids]
        if not left:
            break
        for pid in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.3)
    for name in names:
        subprocess.run(["userdel", "--remove", name], capture_output=True)


def _owner(proc: Path) -> int | None:
    try:
        return proc.stat().st_uid
    except OSError:
        return None


def learner_python(public: Path) -> Path:
    """A Python for the learners: this one's packages (JupyterLab, nbgrader, the kit's requirements)
    as a plain path, so this repository's editable install (a .pth hook there) is never run."""
    folder = public / "python"
    subprocess.run([str(SHARED_PYTHON), "-m", "venv", "--without-pip", str(folder)], check=True, timeout=120)
    site = Path(sysconfig.get_path("purelib", vars={"base": str(folder)}))
    (site / "course.pth").write_text(sysconfig.get_path("purelib") + "\n")
    return folder / "bin" / "python"


def start_hub(public: Path, state: Path, learners: list[str], instructor: str, log: Path) -> tuple[Any, str]:
    """The hub and its proxy, answering ``/hub/api/``: (the hub's process, its public URL).

    The hub binds three ports chosen here (its public one, its API's, the proxy's API's), a few
    seconds after they were found free. Another process can bind one first; the hub (or its proxy)
    then ends on "address already in use". That one cause gets new ports and another try, up to three:
    nothing else is tried again."""
    state.mkdir()
    for attempt in range(1, 4):
        hub, url = _launch_hub(public, state, learners, instructor, log)
        deadline = time.monotonic() + 60
        lost = False  # a port taken: the hub may keep running without its proxy, so the log says it
        while time.monotonic() < deadline and hub.poll() is None and not lost:
            with contextlib.suppress(OSError):
                if call("GET", f"{url}/hub/api/", timeout=5).status == 200:
                    return hub, url
            time.sleep(0.3)
            lost = bool(PORT_TAKEN.search(log.read_text(errors="replace")))
        stop_hub(hub)
        text = log.read_text(errors="replace")
        if attempt == 3 or not PORT_TAKEN.search(text):
            pytest.fail(f"the hub: not up within 60 s (try {attempt})\n{text[-4000:]}")
        log.rename(log.with_suffix(f".try{attempt}.log"))  # kept: the evidence of the port lost
    raise AssertionError("unreachable")


def _launch_hub(public: Path, state: Path, learners: list[str], instructor: str, log: Path) -> tuple[Any, str]:
    port, api, proxy = free_port(), free_port(), free_port()
    env = python_env()
    env.update(
        MCP_LAB_HUB_STATE=str(state),
        MCP_LAB_HUB_URL=f"http://127.0.0.1:{port}",
        MCP_LAB_HUB_API_URL=f"http://127.0.0.1:{api}",
        MCP_LAB_PROXY_API_URL=f"http://127.0.0.1:{proxy}",
        MCP_LAB_CHP=str(CHP),
        MCP_LAB_KIT=str(public / "kit"),
        MCP_LAB_LEARNER_PYTHON=str(public / "python" / "bin" / "python"),
        MCP_LAB_LEARNER_PREFIX=sys.prefix,
        MCP_LAB_EXCHANGE=str(public / "exchange"),
        MCP_LAB_INSTRUCTORS=instructor,
        MCP_LAB_LEARNERS=",".join(learners),
    )
    with open(log, "wb") as out:
        hub = subprocess.Popen(
            [sys.executable, "-m", "jupyterhub", "-f", str(ROOT / "setup" / "jupyterhub_config.py")],
            cwd=state,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return hub, f"http://127.0.0.1:{port}"


def stop_hub(hub: Any) -> None:
    """SIGTERM (the hub stops the learners' servers and its proxy), then the whole session group."""
    if hub.poll() is None:
        hub.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            hub.wait(timeout=30)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(hub.pid, signal.SIGKILL)  # the proxy is in the hub's session
    hub.wait(timeout=10)


def make_course(course: Path, exchange: Path) -> str:
    """``mcp-lab course init``, both stages generated and released; the clinic's salt."""
    run([MCP_LAB, "course", "init", str(course)], cwd=ROOT)
    for stage in (SOLVED, CLINIC):
        run([sys.executable, "-m", "nbgrader", "generate_assignment", stage], cwd=course)
        run([sys.executable, "-m", "nbgrader", "release_assignment", stage, f"--Exchange.root={exchange}"], cwd=course)
    return clinic.salt(course / "release" / CLINIC)


def start_server(klass: Class, learner: Learner) -> None:
    """A token from the hub's API (the learner's own password), then their server, ready."""
    made = call(
        "POST",
        f"{klass.hub}/hub/api/users/{learner.name}/tokens",
        body={"auth": {"username": learner.name, "password": learner.password}, "note": "the course test"},
    )
    assert made.status in (200, 201), made
    learner.token = made.body["token"]
    log = klass.course.parent / "hub.log"

    def spawned() -> str | None:
        """The spawn: "ready", "failed" (the hub gave it up), or None while it is pending."""
        user = call("GET", f"{klass.hub}/hub/api/users/{learner.name}", learner.token).body
        server = user.get("servers", {}).get("")
        if server is None and not user.get("pending"):
            return "failed"
        return "ready" if server and server.get("ready") else None

    # The spawner picks the server's port as the hub picks its own (free a moment before it is bound):
    # a spawn lost to "address already in use" is tried again, up to three times; nothing else is.
    for attempt in range(1, 4):
        started = call("POST", f"{klass.hub}/hub/api/users/{learner.name}/server", learner.token)
        assert started.status in (201, 202), started
        if until(f"{learner.name}'s server", spawned, 150, log) == "ready":
            return
        text = log.read_text(errors="replace")
        if attempt == 3 or not PORT_TAKEN.search(text):
            pytest.fail(f"{learner.name}'s server did not start (try {attempt})\n{text[-4000:]}")


def nbgrader_action(klass: Class, learner: Learner, action: str, stage: str) -> Any:
    """What the Assignments tab does: POST /assignments/ACTION through the hub, the learner's token."""
    url = klass.user_url(learner, f"assignments/{action}")
    done = call("POST", url, learner.token, {"course_id": COURSE_ID, "assignment_id": stage})
    assert done.status == 200 and done.body["success"] is True, (action, stage, done)
    return done.body["value"]


def hand_in(klass: Class, learner: Learner, answers: Callable[[str, str], str | None]) -> None:
    """Fetch each stage, write the answers with the contents API, submit."""
    for stage in (SOLVED, CLINIC):
        nbgrader_action(klass, learner, "fetch", stage)
        path = f"api/contents/{stage}/{STAGES[stage].notebook}"
        fetched = call("GET", klass.user_url(learner, path), learner.token)
        assert fetched.status == 200 and fetched.body["type"] == "notebook", fetched
        mine = answers(stage, learner.name)
        content = json.loads(mine) if mine is not None else fetched.body["content"]  # the stub: as released
        saved = call("PUT", klass.user_url(learner, path), learner.token, {"type": "notebook", "content": content})
        assert saved.status in (200, 201), saved
        nbgrader_action(klass, learner, "submit", stage)


DRAWN = """
import importlib.util, json
import grader
from grader.course import clinic
cases = clinic.cases()
print(json.dumps({
    "student": clinic.student(),
    "cases": [[c.name, c.kind, c.defect.family, repr(sorted(c.defect.params.items()))] for c in cases.values()],
    "grader": grader.__file__,
    "grading": importlib.util.find_spec("grader.grading") is not None,
}))
"""


def drawn_cases(case_list: list[Any]) -> list[list[str]]:
    return [[c.name, c.kind, c.defect.family, repr(sorted(c.defect.params.items()))] for c in case_list]


def run_in_kernel(klass: Class, learner: Learner, folder: str, code: str) -> str:
    """Start a kernel in the learner's server (in ``folder``), run one cell over the kernel's
    websocket through the hub, return what it printed; the kernel is shut down after."""
    started = call("POST", klass.user_url(learner, "api/kernels"), learner.token, {"name": "python3", "path": folder})
    assert started.status == 201, started
    kernel = started.body["id"]
    try:
        url = klass.user_url(learner, f"api/kernels/{kernel}/channels").replace("http://", "ws://")
        return asyncio.run(_execute(url, learner.token, code))
    finally:
        call("DELETE", klass.user_url(learner, f"api/kernels/{kernel}"), learner.token)


async def _execute(url: str, token: str, code: str, timeout: float = 120) -> str:
    from tornado.httpclient import HTTPRequest
    from tornado.websocket import websocket_connect

    socket_ = await websocket_connect(HTTPRequest(url, headers={"Authorization": f"token {token}"}))
    msg_id, session = uuid.uuid4().hex, uuid.uuid4().hex
    header = {"msg_id": msg_id, "msg_type": "execute_request", "session": session, "username": "", "version": "5.3"}
    content = {"code": code, "silent": False, "store_history": False, "user_expressions": {}, "allow_stdin": False}
    message = {"header": header, "parent_header": {}, "metadata": {}, "content": content, "channel": "shell"}
    socket_.write_message(json.dumps(message))
    printed: list[str] = []
    deadline = time.monotonic() + timeout
    try:
        while True:
            raw = await asyncio.wait_for(socket_.read_message(), max(1.0, deadline - time.monotonic()))
            assert raw is not None, "the kernel's websocket closed"
            reply = json.loads(raw)
            if reply.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind = reply["msg_type"]
            if kind == "stream":
                printed.append(reply["content"]["text"])
            elif kind == "error":
                raise AssertionError("\n".join(reply["content"]["traceback"]))
            elif kind == "status" and reply["content"]["execution_state"] == "idle":
                return "".join(printed)
    finally:
        socket_.close()


FORGE = """
import subprocess, sys
subprocess.run([sys.executable, "-m", "nbgrader", "submit", "01-framing", "--course", "mcp-wire-lab",
                "--student", VICTIM, "--Exchange.root=" + EXCHANGE], check=True, capture_output=True)
"""


def forge_under(klass: Class, attacker: str, victim: str) -> str:
    """``nbgrader submit 01-framing --student VICTIM`` as the attacker's uid (what plain ``nbgrader
    submit`` does as ``jovyan`` with ``JUPYTERHUB_USER=VICTIM``), from the attacker's own untouched
    copy of the release; the inbound folder it made."""
    inbound = klass.exchange / COURSE_ID / "inbound"
    before = set(os.listdir(inbound))
    code = FORGE.replace("VICTIM", repr(victim)).replace("EXCHANGE", repr(str(klass.exchange)))
    klass.as_user(attacker, code, {"HOME": f"/home/{attacker}"}, cwd=f"/home/{attacker}")
    (made,) = set(os.listdir(inbound)) - before
    assert made.startswith(f"{victim}+{SOLVED}+"), made
    return made


def fetch_feedback(klass: Class, learner: Learner) -> None:
    for stage in (SOLVED, CLINIC):
        listed = nbgrader_action(klass, learner, "fetch_feedback", stage)
        mine = [a for a in listed if a["assignment_id"] == stage and a["status"] == "submitted"]
        paths = [
            nb["local_feedback_path"]
            for a in mine
            for s in a.get("submissions", [])
            for nb in s.get("notebooks", [])
            if nb.get("has_local_feedback")
        ]
        assert paths, (stage, listed)
        home = f"/home/{learner.name}/"
        relative = sorted(paths)[-1].removeprefix(home)  # the newest submission's
        got = call("GET", klass.user_url(learner, f"api/contents/{urllib.parse.quote(relative)}"), learner.token)
        assert got.status == 200, got
        learner.feedback[stage] = got.body["content"]


@pytest.fixture(scope="module")
def klass(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Class]:
    tag = secrets.token_hex(2)
    names = {"ann": f"ann{tag}", "bob": f"bob{tag}", "teacher": f"teach{tag}"}
    public = Path(tempfile.mkdtemp(prefix="mcp-lab-hub-"))
    public.chmod(0o755)
    private = tmp_path_factory.mktemp("hub")  # root's only: the course, the hub's log
    hub = None
    users: list[str] = []
    try:
        passwords = make_users(list(names.values()))
        users = list(names.values())
        learners = {role: Learner(names[role], passwords[names[role]]) for role in ("ann", "bob")}
        (public / "exchange").mkdir()
        (public / "exchange").chmod(0o755)  # nbgrader's release makes the course's inbound/outbound below
        run([MCP_LAB, "course", "kit", str(public / "kit")], cwd=ROOT)
        python = learner_python(public)
        # The shop database, built once in the kit: the learners' uids cannot write there.
        run([str(public / "kit" / "bin" / "mcp-lab"), "db", "build"], cwd=public, env={"PYTHON": str(python)})
        # The course is made while the hub starts and the learners' servers spawn.
        with ThreadPoolExecutor(3) as pool:
            course = pool.submit(make_course, private / "course", public / "exchange")
            hub, url = start_hub(
                public, public / "state", [names["ann"], names["bob"]], names["teacher"], private / "hub.log"
            )
            klass = Class(url, public, private / "course", learners, names["teacher"], python)
            list(pool.map(lambda learner: start_server(klass, learner), learners.values()))
            klass.salt = course.result()
        ann, bob = learners["ann"], learners["bob"]

        def answers(stage: str, student: str) -> str | None:
            if student != ann.name:
                return None  # bob hands in the release as it came
            return notebook_text(STAGES[stage], course=klass.course if stage == CLINIC else None, student=student)

        with ThreadPoolExecutor(2) as pool:
            list(pool.map(lambda learner: hand_in(klass, learner, answers), learners.values()))
            drawn = pool.map(lambda learner: run_in_kernel(klass, learner, CLINIC, DRAWN), learners.values())
            for learner, printed in zip(learners.values(), drawn, strict=True):
                learner.drawn = json.loads(printed)
        klass.forged = forge_under(klass, bob.name, ann.name)
        for stage in (SOLVED, CLINIC):
            exchange = f"--Exchange.root={klass.exchange}"
            klass.collected[stage] = run([sys.executable, "-m", "nbgrader", "collect", stage, exchange], klass.course)
            klass.graded[stage] = run([MCP_LAB, "course", "grade", stage, "--jobs", "2"], klass.course).stdout
            run([sys.executable, "-m", "nbgrader", "generate_feedback", stage], klass.course)
            run([sys.executable, "-m", "nbgrader", "release_feedback", stage, exchange], klass.course)
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(lambda learner: fetch_feedback(klass, learner), learners.values()))
        yield klass
    finally:
        if hub is not None:
            stop_hub(hub)
        remove_users(users)
        shutil.rmtree(public, ignore_errors=True)


def feedback_score(html: str) -> tuple[float, float]:
    found = re.search(r"Score:\s*([\d.]+)\s*/\s*([\d.]+)", html)
    assert found, html[:2000]
    return float(found.group(1)), float(found.group(2))


# -- the tests ----------------------------------------------------------------------------------


def test_each_learner_sees_their_own_score_in_their_own_feedback(klass: Class) -> None:
    ann, bob = klass.learners["ann"], klass.learners["bob"]
    for stage in (SOLVED, CLINIC):
        points = float(STAGES[stage].points())
        assert feedback_score(ann.feedback[stage]) == (points, points), stage
        assert feedback_score(bob.feedback[stage]) == (0.0, points), stage
        rows = {line.split()[0]: line.split() for line in klass.graded[stage].splitlines() if line.split()}
        assert rows[ann.name][1:3] == [str(STAGES[stage].points())] * 2, klass.graded[stage]
        assert rows[bob.name][1] == "0", klass.graded[stage]


def test_stage_08_draws_each_hub_users_cases_and_grading_agrees(klass: Class) -> None:
    """The cell run in each learner's kernel drew the cases of their hub name, from the kit (never the
    repository's grader); the draw differs between learners; ann's answer, written for that draw by
    the answer key grading uses, earned full marks (the test above)."""
    for learner in klass.learners.values():
        assert learner.drawn["student"] == learner.name
        assert learner.drawn["cases"] == drawn_cases(clinic.draw_for(klass.salt, learner.name))
        assert learner.drawn["grader"].startswith(str(klass.public / "kit")), learner.drawn
        assert learner.drawn["grading"] is False, "a learner's kernel can import the grader"
    assert klass.learners["ann"].drawn["cases"] != klass.learners["bob"].drawn["cases"]


def test_a_submission_made_under_another_learners_name_is_refused(klass: Class) -> None:
    ann, bob = klass.learners["ann"], klass.learners["bob"]
    log = klass.collected[SOLVED].stderr
    refused = [line for line in log.splitlines() if "ERROR" in line and klass.forged in line]
    assert refused and f"owned by {bob.name}, not by the student {ann.name}" in refused[0], log
    notebook = STAGES[SOLVED].notebook
    submitted = klass.course / "submitted" / ann.name / SOLVED / notebook
    forged = klass.exchange / COURSE_ID / "inbound" / klass.forged / notebook
    assert json.loads(submitted.read_text())["cells"] != json.loads(forged.read_text())["cells"]
    assert feedback_score(ann.feedback[SOLVED])[0] == STAGES[SOLVED].points()  # her own work, graded


TRIES = """
import json, os
tried = {}
for name, path in json.loads(os.environ["TARGETS"]).items():
    try:
        os.listdir(path) if os.path.isdir(path) else open(path).read()
        tried[name] = "read"
    except PermissionError:
        tried[name] = "PermissionError"
print(json.dumps(tried))
"""


def test_a_learner_cannot_read_another_learners_work_or_the_grading(klass: Class) -> None:
    ann, bob = klass.learners["ann"], klass.learners["bob"]
    course = klass.exchange / COURSE_ID
    ann_feedback = next(Path(f"/home/{ann.name}").glob(f"{SOLVED}/feedback/*/*.html"))
    targets = {
        "the exchange's inbound (every submission)": course / "inbound",
        "the exchange's feedback": course / "feedback",
        "ann's home (her notebooks and fetched feedback)": Path(f"/home/{ann.name}"),
        "ann's fetched feedback": ann_feedback,
        "the course's grading/": klass.course / "grading",
        "the course's submitted/": klass.course / "submitted",
    }
    tried = klass.as_user(bob.name, TRIES, {"TARGETS": json.dumps({k: str(v) for k, v in targets.items()})})
    assert tried == dict.fromkeys(targets, "PermissionError"), tried
    # The hub: bob's token opens nothing of ann's server, and no server has the formgrader.
    for path in ("api/contents", "api/kernels", f"assignments?course_id={COURSE_ID}"):
        denied = call("GET", klass.user_url(ann, path), bob.token)
        assert denied.status in (403, 404), (path, denied)
    assert call("GET", klass.user_url(ann, "api/contents"), ann.token).status == 200  # her own token opens it
    assert call("GET", klass.user_url(bob, "formgrader"), bob.token).status == 404


# -- the Assignments tab in Chromium, once --------------------------------------------------------


def test_a_learner_fetches_and_submits_from_the_assignments_tab(klass: Class) -> None:
    from test_course_browser import CHROMIUM, CHROMIUM_ARGS, browser

    sync_playwright = browser()
    bob = klass.learners["bob"]
    shutil.rmtree(f"/home/{bob.name}/{SOLVED}")  # released again in the tab, not "downloaded"
    inbound = klass.exchange / COURSE_ID / "inbound"
    before = {p.name for p in inbound.iterdir()}
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        try:
            page = chromium.new_page(viewport={"width": 1400, "height": 900})
            page.goto(f"{klass.hub}/hub/login")
            page.fill("input[name=username]", bob.name)
            page.fill("input[name=password]", bob.password)
            page.click("input[type=submit], button[type=submit]")
            page.wait_for_url(re.compile(rf"/user/{bob.name}/lab"), timeout=120_000)
            page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Nbgrader$")).click(timeout=120_000)
            page.locator(".lm-Menu-itemLabel", has_text="Assignment List").click()
            released = page.locator("#released_assignments_list .list_item", has_text=SOLVED)
            released.get_by_role("button", name="Fetch").click(timeout=60_000)
            fetched = page.locator("#fetched_assignments_list .list_item", has_text=SOLVED)
            fetched.get_by_role("button", name="Submit").first.click(timeout=60_000)
            page.locator("#submitted_assignments_list .list_item", has_text=SOLVED).first.wait_for(timeout=60_000)
        finally:
            chromium.close()
    made = [p for p in inbound.iterdir() if p.name not in before]
    assert len(made) == 1 and made[0].name.startswith(f"{bob.name}+{SOLVED}+"), made
    assert made[0].stat().st_uid == Path(f"/home/{bob.name}").stat().st_uid  # bob's own uid, as collect wants
