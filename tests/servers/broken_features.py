"""A test server: the reference shop over stdio, with one defect in its resources and one in its prompts.

resources/list drops every resource's "name" (schema.ts Resource requires it) and prompts/get
gives every message the role "system" (a PromptMessage's role is "user" or "assistant"). Tools,
resources/read and the error codes are the reference's: resources-list and prompts-get must fail,
nothing else.

    python tests/servers/broken_features.py
"""

from __future__ import annotations

import sys
from typing import Any

from reference.server import Server, open_shop


class BrokenFeatures(Server):
    def handle_line(self, line: bytes) -> Any:
        reply = super().handle_line(line)
        result = reply.get("result") if isinstance(reply, dict) else None
        if isinstance(result, dict) and isinstance(result.get("resources"), list):
            result["resources"] = [{k: v for k, v in r.items() if k != "name"} for r in result["resources"]]
        if isinstance(result, dict) and isinstance(result.get("messages"), list):
            result["messages"] = [{**m, "role": "system"} for m in result["messages"]]
        return reply


if __name__ == "__main__":
    shop = open_shop()
    sys.exit(BrokenFeatures(shop.toolbox, shop.resources, shop.prompts).serve(sys.stdin.buffer, sys.stdout.buffer))
