"""setup/make_venv.py, the set-up behind `make lab`, `make test` and bench/install_corpus.sh.

Each path runs for real on a tiny throwaway project, so each test takes seconds: uv (the pinned
one, installed into build/bootstrap/ on first use) on an editable project with one small dependency;
pip when asked for, and pip when uv cannot be had (no registry: simulated with pip's own
PIP_NO_INDEX), on a wheel made here; a failure prints the installers' log.
"""

from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import ROOT

pytestmark = pytest.mark.timeout(300)
SCRIPT = ROOT / "setup" / "make_venv.py"
sys.path.insert(0, str(SCRIPT.parent))
import make_venv  # noqa: E402 - setup/ is a folder of scripts, not a package

PYPROJECT = """[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "tinypkg"
version = "0.1"
dependencies = [{dependencies}]
"""


def tiny_project(tmp_path: Path, dependencies: str = "") -> Path:
    project = tmp_path / "tiny"
    (project / "tinypkg").mkdir(parents=True)
    (project / "pyproject.toml").write_text(PYPROJECT.format(dependencies=dependencies))
    (project / "tinypkg" / "__init__.py").write_text("VALUE = 42\n")
    return project


def tiny_wheel(tmp_path: Path) -> Path:
    """The same module as a wheel, written by hand: pip installs it with no registry and no build."""
    files = {
        "tinypkg/__init__.py": "VALUE = 42\n",
        "tinypkg-0.1.dist-info/METADATA": "Metadata-Version: 2.1\nName: tinypkg\nVersion: 0.1\n",
        "tinypkg-0.1.dist-info/WHEEL": "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(text.encode())}")
    files["tinypkg-0.1.dist-info/RECORD"] = "\n".join([*record, "tinypkg-0.1.dist-info/RECORD,,"]) + "\n"
    wheel = tmp_path / "tinypkg-0.1-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return wheel


def set_up(tmp_path: Path, *packages: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("MCP_LAB_")} | env
    command = [sys.executable, str(SCRIPT), "--log", str(tmp_path / "setup.log"), str(tmp_path / "venv"), *packages]
    return subprocess.run(command, capture_output=True, text=True, env=environment, timeout=240)


