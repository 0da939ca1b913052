"""``mcp-lab lab``: the learner's JupyterLab, opened on the workspace with the course's settings.

It opens on the first stage not passed yet (stage 00 to begin with; ``mcp-lab progress`` records
the scores in ``.mcp-lab/progress.json``), keeps JupyterLab's log in ``.mcp-lab/jupyterlab.log``
and prints a few lines, the last one the URL to open.

The learner gets the nbgrader Validate button and nothing of the instructor's tools (formgrader,
course list, assignment list, create assignment): those belong to an nbgrader course, and opening
them in a workspace would make an empty gradebook there. The settings live in a config folder under
``build/`` that this launch names, so nothing in the learner's own Jupyter set-up changes.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from grader.checker import schema_formats

from . import build
from .build import ROOT, WORKSPACE

CONFIG_DIR = ROOT / "build" / "jupyter-config"
INSTRUCTOR_PLUGINS = ("assignment-list", "course-list", "create-assignment", "formgrader")
INSTRUCTOR_SERVER_EXTENSIONS = ("formgrader", "course_list", "assignment_list")
# jsonschema imports rfc3987_syntax when it is installed (jupyter_events brings it), and that builds a
# grammar at import: 1.5-2 s of CPU, in JupyterLab's start and in nbgrader's release. It serves only the
# "iri" formats, which neither checks ("uri" has rfc3986_validator), so both run without it, as
# mcp-lab check does. The learner's kernels are other processes: they keep it.
SLOW_IMPORTS = schema_formats.SLOWEST
PROGRESS = Path(".mcp-lab") / "progress.json"  # in the workspace: mcp-lab progress writes it
LOG = Path(".mcp-lab") / "jupyterlab.log"  # in the workspace: JupyterLab's own output


def write_config(config_dir: Path = CONFIG_DIR) -> Path:
    """The page config (front-end plugins) and server config for the learner's JupyterLab."""
    labconfig = config_dir / "labconfig"
    labconfig.mkdir(parents=True, exist_ok=True)
    disabled = {f"@jupyter/nbgrader:{name}": True for name in INSTRUCTOR_PLUGINS}
    # JupyterLab's "receive official Jupyter news?" pop-up: not the lesson's business.
    disabled["@jupyterlab/apputils-extension:announcements"] = True
    (labconfig / "page_config.json").write_text(json.dumps({"disabledExtensions": disabled}, indent=1) + "\n")
    server = {
        "ServerApp": {
            "jpserver_extensions": {
                f"nbgrader.server_extensions.{name}": False for name in INSTRUCTOR_SERVER_EXTENSIONS
            }
        }
    }
    (config_dir / "jupyter_server_config.json").write_text(json.dumps(server, indent=1) + "\n")
    return config_dir


def lab_environment(config_dir: Path = CONFIG_DIR) -> dict[str, str]:
    env = dict(os.environ)
    env["JUPYTER_CONFIG_PATH"] = os.pathsep.join(filter(None, [str(config_dir), env.get("JUPYTER_CONFIG_PATH")]))
    # nbgrader's Validate runs alembic from this environment: its bin folder first on PATH.
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.pop("PYTHONUNBUFFERED", None)  # the learner must see their own missing flush
    return env


# JupyterLab's start in two halves: its imports (seconds: JupyterLab, nbgrader, the language server
# extension), while `mcp-lab lab` makes the workspace; then, once it writes "go" on stdin, the server
# itself. So the port answers only over a ready workspace, and the imports cost no wall time.
PRELOAD = ("nbgrader.server_extensions.validate_assignment", "jupyter_lsp", "jupyter_server_terminals")
START = f"""
import sys
sys.modules.update(dict.fromkeys({SLOW_IMPORTS!r}))
from jupyterlab.labapp import main
for name in {PRELOAD!r}:
    try:
        __import__(name)
    except Exception:
        pass
if sys.stdin.readline().strip() == "go":
    sys.exit(main())
"""


