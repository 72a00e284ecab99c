"""What the transpile could not settle from the SQL alone: its warnings, settled or not.

A transpile warning says DuckDB may not return SQL Server's result
(:mod:`curate.transpile.rules.hazards`):

* ``collation`` warnings (text compared, grouped or sorted) are settled by running the
  gold again under a case-insensitive collation (:func:`collation_drop`, on the engine's
  own: :mod:`curate.verify.nocase`): it must return the same rows, in the same order
  except among rows the gold's own ORDER BY ties (:mod:`curate.verify.tied_rows`);
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
from curate.verify.tied_rows import compare_in_order, first_moved, tie_groups
from score.comparison.compare import compare
from score.execution.result import QueryError, QueryResult

COLLATION_PREFIX = "collation"
UNRESOLVED = "unresolved_semantics"


def collation_warned(warnings: Sequence[str]) -> bool:
    """Whether the transpile warns about text compared, grouped or sorted."""
    return any(w.startswith(COLLATION_PREFIX) for w in warnings)


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
    order_keys: QueryResult | None = None,
    deterministic: bool = True,
) -> Drop | None:
    """Drop a SQL Server gold whose result depends on case-sensitive text handling.

    SQL Server's default collation ignores case and DuckDB's does not: a gold whose
    transpile warns about text comparison, grouping or sorting is run again under
    ``nocase`` (the same data under a case-insensitive collation) and must return the
    same rows and, if its order matters, the same order, except among rows tied on
    ``order_keys`` (the ORDER BY key values of each row of ``result``, from its order
    probe; None: every row in its place).  Tied rows in another order are no case
    difference, but they are a second run whose order of ties differs: rule
    ``deterministic`` drops the gold, as for two runs that differ, unless that rule is
    off (``deterministic`` False).  A gold that cannot run there is dropped with the
    error; the reason says whether rows or their order differ, and where.
    """
    if nocase is None or not collation_warned(warnings):
        return None
    other = nocase.try_execute(sql)
    if isinstance(other, QueryError):
        return Drop(
            "verify",
            "case_insensitive_collation",
            "SQL Server's default collation ignores case and under such a collation this "
            f"gold fails ({other.kind}: {other.message})",
        )
    verdict = compare(result, other, profile, order_matters=order_matters)
    if verdict.match:
        return None  # the common case: one comparison
    rows = compare(result, other, profile, order_matters=False) if order_matters else verdict
    if not rows.match:
        return Drop(
            "verify",
            "case_insensitive_collation",
            "SQL Server's default collation ignores case and under it this gold returns "
            f"other rows (that run as the predicted, the gold's as the gold: {rows.reason}); "
            "make the text comparison or grouping independent of case",
        )
    in_order = compare_in_order(result, other, order_keys, profile)
    if in_order.match:  # only rows its ORDER BY ties came in another order
        if not deterministic:
            return None
        where = first_moved(result, other, None, "in that run")
        return Drop(
            "verify",
            "deterministic",
            "two runs differ in the order of rows tied on the ORDER BY keys (the second "
            f"under a case-insensitive collation, with the same rows: {where}); add a "
            "tie-breaker to the ORDER BY",
        )
    where = first_moved(result, other, order_keys, "under that collation") or in_order.reason
    if order_keys is not None and len(tie_groups(order_keys)) < order_keys.num_rows:
        where += ", rows its ORDER BY ties taken in any order"
    return Drop(
        "verify",
        "case_insensitive_collation",
        "SQL Server's default collation ignores case and under it this gold returns the "
        f"same rows in another order ({where}); make the order independent of case",
    )
