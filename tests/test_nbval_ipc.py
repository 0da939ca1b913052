"""The suite's nbval runs reach their kernel over ipc sockets, with no TCP port to lose (tests/nbval_ipc.py).

A kernel on TCP dies when another process binds one of its ports between jupyter_client's choice
and the kernel's start. Beside a process holding a changing 2000 random ports of the ephemeral
range, 2 of 4 kernels started by nbval's own ``start_new_kernel`` died that way ("Address already
in use"); on ipc, 6 of 6 started. This test pins what removes the window, through nbval and a real
kernel: the kernel's own view of how it was started.
"""

from __future__ import annotations

import json
from pathlib import Path

from course_support import run_nbval

# One cell, run by the kernel: what it was started with. nbval --nbval-lax shows no output of a
# passing cell, so the cell writes it to a file the test reads.
_PROBE = """import json, os
app = get_ipython().kernel.parent
seen = {"transport": app.transport, "ip": app.ip, "pythonpath": os.environ.get("PYTHONPATH", "")}
open(OUT, "w").write(json.dumps(seen))
"""


def test_the_kernel_listens_on_ipc_sockets_and_gets_the_learners_environment(tmp_path: Path) -> None:
    out = tmp_path / "seen.json"
    source = f"OUT = {str(out)!r}\n" + _PROBE
    cell = {
        "cell_type": "code",
        "id": "probe",
        "metadata": {},
        "source": source,
        "outputs": [],
        "execution_count": None,
    }
    kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook = {"cells": [cell], "metadata": {"kernelspec": kernelspec}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "probe.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")

    done = run_nbval(path, timeout=180)

    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout[-3000:] + done.stderr[-1000:]
    seen = json.loads(out.read_text(encoding="utf-8"))
    assert seen["transport"] == "ipc", seen
    ip = Path(seen["ip"])
    assert ip.is_absolute() and not ip.is_relative_to(tmp_path), seen  # its socket files are not beside the notebook
    tests = str(Path(__file__).resolve().parent)
    assert tests not in seen["pythonpath"].split(":"), seen  # the plugin's path is not the learner's
    assert not list(ip.parent.glob(ip.name + "-*")), "the socket files outlived the kernel"
