"""A dual-era HTTP shop whose 2026-07-28 tools/list never answers (for the checker's tests).

The gallery's modern base (the reference's transport); a modern ``tools/list`` waits a minute
before it is served, so the checker's modern session stalls there: its wait must stay bounded,
and the stall must be reported, not hidden.
"""

import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from grader.gallery.over_http.modern_base import ModernShop, main


class Server(ModernShop):
    def post_modern(self, message: Any, json_ok: bool, sse_ok: bool = True) -> None:
        if isinstance(message, dict) and message.get("method") == "tools/list":
            time.sleep(60)  # longer than any checker timeout: the client gives up first
        super().post_modern(message, json_ok, sse_ok)


if __name__ == "__main__":
    raise SystemExit(main(Server))
