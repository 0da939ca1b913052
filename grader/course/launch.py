"""``mcp-lab lab``: the learner's JupyterLab, opened on the workspace with the course's settings.

The learner gets the nbgrader Validate button and nothing of the instructor's tools (formgrader,
course list, assignment list, create assignment): those belong to an nbgrader course, and opening
them in a workspace would make an empty gradebook there. The settings live in a config folder under
``build/`` that this launch names, so nothing in the learner's own Jupyter set-up changes.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from .build import ROOT, WORKSPACE

CONFIG_DIR = ROOT / "build" / "jupyter-config"
INSTRUCTOR_PLUGINS = ("assignment-list", "course-list", "create-assignment", "formgrader")
INSTRUCTOR_SERVER_EXTENSIONS = ("formgrader", "course_list", "assignment_list")


def write_config(config_dir: Path = CONFIG_DIR) -> Path:
    """The page config (front-end plugins) and server config for the learner's JupyterLab."""
    labconfig = config_dir / "labconfig"
    labconfig.mkdir(parents=True, exist_ok=True)
    disabled = {f"@jupyter/nbgrader:{name}": True for name in INSTRUCTOR_PLUGINS}
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


def lab_command(workspace: Path = WORKSPACE, extra: Sequence[str] = ()) -> list[str]:
    command = [sys.executable, "-m", "jupyterlab", f"--ServerApp.root_dir={workspace}"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")  # containers and CI run as root; Jupyter refuses without it
    return [*command, *extra]


def open_lab(workspace: Path = WORKSPACE, extra: Sequence[str] = ()) -> None:
    """Replace this process with JupyterLab on ``workspace`` (its nbgrader_config.py applies)."""
    write_config()
    os.chdir(workspace)
    command = lab_command(workspace, extra)
    os.execve(command[0], command, lab_environment())
