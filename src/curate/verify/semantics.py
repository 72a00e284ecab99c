"""What the transpile could not settle from the SQL alone: its warnings, settled or not.

A transpile warning says DuckDB may not return SQL Server's result
(:mod:`curate.transpile.rules.hazards`):

* ``collation`` warnings (text compared, grouped or sorted) are settled by running the
  gold again under a case-insensitive collation (:func:`collation_drop`, on the engine's
  own: :mod:`curate.verify.nocase`);
* every other warning (a division whose operand types are unknown, a query that could
  not be typed, so type-based rules did not run) could change the result and nothing
  settles it: the gold is dropped (rule ``unresolved_semantics``), unless that rule is
  switched off, and then the warning stays with the kept task and is listed in the report.

>>> unresolved(("collation: compares text", "division: cannot tell ..."), collation_checked=True)
('division: cannot tell ...',)
"""

from __future__ import annotations

from collections.abc import Sequence

from curate.verify.gold import Drop
from curate.verify.nocase import NocaseExecutor
from score.comparison.compare import compare
from score.execution.result import QueryError, QueryResult

COLLATION_PREFIX = "collation"
UNRESOLVED = "unresolved_semantics"


def unresolved(warnings: Sequence[str], *, collation_checked: bool) -> tuple[str, ...]:
    """The warnings no check settles (collation ones are settled when the check runs)."""
    return tuple(w for w in warnings if not (collation_checked and w.startswith(COLLATION_PREFIX)))


def unresolved_drop(warnings: Sequence[str], stage: str = "verify") -> Drop | None:
    """A drop naming every unsettled warning, or None when there is none.

    >>> unresolved_drop(["division: cannot tell"]).rule
    'unresolved_semantics'
    """
    if not warnings:
        return None
    return Drop(
        stage,
        UNRESOLVED,
        "the transpile cannot tell that DuckDB returns SQL Server's result: " + "; ".join(warnings),
    )


def collation_drop(
    sql: str,
    warnings: Sequence[str],
    result: QueryResult,
    nocase: NocaseExecutor | None,
    *,
    order_matters: bool,
    profile: str,
) -> Drop | None:
    """Drop a SQL Server gold whose result depends on case-sensitive text handling.

    SQL Server's default collation ignores case and DuckDB's does not: a gold whose
    transpile warns about text comparison, grouping or sorting is run again under
    ``nocase`` (the same data under a case-insensitive collation) and must return the
    same; a gold that cannot run there is dropped with the error.
    """
    if nocase is None or not any(w.startswith(COLLATION_PREFIX) for w in warnings):
        return None
    other = nocase.try_execute(sql)
    if isinstance(other, QueryError):
        return Drop(
            "verify",
            "case_insensitive_collation",
            "SQL Server's default collation ignores case and under such a collation this "
            f"gold fails ({other.kind}: {other.message})",
        )
    if (
        isinstance(other, QueryResult)
        and compare(result, other, profile, order_matters=order_matters).match
    ):
        return None
    return Drop(
        "verify",
        "case_insensitive_collation",
        "SQL Server's default collation ignores case and under it this gold returns a "
        "different result; make the text comparison, grouping or order independent of case",
    )
