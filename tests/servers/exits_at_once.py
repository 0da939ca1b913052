"""Hostile server: says why on stderr and exits with status 3 before reading anything."""

import sys

print("fatal: cannot find config.toml", file=sys.stderr)
sys.exit(3)
