"""The client: launch a server as a child, shake hands, call it, shut it down in order.

What makes a client correct on the wire:

- every request gets a fresh id, and a reply is matched to its request *by id*, not by order;
- a notification is sent and forgotten: nothing ever answers it, so never wait for a reply;
- every read has a timeout, and stderr is always drained (see :mod:`reference.child`);
- the session ends by closing the server's stdin, then waiting, then SIGTERM, then SIGKILL.

    >>> import sys
    >>> with Client([sys.executable, "-m", "reference.server"]) as client:
    ...     result = client.initialize()
    ...     client.request("tools/call", {"name": "count_orders", "arguments": {"status": "paid"}})
    ... # doctest: +NORMALIZE_WHITESPACE
    {'content': [{'type': 'text', 'text': '{"status": "paid", "count": 341}'}],
     'structuredContent': {'status': 'paid', 'count': 341}, 'isError': False}
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from . import PROTOCOL_REVISION, envelope
from .child import ChildProcess
from .errors import METHOD_NOT_FOUND
from .framing import FrameError, decode, encode

CLIENT_INFO = {"name": "mcp-wire-lab-client", "version": "0.1.0"}


def same_id(a: Any, b: Any) -> bool:
    """Same value *and* same JSON type: 1 and "1" are different ids, so are 1 and true, or 1 and 1.0.

    (Not a dict lookup: in Python ``True == 1 == 1.0`` with one hash, and a list id has none.)
    """
    return type(a) is type(b) and a == b


class ClientError(Exception):
    """The session cannot go on: a timeout, a dead server, or an error reply to a request."""

    def __init__(self, message: str, error: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.error = error

    @property
    def code(self) -> int | None:
        return self.error.get("code") if isinstance(self.error, dict) else None


class Client:
    def __init__(
        self,
        argv: Sequence[str],
        timeout: float = 5.0,
        env: Mapping[str, str] | None = None,
        on_frame: Callable[[str, str], None] | None = None,
    ) -> None:
        self.argv = list(argv)
        self.timeout = timeout
        self.env = env
        self.on_frame = on_frame or (lambda direction, text: None)
        self.next_id = 0
        self.early: list[dict[str, Any]] = []  # replies that came before we asked for them
        self.notifications: list[dict[str, Any]] = []
        self.noise: list[bytes] = []  # stdout lines that were not JSON-RPC messages
        self.child: ChildProcess | None = None

    def start(self) -> Client:
        self.child = ChildProcess(self.argv, env=self.env)
        return self

    def __enter__(self) -> Client:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _send(self, message: dict[str, Any]) -> None:
        assert self.child is not None, "call start() first"
        data = encode(message)
        self.on_frame("->", data.decode("utf-8").rstrip("\n"))
        if not self.child.send(data):
            raise ClientError(f"the server stopped reading its stdin{self._stderr_hint()}")

    def _stderr_hint(self) -> str:
        tail = self.child.stderr_tail(500).strip() if self.child else ""
        return f"; its stderr ends with: {tail}" if tail else ""

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification. It has no id and no reply: do not wait for one."""
        message: dict[str, Any] = {"jsonrpc": envelope.JSONRPC, "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)

    def request(self, method: str, params: dict[str, Any] | None = None, timeout: float | None = None) -> Any:
        """Send a request and return its result; an error reply raises :class:`ClientError`."""
        request_id = self.next_id
        self.next_id += 1
        message: dict[str, Any] = {"jsonrpc": envelope.JSONRPC, "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)
        reply = self._wait_for(request_id, method, self.timeout if timeout is None else timeout)
        if "error" in reply:
            error = reply["error"]
            raise ClientError(f"{method} failed: {error.get('code')} {error.get('message')}", error)
        return reply.get("result")

    def _wait_for(self, request_id: Any, method: str, timeout: float) -> dict[str, Any]:
        assert self.child is not None
        for reply in self.early:
            if same_id(reply["id"], request_id):
                self.early.remove(reply)
                return reply
        deadline = self.child.elapsed() + timeout
        while True:
            line = self.child.read_line(deadline - self.child.elapsed())
            if line is None:
                if self.child.stdout_closed.is_set():
                    raise ClientError(f"the server closed stdout before answering {method}{self._stderr_hint()}")
                raise ClientError(f"no reply to {method} (id {request_id}) within {timeout:g} s{self._stderr_hint()}")
            text = line.data.decode("utf-8", "replace")
            try:
                message = decode(line.data)
            except FrameError:
                message = None
            if not isinstance(message, dict):
                self.on_frame("!!", text)
                self.noise.append(line.data)
                continue
            self.on_frame("<-", text)
            if "method" in message:
                self._from_server(message)
            elif "id" in message:
                if same_id(message["id"], request_id):
                    return message
                self.early.append(message)

    def _from_server(self, message: dict[str, Any]) -> None:
        """A request or notification from the server: answer pings, refuse the rest."""
        if "id" not in message:
            self.notifications.append(message)
        elif message["method"] == "ping":
            self._send(envelope.result_message(message["id"], {}))
        else:
            self._send(envelope.error_message(message["id"], METHOD_NOT_FOUND, message["method"]))

    def initialize(self, version: str = PROTOCOL_REVISION) -> dict[str, Any]:
        """The handshake: initialize, then the initialized notification."""
        result = self.request(
            "initialize",
            {"protocolVersion": version, "capabilities": {}, "clientInfo": CLIENT_INFO},
        )
        self.notify("notifications/initialized")
        return result

    def close(self, grace: float = 2.0) -> int | None:
        """Close stdin, wait ``grace`` seconds, then SIGTERM, then SIGKILL. Returns the exit status."""
        if self.child is None:
            return None
        child, self.child = self.child, None
        return child.close(grace)
