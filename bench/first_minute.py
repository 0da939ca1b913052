"""The first minute of a new learner: `make lab` on a fresh clone, against a plain pip install.

    python3 bench/first_minute.py                 # the machine's package caches as they are
    python3 bench/first_minute.py --cold-caches   # empty uv and pip caches: everything downloaded
    MCP_LAB_INSTALLER=pip python3 bench/first_minute.py   # make lab's pip fallback instead of uv

Makes two fresh clones of this repository (its HEAD) in a temporary folder and measures, one after
the other in the same run:

  (a) `python3 -m venv .venv` + `.venv/bin/pip install -e '.[test]'` alone, in the first clone;
  (b) `make lab` in the second clone, from the start until JupyterLab answers HTTP at the URL that
      `make lab` printed (then it is stopped, as Ctrl-C would);
  (c) `make lab` again in the same clone, now ready (nothing to install).

It prints the three times, (b) and (c) as a fraction of (a), and what each `make lab` printed.
The target (issue 18): (b) at most half of (a). A report, not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTHON = os.environ.get("PYTHON", "python3")
RUNNING = re.compile(r"^JupyterLab is running: (\S+)")


def clean_env(work: Path, cold: bool) -> dict[str, str]:
    """The environment of a new learner's shell: no venv, no make of ours around, no database override."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    env.pop("MCP_LAB_DB", None)
    venv_bin = str(ROOT / ".venv" / "bin")
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != venv_bin)
    if cold:
        env["UV_CACHE_DIR"] = str(work / "cache-uv")
        env["PIP_CACHE_DIR"] = str(work / "cache-pip")
    return env


def clone(work: Path, name: str) -> Path:
    target = work / name
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(target)], check=True)
    return target


def plain_pip(repo: Path, env: dict[str, str], log: Path, timeout: float) -> float:
    """(a): python3 -m venv + pip install -e '.[test]', output to ``log``; the wall time."""
    started = time.monotonic()
    with open(log, "w") as out:
        for command in ([PYTHON, "-m", "venv", ".venv"], [".venv/bin/pip", "install", "-e", ".[test]"]):
            subprocess.run(command, cwd=repo, env=env, stdout=out, stderr=out, check=True, timeout=timeout)
    return time.monotonic() - started


def answers(url: str) -> bool:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=5) as response:
            return response.status == 200
    except OSError:
        return False


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def make_lab(repo: Path, env: dict[str, str], timeout: float) -> tuple[float, list[str]]:
    """(b), (c): `make lab` until the URL it prints answers HTTP; then stop it. (time, its output)"""
    args = f"--no-browser --ServerApp.port={free_port()}"
    started = time.monotonic()
    make = subprocess.Popen(
        ["make", "--no-print-directory", "lab", f"LAB_ARGS={args}"],
        cwd=repo,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    lines: list[str] = []
    url: list[str] = []
    ready = threading.Event()

    def read() -> None:
        assert make.stdout is not None
        for line in make.stdout:
            lines.append(line.rstrip("\n"))
            if match := RUNNING.match(line):
                url.append(match.group(1))
                ready.set()
        ready.set()  # make ended: failed, or stopped

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        if not ready.wait(timeout) or not url:
            raise RuntimeError("make lab printed no URL:\n" + "\n".join(lines))
        while not answers(url[0]):
            if time.monotonic() - started > timeout or make.poll() is not None:
                raise RuntimeError(f"{url[0]} did not answer:\n" + "\n".join(lines))
            time.sleep(0.05)
        elapsed = time.monotonic() - started
    finally:
        stop(make)
        reader.join(timeout=10)
    return elapsed, lines


def stop(make: subprocess.Popen[str]) -> None:
    """SIGTERM to make (it passes it on to mcp-lab, which stops JupyterLab); SIGKILL if that hangs."""
    if make.poll() is None:
        make.send_signal(signal.SIGTERM)
    try:
        make.wait(timeout=40)
    except subprocess.TimeoutExpired:
        os.killpg(make.pid, signal.SIGKILL)
        make.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cold-caches", action="store_true", help="empty uv and pip caches for both sides")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (clones, venvs, logs)")
    parser.add_argument("--timeout", type=float, default=1200, help="seconds any one step may take (1200)")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="first-minute-"))
    env = clean_env(work, args.cold_caches)
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    caches = "empty (--cold-caches)" if args.cold_caches else "the machine's, as they are"
    installer = env.get("MCP_LAB_INSTALLER", "auto")
    print(f"fresh clones of {ROOT} (HEAD {head.strip()}) in {work}")
    print(f"Python {platform.python_version()}, {os.cpu_count()} cores, load {load:.2f}; package caches: {caches}")
    bytecode = "PYTHONDONTWRITEBYTECODE set" if env.get("PYTHONDONTWRITEBYTECODE") else "bytecode written on import"
    print(f"make lab's installer: MCP_LAB_INSTALLER={installer}; {bytecode}\n", flush=True)
    failed = False
    try:
        plain = plain_pip(clone(work, "plain-pip"), env, work / "plain-pip.log", args.timeout)
        print(f"(a) {PYTHON} -m venv + pip install -e '.[test]'              {plain:6.1f} s", flush=True)
        repo = clone(work, "make-lab")
        first, first_lines = make_lab(repo, env, args.timeout)
        print(f"(b) make lab, fresh clone, until JupyterLab answers    {first:6.1f} s   {first / plain:.2f} of (a)")
        again, again_lines = make_lab(repo, env, args.timeout)
        print(f"(c) make lab again, ready clone                        {again:6.1f} s   {again / plain:.2f} of (a)")
        verdict = "met" if first <= plain / 2 else "MISSED"
        print(f"target (b) <= (a) / 2: {verdict} ({first:.1f} s against {plain / 2:.1f} s)")
        for name, lines in (("the first make lab", first_lines), ("the second make lab", again_lines)):
            print(f"\n{name} printed:")
            print("\n".join(f"  {line}" for line in lines))
    except (subprocess.SubprocessError, RuntimeError, OSError) as exc:
        print(f"failed: {exc}\n(the clones and logs are kept in {work})", file=sys.stderr)
        failed = True
    finally:
        if args.keep and not failed:
            print(f"\nkept: {work}")
        elif not failed:
            shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
