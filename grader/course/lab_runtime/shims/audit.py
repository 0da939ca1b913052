"""reference.audit, in stage 11's runtime: the learner's shop_audit.py stands in for the answer key.

The course's server names who asked for a write (:class:`Provenance`, from ``initialize``) and hands
it to the learner's ``call_write``; the audit itself is the learner's ``record`` and ``summary``.
"""

from dataclasses import dataclass

from shop_audit import record, summary  # noqa: F401 - the learner's, first on the import path


@dataclass(frozen=True)
class Provenance:
    """Who asked: the client's own name and version from ``initialize``, and the transport."""

    client_name: str = ""
    client_version: str = ""
    transport: str = "stdio"
