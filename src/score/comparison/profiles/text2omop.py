"""TEXT-TO-OMOP's execution verdict (red1dwarf/TEXT-TO-OMOP f5c858f,
``EVALUATION/evaluation_protocol.py``, ``results_equal``).

Its rule, on the Python values a database client returns:

1. NULL is read as the empty string ``''``;
2. each row's values are sorted by ``(type name, repr)``, so column names and column
   order are ignored;
3. the rows are sorted by the same keys, value by value, so row order is ignored
   (``order_matters`` too) and duplicate rows count;
4. the two lists of rows are equal under Python's ``==``: ``1 == 1.0 == True``,
   ``Decimal('1.10') != 1.1``, NaN never equals NaN, a date never equals a datetime or
   its ISO text, rows of different widths never match.

Values are the objects the engine's Python client returns for the result: DuckDB's, or
on PostgreSQL psycopg's, as the peer's psycopg2 gives them (NUMERIC as ``Decimal``, with
its scale: :meth:`~score.execution.result.QueryResult.driver_values`). Because the type
name sorts first, values of different types can land in different places: ``(1.0, 1.5)``
against ``(1, 1.5)`` sorts to ``(1.0, 1.5)`` and ``(1.5, 1)``, which differ.

**Weaker than sqlgold's own rule.**  Sorting each row on its own lets values move
between columns row by row: gold rows ``(1, 5), (2, 6)`` and predicted rows
``(5, 1), (2, 6)`` (the first row's values swapped, the second's not) are the same to
TEXT-TO-OMOP, while sqlgold, which maps whole columns one-to-one, says no column of the
prediction holds the gold's first column.  So is ``NULL`` against ``''``.

>>> from score.execution.result import QueryResult
>>> gold = QueryResult.from_rows(["a", "b"], [(1, 5), (2, 6)])
>>> swapped = QueryResult.from_rows(["x", "y"], [(5, 1), (2, 6)])
>>> compare_text2omop(gold, swapped, Flags()).match
True
"""

from __future__ import annotations

from typing import Any

from score.comparison.profiles.base import Flags, Verdict
from score.comparison.python_values import python_values
from score.comparison.values import show
from score.execution.result import QueryResult

PEER = "TEXT-TO-OMOP results_equal"


def _key(value: Any) -> tuple[str, str]:
    return (type(value).__name__, repr(value))


def canonical_rows(result: QueryResult) -> list[tuple[Any, ...]]:
    """The result's rows as the peer compares them: NULL as '', each row's values sorted
    by (type name, repr), the rows sorted by those keys; kept on the result, so a gold
    is put in this form once for all the predictions it meets."""
    found = result.derived.get(_CANONICAL)
    if found is None:
        found = result.derived[_CANONICAL] = _canonical_rows(result)
    return found


_CANONICAL = ("text2omop", "canonical_rows")


def _canonical_rows(result: QueryResult) -> list[tuple[Any, ...]]:
    columns = [
        [
            "" if v is None else v
            for v in (result.driver_values(i) or python_values(result.table.column(i), t))
        ]
        for i, t in enumerate(result.types)
    ]
    if not columns:
        return [()] * result.num_rows
    rows = [tuple(sorted(row, key=_key)) for row in zip(*columns, strict=True)]
    rows.sort(key=lambda row: tuple(_key(v) for v in row))
    return rows


def compare_text2omop(gold: QueryResult, pred: QueryResult, flags: Flags) -> Verdict:
    """TEXT-TO-OMOP's verdict (``order_matters`` and ``condition_cols`` ignored, as it
    has no such notion)."""
    g = canonical_rows(gold)
    # a result against itself is two lists all the same: Python's == would find NaN equal
    # to the very NaN object it is, where the peer compares two fetches
    p = canonical_rows(pred) if pred is not gold else _canonical_rows(pred)
    if g == p:
        return Verdict(True, f"{PEER}: the same {len(g)} row(s), values sorted within each row")
    if len(g) != len(p):
        return Verdict(False, f"{PEER}: predicted has {len(p)} row(s), gold {len(g)}")
    if gold.num_columns != pred.num_columns:
        return Verdict(
            False,
            f"{PEER}: predicted rows have {pred.num_columns} values, gold rows {gold.num_columns}",
        )
    for i, (a, b) in enumerate(zip(g, p, strict=True)):
        if a != b:
            return Verdict(
                False,
                f"{PEER}: sorted row {i + 1} differs: predicted {_row(b)} vs gold {_row(a)}",
            )
    return Verdict(False, f"{PEER}: the rows differ")  # equal lists compare equal above


def _row(row: tuple[Any, ...], shown: int = 8) -> str:
    more = ", ..." if len(row) > shown else ""
    return "(" + ", ".join(show(v) for v in row[:shown]) + more + ")"
