"""Why OHDSI SQL could not be made one plain SQL Server query: one error, a reason each."""

from __future__ import annotations

from score.errors import SqlgoldError

# Reasons a render fails, for counting.
MISSING_PARAMETER = "missing_parameter"
BAD_CONDITION = "bad_condition"
BAD_DEFAULT = "bad_default"


class RenderError(SqlgoldError):
    """OHDSI SQL that cannot be made plain SQL Server SQL; ``reason`` names why."""

    stage = "ohdsi"

    def __init__(self, reason: str, message: str, *, task_id: str | None = None) -> None:
        super().__init__(message, task_id=task_id)
        self.reason = reason
