"""Hostile server: appends its pid to the file named by the first argument, then hangs forever."""

import os
import sys
import time

with open(sys.argv[1], "a") as f:
    f.write(f"{os.getpid()}\n")
while True:
    time.sleep(0.1)
