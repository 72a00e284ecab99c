"""DuckDB SQL (the tasks' gold, DuckDB-dialect predictions) made PostgreSQL SQL.

sqlglot transpiles the text (``read="duckdb", write="postgres"``); the rules below then
fix what it leaves different where the two engines disagree.  Each rule is one pure
function on the tree and has an executed case on both engines in the tests:

``round_numeric``
    ``ROUND(x, n)`` exists in PostgreSQL for NUMERIC only (not DOUBLE PRECISION):
    the argument is cast to NUMERIC.
``integer_division``
    DuckDB's ``a // b`` of integers truncates to a BIGINT; sqlglot writes ``DIV(a, b)``,
    which PostgreSQL has for NUMERIC only and returns as NUMERIC (the same value, another
    type; and ``EXTRACT``, an integer in DuckDB, is NUMERIC in PostgreSQL, so the operand
    types cannot tell): ``CAST(DIV(CAST(a AS NUMERIC), CAST(b AS NUMERIC)) AS BIGINT)``,
    which also accepts DOUBLE operands.  A named engine
    difference remains: DuckDB's ``//`` of non-integers divides (``7.5 // 2`` is 3.75),
    PostgreSQL's truncates (3).
``derived_table_alias``
    PostgreSQL 15 requires an alias on every subquery in FROM; DuckDB does not.
``date_trunc_timestamp``
    ``DATE_TRUNC`` of a DATE is a TIMESTAMP in DuckDB and a TIMESTAMP WITH TIME ZONE
    in PostgreSQL: the argument is cast to TIMESTAMP.
``day_of_week``
    DuckDB's ``dayofweek``/``isodow``/``dayofyear`` become ``EXTRACT(DOW|ISODOW|DOY ...)``.
``list_length``
    DuckDB's ``len``/``array_length`` of a list is PostgreSQL's ``CARDINALITY``.
``string_contains``
    DuckDB's ``contains(text, part)`` is ``STRPOS(text, part) > 0``.
``group_by_all``
    ``GROUP BY ALL`` lists the SELECT expressions that hold no aggregate.
``having_alias``
    DuckDB lets HAVING name a SELECT alias; PostgreSQL needs the expression.
``arg_max_min``
    ``arg_max(x, key)`` is ``(ARRAY_AGG(x ORDER BY key DESC) FILTER (WHERE key IS NOT
    NULL))[1]`` (``ASC`` for ``arg_min``; ties broken arbitrarily on both engines).
``any_value``
    PostgreSQL 15 has no ``ANY_VALUE``: ``MIN`` is one of the values.
``interval_expression``
    DuckDB's ``INTERVAL (n) DAY`` of an expression: sqlglot writes ``INTERVAL DAY`` (the
    count lost, a syntax error); it is ``(n) * INTERVAL '1 DAY'``.
``printf_float``
    ``printf('%.6g' | '%.Ne', x)`` (curation's text of a SQL Server FLOAT) has no
    PostgreSQL function: ``%.Ne`` is ``to_char(x, '9.<N nines>EEEE')``, which formats the
    DOUBLE with C's ``%e``; ``%.6g`` is built from ``%.5e`` as C's ``%g`` does (fixed
    notation for exponents -4 to 5, trailing zeros dropped).
``duckdb_functions``
    ``mean`` is ``AVG``, ``make_date`` is ``MAKE_DATE`` (sqlglot writes a function
    PostgreSQL lacks), ``format('{} to {}', ...)`` uses ``%s``.

What needs no rule (sqlglot handles it, and the tests run it on both engines): ``/`` of
integers (DuckDB divides, sqlglot casts to DOUBLE PRECISION), ``LIST``/``list`` as
``ARRAY_AGG``, ``date_diff``, ``INTERVAL`` arithmetic.  Differences that remain are
engine differences the result hash does not see (``AVG`` of integers is DOUBLE in
DuckDB and NUMERIC in PostgreSQL: the same value to 12 significant digits).

>>> transpile_to_postgres("SELECT ROUND(x / 3, 1) FROM (SELECT 3 AS x)")
'SELECT ROUND(CAST(CAST(x AS DOUBLE PRECISION) / 3 AS DECIMAL), 1) FROM (SELECT 3 AS x) AS _q1'
"""

