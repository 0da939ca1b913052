"""Make (or update) a virtual environment with uv when it can be had, with pip otherwise.

    python3 setup/make_venv.py VENV [--log FILE] [--label TEXT] PACKAGES...   # PACKAGES as for pip install
    python3 setup/make_venv.py --find-uv                                       # print the uv it would use

Used by the Makefile (the project's .venv), bench/install_corpus.sh (the corpus and SDK 1.x venvs)
and through them by .ci/run. It prints one line, "setting up VENV... done in 6.1 s with uv 0.13.8";
the installers' own output goes to a log file that is printed only when something fails.

Which installer (MCP_LAB_INSTALLER): "auto" (the default) takes the pinned uv in build/bootstrap/,
else a uv on PATH, else installs the pinned uv there (pip install --target, a few seconds), and
falls back to pip when none of that works; "uv" is the same without the fallback; "pip" is
`python -m venv` and the venv's own pip, as before uv. Venvs made by uv get pip too (--seed), so
`VENV/bin/python -m pip` works whichever installer made them. Standard library only.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
UV_VERSION = "0.13.8"  # the pinned uv; build/bootstrap/ is the Makefile's (make clean removes build/)
BOOTSTRAP = Path(os.environ.get("MCP_LAB_BOOTSTRAP") or ROOT / "build" / "bootstrap")  # the env var: for tests
OLDEST_UV_ON_PATH = (0, 5)  # a uv on PATH older than this is not trusted with these options


class SetupError(Exception):
    pass


def run(command: list[str], log: Path, env: dict[str, str] | None = None) -> None:
    """Run ``command`` with its output appended to ``log``; a failure raises SetupError."""
    with open(log, "a", encoding="utf-8") as out:
        out.write(f"$ {' '.join(command)}\n")
        out.flush()
        code = subprocess.call(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
        out.write(f"(exit status {code})\n")
    if code != 0:
        raise SetupError(f"{Path(command[0]).name} exited with status {code}")


def uv_version(uv: str) -> tuple[int, ...] | None:
    try:
        out = subprocess.run([uv, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.match(r"uv (\d+)\.(\d+)\.(\d+)", out)
    return tuple(int(n) for n in match.groups()) if match else None


def find_uv(log: Path, bootstrap: Path = BOOTSTRAP) -> str:
    """The pinned uv in ``bootstrap``, a recent uv on PATH, or the pinned uv installed now."""
    pinned = bootstrap / f"uv-{UV_VERSION}"
    uv = pinned / "bin" / "uv"
    if uv.is_file() and uv_version(str(uv)):
        return str(uv)
    on_path = shutil.which("uv")
    if on_path and (uv_version(on_path) or (0,)) >= OLDEST_UV_ON_PATH:
        return on_path
    bootstrap.mkdir(parents=True, exist_ok=True)
    with open(bootstrap / ".lock", "w") as lock:  # two set-ups at once install it once
        with contextlib.suppress(ImportError):
            import fcntl

            fcntl.flock(lock, fcntl.LOCK_EX)
        if not uv.is_file():
            partial = pinned.with_name(pinned.name + ".partial")
            shutil.rmtree(partial, ignore_errors=True)
            command = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
            try:
                run([*command, "--no-warn-script-location", "--target", str(partial), f"uv=={UV_VERSION}"], log)
            except SetupError:
                raise SetupError(f"uv {UV_VERSION} could not be installed") from None
            partial.rename(pinned)
    if not uv_version(str(uv)):
        raise SetupError(f"{uv} does not run")
    return str(uv)


# An editable install of this project as a path in a .pth file (setuptools' "compat" mode), not the
# import hook its default mode installs: that hook's module, imported by site.py at every start of the
# venv's Python, costs 20 ms of CPU (pathlib, fnmatch, urllib.parse...), and the tests start thousands.
# Measured with perf stat -r 30: python -c pass 34 ms with the hook, 11 ms with the path.
EDITABLE_MODE = "editable_mode=compat"


def editable(packages: list[str]) -> bool:
    return "-e" in packages or any(p.startswith("--editable") for p in packages)


def with_uv(uv: str, venv: Path, packages: list[str], log: Path) -> None:
    python = venv / "bin" / "python"
    if not python.exists():
        run([uv, "venv", "--seed", "--no-project", "--allow-existing", "--python", sys.executable, str(venv)], log)
    # pip compiles what it installs to bytecode; uv leaves that to the first import, which cannot save
    # it where PYTHONDONTWRITEBYTECODE is set (CI, some shells): every process would compile again.
    compile_ = ["--compile-bytecode"] if os.environ.get("PYTHONDONTWRITEBYTECODE") else []
    if packages:
        mode = ["--config-setting", EDITABLE_MODE] if editable(packages) else []
        run([uv, "pip", "install", *compile_, *mode, "--python", str(python), *packages], log)


def with_pip(venv: Path, packages: list[str], log: Path) -> None:
    python = venv / "bin" / "python"
    if not python.exists():
        run([sys.executable, "-m", "venv", str(venv)], log)
    # The pip that venv brings (23.x or newer on Python 3.11) installs this pyproject, editable too.
    if packages:
        mode = ["--config-settings", EDITABLE_MODE] if editable(packages) else []
        run([str(python), "-m", "pip", "install", "--disable-pip-version-check", *mode, *packages], log)


def set_up(venv: Path, packages: list[str], log: Path, installer: str, bootstrap: Path = BOOTSTRAP) -> str:
    """Make or update ``venv``; return the installer that did it ("uv 0.13.8", "pip", "pip (why)")."""
    if installer not in ("auto", "uv", "pip"):
        raise SetupError(f"MCP_LAB_INSTALLER={installer!r}: use auto, uv or pip")
    if installer == "pip":
        with_pip(venv, packages, log)
        return "pip"
    try:
        uv = find_uv(log, bootstrap)
        with_uv(uv, venv, packages, log)
        return "uv " + ".".join(map(str, uv_version(uv) or ()))
    except SetupError as exc:
        # No uv (no registry for it), or uv failed: uv reads no pip.conf, so an index or proxy set
        # up for pip alone is one reason pip may still work.
        if installer == "uv":
            raise
        why = str(exc)
    with open(log, "a", encoding="utf-8") as out:
        out.write(f"{why}: falling back to pip\n")
    with_pip(venv, packages, log)
    return f"pip ({why}, see {os.path.relpath(log)})"


def default_log(venv: Path) -> Path:
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", os.path.relpath(venv.resolve(), ROOT)).strip("_.") or "venv"
    return ROOT / "build" / "logs" / f"setup-{name}.log"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("venv", nargs="?", type=Path, help="the virtual environment to make or update")
    parser.add_argument("packages", nargs=argparse.REMAINDER, help="what to install, as for pip install")
    parser.add_argument("--log", type=Path, help="the installers' output (default: build/logs/setup-VENV.log)")
    parser.add_argument("--label", help="what the progress line calls the venv (default: its path)")
    parser.add_argument("--find-uv", action="store_true", help="print the uv this would use (installing it if need be)")
    args = parser.parse_args(argv)
    installer = os.environ.get("MCP_LAB_INSTALLER", "auto").strip().lower() or "auto"
    if args.find_uv:
        log = args.log or ROOT / "build" / "logs" / "setup-uv.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        try:
            print(find_uv(log))
        except SetupError as exc:
            print(f"no uv: {exc} (see {log})", file=sys.stderr)
            return 1
        return 0
    if args.venv is None:
        parser.error("VENV is required")
    log = args.log or default_log(args.venv)
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("", encoding="utf-8")
    label = args.label or os.path.relpath(args.venv.resolve())
    print(f"setting up {label}...", end=" ", flush=True)
    start = time.monotonic()
    try:
        used = set_up(args.venv, args.packages, log, installer)
    except (SetupError, OSError) as exc:
        print(f"failed after {time.monotonic() - start:.1f} s: {exc}")
        print(f"--- {log} ---", file=sys.stderr)
        print(log.read_text(encoding="utf-8", errors="replace")[-12000:].rstrip(), file=sys.stderr)
        print(f"--- end of {log} (MCP_LAB_INSTALLER=pip forces the pip path) ---", file=sys.stderr)
        return 1
    print(f"done in {time.monotonic() - start:.1f} s with {used}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