def lab_command(workspace: Path = WORKSPACE, extra: Sequence[str] = (), notebook: str = "") -> list[str]:
    """JupyterLab on ``workspace`` once "go" comes on its stdin; ``/`` (and the browser it opens) leads
    to ``notebook``."""
    command = [sys.executable, "-c", START, f"--ServerApp.root_dir={workspace}"]
    if notebook:
        command.append(f"--LabApp.default_url=/lab/tree/{urllib.parse.quote(notebook)}")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")  # containers and CI run as root; Jupyter refuses without it
    return [*command, *extra]


def passed_stages(workspace: Path = WORKSPACE) -> set[str]:
    """The stages ``mcp-lab progress`` last saw with full points, from ``.mcp-lab/progress.json``:
    ``{"stages": {"00-shop-and-pipe": {"earned": 10, "possible": 10}, ...}}``. A missing or broken
    record is no stage passed."""
    try:
        record = json.loads((workspace / PROGRESS).read_text(encoding="utf-8"))
        stages = record["stages"]
        return {name for name, score in stages.items() if _full_points(score)}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return set()


def _full_points(score: object) -> bool:
    if not isinstance(score, dict):
        return False
    earned, possible = score.get("earned"), score.get("possible")
    numbers = all(isinstance(n, int | float) and not isinstance(n, bool) for n in (earned, possible))
    return numbers and 0 < possible <= earned


def first_notebook(workspace: Path = WORKSPACE) -> str:
    """The path (in the workspace) of the first stage's notebook not passed yet: stage 00's to begin
    with; its folder when the learner deleted the notebook (a missing folder is added by `prepare`);
    "" when every stage is passed (the file browser)."""
    passed = passed_stages(workspace)
    for stage in build.stages():
        if stage.name not in passed:
            notebook = f"{stage.name}/{stage.notebook}"
            gone = (workspace / stage.name).is_dir() and not (workspace / notebook).is_file()
            return stage.name if gone else notebook
    return ""


def prepare(workspace: Path = WORKSPACE, each_stage: bool = False) -> None:
    """Build the shop database and bring the workspace up to date, saying so in two lines (and a
    line per stage with ``each_stage``)."""
    from reference import database

    schema_formats.leave_out(SLOW_IMPORTS)  # for nbgrader's release (see above)
    built = not database.default_path().exists()
    print(f"shop database: {shown(database.ensure_default())}{' (built)' if built else ''}", flush=True)
    if each_stage:
        for stage, what in build.sync_workspace(workspace):
            print(f"{stage:<22} {'added' if what == 'added' else 'kept as you left it'}")
        return
    print(f"workspace: {shown(workspace)}/...", end=" ", flush=True)
    started = time.monotonic()
    done = build.sync_workspace(workspace)
    added = [stage for stage, what in done if what == "added"]
    kept = len(done) - len(added)
    if not added:
        print(f"{kept} stages kept as you left them")
    elif not kept:
        print(f"{len(added)} stages added in {time.monotonic() - started:.1f} s")
    else:
        print(f"{kept} stages kept as you left them, {len(added)} added ({', '.join(added)})")