from __future__ import annotations

import re
from collections.abc import Callable

from sqlglot import exp

from score.execution.guard import parse_statements
from score.execution.result import QueryError

Rule = Callable[[exp.Expr], exp.Expr]


def round_numeric(tree: exp.Expr) -> exp.Expr:
    for node in list(tree.find_all(exp.Round)):
        arg = node.this
        if node.args.get("decimals") is None:
            continue
        if isinstance(arg, exp.Cast) and arg.to.this in (
            exp.DataType.Type.DECIMAL,
            exp.DataType.Type.BIGDECIMAL,
        ):
            continue
        node.set("this", exp.cast(arg.copy(), exp.DataType.build("DECIMAL")))
    return tree


def integer_division(tree: exp.Expr) -> exp.Expr:
    for node in list(tree.find_all(exp.IntDiv)):
        numeric = exp.DataType.build("DECIMAL")
        div = exp.Anonymous(
            this="DIV",
            expressions=[
                exp.cast(node.this.copy(), numeric),
                exp.cast(node.expression.copy(), numeric),
            ],
        )
        node.replace(exp.cast(div, exp.DataType.build("BIGINT")))
    return tree


def derived_table_alias(tree: exp.Expr) -> exp.Expr:
    taken = {a.name for a in tree.find_all(exp.TableAlias)}
    n = 0
    for node in list(tree.find_all(exp.Subquery)):
        parent = node.parent
        if not isinstance(parent, exp.From | exp.Join) or node.alias:
            continue
        n += 1
        while f"_q{n}" in taken:
            n += 1
        node.set("alias", exp.TableAlias(this=exp.to_identifier(f"_q{n}")))
    return tree


def date_trunc_timestamp(tree: exp.Expr) -> exp.Expr:
    for node in list(tree.find_all(exp.DateTrunc, exp.TimestampTrunc)):
        arg = node.this
        if isinstance(arg, exp.Cast) and arg.to.this == exp.DataType.Type.TIMESTAMP:
            continue
        node.set("this", exp.cast(arg.copy(), exp.DataType.build("TIMESTAMP")))
    return tree


_DATE_PARTS = {
    exp.DayOfWeek: "DOW",
    exp.DayOfWeekIso: "ISODOW",
    exp.DayOfYear: "DOY",
}


def day_of_week(tree: exp.Expr) -> exp.Expr:
    for cls, part in _DATE_PARTS.items():
        for node in list(tree.find_all(cls)):
            node.replace(exp.Extract(this=exp.var(part), expression=node.this.copy()))
    return tree


def list_length(tree: exp.Expr) -> exp.Expr:
    for node in list(tree.find_all(exp.ArraySize)):
        node.replace(exp.Anonymous(this="CARDINALITY", expressions=[node.this.copy()]))
    for length in list(tree.find_all(exp.Length)):
        if isinstance(length.this, exp.Array):
            length.replace(exp.Anonymous(this="CARDINALITY", expressions=[length.this.copy()]))
    return tree


def string_contains(tree: exp.Expr) -> exp.Expr:
    for node in list(tree.find_all(exp.Contains)):
        strpos = exp.Anonymous(
            this="STRPOS", expressions=[node.this.copy(), node.expression.copy()]
        )
        node.replace(exp.GT(this=strpos, expression=exp.Literal.number(0)))
    return tree


def group_by_all(tree: exp.Expr) -> exp.Expr:
    for select in list(tree.find_all(exp.Select)):
        group = select.args.get("group")
        if group is None or not group.args.get("all"):
            continue
        keys = [
            e.unalias().copy()
            for e in select.expressions
            if not isinstance(e.unalias(), exp.Star) and not e.find(exp.AggFunc, exp.Window)
        ]
        if keys:
            select.set("group", exp.Group(expressions=keys))
        else:
            select.set("group", None)
    return tree


