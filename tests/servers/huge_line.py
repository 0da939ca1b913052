"""Hostile server: answers the first line with one 12 MiB line, then stops reading."""

import sys
import time

sys.stdin.buffer.readline()
sys.stdout.buffer.write(b'{"jsonrpc":"2.0","id":1,"result":{"pad":"' + b"x" * (12 << 20) + b'"}}\n')
sys.stdout.buffer.flush()
time.sleep(3600)
