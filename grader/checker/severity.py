"""The severity model: a verdict is only as strong as the rule behind it.

Every finding names a :class:`Rule`: the keyword the spec uses (RFC 2119's MUST, SHOULD, ...),
or ``schema`` for the revision's schema.ts, ``described`` for what the spec describes with no
keyword, ``recommendation`` for a host limit or field practice, or ``revisions disagree`` where
revisions of the spec say different things. Only a
MUST (or MUST NOT) or a schema violation can fail a check; everything else is at most a warning.

    >>> Rule("SHOULD NOT", "MCP 2025-11-25, Lifecycle").may_fail
    False
    >>> Rule("schema", "MCP 2025-11-25 schema.ts, CallToolResult").may_fail
    True
    >>> Rule("MUST", "JSON-RPC 2.0 section 5").label
    '[MUST] JSON-RPC 2.0 section 5'
"""

from __future__ import annotations

from dataclasses import dataclass

FAILING = ("MUST", "MUST NOT", "schema")
WARNING = ("SHOULD", "SHOULD NOT", "described", "recommendation", "revisions disagree")
KEYWORDS = FAILING + WARNING


@dataclass(frozen=True)
class Rule:
    keyword: str  # one of KEYWORDS
    source: str  # page and revision, or JSON-RPC 2.0 section, or the host/field practice
    text: str = ""  # what the source says, in one sentence
    fix: str = ""  # what to change, where it differs from the check's own fix

    def __post_init__(self) -> None:
        if self.keyword not in KEYWORDS:
            raise ValueError(f"unknown keyword {self.keyword!r} (one of {', '.join(KEYWORDS)})")

    @property
    def may_fail(self) -> bool:
        """Whether a finding under this rule may be a failure (else at most a warning)."""
        return self.keyword in FAILING

    @property
    def label(self) -> str:
        return f"[{self.keyword}] {self.source}"
