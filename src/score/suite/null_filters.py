"""A filter ``x IS NOT NULL`` that the aggregates of its SELECT make redundant.

An aggregate SELECT without GROUP BY gives one row whatever rows it reads.  If each of
its aggregates skips NULL (``AVG``, ``SUM``, ``MIN``, ``MAX``, ``COUNT`` of an
expression) and its argument is NULL wherever ``x`` is (``x`` reaches it through
operators and functions that give NULL for a NULL operand: arithmetic, casts, date
differences, rounding), then the rows ``x IS NOT NULL`` removes add nothing to any
aggregate: removing that filter, or replacing it with a test that is always true (a
required column ``IS NOT NULL``), cannot change the result.  :mod:`score.suite.equivalence`
names such an edit ``null_ignored``.

Conservative: a GROUP BY or HAVING (a group of NULLs only would appear), a window or a
subquery among the outputs, ``COUNT(*)``, a LIMIT, or any function not known to give
NULL for a NULL operand gives no guarantee.

>>> from sqlglot import parse_one, exp
>>> q = parse_one("SELECT ROUND(AVG(CAST(DATE_DIFF('DAY', a, b) AS DOUBLE)), 1) "
...               "FROM t WHERE NOT b IS NULL", read="duckdb")
>>> redundant_null_filters(q, [q.args["where"].this])
True
>>> q = parse_one("SELECT COUNT(*), AVG(b) FROM t WHERE NOT b IS NULL")
>>> redundant_null_filters(q, [q.args["where"].this])  # COUNT(*) counts those rows
False
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

#: aggregates that skip a NULL argument (COUNT only of an expression, not of *)
_SKIPPING = (exp.Avg, exp.Sum, exp.Min, exp.Max, exp.Count)
#: operators and functions that give NULL when the operand in question is NULL
_STRICT = (
    exp.Paren,
    exp.Neg,
    exp.Add,
    exp.Sub,
    exp.Mul,
    exp.Div,
    exp.IntDiv,
    exp.Mod,
    exp.Cast,
    exp.TryCast,
    exp.DateDiff,
    exp.DateAdd,
    exp.DateSub,
    exp.Round,
    exp.Abs,
    exp.Year,
    exp.Month,
    exp.Day,
    exp.Distinct,
)
#: the operand of those functions that decides the NULL (the others are options)
_FIRST_ONLY = (exp.Round, exp.Cast, exp.TryCast)


def null_tested(condition: exp.Expr) -> exp.Column | None:
    """The column of ``condition`` when it is ``x IS NOT NULL`` (``NOT x IS NULL``)."""
    if not isinstance(condition, exp.Not):
        return None
    test = condition.this
    if isinstance(test, exp.Paren):
        test = test.this
    if isinstance(test, exp.Is) and isinstance(test.expression, exp.Null):
        return test.this if isinstance(test.this, exp.Column) else None
    return None


def _same(a: exp.Column, b: exp.Column) -> bool:
    return a.name == b.name and (a.table or "") == (b.table or "")


def _strict_in(node: exp.Expr, column: exp.Column) -> bool:
    """Whether ``node`` is NULL wherever ``column`` is."""
    if isinstance(node, exp.Column):
        return _same(node, column)
    if not isinstance(node, _STRICT):
        return False
    if isinstance(node, _FIRST_ONLY):
        return _strict_in(node.this, column)
    operands = [v for v in node.args.values() if isinstance(v, exp.Expr)]
    operands += [e for v in node.args.values() if isinstance(v, list) for e in v]
    return any(_strict_in(o, column) for o in operands if isinstance(o, exp.Expr))


def _aggregates(output: exp.Expr) -> list[exp.AggFunc] | None:
    """The aggregates ``output`` is made of, or None if it reads a row otherwise (a
    column outside an aggregate, a window, a subquery)."""
    if output.find(exp.Window, exp.Subquery, exp.Select) is not None:
        return None
    found = list(output.find_all(exp.AggFunc))
    for column in output.find_all(exp.Column):
        if column.find_ancestor(exp.AggFunc) is None:
            return None
    return found


def redundant_null_filters(select: exp.Select, conditions: Sequence[exp.Expr]) -> bool:
    """Whether removing ``conditions`` (each ``x IS NOT NULL``, part of ``select``'s
    WHERE) cannot change what ``select`` gives."""
    if not isinstance(select, exp.Select) or not conditions:
        return False
    if any(select.args.get(k) is not None for k in ("group", "having", "limit", "offset")):
        return False
    columns = [null_tested(c) for c in conditions]
    if any(c is None for c in columns):
        return False
    aggregates: list[exp.AggFunc] = []
    for output in select.expressions:
        found = _aggregates(output.unalias())
        if found is None:
            return False
        aggregates += found
    if not aggregates:
        return False
    for agg in aggregates:
        if not isinstance(agg, _SKIPPING) or isinstance(agg.this, exp.Star):
            return False
        if not all(_strict_in(agg.this, c) for c in columns):  # type: ignore[arg-type]
            return False
    return True