def runs(venv: Path, code: str) -> str:
    done = subprocess.run([str(venv / "bin" / "python"), "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def no_uv_to_be_had(tmp_path: Path) -> dict[str, str]:
    """No uv on PATH, none bootstrapped, and pip finds no uv to install (nor anything else)."""
    empty = tmp_path / "empty"
    empty.mkdir(exist_ok=True)
    path = os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"])
    return {
        "PATH": path,
        "MCP_LAB_BOOTSTRAP": str(tmp_path / "bootstrap"),
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(empty),
    }


@pytest.fixture(scope="module")
def uv() -> str:
    done = subprocess.run([sys.executable, str(SCRIPT), "--find-uv"], capture_output=True, text=True, timeout=240)
    if done.returncode != 0:
        pytest.skip(f"uv cannot be had here (no registry?): {done.stderr.strip()}")
    return done.stdout.strip()


def test_the_uv_path_makes_a_working_venv_with_pip_in_it(tmp_path: Path, uv: str) -> None:
    project = tiny_project(tmp_path, '"six"')
    done = set_up(tmp_path, "-e", str(project), MCP_LAB_INSTALLER="uv", PYTHONDONTWRITEBYTECODE="1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("setting up ") and " with uv " in done.stdout  # the pinned one, or one on PATH
    assert len(done.stdout.splitlines()) == 1, "one line of progress, nothing of uv's"
    venv = tmp_path / "venv"
    assert "uv = " in (venv / "pyvenv.cfg").read_text(), "uv made this venv"
    assert runs(venv, "import six, tinypkg; print(tinypkg.VALUE)") == "42"
    assert "pip" in runs(venv, "import subprocess, sys; subprocess.run([sys.executable, '-m', 'pip', '--version'])")
    assert f"{uv} pip install --compile-bytecode" in (tmp_path / "setup.log").read_text()
    # Where no process may write bytecode, uv compiles at install, as pip does.
    assert list((venv / "lib").glob("python3*/site-packages/__pycache__/six.*.pyc"))


@pytest.mark.slow
def test_the_pip_path_when_asked_for(tmp_path: Path) -> None:
    wheel = str(tiny_wheel(tmp_path))
    done = set_up(tmp_path, wheel, MCP_LAB_INSTALLER="pip")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.rstrip().endswith("with pip"), done.stdout
    venv = tmp_path / "venv"
    assert "uv = " not in (venv / "pyvenv.cfg").read_text(), "python -m venv made this venv"
    assert runs(venv, "import tinypkg; print(tinypkg.VALUE)") == "42"
    log = (tmp_path / "setup.log").read_text()
    assert "-m venv" in log and "-m pip install" in log and "uv venv" not in log and "uv pip" not in log

    # Again (bench/install_corpus.sh runs it every time): the venv is updated, not made again.
    (venv / "marker").write_text("still here")
    done = set_up(tmp_path, wheel, MCP_LAB_INSTALLER="pip")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (venv / "marker").exists() and "-m venv" not in (tmp_path / "setup.log").read_text()

    # A failure says so, and the installer's log is shown.
    done = set_up(tmp_path, str(tmp_path / "no-such-project"), MCP_LAB_INSTALLER="pip")
    assert done.returncode == 1 and "failed after" in done.stdout
    assert "no-such-project" in done.stderr and "-m pip install" in done.stderr, done.stderr


def test_auto_falls_back_to_pip_when_uv_cannot_be_had(tmp_path: Path) -> None:
    done = set_up(tmp_path, str(tiny_wheel(tmp_path)), **no_uv_to_be_had(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"with pip (uv {make_venv.UV_VERSION} could not be installed, see " in done.stdout, done.stdout
    venv = tmp_path / "venv"
    assert "uv = " not in (venv / "pyvenv.cfg").read_text()
    assert runs(venv, "import tinypkg; print(tinypkg.VALUE)") == "42"
    log = (tmp_path / "setup.log").read_text()
    fallback = f"{venv / 'bin' / 'python'} -m pip install"
    assert log.index(f"uv=={make_venv.UV_VERSION}") < log.index("falling back to pip") < log.index(fallback)
    assert not (tmp_path / "bootstrap" / f"uv-{make_venv.UV_VERSION}").exists(), "no half-installed uv is kept"


def test_no_fallback_when_uv_is_asked_for(tmp_path: Path) -> None:
    done = set_up(tmp_path, str(tiny_wheel(tmp_path)), MCP_LAB_INSTALLER="uv", **no_uv_to_be_had(tmp_path))
    assert done.returncode == 1
    assert "failed after" in done.stdout and f"uv {make_venv.UV_VERSION} could not be installed" in done.stdout
    assert f"uv=={make_venv.UV_VERSION}" in done.stderr, "the log is shown"
    assert "MCP_LAB_INSTALLER=pip" in done.stderr
    assert not (tmp_path / "venv").exists()


def test_an_unknown_installer_is_refused(tmp_path: Path) -> None:
    done = set_up(tmp_path, MCP_LAB_INSTALLER="conda")
    assert done.returncode == 1 and "use auto, uv or pip" in done.stdout


OTHER = "import pytest\n@pytest.mark.parametrize('n', range(30))\ndef test_it(n):\n    pass\n"
GROUPED_SUITE = {
    "conftest.py": (  # the suite's own grouping hook, loaded from tests/conftest.py
        "import importlib.util, sys\n"
        f"sys.path.insert(0, {str(ROOT / 'tests')!r})\n"
        f"spec = importlib.util.spec_from_file_location('suite_conftest', {str(ROOT / 'tests' / 'conftest.py')!r})\n"
        "suite = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(suite)\n"
        "pytest_collection_modifyitems = suite.pytest_collection_modifyitems\n"
    ),
    "test_costly.py": (
        "import os, pytest\n"
        "@pytest.fixture(scope='module')\n"
        "def costly():\n"
        "    with open(os.environ['SETUPS'], 'a') as log:\n"
        "        log.write(f'{os.getpid()}\\n')\n"
        "@pytest.mark.parametrize('n', range(30))\n"
        "def test_costly(costly, n):\n"
        "    pass\n"
    ),
    **{
        f"test_other_{n}.py": "import pytest\n@pytest.mark.parametrize('n', range(30))\ndef test_it(n):\n    pass\n"
        for n in range(3)
    },
}


@pytest.mark.slow
def test_make_test_keeps_a_test_file_on_one_worker(tmp_path: Path) -> None:
    """make test's --dist loadgroup sends each file's tests to one worker (tests/conftest.py marks them), so
    a module fixture (the cheats' class graded, the repairs' verdicts: minutes each) is built once. A
    pytest that ignores xdist's group marks (pytest 9 with xdist 3.8 did) builds it on every worker."""
    for name, text in GROUPED_SUITE.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    setups = tmp_path / "setups.log"
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "3", "--dist", "loadgroup"]
    done = subprocess.run(
        [*command, "-o", "addopts=", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={**os.environ, "SETUPS": str(setups)},
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert len(setups.read_text().split()) == 1, setups.read_text()


BUSY_FILE = """import pytest
@pytest.fixture(scope='module')
def built():
    return 1
@pytest.mark.parametrize('n', range({count}))
def test_it(built, n):
    pass
"""
SINGLE_FILE = "import pytest\ndef test_one():\n    pass\ndef test_two():\n    pass\n"
HANDOUT_SUITE = {
    "conftest.py": GROUPED_SUITE["conftest.py"],
    # A file of tests.conftest.WAITING (three slices), six busy groups of 10 to 5 tests, two files of tests
    # of no group, the second with a test marked slow at its end.
    "test_gallery.py": "import pytest\n@pytest.mark.parametrize('n', range(9))\ndef test_exhibit(n):\n    pass\n",
    **{f"test_busy_{n}.py": BUSY_FILE.format(count=10 - n) for n in range(6)},
    **{f"test_single_{n}.py": SINGLE_FILE for n in range(2)},
}
HANDOUT_SUITE["test_single_1.py"] += "@pytest.mark.slow\ndef test_long():\n    pass\n"


def test_make_test_hands_out_a_waiting_files_slices_between_the_busy_groups(tmp_path: Path) -> None:
    """make test (--no-loadscope-reorder) hands the groups out in collection order, which the suite's hook
    sets: the busy groups largest first, a slice of a file that mostly waits after every few of them,
    and a test marked slow among them as a slice is, then the other tests of no group, a file's after
    another's in turn, so that the waiting files never fill all the workers at once and no slow test is
    the run's tail."""
    for name, text in HANDOUT_SUITE.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    command = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-o", "addopts="]
    done = subprocess.run([*command, str(tmp_path)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    collected = [line for line in done.stdout.splitlines() if "::" in line]
    assert len(collected) == len(set(collected)) == 9 + sum(10 - n for n in range(6)) + 5
    files = [line.split("::")[0] for line in collected]
    runs = [name for at, name in enumerate(files) if at == 0 or files[at - 1] != name]
    busy = [f"test_busy_{n}.py" for n in range(6)]
    slice_ = "test_gallery.py"
    long = "test_single_1.py"  # its test marked slow goes out between the busy groups, as a slice does
    alone = ["test_single_0.py", "test_single_1.py"] * 2
    assert runs == [slice_, busy[0], long, busy[1], slice_, busy[2], slice_, *busy[3:], *alone]
    assert next(line for line in collected if line.startswith(long)) == f"{long}::test_long", collected
    # The slices are dealt round: each has every third of the file's tests.
    exhibits = [line.partition("[")[2] for line in collected if line.startswith(slice_)]
    assert exhibits[:3] == ["0]", "3]", "6]"], exhibits
