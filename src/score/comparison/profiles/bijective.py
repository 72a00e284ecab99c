"""The engine of the content-mapped profiles: columns map one-to-one by content, rows
compare as a multiset (or as a sequence when order matters).

The mapping and the row checks are :mod:`score.comparison.profiles.column_mapping`'s
(no permutation search: content signatures, then a bounded search among columns that
share one).

>>> from score.execution.result import QueryResult
>>> from score.comparison.values import Rules, Tolerance
>>> from score.comparison.profiles.column_checks import Engine
>>> g = QueryResult.from_rows(["a", "b"], [(1, "x"), (2, "y")])
>>> p = QueryResult.from_rows(["B", "A"], [("y", 2.0000000001), ("x", 1.0)])
>>> compare_bijective(g, p, Engine(Rules(), Tolerance())).match
True
"""

from __future__ import annotations

from score.comparison.profiles.base import Verdict
from score.comparison.profiles.column_checks import Engine, columns
from score.comparison.profiles.column_mapping import Matcher
from score.execution.result import QueryResult


def compare_bijective(
    gold: QueryResult,
    pred: QueryResult,
    engine: Engine,
    *,
    order_matters: bool = False,
    condition_cols: tuple[int, ...] | None = None,
) -> Verdict:
    """Match when a one-to-one column mapping makes the rows equal (see module doc)."""
    return compare_mapped(
        gold, pred, engine, order_matters=order_matters, condition_cols=condition_cols
    )[0]


def compare_mapped(
    gold: QueryResult,
    pred: QueryResult,
    engine: Engine,
    *,
    order_matters: bool = False,
    condition_cols: tuple[int, ...] | None = None,
) -> tuple[Verdict, dict[int, int] | None]:
    """:func:`compare_bijective`, also giving the mapping found (gold column position ->
    predicted column position) when the results match."""
    wanted = list(range(gold.num_columns)) if condition_cols is None else list(condition_cols)
    if condition_cols is None and pred.num_columns != gold.num_columns:
        why = f"predicted has {pred.num_columns} columns, gold {gold.num_columns}"
        return Verdict(False, why), None
    if pred.num_columns < len(wanted):
        why = f"predicted has {pred.num_columns} columns, gold needs {len(wanted)}"
        return Verdict(False, why), None
    if pred.num_rows != gold.num_rows:
        return Verdict(False, f"predicted has {pred.num_rows} rows, gold {gold.num_rows}"), None
    gall = columns(gold, engine.rules, 0)
    G = [gall[i] for i in wanted]
    P = columns(pred, engine.rules, 1)
    matcher = Matcher(G, P, wanted, engine, order_matters)
    verdict = matcher.run()
    if matcher.mapping is None:
        return verdict, None
    return verdict, {wanted[i]: j for i, j in matcher.mapping.items()}
