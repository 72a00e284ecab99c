"""A filter ``x IS NOT NULL`` that the aggregates of its SELECT make redundant.

An aggregate SELECT without GROUP BY gives one row whatever rows it reads.  If each of
its aggregates skips NULL (``AVG``, ``SUM``, ``MIN``, ``MAX``, ``COUNT`` of an
expression) and its argument is NULL wherever ``x`` is (``x`` reaches it through
operators and functions that give NULL for a NULL operand: arithmetic, casts, date
differences, rounding), then the rows ``x IS NOT NULL`` removes add nothing to any
aggregate: removing that filter, or replacing it with a test that is always true (a
required column ``IS NOT NULL``), cannot change the result.  :mod:`score.suite.equivalence`
names such an edit ``null_ignored``.

Likewise a test ``x IS NOT NULL`` beside another part of the same WHERE that compares
``x`` (``x <= 30``, ``DATE_DIFF('DAY', a, x) <= 30``): a NULL fails that comparison
already, so dropping the test, or making it always true, keeps the same rows:
``null_test_implied``.

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

from score.suite.row_guarantees import conjuncts, never_null

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
#: comparisons a NULL operand fails (a NULL result drops the row in a WHERE)
_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Like, exp.ILike)
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


def implied_null_tests(select: exp.Select, tests: Sequence[exp.Expr]) -> bool:
    """Whether each of ``tests`` (``x IS NOT NULL``, parts of ``select``'s WHERE) is
    implied by another part of that WHERE: a comparison with an operand NULL wherever
    ``x`` is."""
    where = select.args.get("where") if isinstance(select, exp.Select) else None
    if where is None or not tests:
        return False
    others = [c for c in conjuncts(where.this) if not any(c is t for t in tests)]
    for test in tests:
        column = null_tested(test)
        if column is None:
            return False
        if not any(
            isinstance(c, _COMPARISONS)
            and any(_strict_in(o, column) for o in (c.this, c.expression))
            for c in others
        ):
            return False
    return True


def null_filter_rule(edit: str, node: exp.Expr, edited: exp.Expr | None) -> str | None:
    """``null_ignored`` or ``null_test_implied`` if ``edit`` at ``node`` (``edited``: the
    same node in the neighbour) removes, or makes always true, only ``x IS NOT NULL``
    tests that cannot change the result; else None."""
    if edit == "column_swap" and isinstance(node, exp.Column) and isinstance(edited, exp.Column):
        return _made_true(node, edited)
    if edit in ("drop_where", "drop_conjunct"):
        return _dropped(node, edited)
    return None


def _where_select(condition: exp.Expr) -> exp.Select | None:
    """The SELECT whose WHERE has ``condition`` among its AND-ed parts."""
    node = condition
    while isinstance(node.parent, (exp.And, exp.Paren)):
        node = node.parent
    where = node.parent
    if isinstance(where, exp.Where) and isinstance(where.parent, exp.Select):
        return where.parent
    return None


def _dropped(node: exp.Expr, edited: exp.Expr | None) -> str | None:
    """A WHERE, or a part of one, dropped that holds only ``x IS NOT NULL`` tests its
    SELECT's aggregates, or the rest of its WHERE, make redundant."""
    if isinstance(node, exp.Where):
        select = node.parent
        if isinstance(select, exp.Select) and redundant_null_filters(select, conjuncts(node.this)):
            return "null_ignored"
        return None
    if not isinstance(node, exp.And) or not isinstance(edited, exp.And):
        return None
    # the part dropped is the one still under the edited AND (the other took its place)
    dropped = node.this if edited.this is not None and edited.this.parent is edited else None
    if dropped is None and edited.expression is not None and edited.expression.parent is edited:
        dropped = node.expression
    select = _where_select(node)
    if dropped is None or select is None:
        return None
    return _named(select, conjuncts(dropped))


def _named(select: exp.Select, tests: list[exp.Expr]) -> str | None:
    if redundant_null_filters(select, tests):
        return "null_ignored"
    if implied_null_tests(select, tests):
        return "null_test_implied"
    return None


def _made_true(column: exp.Column, edited: exp.Column) -> str | None:
    """``x IS NOT NULL`` become ``y IS NOT NULL`` with ``y`` never NULL: the test is gone,
    and the aggregates or the rest of the WHERE make it redundant."""
    test = column.parent
    condition = test.parent if isinstance(test, exp.Is) else None
    if isinstance(condition, exp.Paren):
        condition = condition.parent
    if condition is None or null_tested(condition) is not column:
        return None
    select = _where_select(condition)
    edited_select = edited.find_ancestor(exp.Select)
    if select is None or edited_select is None or not never_null(edited_select, edited):
        return None
    return _named(select, [condition])