def open_lab(workspace: Path = WORKSPACE, extra: Sequence[str] = ()) -> NoReturn:
    """Bring the workspace up to date (`prepare`) while JupyterLab loads, then serve it until Ctrl-C;
    then exit.

    JupyterLab's imports run on the other core while nbgrader releases the stages; its server
    starts once the workspace is ready (see START). Its own log goes to ``.mcp-lab/jupyterlab.log``
    in the workspace; once it answers HTTP, one line says where to open it: the first notebook not
    passed yet. It runs in a process group of its own, so that Ctrl-C (or SIGTERM, SIGHUP) reaches
    this process alone, which then stops JupyterLab with SIGTERM: its orderly shutdown, kernels
    included, with no y/n prompt."""
    write_config()
    notebook = first_notebook(workspace)
    log_path = workspace / LOG
    log_path.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _interrupt)
    with open(log_path, "w", encoding="utf-8") as log:
        process = subprocess.Popen(
            lab_command(workspace, extra, notebook),
            cwd=workspace,
            env=lab_environment(),
            stdin=subprocess.PIPE,
            stdout=log,
            stderr=subprocess.STDOUT,
            process_group=0,
            preexec_fn=_ends_with_parent(),
        )
    try:
        prepare(workspace)
        print("JupyterLab: starting...", end=" ", flush=True)
        assert process.stdin is not None
        with contextlib.suppress(OSError):  # it died loading: wait_until_serving says so
            process.stdin.write(b"go\n")
        with contextlib.suppress(OSError):
            process.stdin.close()
        info = wait_until_serving(process)
        if info is None:
            print(f"failed (exit status {process.returncode}); the end of {shown(log_path)}:")
            print(_tail(log_path), file=sys.stderr)
            raise SystemExit(process.returncode or 1)
        print(f"ready in {time.monotonic() - started:.1f} s (loaded beside the workspace; log: {shown(log_path)})")
        print(f"JupyterLab is running: {lab_url(info, notebook)} (Ctrl-C to stop)", flush=True)
        code = process.wait()  # until Ctrl-C, or File > Shut Down in JupyterLab
    except KeyboardInterrupt:
        for sig in (signal.SIGTERM, signal.SIGHUP):  # make passes its SIGTERM on: the same request again
            signal.signal(sig, signal.SIG_IGN)
        print("\nstopping JupyterLab...", end=" ", flush=True)
        code = stop(process)
    except BaseException:  # the workspace could not be made, or the like: no JupyterLab left behind
        stop(process)
        raise
    print("JupyterLab stopped.", flush=True)
    raise SystemExit(0 if code in (0, -signal.SIGTERM) else code)


def wait_until_serving(process: subprocess.Popen[bytes]) -> dict[str, Any] | None:
    """JupyterLab's server info (url, token, ...) once it answers HTTP; None if it exits first."""
    from jupyter_core.paths import jupyter_runtime_dir

    info_file = Path(jupyter_runtime_dir()) / f"jpserver-{process.pid}.json"
    while process.poll() is None:
        try:
            info = json.loads(info_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            info = None
        if info and answers(info["url"] + "api/status", info.get("token", "")):
            return info
        time.sleep(0.1)
    return None


def answers(url: str, token: str = "", timeout: float = 2) -> bool:
    """Does ``url`` answer 200? (directly: a proxy set in the environment is not for loopback)"""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    request = urllib.request.Request(url, headers={"Authorization": f"token {token}"} if token else {})
    try:
        with opener.open(request, timeout=timeout) as response:
            return response.status == 200
    except OSError:
        return False


def lab_url(info: dict[str, Any], notebook: str) -> str:
    path = f"lab/tree/{urllib.parse.quote(notebook)}" if notebook else "lab"
    token = info.get("token")
    return f"{info['url']}{path}" + (f"?token={token}" if token else "")


def stop(process: subprocess.Popen[bytes]) -> int:
    """SIGTERM (JupyterLab's orderly shutdown), then SIGKILL; Ctrl-C again skips the wait."""
    for sig, grace in ((signal.SIGTERM, 20), (signal.SIGKILL, 5)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        try:
            return process.wait(timeout=grace)
        except (subprocess.TimeoutExpired, KeyboardInterrupt):
            continue
    return process.wait()


def shown(path: Path) -> str:
    """``path`` relative to the current folder when it is inside it (``workspace``), else absolute."""
    relative = os.path.relpath(path)
    return path.as_posix() if relative.startswith("..") else relative


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # SIGTERM, SIGHUP: stop JupyterLab as Ctrl-C does


def _ends_with_parent() -> Callable[[], None] | None:
    """In the child, before JupyterLab starts: SIGTERM it when this process dies, even by SIGKILL
    (Linux's PR_SET_PDEATHSIG), so that no JupyterLab is left holding the port."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    prctl = ctypes.CDLL(None, use_errno=True).prctl
    return lambda: prctl(1, signal.SIGTERM)  # 1: PR_SET_PDEATHSIG


def _tail(path: Path, lines: int = 40) -> str:
    return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
