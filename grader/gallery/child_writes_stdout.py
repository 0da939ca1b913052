"""Gallery exhibit: child_writes_stdout."""

import subprocess
import sys
from typing import Any

from grader.gallery.base import ShopServer

AUDIT = "import platform; print('audit: tool call on', platform.node() or 'this host')"


class Server(ShopServer):
    def call_tool(self, params: dict[str, Any]) -> dict[str, Any]:
        subprocess.run([sys.executable, "-c", AUDIT], check=False)  # record the call in the audit log
        return super().call_tool(params)


if __name__ == "__main__":
    Server.main()
