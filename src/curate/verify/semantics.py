"""What the transpile could not settle from the SQL alone: its warnings, settled or not.

A transpile warning says DuckDB may not return SQL Server's result
(:mod:`curate.transpile.rules.hazards`):

* ``collation`` warnings (text compared, grouped or sorted) are settled by running the
  gold again under DuckDB's case-insensitive collation (:func:`collation_drop`);
* every other warning (a division whose operand types are unknown, a query that could
  not be typed, so type-based rules did not run) could change the result and nothing
  settles it: the gold is dropped (rule ``unresolved_semantics``), unless that rule is
  switched off, and then the warning stays with the kept task and is listed in the report.

>>> unresolved(("collation: compares text", "division: cannot tell ..."), collation_checked=True)
('division: cannot tell ...',)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from curate.verify.gold import Drop
from score.comparison.compare import compare
from score.execution.executor import Executor
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


class NocaseExecutor:
    """The collation check's executor: the same database under DuckDB's NOCASE
    collation, opened when the first gold needs the check (most need none, and opening
    costs a query process: ``sqlgold verify`` of a plain pair never pays it)."""

    def __init__(self, executor: Executor) -> None:
        self._base = executor
        self._opened: Executor | None = None

    def try_execute(self, sql: str) -> QueryResult | QueryError:
        if self._opened is None:
            base = self._base
            settings = replace(base.settings, collation="nocase")
            self._opened = Executor(
                base.db_path, base.schema, settings, sql_dialect=base.sql_dialect
            )
        return self._opened.try_execute(sql)

    def close(self) -> None:
        if self._opened is not None:
            self._opened.close()
            self._opened = None


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
    ``nocase`` (an executor with DuckDB's NOCASE collation) and must return the same.
    """
    if nocase is None or not any(w.startswith(COLLATION_PREFIX) for w in warnings):
        return None
    other = nocase.try_execute(sql)
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
