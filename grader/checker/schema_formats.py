"""jsonschema without the optional libraries of its "format" checks, for a process that checks no format.

Importing jsonschema imports every library it knows for checking a ``"format"`` that it finds
installed, and JupyterLab installs them all. ``rfc3987_syntax`` builds a grammar when imported: about
a second of CPU. The others (``isoduration`` with ``arrow``, ``rfc3986_validator``, ...) add about
35 ms more to each ``mcp-lab check``, and a test run starts hundreds. No check here validates a
format: the validators are made without a format checker, so ``"format"`` is an annotation only,
and nothing changes without them. Python takes a ``None`` in ``sys.modules`` as "not installed",
and jsonschema then leaves that format unchecked, as it would without the library.

Call it in the process's entry point, before jsonschema is imported, never in a library module: a
process that wants those libraries (JupyterLab's event schemas check "uri") must keep them.

    >>> leave_out(["a_format_library"])
    >>> import a_format_library
    Traceback (most recent call last):
    ModuleNotFoundError: import of a_format_library halted; None in sys.modules
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

# rfc3987_syntax serves only the "iri" formats, which neither JupyterLab's schemas nor ours use.
SLOWEST = ("rfc3987_syntax",)
# What jsonschema._format tries to import, except idna: httpx (the SDK's HTTP client) needs it.
FORMAT_LIBRARIES = (
    *SLOWEST,
    "rfc3987",
    "rfc3986_validator",
    "rfc3339_validator",
    "isoduration",
    "uri_template",
    "jsonpointer",
    "webcolors",
    "fqdn",
)


def leave_out(names: Iterable[str] = FORMAT_LIBRARIES) -> None:
    """Keep ``names`` from being imported in this process (one already imported stays)."""
    for name in names:
        sys.modules.setdefault(name, None)  # type: ignore[arg-type]
