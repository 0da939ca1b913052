"""The smallest stdio server: what stage 00's ``talk`` speaks to (the standard library only).

It answers ``ping`` with ``{}`` and any other request with -32601, says nothing to notifications
and ends at the end of its input. It logs each message it reads to stderr, as servers do (a
client that mixes stderr into stdout sees those lines among the replies). ``--ignore-eof`` makes
it stay after its input ends (until it is killed, or 60 s have passed): a server that never
exits, for ``talk``'s timeout.

    $ python3 pinger.py
    -> {"jsonrpc":"2.0","id":7,"method":"ping"}
    <- {"jsonrpc":"2.0","id":7,"result":{}}
"""

import json
import sys
import time


def reply(message: dict) -> dict | None:
    if "id" not in message:
        return None
    if message.get("method") == "ping":
        return {"jsonrpc": "2.0", "id": message["id"], "result": {}}
    return {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "Method not found"}}


def main() -> int:
    print("pinger: ready", file=sys.stderr, flush=True)
    for line in sys.stdin.buffer:
        print(f"pinger: read {len(line)} bytes", file=sys.stderr, flush=True)
        try:
            message = json.loads(line)
        except ValueError:
            continue
        answer = reply(message) if isinstance(message, dict) else None
        if answer is not None:
            sys.stdout.buffer.write(json.dumps(answer, separators=(",", ":")).encode() + b"\n")
            sys.stdout.buffer.flush()
    if "--ignore-eof" in sys.argv:
        time.sleep(60)
    return 0


if __name__ == "__main__":
    sys.exit(main())
