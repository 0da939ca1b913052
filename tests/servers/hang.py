"""Hostile server: reads every line and never answers."""

import sys
import time

for _line in sys.stdin.buffer:
    time.sleep(3600)
