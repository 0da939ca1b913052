"""A library that prints, as many do: the stand-in for a dependency you cannot change (stage 07).

Real ones: progress bars, "Loading model..." lines, deprecation notices, a C extension writing to
file descriptor 1. In a stdio MCP server each of those lines lands in the protocol channel.

    >>> warm_cache()
    warming the shop cache... done
    3
"""

from __future__ import annotations


def warm_cache() -> int:
    """Pretend to warm a cache; say so on stdout, as a chatty library would. Returns the entries warmed."""
    print("warming the shop cache... done")
    return 3
