"""reference.prompts, in stage 10's runtime: the learner's shop_prompts.py stands in for the answer key.

The course's server answers ``prompts/list`` and ``prompts/get`` with the learner's functions, on the
server's read-only connection.
"""

from typing import Any

import shop_prompts as _learner  # the learner's shop_prompts.py, first on the import path


class Prompts:
    """The course's server's view of the learner's prompts."""

    def __init__(self, conn: Any, resources: Any) -> None:
        self.conn = conn
        self.resources = resources

    def list(self, params: dict[str, Any]) -> Any:
        return _learner.list_prompts(params)

    def get(self, params: dict[str, Any]) -> Any:
        return _learner.get_prompt(self.conn, params)
