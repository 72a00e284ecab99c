"""Rules for dates: date strings, "now", DATEADD / DATEDIFF / DATEPART, datetime + days.

SQL Server settings assumed: language us_english, ``DATEFIRST 7`` (weeks start on
Sunday), ``DATEFORMAT mdy``, two-digit year cutoff 2049 (its defaults).

>>> from sqlglot import parse_one
>>> from curate.transpile.rules.annotate import annotate
>>> from curate.transpile.rules.base import apply_rule
>>> sql = "SELECT * FROM cdm.person WHERE birth_datetime > '01-jan-2011'"
>>> apply_rule(date_string_literals, annotate(parse_one(sql, read="tsql"), "tsql"))[0].sql("duckdb")
"SELECT * FROM cdm.person WHERE birth_datetime > CAST('2011-01-01' AS TIMESTAMP)"
"""

from __future__ import annotations

from sqlglot import exp

from curate.transpile.rules.base import (
    TranspileError,
    acts_on,
    is_date,
    is_datetime,
    is_fractional,
    is_integer,
    is_temporal,
    truncated_integer,
    typed,
)
from curate.transpile.rules.date_strings import has_time, is_iso, iso_text, read_datetime

_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ)
# The string is converted to the function's date type by sqlglot's own wrapper node.
_WRAPPERS = (exp.TimeStrToTime, exp.TsOrDsToDate, exp.Cast, exp.TryCast)
# The string is an argument SQL Server converts to DATETIME.
_DATE_ARGS = {
    exp.DateAdd: ("this",),
    exp.DateSub: ("this",),
    exp.DateDiff: ("this", "expression"),
    exp.Extract: ("expression",),
    exp.TimeToStr: ("this",),
    exp.Year: ("this",),
    exp.Month: ("this",),
    exp.Day: ("this",),
}
_DATE_STEPS = {"YEAR", "QUARTER", "MONTH", "WEEK", "DAY"}
_NOW_NAMES = {"GETUTCDATE", "SYSUTCDATETIME"}


def _temporal_sibling(literal: exp.Expression) -> exp.Expression | None:
    """The expression a string literal is compared with, if that has a date type."""
    parent = literal.parent
    if isinstance(parent, _COMPARISONS):
        other = parent.expression if literal is parent.this else parent.this
        return other if is_temporal(other) else None
    if isinstance(parent, (exp.Between, exp.In)) and literal is not parent.this:
        return parent.this if is_temporal(parent.this) else None
    if isinstance(parent, exp.Coalesce):
        args = [parent.this, *parent.expressions]
        return next((a for a in args if a is not literal and is_temporal(a)), None)
    return None


def _wrapper_wants_date(parent: exp.Expression) -> bool | None:
    """For a wrapper node: True if it converts to DATE, False for DATETIME, None if neither."""
    if isinstance(parent, exp.TsOrDsToDate):
        return True
    if isinstance(parent, exp.TimeStrToTime):
        return False
    if isinstance(parent, (exp.Cast, exp.TryCast)):
        if parent.to.this in (exp.DType.DATE, exp.DType.DATE32):
            return True
        if parent.to.this in exp.DataType.TEMPORAL_TYPES:
            return False
    return None


@acts_on(exp.Literal)
def date_string_literals(node: exp.Expression) -> exp.Expression:
    """Date strings where SQL Server expects a date become ISO dates DuckDB can read.

    Where: compared with a date column (=, <, BETWEEN, IN, COALESCE), cast to a date
    type, or given to a date function (DATEADD, DATEDIFF, DATEPART, YEAR, ...).
    ``'20110101'``, ``'1/2/2011'`` and ``'01-jan-2011'`` fail in DuckDB; ISO strings
    compared with a column are left as they are.

    >>> from curate.transpile.rules.base import apply_rule
    >>> column = typed(exp.column("visit_start_date"), "DATE")
    >>> tree = exp.GT(this=column, expression=exp.Literal.string("20110102"))
    >>> apply_rule(date_string_literals, tree)[0].sql("duckdb")
    "visit_start_date > CAST('2011-01-02' AS DATE)"
    """
    if not (isinstance(node, exp.Literal) and node.is_string) or node.parent is None:
        return node
    parent = node.parent
    text = node.this
    if isinstance(parent, _WRAPPERS) and node.arg_key == "this":
        wants_date = _wrapper_wants_date(parent)
        if wants_date is None:
            return node
        iso = iso_text(_read(text), with_time=not wants_date and has_time(text))
        return node if iso == text else exp.Literal.string(iso)
    if type(parent) in _DATE_ARGS and node.arg_key in _DATE_ARGS[type(parent)]:
        literal = exp.Literal.string(iso_text(_read(text), with_time=has_time(text)))
        return typed(exp.cast(literal, "TIMESTAMP"), "TIMESTAMP")
    sibling = _temporal_sibling(node)
    if sibling is None or is_iso(text):
        return node
    value = _read(text)
    as_date = is_date(sibling)
    target = "DATE" if as_date else "TIMESTAMP"
    literal = exp.Literal.string(iso_text(value, with_time=not as_date and has_time(text)))
    return typed(exp.cast(literal, target), target)


