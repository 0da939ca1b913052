"""reference.resources, in stage 10's runtime: the learner's shop_resources.py stands in for the answer key.

The course's server answers ``resources/list``, ``resources/templates/list`` and ``resources/read``
with the learner's functions, on the server's read-only connection. ``from reference.resources
import ...`` in the learner's own files finds their own module, never the answer key.
"""

from typing import Any

import shop_resources as _learner  # the learner's shop_resources.py, first on the import path


class Resources:
    """The course's server's view of the learner's resources."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def list(self, params: dict[str, Any]) -> Any:
        return _learner.list_resources(params)

    def templates(self, params: dict[str, Any]) -> Any:
        return _learner.list_templates(params)

    def read(self, params: dict[str, Any]) -> Any:
        return _learner.read_resource(self.conn, params)
