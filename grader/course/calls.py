"""Calling the learner's code from a check: bounded, and whatever it does becomes a :class:`Failure`.

The learner's functions are proxies (:mod:`grader.course.remote`): a check calls one through
:func:`call` (or :func:`outcome`, when it expects an exception), which runs it in the learner's
own process with a time limit and turns what went wrong (an exception of theirs, an endless loop,
the process ended) into the failure that says so (:mod:`grader.course.expect`). A check's own
helper passed instead is called here, as it is:

    >>> call(sorted, "module", [3, 1, 2])
    [1, 2, 3]
"""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import Any

from .expect import Failure, show
from .remote import Remote, RemoteDied, RemoteTimeout

CALL_LIMIT = 4.0  # seconds a learner's function may take before the check gives up on it (pure ones take ms)


def call(function: Any, check: str, *args: Any, limit: float | None = CALL_LIMIT, **kwargs: Any) -> Any:
    """Call the learner's ``function``; anything it raises becomes a :class:`Failure` that says so.

    The learner's functions are proxies (:mod:`grader.course.remote`): the call runs in the
    learner's own process, and one that never returns, or ends that process, fails after
    ``limit`` seconds instead of hanging the notebook. The learner sees their own exception and
    the line of their code it came from, never a traceback through the course's checks.
    """
    name = getattr(function, "__name__", "your function")
    shown = ", ".join([*(show(a) for a in args), *(f"{k}={show(v)}" for k, v in kwargs.items())])
    what = f"{name}({_cut(shown)})"
    if not isinstance(function, Remote):  # a check's own helper: called here, as it is
        return function(*args, **kwargs)
    try:
        return function.invoke(args, kwargs, CALL_LIMIT if limit is None else limit)
    except RemoteTimeout as exc:
        raise Failure(
            check,
            f"{what} did not return {exc.within}",
            hint="an endless loop, or a read that waits for input that never comes?",
            stderr=function._harness.stderr(),
        ) from None
    except RemoteDied as exc:
        raise Failure(
            check, f"{what} ended the process running your code (exit status {exc.code})", stderr=exc.stderr
        ) from None
    except Failure:
        raise
    except Exception as exc:
        failure = raised(exc, check, what)
        failure.details.setdefault("stderr", function._harness.stderr())
        raise failure from None


def outcome(function: Any, check: str, *args: Any, **kwargs: Any) -> tuple[Any, BaseException | None]:
    """Like :func:`call`, for a test that expects an exception: ``(value, None)`` when the function
    returned, ``(None, exc)`` when it raised ``exc`` (not written yet and endless loops still fail)."""
    try:
        return call(function, check, *args, **kwargs), None
    except Failure as failure:
        if failure.cause is None or isinstance(failure.cause, NotImplementedError):
            raise
        return None, failure.cause


def raised(exc: BaseException, check: str, what: str) -> Failure:
    """The failure for the learner's code ``what`` having raised ``exc`` (kept as ``cause``)."""
    if isinstance(exc, NotImplementedError):
        name = what.partition("(")[0]
        failure = Failure(check, f"{name} is not written yet (it raises NotImplementedError)")
    else:
        where = getattr(exc, "where", None)  # the line of the learner's code, from their process
        failure = Failure(check, f"{what} raised {type(exc).__name__}: {exc}", where=where or _learner_frame(exc))
    failure.cause = exc
    return failure


def _cut(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def _learner_frame(exc: BaseException) -> str:
    """The last line of the traceback that is in the learner's code (a notebook cell or their file)."""
    frames = traceback.extract_tb(exc.__traceback__)
    course = str(Path(__file__).resolve().parents[1])
    theirs = [f for f in frames if not f.filename.startswith(course) and "/site-packages/" not in f.filename]
    if not theirs:
        return "(in the course's code)"
    frame = theirs[-1]
    return f"{frame.line}   (line {frame.lineno} of {Path(frame.filename).name})"
