"""Hostile server: never reads stdin, never writes, never exits on its own."""

import time

time.sleep(3600)
