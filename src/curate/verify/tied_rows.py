"""Rows tied on a gold's ORDER BY, and two results compared in order except among them.

Any engine, SQL Server included, may return rows that a query's ORDER BY leaves tied
in any order.  A check that runs a gold a second way (the collation check,
:func:`curate.verify.semantics.collation_drop`) must not take another order of tied
rows for a difference of its own: whether tied rows come out the same way run after
run is the determinism rules' question (:func:`curate.verify.gold.run_gold`).

The tie groups are read from the gold's first run: the ORDER BY key values of each of
its rows (its order probe's appended keys, :func:`curate.verify.reference_rules.probe_keys`);
neighbouring rows with equal keys are tied.

>>> keys = QueryResult.from_rows(["m"], [(1,), (1,), (2,)])
>>> tie_groups(keys)
[(0, 2), (2, 3)]
>>> a = QueryResult.from_rows(["m", "y"], [(1, 2004), (1, 2009), (2, 2004)])
>>> b = QueryResult.from_rows(["m", "y"], [(1, 2009), (1, 2004), (2, 2004)])
>>> compare_in_order(a, b, keys, "sqlgold").match  # rows 1 and 2 tie on m
True
>>> compare_in_order(a, b, None, "sqlgold").match  # no keys: every row in its place
False
"""

from __future__ import annotations

from collections.abc import Sequence

from curate.verify.reference_rules import same_key
from score.comparison.compare import Verdict, compare
from score.execution.result import QueryResult


def tie_groups(keys: QueryResult) -> list[tuple[int, int]]:
    """The ``(start, end)`` row ranges of runs of neighbouring rows with equal keys,
    in order, covering every row (a row tied with none is a group of one)."""
    rows = keys.rows()
    groups: list[tuple[int, int]] = []
    start = 0
    for i in range(1, len(rows)):
        if not all(map(same_key, rows[i - 1], rows[i])):
            groups.append((start, i))
            start = i
    if rows:
        groups.append((start, len(rows)))
    return groups


def in_tie_order(result: QueryResult, groups: Sequence[tuple[int, int]]) -> QueryResult:
    """``result`` with the rows of each tie group sorted by their values: one fixed
    order that two results with the same rows in each group share.

    >>> r = QueryResult.from_rows(["x"], [("b",), ("a",), ("c",)])
    >>> in_tie_order(r, [(0, 2), (2, 3)]).rows()
    [('a',), ('b',), ('c',)]
    """
    rows = result.rows()
    order: list[int] = []
    for start, end in groups:
        order.extend(sorted(range(start, end), key=lambda i: _row_key(rows[i])))
    if order == list(range(len(rows))):
        return result
    return QueryResult(result.columns, result.types, result.table.take(order), result.seconds)


def _row_key(row: tuple) -> tuple:
    """A total order on any row's values (NULL, NaN, lists, mixed types): only its
    being the same for equal rows matters, not its meaning."""
    return tuple((v is None, type(v).__name__, repr(v)) for v in row)


def first_moved(
    result: QueryResult,
    other: QueryResult,
    keys: QueryResult | None,
    there: str = "in the other run",
) -> str | None:
    """Where ``other``'s order (``there``) first departs from ``result``'s, rows tied on
    ``keys`` put in one order on both sides (None when no row differs as it stands).

    >>> a = QueryResult.from_rows(["v"], [("CVX",), ("Condition",)])
    >>> first_moved(a, QueryResult.from_rows(["v"], [("Condition",), ("CVX",)]), None)
    "row 1 is ('CVX',), and ('Condition',) in the other run"
    """
    n = result.num_rows
    mine, theirs = result.rows(), other.rows()
    if keys is not None and keys.num_rows == n == other.num_rows:
        groups = tie_groups(keys)
        mine, theirs = in_tie_order(result, groups).rows(), in_tie_order(other, groups).rows()
    for i, (a, b) in enumerate(zip(mine, theirs, strict=False)):
        if a != b:
            return f"row {i + 1} is {_short(a)}, and {_short(b)} {there}"
    return None


def _short(row: tuple, width: int = 120) -> str:
    text = repr(row)
    return text if len(text) <= width else text[: width - 3] + "..."


def compare_in_order(
    result: QueryResult, other: QueryResult, keys: QueryResult | None, profile: str
) -> Verdict:
    """``other`` against ``result`` under ``profile`` with their order compared, except
    among rows of ``result`` tied on ``keys`` (its ORDER BY key values, row for row).

    Without keys (no order probe ran), or when the row counts differ, every row is
    compared in its place."""
    n = result.num_rows
    if keys is None or keys.num_rows != n or other.num_rows != n:
        return compare(result, other, profile, order_matters=True)
    groups = tie_groups(keys)
    if len(groups) == n:  # no two rows tied
        return compare(result, other, profile, order_matters=True)
    return compare(
        in_tie_order(result, groups), in_tie_order(other, groups), profile, order_matters=True
    )