def _read(text: str):
    value = read_datetime(text)
    if value is None:
        raise TranspileError(f"cannot read {text!r} as a SQL Server date")
    return value


@acts_on(exp.CurrentTimestamp, exp.Anonymous, exp.Cast)
def now_functions(node: exp.Expression) -> exp.Expression:
    """GETDATE(), SYSDATETIME(), CURRENT_TIMESTAMP are local DATETIMEs: DuckDB LOCALTIMESTAMP.

    DuckDB's CURRENT_TIMESTAMP has a time zone.  CAST(GETDATE() AS DATE) is CURRENT_DATE.
    GETUTCDATE() / SYSUTCDATETIME() become LOCALTIMESTAMP too (the benchmark fixes "now",
    so the UTC offset is dropped).  An executor can pin "today" by replacing
    ``exp.Localtimestamp`` and ``exp.CurrentDate`` nodes.

    >>> now_functions(exp.CurrentTimestamp()).sql("duckdb")
    'LOCALTIMESTAMP'
    """
    if isinstance(node, exp.CurrentTimestamp) or (
        isinstance(node, exp.Anonymous) and node.name.upper() in _NOW_NAMES
    ):
        return typed(exp.Localtimestamp(), "TIMESTAMP")
    if (
        isinstance(node, exp.Cast)
        and isinstance(node.this, exp.Localtimestamp)
        and node.to.this == exp.DType.DATE
    ):
        return typed(exp.CurrentDate(), "DATE")
    return node


@acts_on(exp.DateAdd)
def dateadd_truncates(node: exp.Expression) -> exp.Expression:
    """DATEADD truncates a fractional number toward zero (2.7 days is 2); DuckDB rounds it.

    >>> d, n = typed(exp.column("d"), "DATE"), typed(exp.Literal.number(2.7), "DOUBLE")
    >>> dateadd_truncates(exp.DateAdd(this=d, expression=n, unit=exp.var("DAY"))).sql("duckdb")
    'd + INTERVAL (CAST(TRUNC(2.7) AS BIGINT)) DAY'
    """
    if isinstance(node, exp.DateAdd) and is_fractional(node.expression):
        new = node.copy()
        new.set("expression", truncated_integer(node.expression.copy()))
        new.type = node.type
        return new
    return node


@acts_on(exp.Add, exp.Sub)
def date_arithmetic(node: exp.Expression) -> exp.Expression:
    """Refuse DATE + n, DATE - n and DATE - DATE: SQL Server rejects them (operand type clash).

    (DATETIME + n counts days: :func:`datetime_plus_days`.)  DuckDB computes them, so a
    gold that fails on SQL Server would be kept with a result of DuckDB's making.

    >>> d = typed(exp.column("visit_start_date"), "DATE")
    >>> date_arithmetic(exp.Add(this=d, expression=exp.Literal.number(1)))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    curate.transpile.rules.base.TranspileError: [transpile] visit_start_date + 1: SQL Server ...
    """
    if isinstance(node, exp.Add | exp.Sub) and (is_date(node.this) or is_date(node.expression)):
        raise TranspileError(
            f"{node.sql('tsql')}: SQL Server rejects + and - on a DATE (operand type clash); "
            "DATEADD / DATEDIFF say what is meant"
        )
    return node


@acts_on(exp.DateAdd)
def dateadd_keeps_date(node: exp.Expression) -> exp.Expression:
    """DATEADD(day/week/month/quarter/year, n, date) is a DATE; DuckDB's date + interval is not.

    >>> d = typed(exp.column("visit_start_date"), "DATE")
    >>> dateadd_keeps_date(exp.DateAdd(this=d, expression=exp.Literal.number(1),
    ...                                unit=exp.var("DAY"))).sql("duckdb")
    'CAST(visit_start_date + INTERVAL 1 DAY AS DATE)'
    """
    if not isinstance(node, exp.DateAdd):
        return node
    if not is_date(node.this) or node.unit is None or node.unit.name.upper() not in _DATE_STEPS:
        return node
    return typed(exp.Cast(this=node, to=exp.DataType.build("DATE")), "DATE")


