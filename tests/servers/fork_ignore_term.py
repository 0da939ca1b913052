"""Hostile server: ignores SIGTERM and stdin EOF, and forks a grandchild that writes to stdout.

Both pids are written to the file named by the first argument, so a test can prove they died.
"""

import os
import signal
import sys
import time

signal.signal(signal.SIGTERM, signal.SIG_IGN)
pid = os.fork()
if pid == 0:
    while True:
        os.write(1, b"grandchild says hello\n")
        time.sleep(0.05)
with open(sys.argv[1], "w") as f:
    f.write(f"{os.getpid()} {pid}\n")
while True:
    time.sleep(0.1)
