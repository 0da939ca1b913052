"""The learner's HTTP server (stage 12), reached through this process's pipes instead of the network.

    python -S http_host.py FOLDER MODULE [TOKEN]     # the stage's runtime as the import path

When grading, the learner's code runs in a sandbox with a network namespace of its own: only its
own loopback, no route out, nothing else listening there. A server it starts on 127.0.0.1 is out
of reach of the checks, which run outside. So this process, inside the same sandbox, builds the
server with the learner's ``make_server(("127.0.0.1", 0), TOKEN)`` (port 0: the system picks a
free one), serves it on a thread, and relays: each TCP connection the checks make to the course's
listener outside (``grader/course/http_bridge.py``) is a channel on this process's stdin and
stdout, and a TCP connection of its own to the learner's server in here. One line per frame:

    -> 3 open                  the checks opened connection 3: connect to the learner's server
    -> 3 data UE9TVCAvbWNw...  bytes for it (base64)
    <- 3 data SFRUUC8xLjEg...  bytes it sent back
    -> 3 eof                   the client sent all it will send (shut down our writing side)
    <- 3 eof                   the server closed (or shut down) its side
    -> 3 close                 the checks are done with connection 3
    <- 0 ready eyJwb3J0Ij...   the server is listening: {"port": N} (base64 JSON), once, first
    <- 0 fail VHJhY2ViYWNr...  make_server failed: the traceback (base64 text), then the process ends

The channel is a copy of the original stdin and stdout: the learner's code reads an empty stdin
and what it prints goes to stderr, as in the harness. The guard is in place before their code is
imported. Nothing here waits without a bound that the checks outside do not also hold: they end
this process's whole group when they are done.
"""

from __future__ import annotations

import base64
import importlib
import json
import os
import socket
import sys
import threading
import time
import traceback
from typing import BinaryIO

from lab_runtime import guard

CHUNK = 48 << 10  # bytes read from the learner's server at a time (a line of 64 KiB in base64)
SEND_TIMEOUT = 10.0  # seconds a send to the learner's server may block (it is not reading): then close


class Relay:
    def __init__(self, port: int, out: BinaryIO) -> None:
        self.port = port
        self.out = out
        self.lock = threading.Lock()
        self.sockets: dict[int, socket.socket] = {}

    def say(self, conn: int, kind: str, data: bytes | None = None) -> None:
        line = f"{conn} {kind}" + (f" {base64.b64encode(data).decode('ascii')}" if data is not None else "")
        with self.lock:
            try:
                self.out.write(line.encode("ascii") + b"\n")
                self.out.flush()
            except OSError:  # the checks are gone: so is the point of relaying
                os._exit(0)

    def open(self, conn: int) -> None:
        try:
            sock = socket.create_connection(("127.0.0.1", self.port), timeout=SEND_TIMEOUT)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError as exc:
            print(f"[course http host] cannot connect to your server: {exc}", file=sys.stderr)
            self.say(conn, "eof")
            return
        self.sockets[conn] = sock
        threading.Thread(target=self.pump, args=(conn, sock), daemon=True).start()

    def pump(self, conn: int, sock: socket.socket) -> None:
        """What the learner's server sends on ``conn``, forwarded until it closes its side."""
        while True:
            try:
                data = sock.recv(CHUNK)
            except TimeoutError:
                continue  # a quiet connection (keep-alive, a stream between events) stays open
            except OSError:
                data = b""
            if not data:
                self.say(conn, "eof")
                return
            self.say(conn, "data", data)

    def handle(self, line: bytes) -> None:
        words = line.split()
        if len(words) < 2 or not words[0].isdigit():
            return
        conn, kind = int(words[0]), words[1].decode("ascii", "replace")
        if kind == "open":
            self.open(conn)
            return
        sock = self.sockets.get(conn)
        if sock is None:
            return
        try:
            if kind == "data" and len(words) == 3:
                sock.sendall(base64.b64decode(words[2]))
            elif kind == "eof":
                sock.shutdown(socket.SHUT_WR)
            elif kind == "close":
                self.sockets.pop(conn, None)
                sock.close()
        except OSError:  # the server closed it, or stopped reading for SEND_TIMEOUT seconds
            self.sockets.pop(conn, None)
            sock.close()
            self.say(conn, "eof")


def main() -> int:
    if len(sys.argv) not in (3, 4) or not os.path.isdir(sys.argv[1]):
        print("usage: python -S http_host.py FOLDER MODULE [TOKEN]", file=sys.stderr)
        return 2
    folder, module = os.path.realpath(sys.argv[1]), sys.argv[2]
    token = sys.argv[3] if len(sys.argv) == 4 else None
    channel_in = os.fdopen(os.dup(0), "rb")
    channel_out = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)  # the learner's code reads an empty stdin, never the channel
    os.dup2(2, 1)  # and what it prints goes to stderr, never into the channel
    sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115 - lives as long as the process
    sys.stdout = sys.stderr
    os.chdir(folder)
    sys.path[0] = folder  # the learner's folder first, as for `python FILE`
    relay = Relay(0, channel_out)
    guard.install(folder)
    # The times, on stderr: a start that takes long says where it waited (the import, or make_server).
    started = time.monotonic()
    try:
        learner = importlib.import_module(module)
        imported = time.monotonic() - started
        make_server = getattr(learner, "make_server", None)
        if not callable(make_server):
            raise AttributeError(f"{module}.py defines no make_server(address, token)")
        httpd = make_server(("127.0.0.1", 0), token)
        relay.port = httpd.server_address[1]
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
    except BaseException as exc:  # the learner's SystemExit too: the checks say what happened
        shown = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        print(shown, file=sys.stderr, end="")
        relay.say(0, "fail", shown[-4000:].encode("utf-8", "replace"))
        return 1
    built = time.monotonic() - started - imported
    print(
        f"[course http host] your server listens on 127.0.0.1:{relay.port} in here "
        f"(imported in {imported:.1f} s, built by make_server in {built:.1f} s)",
        file=sys.stderr,
    )
    relay.say(0, "ready", json.dumps({"port": relay.port}).encode())
    for line in channel_in:
        relay.handle(line)
    os._exit(0)  # the checks closed the channel: done, whatever the learner's threads are doing


if __name__ == "__main__":
    sys.exit(main())
