"""reference.mrtr, in stage 11's runtime: only the process's key and clock; the sealing is the learner's.

The course's server makes one :class:`Sealer` per connection, as the answer key's does; here it holds
nothing but the secret key (drawn once per process, never written) and the clock that the learner's
``seal`` and ``open_state`` (their shop_state.py, through :mod:`reference.confirm`) are given.
"""

import secrets
import time
from collections.abc import Callable

_PROCESS_KEY = secrets.token_bytes(32)


class Sealer:
    """The key and the clock the learner's sealing runs with."""

    def __init__(self, key: bytes | None = None, clock: Callable[[], float] = time.time) -> None:
        self.key = _PROCESS_KEY if key is None else key
        self.clock = clock
