"""Rules for numbers: SQL Server keeps integer arithmetic integer and truncates.

Each rule reads the SQL Server types left by ``curate.transpile.rules.annotate``.

>>> from sqlglot import parse_one
>>> from curate.transpile.rules.annotate import annotate
>>> from curate.transpile.rules.base import apply_rule
>>> tree = annotate(parse_one("SELECT 7 / 2", read="tsql"), "tsql")
>>> apply_rule(integer_division, tree)[0].sql("duckdb")
'SELECT 7 // 2'
"""

from __future__ import annotations

from sqlglot import exp

from curate.transpile.rules.base import (
    TranspileError,
    acts_on,
    int_literal,
    is_fractional,
    is_integer,
    is_temporal,
    truncated_integer,
    typed,
)

_STATISTICS = {"STDEVP": exp.StddevPop, "VARP": exp.VariancePop, "VAR": exp.Variance}


@acts_on(exp.Div)
def integer_division(node: exp.Expression) -> exp.Expression:
    """integer / integer is integer division, truncated toward zero (DuckDB ``//``).

    >>> one, two = typed(exp.Literal.number(7), "INT"), typed(exp.Literal.number(2), "INT")
    >>> integer_division(exp.Div(this=one, expression=two)).sql("duckdb")
    '7 // 2'
    """
    if isinstance(node, exp.Div) and is_integer(node.this) and is_integer(node.expression):
        return typed(exp.IntDiv(this=node.this, expression=node.expression), "BIGINT")
    return node


@acts_on(exp.Window, exp.Avg)
def avg_of_integers(node: exp.Expression) -> exp.Expression:
    """AVG of an integer expression is an integer, truncated toward zero.

    A window AVG is truncated outside its OVER clause.

    >>> arg = typed(exp.column("year_of_birth"), "INT")
    >>> avg_of_integers(exp.Avg(this=arg)).sql("duckdb")
    'CAST(TRUNC(AVG(year_of_birth)) AS BIGINT)'
    """
    if isinstance(node, exp.Window) and _integer_avg(node.this):
        return truncated_integer(node)
    if _integer_avg(node) and not isinstance(node.parent, exp.Window):
        return truncated_integer(node)
    return node


def _integer_avg(node: exp.Expression) -> bool:
    if not isinstance(node, exp.Avg):
        return False
    arg = node.this
    if isinstance(arg, exp.Distinct) and len(arg.expressions) == 1:
        arg = arg.expressions[0]
    return is_integer(arg)


@acts_on(exp.Cast)
def integer_cast_truncates(node: exp.Expression) -> exp.Expression:
    """CAST(fractional AS INT) truncates in SQL Server; DuckDB rounds.

    >>> value = typed(exp.Literal.number(2.7), "DOUBLE")
    >>> integer_cast_truncates(exp.cast(value, "INT")).sql("duckdb")
    'CAST(TRUNC(2.7) AS INT)'
    """
    if (
        isinstance(node, exp.Cast)
        and node.to.this in exp.DataType.INTEGER_TYPES
        and node.to.this != exp.DType.BIT
        and is_fractional(node.this)
        and not isinstance(node.this, exp.Trunc)
    ):
        new = node.copy()
        new.set("this", exp.Trunc(this=node.this))
        return typed(new, node.to)
    return node


@acts_on(exp.Floor, exp.Ceil)
def floor_ceiling_of_integers(node: exp.Expression) -> exp.Expression:
    """FLOOR / CEILING of an integer is that integer (DuckDB returns a DOUBLE: 1970.0).

    >>> value = typed(exp.column("year_of_birth"), "INT")
    >>> floor_ceiling_of_integers(exp.Floor(this=value)).sql("duckdb")
    'year_of_birth'
    """
    if isinstance(node, exp.Floor | exp.Ceil) and is_integer(node.this):
        if node.args.get("decimals") is None and node.args.get("to") is None:
            return node.this
    return node


@acts_on(exp.Anonymous)
def isnumeric_by_type(node: exp.Expression) -> exp.Expression:
    """ISNUMERIC(x) where x's type decides it: 1 for a number (0 when NULL), 0 for a date.

    ISNUMERIC of text follows SQL Server's own number formats ('$', ',', '.', '1e5' and
    '-' all count as numeric), so it is refused.

    >>> value = typed(exp.column("person_id"), "BIGINT")
    >>> isnumeric_by_type(exp.Anonymous(this="ISNUMERIC", expressions=[value])).sql("duckdb")
    'CASE WHEN person_id IS NULL THEN 0 ELSE 1 END'
    """
    if not (isinstance(node, exp.Anonymous) and node.name.upper() == "ISNUMERIC"):
        return node
    if len(node.expressions) != 1:
        raise TranspileError("ISNUMERIC takes one argument")
    (arg,) = node.expressions
    if isinstance(arg, exp.Null) or is_temporal(arg):
        return typed(exp.Literal.number(0), "INT")
    if is_integer(arg) or is_fractional(arg):
        case = exp.Case(
            ifs=[exp.If(this=exp.Is(this=arg, expression=exp.Null()), true=exp.Literal.number(0))],
            default=exp.Literal.number(1),
        )
        return typed(case, "INT")
    raise TranspileError(
        f"{node.sql('tsql')}: ISNUMERIC of text follows SQL Server's number formats "
        "('$', ',', '.', '1e5' are numeric); only a number or date argument is exact"
    )


