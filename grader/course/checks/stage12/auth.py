"""Stage 12's bearer token (cell ``test_auth``): 401 with ``WWW-Authenticate`` for a request without
the token or with another, on every request. The Authorization headers that must be refused, for
the token ``s3cret`` (the hidden cells draw the token):

    >>> wrong_tokens("s3cret")
    ['Bearer s3cre', 'Bearer s3cretx', 'Basic dXNlcjpzM2NyZXQ=', 's3cret']
"""

from __future__ import annotations

import base64
import random
from collections.abc import Sequence

from ...expect import Failure, show
from ...work import Work
from .. import public
from .client import TOKEN, Client, expect_status, failure, initialize_message, message, running


def check_auth(work: Work, token: str, wrong: Sequence[str]) -> None:
    """With a token: 401 and WWW-Authenticate without it or with another (``wrong``: Authorization
    values); served with it, on every request."""
    with running(work, token) as bridge:
        client = Client(bridge, token)
        for authorization in [None, *wrong]:
            what = f"Authorization: {authorization}" if authorization else "no Authorization header"
            got = client.post(initialize_message(), "http-auth", Authorization=authorization)
            expect_status(
                got, 401, "http-auth", f"an initialize with {what} gets 401 and a Bearer challenge", WWW_Authenticate=""
            )
            challenge = got.headers.get("www-authenticate", "")
            if challenge.split(" ")[0].lower() != "bearer":
                raise failure(
                    "http-auth", "the challenge names the scheme: Bearer", got, "WWW-Authenticate: Bearer ..."
                )
        client.initialize("http-auth")
        got = client.post(message("ping", "no-token"), "http-auth", Authorization=None)
        expect_status(got, 401, "http-auth", "the token is needed on every request, not only initialize")
        reply = client.ask(message("ping", "token"), "http-auth")
        if "result" not in reply:
            raise Failure("http-auth", "a request with the token is served", received=show(reply))


def wrong_tokens(token: str) -> list[str]:
    """Authorization values that must not pass: another token, a prefix, the token with more, Basic."""
    basic = base64.b64encode(f"user:{token}".encode()).decode()
    return [f"Bearer {token[:-1]}", f"Bearer {token}x", f"Basic {basic}", token]


@public("12", "test_auth", "the bearer token: 401 with WWW-Authenticate without it or with another, on every request")
def auth_cell(work: Work) -> None:
    check_auth(work, TOKEN, wrong_tokens(TOKEN))


def drawn_token(rng: random.Random) -> str:
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789-._~") for _ in range(rng.randint(16, 40)))
