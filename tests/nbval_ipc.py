"""A pytest plugin for the suite's nbval runs: the kernel is reached over Unix sockets, not TCP ports.

jupyter_client chooses a kernel's five TCP ports by binding port 0 and closing it again; the kernel
binds them a second or more later, once it has started. On a busy machine another process can take
one of them in between, and the kernel dies on ``Address already in use``: nbval then reports
"Kernel died before replying to kernel_info" for every cell (jupyter/jupyter_client#154; it failed a
CI run of this suite). ZeroMQ's ``ipc`` transport uses socket files instead, named here for the
kernel alone (in the temporary folder: ipc's default name is relative to the working folder), and
no other process takes those. nbval builds its ``KernelManager`` itself, with no configuration to
pass, so the plugin hands it one whose transport is ``ipc``.

    python -m pytest -p nbval_ipc --nbval-lax notebook.ipynb   # with tests/ on PYTHONPATH
"""

from __future__ import annotations

import os
import tempfile
import uuid
from pathlib import Path
from typing import Any

from grader.checker import schema_formats

# jsonschema's optional format libraries (rfc3987_syntax alone: 1.3 s of CPU in this process) serve
# formats nbformat's schema never validates (grading leaves them out too). The kernel is another
# process: it keeps them, as a learner's does.
schema_formats.leave_out()

import nbval.kernel  # noqa: E402
from jupyter_client.manager import KernelManager  # noqa: E402


class IpcKernelManager(KernelManager):
    """jupyter_client's own manager, on the ``ipc`` transport."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("transport", "ipc")
        kwargs.setdefault("ip", str(Path(tempfile.gettempdir()) / f"kernel-{uuid.uuid4()}-ipc"))
        super().__init__(**kwargs)


nbval.kernel.KernelManager = IpcKernelManager

# The kernel starts with this process's environment: it gets the PYTHONPATH it would have had
# without the entry that found this plugin, so the notebook runs as it would for a learner.
_HERE = str(Path(__file__).resolve().parent)
_path = [entry for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep) if entry and entry != _HERE]
if _path:
    os.environ["PYTHONPATH"] = os.pathsep.join(_path)
else:
    os.environ.pop("PYTHONPATH", None)
