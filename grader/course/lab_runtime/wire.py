"""How values cross the pipe between the grader and the learner's process: JSON, with tags.

JSON alone loses what the course's checks look at: bytes are not text, a tuple is not a list, a
dict may have keys that are not strings, and most objects (a sqlite3 connection, a Popen, the
learner's client) cannot be sent at all. Those stay in the learner's process and cross as a
*handle* (``{"$ref": 3, ...}``); the other side calls and reads them through it.

    >>> dumps({"line": b"hi\\n", "pair": (1, 2)}, lambda obj: 0)
    '{"line":{"$bytes":"aGkK"},"pair":{"$tuple":[1,2]}}'
    >>> loads(dumps([b"x", float("nan"), {1: "a"}], lambda obj: 0), lambda ref: ref)
    [b'x', nan, {1: 'a'}]

Whatever is not plain data becomes a handle from ``keep`` (which stores the object and returns
its number), and a handle read back becomes whatever ``resolve`` makes of it.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Callable
from typing import Any

_SEPARATORS = (",", ":")


def _float(value: float) -> Any:
    if math.isfinite(value):
        return value
    return {"$float": "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")}


def encode(value: Any, keep: Callable[[Any], int], depth: int = 0) -> Any:
    """``value`` as JSON data; what is not data becomes a handle numbered by ``keep``."""
    if depth > 60:  # a structure this deep is not a value a check compares: hand it over whole
        return handle(value, keep)
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, bytes | bytearray):
        return {"$bytes": base64.b64encode(bytes(value)).decode("ascii")}
    if type(value) is list:
        return [encode(v, keep, depth + 1) for v in value]
    if type(value) is tuple:
        return {"$tuple": [encode(v, keep, depth + 1) for v in value]}
    if type(value) is dict:
        if all(isinstance(k, str) and not k.startswith("$") for k in value):
            return {k: encode(v, keep, depth + 1) for k, v in value.items()}
        return {"$dict": [[encode(k, keep, depth + 1), encode(v, keep, depth + 1)] for k, v in value.items()]}
    return handle(value, keep)


def handle(value: Any, keep: Callable[[Any], int]) -> dict[str, Any]:
    kind = type(value)
    try:
        shown = repr(value)
    except Exception as exc:  # a learner's __repr__ may raise
        shown = f"<{kind.__name__}: repr raised {type(exc).__name__}>"
    return {
        "$ref": keep(value),
        "type": f"{kind.__module__}.{kind.__qualname__}",
        "repr": shown[:300],
        "callable": callable(value),
    }


def decode(data: Any, resolve: Callable[[dict[str, Any]], Any]) -> Any:
    """The value ``data`` stands for; a handle becomes ``resolve(handle)``."""
    if isinstance(data, list):
        return [decode(v, resolve) for v in data]
    if not isinstance(data, dict):
        return data
    if "$bytes" in data:
        return base64.b64decode(data["$bytes"])
    if "$tuple" in data:
        return tuple(decode(v, resolve) for v in data["$tuple"])
    if "$dict" in data:
        return {_hashable(decode(k, resolve)): decode(v, resolve) for k, v in data["$dict"]}
    if "$float" in data:
        return float(data["$float"])
    if "$ref" in data:
        return resolve(data)
    return {k: decode(v, resolve) for k, v in data.items()}


def _hashable(key: Any) -> Any:
    return tuple(key) if isinstance(key, list) else key


def dumps(value: Any, keep: Callable[[Any], int]) -> str:
    return json.dumps(encode(value, keep), separators=_SEPARATORS, ensure_ascii=False, allow_nan=False)


def loads(text: str | bytes, resolve: Callable[[dict[str, Any]], Any]) -> Any:
    return decode(json.loads(text), resolve)