@acts_on(exp.Add, exp.Sub)
def datetime_plus_days(node: exp.Expression) -> exp.Expression:
    """DATETIME + n / DATETIME - n count days: + INTERVAL (n) DAY.

    DuckDB has no TIMESTAMP + INTEGER.  A fractional n (a part of a day) and
    DATETIME - DATETIME (a DATETIME since 1900-01-01) are refused.

    >>> ts, n = typed(exp.column("t"), "TIMESTAMP"), typed(exp.column("n"), "INT")
    >>> datetime_plus_days(exp.Sub(this=ts, expression=n)).sql("duckdb")
    't - INTERVAL (n) DAY'
    """
    if not isinstance(node, (exp.Add, exp.Sub)):
        return node
    left, right = node.this, node.expression
    if is_datetime(left) and is_datetime(right) and isinstance(node, exp.Sub):
        raise TranspileError(f"{node.sql('tsql')}: DATETIME - DATETIME is a SQL Server DATETIME")
    if isinstance(node, exp.Add) and is_datetime(right) and not is_datetime(left):
        left, right = right, left
    if not is_datetime(left):
        return node
    if is_fractional(right):
        raise TranspileError(f"{node.sql('tsql')}: DATETIME + a fraction of a day")
    if not is_integer(right):
        return node
    step = exp.DateAdd if isinstance(node, exp.Add) else exp.DateSub
    return typed(step(this=left, expression=right, unit=exp.var("DAY")), left.type)


@acts_on(exp.DateDiff)
def datediff_week_sunday(node: exp.Expression) -> exp.Expression:
    """DATEDIFF(week, a, b) counts Sundays crossed; DuckDB counts whole weeks.

    As (days between + DAYOFWEEK(a) - DAYOFWEEK(b)) // 7, with DAYOFWEEK Sunday = 0.

    >>> d = exp.DateDiff(this=exp.column("b"), expression=exp.column("a"), unit=exp.var("WEEK"))
    >>> datediff_week_sunday(d).sql("duckdb")
    "(DATE_DIFF('DAY', a, b) + DAYOFWEEK(a) - DAYOFWEEK(b)) // 7"
    """
    if not isinstance(node, exp.DateDiff) or node.unit is None:
        return node
    if node.unit.name.upper() != "WEEK":
        return node
    end, start = node.this, node.expression
    days = exp.DateDiff(this=end, expression=start, unit=exp.var("DAY"))
    shifted = exp.Sub(
        this=exp.Add(this=days, expression=exp.DayOfWeek(this=start.copy())),
        expression=exp.DayOfWeek(this=end.copy()),
    )
    return typed(
        exp.IntDiv(this=exp.Paren(this=shifted), expression=exp.Literal.number(7)), "BIGINT"
    )


def _extract_part(node: exp.Expression) -> str | None:
    if isinstance(node, exp.Extract) and isinstance(node.this, exp.Var):
        return node.this.name.upper()
    return None


@acts_on(exp.Extract)
def datepart_weekday(node: exp.Expression) -> exp.Expression:
    """DATEPART(weekday, d) numbers Sunday 1 .. Saturday 7; DuckDB's DAYOFWEEK is 0 .. 6.

    >>> datepart_weekday(exp.Extract(this=exp.var("DAYOFWEEK"), expression=exp.column("d"))).sql(
    ...     "duckdb")
    'EXTRACT(DAYOFWEEK FROM d) + 1'
    """
    if _extract_part(node) != "DAYOFWEEK":
        return node
    return typed(exp.Add(this=node, expression=exp.Literal.number(1)), "INT")


@acts_on(exp.Extract)
def datepart_week(node: exp.Expression) -> exp.Expression:
    """DATEPART(week, d): week 1 holds January 1 and weeks start on Sunday.

    DuckDB's EXTRACT(WEEK) is the ISO week.  As
    (DAYOFYEAR(d) + DAYOFWEEK(first day of d's year) - 1) // 7 + 1.

    >>> datepart_week(exp.Extract(this=exp.var("WEEK"), expression=exp.column("d"))).sql("duckdb")
    "(DAYOFYEAR(d) + DAYOFWEEK(DATE_TRUNC('YEAR', d)) - 1) // 7 + 1"
    """
    if _extract_part(node) != "WEEK":
        return node
    value = node.expression
    jan_first = exp.DateTrunc(this=value.copy(), unit=exp.var("YEAR"))
    offset = exp.Sub(
        this=exp.Add(this=exp.DayOfYear(this=value), expression=exp.DayOfWeek(this=jan_first)),
        expression=exp.Literal.number(1),
    )
    week = exp.IntDiv(this=exp.Paren(this=offset), expression=exp.Literal.number(7))
    return typed(exp.Add(this=week, expression=exp.Literal.number(1)), "INT")


@acts_on(exp.Extract)
def datepart_subsecond(node: exp.Expression) -> exp.Expression:
    """DATEPART(millisecond / microsecond) is the fraction of the second only.

    DuckDB's EXTRACT(MILLISECOND) includes the seconds (12.345 s gives 12345).

    >>> datepart_subsecond(exp.Extract(this=exp.var("MILLISECOND"), expression=exp.column("t"))
    ...                    ).sql("duckdb")
    'EXTRACT(MILLISECOND FROM t) % 1000'
    """
    part = _extract_part(node)
    if part not in ("MILLISECOND", "MICROSECOND"):
        return node
    size = 1000 if part == "MILLISECOND" else 1_000_000
    return typed(exp.Mod(this=node, expression=exp.Literal.number(size)), "INT")