def order_by_all(tree: exp.Expr) -> exp.Expr:
    """``ORDER BY ALL`` (every output column, left to right) as their positions, where
    the select list names them (``SELECT *`` is left as it is)."""
    for select in list(tree.find_all(exp.Select)):
        order = select.args.get("order")
        if order is None or len(order.expressions) != 1:
            continue
        (ordered,) = order.expressions
        key = ordered.this
        if not (isinstance(key, exp.Var | exp.Column) and key.name.upper() == "ALL"):
            continue
        if any(isinstance(e.unalias(), exp.Star) for e in select.expressions):
            continue
        positions = [
            exp.Ordered(
                this=exp.Literal.number(i),
                desc=ordered.args.get("desc"),
                nulls_first=ordered.args.get("nulls_first"),
            )
            for i in range(1, len(select.expressions) + 1)
        ]
        select.set("order", exp.Order(expressions=positions))
    return tree


def having_alias(tree: exp.Expr) -> exp.Expr:
    for select in list(tree.find_all(exp.Select)):
        having = select.args.get("having")
        if having is None:
            continue
        aliases = {
            e.alias: e.this for e in select.expressions if isinstance(e, exp.Alias) and e.alias
        }
        for column in list(having.find_all(exp.Column)):
            if not column.table and column.name in aliases:
                column.replace(exp.paren(aliases[column.name].copy()))
    return tree


def arg_max_min(tree: exp.Expr) -> exp.Expr:
    for node in list(tree.find_all(exp.ArgMax, exp.ArgMin)):
        key = node.expression.copy()
        order = exp.Ordered(this=key.copy(), desc=isinstance(node, exp.ArgMax))
        agg = exp.ArrayAgg(this=exp.Order(this=node.this.copy(), expressions=[order]))
        filtered = exp.Filter(
            this=agg,
            expression=exp.Where(this=exp.Not(this=exp.Is(this=key, expression=exp.Null()))),
        )
        node.replace(
            exp.Bracket(this=exp.paren(filtered), expressions=[exp.Literal.number(1)], offset=1)
        )
    return tree


def any_value(tree: exp.Expr) -> exp.Expr:
    for node in list(tree.find_all(exp.AnyValue)):
        target = node.parent if isinstance(node.parent, exp.IgnoreNulls) else node
        target.replace(exp.Min(this=node.this.copy()))
    return tree


def interval_expression(tree: exp.Expr) -> exp.Expr:
    for node in list(tree.find_all(exp.Interval)):
        count, unit = node.this, node.args.get("unit")
        if count is None or unit is None or isinstance(count, exp.Literal):
            continue
        one = exp.Interval(this=exp.Literal.string("1"), unit=unit.copy())
        node.replace(exp.paren(exp.Mul(this=exp.paren(count.unnest().copy()), expression=one)))
    return tree


_E_FORMAT = re.compile(r"%\.(\d{1,2})e")
#: C's %.6g from S, C's %.5e of the value (``1.23457e+03``), E its exponent and D its digits.
_G6 = (
    "CASE WHEN {E} < -4 OR {E} >= 6 THEN REGEXP_REPLACE(SPLIT_PART({S}, 'e', 1), "
    "'\\.?0+$', '') || 'e' || SPLIT_PART({S}, 'e', 2) ELSE "
    "CASE WHEN LEFT({S}, 1) = '-' THEN '-' ELSE '' END || REGEXP_REPLACE(CASE WHEN {E} >= 0 "
    "THEN LEFT({D}, {E} + 1) || '.' || SUBSTR({D}, {E} + 2) "
    "ELSE '0.' || REPEAT('0', -{E} - 1) || {D} END, '\\.?0*$', '') END"
)


def _to_char_e(value: exp.Expression, digits: int) -> exp.Expression:
    double = exp.cast(value.copy(), exp.DataType.build("DOUBLE PRECISION"))
    pattern = exp.Literal.string("9." + "9" * digits + "EEEE")
    return exp.Trim(this=exp.Anonymous(this="TO_CHAR", expressions=[double, pattern]))


