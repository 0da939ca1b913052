"""A JupyterHub for an MCP Wire Lab class: learners on the kit, nbgrader's exchange, one server per system user.

Start from this file (``jupyterhub -f setup/jupyterhub_config.py``, as root): each hub user is a
system user of the machine (PAM logs them in), and each learner's JupyterLab runs as that user
(LocalProcessSpawner), so the exchange's file owners tell learners apart and ``nbgrader collect``
in a course made by ``mcp-lab course init`` refuses a folder one learner made under another's name.
``tests/test_jupyterhub.py`` runs a class on it, with the paths below set by environment variables:

    MCP_LAB_HUB_STATE        folder of the hub's own state: the database and cookie secret (in
                             ``hub/``, root's only) and the learners' Jupyter config (``learner/``)
    MCP_LAB_HUB_URL          where the hub answers (default http://127.0.0.1:8000)
    MCP_LAB_HUB_API_URL      the hub's internal API (default http://127.0.0.1:8081)
    MCP_LAB_PROXY_API_URL    configurable-http-proxy's API (default http://127.0.0.1:8001)
    MCP_LAB_CHP              configurable-http-proxy's program (default: on PATH; make test's
                             bench/install_corpus.sh installs it in build/corpus/npm/node_modules/.bin)
    MCP_LAB_KIT              the learner kit (``mcp-lab course kit DIR``), on the learners' import path;
                             build its shop database once, as root: ``DIR/bin/mcp-lab db build``
    MCP_LAB_LEARNER_PYTHON   the learners' Python, with the kit's requirements.txt installed (never
                             this repository's: a learner must not import the grader)
    MCP_LAB_EXCHANGE         nbgrader's exchange (default /srv/nbgrader/exchange)
    MCP_LAB_COURSE           the course folder, read by the instructors' formgrader only
    MCP_LAB_INSTRUCTORS      hub users with nbgrader's formgrader (comma-separated)
    MCP_LAB_LEARNERS         hub users who may log in as learners (comma-separated; empty: any
                             system user PAM accepts)
    MCP_LAB_LEARNER_PREFIX   where the learners' Jupyter packages keep their data and config
                             (share/jupyter, etc/jupyter), when that is not the learners' Python's
                             own prefix (the test's learner Python borrows another environment's)

Where every learner's server runs as one uid (DockerSpawner, KubeSpawner: ``jovyan``), the file
exchange cannot tell learners apart: see the README, "A class on JupyterHub, and beyond one machine".
"""

import json
import os
from pathlib import Path

c = get_config()  # noqa: F821

COURSE_ID = "mcp-wire-lab"  # the course id of every course mcp-lab course init makes
STATE = Path(os.environ.get("MCP_LAB_HUB_STATE", "/srv/jupyterhub"))
EXCHANGE = os.environ.get("MCP_LAB_EXCHANGE", "/srv/nbgrader/exchange")
KIT = os.environ.get("MCP_LAB_KIT", "/srv/mcp-lab/kit")
PYTHON = os.environ.get("MCP_LAB_LEARNER_PYTHON", "python3")
INSTRUCTORS = {name for name in os.environ.get("MCP_LAB_INSTRUCTORS", "").split(",") if name}
LEARNERS = {name for name in os.environ.get("MCP_LAB_LEARNERS", "").split(",") if name}
# The instructor's tools (nbgrader's front-end plugins and server extensions), off in a learner's server.
INSTRUCTOR_PLUGINS = ("course-list", "create-assignment", "formgrader")
INSTRUCTOR_EXTENSIONS = ("formgrader", "course_list")


