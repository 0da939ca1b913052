"""Stage 12's ``Origin`` check (cell ``test_origin``): 403 for a foreign origin (POST, GET, DELETE);
loopback origins, and a request with none, served. The hidden cells draw the origins:

    >>> import random
    >>> foreign, loopback = drawn_origins(random.Random(0))
    >>> len(foreign), len(loopback)
    (4, 3)
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from ...expect import Failure, show
from ...work import Work
from .. import public
from .client import SESSION, VISIBLE, Client, expect_status, failure, initialize_message, message, running


def check_origin(work: Work, foreign: Sequence[str], loopback: Sequence[str]) -> None:
    """403 for every foreign Origin, on initialize and in a session, on POST, GET and DELETE;
    loopback origins, and none at all, are served."""
    with running(work) as bridge:
        client = Client(bridge)
        got = client.post(initialize_message(), "http-origin", Origin=foreign[0])
        expect_status(got, 403, "http-origin", f"an initialize from Origin: {foreign[0]} gets 403 Forbidden")
        if got.headers.get(SESSION.lower()):
            raise failure("http-origin", "a refused initialize begins no session", got, "no Mcp-Session-Id")
        client.initialize("http-origin", Origin=loopback[0])
        for origin in foreign:
            got = client.post(message("ping", "origin"), "http-origin", Origin=origin)
            expect_status(got, 403, "http-origin", f"a request from Origin: {origin} gets 403 Forbidden")
        for method in ("GET", "DELETE"):
            headers = client.headers(**{"Content-Type": None, "Origin": foreign[-1]})
            got = client.http(method, None, headers, "http-origin")
            expect_status(got, 403, "http-origin", f"every request from a foreign Origin gets 403, a {method} too")
        for origin in [*loopback, None]:
            what = f"Origin: {origin}" if origin else "no Origin (a client that is not a browser)"
            reply = client.ask(message("ping", "loopback"), "http-origin", Origin=origin)
            if "result" not in reply:
                raise Failure("http-origin", f"a request with {what} is served", received=show(reply))


@public("12", "test_origin", "Origin: 403 for a foreign one (POST, GET, DELETE); loopback origins and none served")
def origin_cell(work: Work) -> None:
    check_origin(work, VISIBLE["foreign"], VISIBLE["loopback"])


def drawn_origins(rng: random.Random) -> tuple[list[str], list[str]]:
    """(foreign origins, loopback origins), each with a drawn name or port."""
    word = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(4, 10)))
    port = rng.randint(1024, 65535)
    foreign = [
        f"http://{word}.example:{port}",
        f"https://localhost.{word}.test",
        f"http://127.0.0.1.{word}.example",
        f"http://{word}localhost",
    ]
    loopback = [f"http://localhost:{port}", f"https://127.0.0.1:{rng.randint(1024, 65535)}", f"http://[::1]:{port}"]
    rng.shuffle(foreign)
    return foreign, loopback
