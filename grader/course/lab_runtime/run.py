"""Run the learner's file as a program (a server, a client's script), under the guard.

    python -S run.py FOLDER/shop_server.py [ARGS...]     # the stage's runtime as the import path

The file runs as ``__main__`` in its own folder, first on the import path, exactly as
``python shop_server.py`` would run it there, except that the guard (:mod:`lab_runtime.guard`) is in
place before the first line of the learner's code. Its stdin, stdout and stderr are the
process's own: a server speaks the protocol on them directly.
"""

from __future__ import annotations

import os
import runpy
import sys

from lab_runtime import guard


def main() -> None:
    if len(sys.argv) < 2:
        print("usage: python -S run.py FILE.py [ARGS...]", file=sys.stderr)
        sys.exit(2)
    path = os.path.abspath(sys.argv[1])
    folder = os.path.dirname(path)
    sys.argv = [path, *sys.argv[2:]]
    sys.path[0] = folder  # not lab_runtime/: the learner's folder, as for `python FILE`
    os.chdir(folder)
    guard.install(folder)
    runpy.run_path(path, run_name="__main__")


if __name__ == "__main__":
    main()