def _printf_g6(value: exp.Expression) -> exp.Expression:
    text = _to_char_e(value, 5).sql("postgres")
    parts = {
        "S": text,
        "E": f"CAST(SPLIT_PART({text}, 'e', 2) AS INT)",
        "D": f"REPLACE(REPLACE(SPLIT_PART({text}, 'e', 1), '-', ''), '.', '')",
    }
    (select,) = parse_statements("SELECT " + _G6.format(**parts), "postgres")
    assert isinstance(select, exp.Select)
    return exp.paren(select.expressions[0])


def printf_float(tree: exp.Expr) -> exp.Expr:
    for node in list(tree.find_all(exp.Anonymous)):
        if node.name.lower() != "printf" or len(node.expressions) != 2:
            continue
        fmt, value = node.expressions
        if not (isinstance(fmt, exp.Literal) and fmt.is_string):
            continue
        if fmt.this == "%.6g":
            node.replace(_printf_g6(value))
        elif (found := _E_FORMAT.fullmatch(fmt.this)) is not None:
            node.replace(_to_char_e(value, int(found.group(1))))
    return tree


def duckdb_functions(tree: exp.Expr) -> exp.Expr:
    for node in list(tree.find_all(exp.Anonymous)):
        if node.name.lower() == "mean":
            node.replace(exp.Avg(this=node.expressions[0].copy()))
    for made in list(tree.find_all(exp.DateFromParts)):
        parts = [made.args.get(k) for k in ("year", "month", "day")]
        if all(p is not None for p in parts):
            copies = [p.copy() for p in parts if p is not None]
            made.replace(exp.Anonymous(this="MAKE_DATE", expressions=copies))
    for formatted in list(tree.find_all(exp.Format)):
        pattern = formatted.this
        if isinstance(pattern, exp.Literal) and pattern.is_string:
            text = pattern.this.replace("%", "%%").replace("{}", "%s")
            formatted.set("this", exp.Literal.string(text))
    return tree


#: The rules in the order they run; names are what the tests and the README cite.
RULES: dict[str, Rule] = {
    "group_by_all": group_by_all,
    "order_by_all": order_by_all,
    "having_alias": having_alias,
    "arg_max_min": arg_max_min,
    "any_value": any_value,
    "duckdb_functions": duckdb_functions,
    "interval_expression": interval_expression,
    "printf_float": printf_float,
    "round_numeric": round_numeric,
    "integer_division": integer_division,
    "derived_table_alias": derived_table_alias,
    "date_trunc_timestamp": date_trunc_timestamp,
    "day_of_week": day_of_week,
    "list_length": list_length,
    "string_contains": string_contains,
}


def transpile_to_postgres(sql: str, read: str = "duckdb", *, rules: bool = True) -> str:
    """``sql`` (one statement in dialect ``read``) as PostgreSQL SQL; a QueryError
    (``parse_error``) when it cannot be read."""
    try:
        statements = parse_statements(sql, read)
    except Exception as e:  # ParseError, TokenError, RecursionError
        raise QueryError(
            "parse_error", f"cannot read as {read}: {str(e).splitlines()[0]}"
        ) from None
    if len(statements) != 1:
        raise QueryError(
            "guard_rejected", f"{len(statements)} statements; only one SELECT is allowed"
        )
    tree = statements[0]
    if rules:
        for rule in RULES.values():
            tree = rule(tree)
    try:
        return tree.sql("postgres")
    except Exception as e:  # sqlglot cannot write some DuckDB-only constructs
        raise QueryError("parse_error", f"cannot write as postgres: {e}"[:300]) from None


def transpile(sql: str, read: str, write: str) -> str:
    """``sql`` from dialect ``read`` to ``write`` (PostgreSQL with the rules above)."""
    if read == write:
        return sql
    if write == "postgres":
        return transpile_to_postgres(sql, read)
    try:
        (tree,) = parse_statements(sql, read)
        return tree.sql(write)
    except Exception as e:
        raise QueryError("parse_error", f"cannot transpile {read} to {write}: {e}"[:300]) from None
