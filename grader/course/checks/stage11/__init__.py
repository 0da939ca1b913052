"""The checks of stage 11 (audited writes).

Every write runs on a copy of the shop in a scratch folder of the learner's (the course's database
is never written), and what the copy holds afterwards is read here, with plain SQL and with the
course's own reader of the audit (:func:`reference.audit.read`): the learner's table is the
course's, so ``mcp-lab audit`` reads it too. An audit entry's arguments are compared with the
learner's own ``summary`` of them, so that a slip in the summary costs its own cell only.

One module per part graded, on :mod:`.copies` (the copy and the audit entry): :mod:`.summary`,
:mod:`.record`, :mod:`.writes` (the write tools, the writable copy, the writes), :mod:`.call_write`,
:mod:`.served`, :mod:`.request_state` and :mod:`.ask_first`. Importing the package registers every
cell; the names the hidden checks use are here:

    >>> from grader.course.checks import cells
    >>> len(cells("11"))
    9
"""

from __future__ import annotations

from . import (
    ask_first,
    call_write,
    copies,
    record,
    request_state,
    served,
    summary,
    writes,
)  # importing them registers the cells
from .ask_first import check_ask_first
from .call_write import check_call_write
from .record import check_record
from .request_state import check_request_state
from .served import check_served
from .summary import SHORT, check_summary, hidden_summaries
from .writes import check_writable, check_writes

__all__ = [
    "SHORT",
    "ask_first",
    "call_write",
    "check_ask_first",
    "check_call_write",
    "check_record",
    "check_request_state",
    "check_served",
    "check_summary",
    "check_writable",
    "check_writes",
    "copies",
    "hidden_summaries",
    "record",
    "request_state",
    "served",
    "summary",
    "writes",
]
