"""Text from a learner's process made safe to print in the instructor's terminal and files.

A student's name, a flag's reason, a refusal: any of them may carry bytes the learner chose. ANSI
escapes and other control characters would redraw the instructor's terminal (erase a row, fake a
score); bidirectional overrides would reorder what they read. They are dropped; a tab or a newline
becomes a space, so that one row stays one line.

    >>> printable("ok\\x1b[2K\\x1b[1A  alice  14\\tpoints\\u202e")
    'ok[2K[1A  alice  14 points'
"""

from __future__ import annotations

import unicodedata


def printable(text: object) -> str:
    """``text`` with control and format characters removed (tabs and newlines become spaces)."""
    shown = str(text)
    return "".join(
        " " if c in "\t\n\r" else c for c in shown if c in "\t\n\r" or unicodedata.category(c) not in ("Cc", "Cf")
    )