@acts_on(exp.DataType)
def decimal_default_scale(node: exp.Expression) -> exp.Expression:
    """DECIMAL / NUMERIC without precision is DECIMAL(18, 0) in SQL Server (DuckDB: (18, 3)).

    >>> decimal_default_scale(exp.DataType.build("DECIMAL")).sql("duckdb")
    'DECIMAL(18, 0)'
    """
    if isinstance(node, exp.DataType) and node.this == exp.DType.DECIMAL and not node.expressions:
        return exp.DataType.build("DECIMAL(18, 0)")
    return node


@acts_on(exp.DataType)
def numeric_unbounded(node: exp.Expression) -> exp.Expression:
    """PostgreSQL's NUMERIC without precision keeps every digit; DuckDB's keeps 3 decimals.

    >>> numeric_unbounded(exp.DataType.build("NUMERIC", dialect="postgres")).sql("duckdb")
    'DOUBLE'
    """
    if isinstance(node, exp.DataType) and node.this == exp.DType.DECIMAL and not node.expressions:
        return exp.DataType.build("DOUBLE")
    return node


@acts_on(exp.DataType)
def bit_is_boolean(node: exp.Expression) -> exp.Expression:
    """SQL Server's BIT is a 0/1 flag; DuckDB's BIT is a bit string.

    >>> bit_is_boolean(exp.DataType.build("BIT", dialect="tsql")).sql("duckdb")
    'BOOLEAN'
    """
    if isinstance(node, exp.DataType) and node.this == exp.DType.BIT:
        return exp.DataType.build("BOOLEAN")
    return node


@acts_on(exp.Round)
def round_truncate(node: exp.Expression) -> exp.Expression:
    """ROUND(x, n, f) with f <> 0 truncates: TRUNC(x, n).

    >>> from sqlglot import parse_one
    >>> round_truncate(parse_one("ROUND(x, 1, 1)", read="tsql")).sql("duckdb")
    'TRUNC(x, 1)'
    """
    if isinstance(node, exp.Round) and node.args.get("truncate") is not None:
        flag = int_literal(node.args["truncate"])
        if flag == 0:
            new = node.copy()
            new.set("truncate", None)
            return new
        return exp.Trunc(this=node.this, decimals=node.args.get("decimals"))
    return node


@acts_on(exp.Anonymous)
def statistics_names(node: exp.Expression) -> exp.Expression:
    """STDEVP / VARP / VAR are DuckDB's STDDEV_POP / VAR_POP / VARIANCE.

    >>> from sqlglot import parse_one
    >>> statistics_names(parse_one("STDEVP(x)", read="tsql")).sql("duckdb")
    'STDDEV_POP(x)'
    """
    if isinstance(node, exp.Anonymous) and node.name.upper() in _STATISTICS:
        if len(node.expressions) == 1:
            return typed(_STATISTICS[node.name.upper()](this=node.expressions[0]), "DOUBLE")
    return node


@acts_on(exp.Coalesce)
def isnull_keeps_first_type(node: exp.Expression) -> exp.Expression:
    """ISNULL(int, fractional) converts the replacement to the first argument's integer type.

    (COALESCE, and DuckDB, pick the wider type instead.)  Run before
    :func:`integer_cast_truncates`, which then truncates the new cast.

    >>> first, second = typed(exp.column("n"), "INT"), typed(exp.Literal.number(0.5), "DOUBLE")
    >>> isnull_keeps_first_type(exp.Coalesce(this=first, expressions=[second], is_null=True)).sql(
    ...     "duckdb")
    'COALESCE(n, CAST(0.5 AS INT))'
    """
    if not (isinstance(node, exp.Coalesce) and node.args.get("is_null")):
        return node
    first, rest = node.this, node.expressions
    if len(rest) != 1 or not is_integer(first) or not is_fractional(rest[0]):
        return node
    to = first.type.copy()
    replacement = typed(exp.Cast(this=rest[0], to=to), to)
    return typed(exp.Coalesce(this=first, expressions=[replacement], is_null=True), to)