def jupyter_config(folder: Path, instructor: bool) -> Path:
    """The Jupyter config a learner's (or an instructor's) server reads first: nbgrader's exchange
    and course, and which of nbgrader's tools it shows. Readable by every learner; holds no secret."""
    (folder / "labconfig").mkdir(parents=True, exist_ok=True)
    off = () if instructor else INSTRUCTOR_PLUGINS
    disabled = {f"@jupyter/nbgrader:{name}": True for name in off}
    disabled["@jupyterlab/apputils-extension:announcements"] = True
    (folder / "labconfig" / "page_config.json").write_text(json.dumps({"disabledExtensions": disabled}, indent=1))
    extensions = {f"nbgrader.server_extensions.{name}": instructor for name in INSTRUCTOR_EXTENSIONS}
    extensions["nbgrader.server_extensions.assignment_list"] = True
    extensions["nbgrader.server_extensions.validate_assignment"] = True
    server = {"ServerApp": {"jpserver_extensions": extensions}}
    (folder / "jupyter_server_config.json").write_text(json.dumps(server, indent=1))
    lines = [f"c.Exchange.root = {EXCHANGE!r}", f"c.CourseDirectory.course_id = {COURSE_ID!r}"]
    if instructor and os.environ.get("MCP_LAB_COURSE"):
        lines.append(f"c.CourseDirectory.root = {os.environ['MCP_LAB_COURSE']!r}")
    (folder / "nbgrader_config.py").write_text("c = get_config()  # noqa: F821\n" + "\n".join(lines) + "\n")
    for path in (folder, *folder.rglob("*")):
        path.chmod(0o755 if path.is_dir() else 0o644)
    return folder


# The hub's own state, root's only: its database (tokens), its cookie secret, the proxy's pid.
(STATE / "hub").mkdir(parents=True, exist_ok=True)
(STATE / "hub").chmod(0o700)
c.JupyterHub.db_url = f"sqlite:///{STATE / 'hub' / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "hub" / "jupyterhub_cookie_secret")
c.ConfigurableHTTPProxy.pid_file = str(STATE / "hub" / "proxy.pid")
c.JupyterHub.bind_url = os.environ.get("MCP_LAB_HUB_URL", "http://127.0.0.1:8000")
c.JupyterHub.hub_bind_url = os.environ.get("MCP_LAB_HUB_API_URL", "http://127.0.0.1:8081")
c.ConfigurableHTTPProxy.api_url = os.environ.get("MCP_LAB_PROXY_API_URL", "http://127.0.0.1:8001")
c.ConfigurableHTTPProxy.command = [os.environ.get("MCP_LAB_CHP", "configurable-http-proxy")]

# Who logs in: system users, by their password (PAM); their hub names are nbgrader's student ids,
# and stage 08 draws each learner's cases from it (JUPYTERHUB_USER in their server).
c.JupyterHub.authenticator_class = "pam"
if LEARNERS or INSTRUCTORS:
    c.Authenticator.allowed_users = LEARNERS | INSTRUCTORS
else:
    c.Authenticator.allow_existing_users = True
    c.Authenticator.allow_all = True

# Each server runs as its user's own uid: the exchange's file owners are the learners.
c.JupyterHub.spawner_class = "localprocess"
c.Spawner.cmd = [PYTHON, "-m", "jupyterhub.singleuser"]
c.Spawner.default_url = "/lab"
c.Spawner.notebook_dir = "~"
c.Spawner.start_timeout = 120  # a busy machine starts JupyterLab slowly
c.Spawner.http_timeout = 120
c.Spawner.env_keep = ["LANG", "LC_ALL"]  # nothing else of root's environment reaches a learner
LEARNER_CONFIG = jupyter_config(STATE / "learner", instructor=False)
INSTRUCTOR_CONFIG = jupyter_config(STATE / "instructor", instructor=True)
STATE.chmod(0o755)  # the learners' servers read learner/ (hub/ stays root's)


def environment(spawner: object) -> None:
    """The learner's environment: the kit first on the import path, nbgrader's exchange, and no
    formgrader (an instructor's server has it, and the course folder)."""
    instructor = spawner.user.name in INSTRUCTORS  # type: ignore[attr-defined]
    config = INSTRUCTOR_CONFIG if instructor else LEARNER_CONFIG
    python_bin = os.path.dirname(PYTHON) if os.path.isabs(PYTHON) else ""
    path = ":".join(filter(None, [python_bin, "/usr/local/bin", "/usr/bin", "/bin"]))
    env = {"PYTHONPATH": KIT, "PATH": path, "JUPYTER_CONFIG_PATH": str(config)}
    prefix = os.environ.get("MCP_LAB_LEARNER_PREFIX")
    if prefix:
        env["JUPYTER_CONFIG_PATH"] += f":{prefix}/etc/jupyter"
        env["JUPYTER_PATH"] = f"{prefix}/share/jupyter"
        env["JUPYTERLAB_DIR"] = f"{prefix}/share/jupyter/lab"
    spawner.environment.update(env)  # type: ignore[attr-defined]


c.Spawner.pre_spawn_hook = environment
