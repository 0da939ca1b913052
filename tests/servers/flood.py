"""Hostile server: floods stdout and stderr without end and never reads stdin."""

import os

line = b"x" * 65535 + b"\n"
noise = b"e" * 65536
while True:
    os.write(1, line)
    os.write(2, noise)
