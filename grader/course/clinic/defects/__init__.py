"""The clinic's defects: the course's shop server with one rule broken, in one of many ways.

A *family* is a kind of defect (ids that change type, replies not flushed, a notification
answered...) and the rule it breaks, named by a check id of ``mcp-lab check``. Each family draws
its *parameters* (which id type, which method, which tool, after how many) and a symptom in the
words a host or a user would use: no table maps a symptom to an answer, and two learners with the
same family get different servers.

Some families break a rule on the first session any client runs (``visible``: the checker's first
failure names it); the others only on a path the checker never takes (a tool with a particular
argument, two requests in flight, an id of nineteen digits): there the learner must form a
hypothesis from the symptom and test it on the wire.

One module per part of the server a defect breaks (:mod:`.ids`, :mod:`.stdout`, :mod:`.errors`,
:mod:`.session`, :mod:`.results`, :mod:`.modern`), on :mod:`.base` (the hooks and the case
server); the one table of every family, in the order the draw relies on, is ``FAMILIES`` here.

    >>> import random
    >>> defect = FAMILIES["ids_typed"](random.Random(3))
    >>> defect.rule, defect.visible
    ('id-echo', True)
    >>> defect.reply_id(42) if defect.params["variant"] == "num_to_str" else "42"
    '42'
"""

from __future__ import annotations

import random
from collections.abc import Callable

from .base import CaseServer, Defect, Holding, serve
from .errors import dies_on, error_codes, error_envelope, parse_reply
from .ids import ids_huge, ids_typed, in_flight, null_id
from .modern import (
    cache_hints,
    call_meta_unchecked,
    era_mixed,
    meta_unchecked,
    result_type,
    version_newer,
    version_refusal,
)
from .results import page_skip, result_shape, structured_filter, structured_missing, wrong_count
from .session import answers_notifications, ping_body, version_echo
from .stdout import big_result, empty_result_print, error_path_print, flush_path, stdout_noise, unflushed

FAMILIES: dict[str, Callable[[random.Random], Defect]] = {
    "ids_typed": ids_typed,
    "unflushed": unflushed,
    "answers_notifications": answers_notifications,
    "stdout_noise": stdout_noise,
    "error_codes": error_codes,
    "parse_reply": parse_reply,
    "ping_body": ping_body,
    "version_echo": version_echo,
    "null_id": null_id,
    "dies_on": dies_on,
    "error_envelope": error_envelope,
    "structured_missing": structured_missing,
    "result_shape": result_shape,
    "result_type": result_type,
    "cache_hints": cache_hints,
    "version_refusal": version_refusal,
    "meta_unchecked": meta_unchecked,
    "ids_huge": ids_huge,
    "in_flight": in_flight,
    "flush_path": flush_path,
    "error_path_print": error_path_print,
    "big_result": big_result,
    "wrong_count": wrong_count,
    "structured_filter": structured_filter,
    "empty_result_print": empty_result_print,
    "page_skip": page_skip,
    "version_newer": version_newer,
    "call_meta_unchecked": call_meta_unchecked,
    "era_mixed": era_mixed,
}


__all__ = ["FAMILIES", "CaseServer", "Defect", "Holding", "serve"]
