"""CONVERT(type, value[, style]) as SQL Server defines it.

sqlglot turns every CONVERT into TRY_CAST, which hides failures as NULL, and ignores the
type of the value when it applies a style.  Here: without a style CONVERT is CAST (and
TRY_CONVERT is TRY_CAST); a date style formats a date or datetime (STRFTIME) or reads a
string (a literal becomes an ISO date, a column STRPTIME); a style on text that is
converted to text is ignored, as SQL Server ignores it.  A CONVERT to VARCHAR(n) keeps
its length, which ``varchar_length_truncates`` then applies.

>>> from sqlglot import parse_one
>>> from curate.transpile.rules.base import typed
>>> node = parse_one("CONVERT(varchar(6), d, 112)", read="tsql")
>>> _ = typed(node.expression, "DATE")
>>> convert_styles(node).sql("duckdb")
"CAST(STRFTIME(d, '%Y%m%d') AS TEXT(6))"
"""

from __future__ import annotations

import datetime as dt

from sqlglot import exp

from curate.transpile.rules.base import (
    TranspileError,
    acts_on,
    int_literal,
    is_date,
    is_datetime,
    is_string,
    typed,
)
from curate.transpile.rules.number_text import FLOAT_STYLE, float_style
from curate.transpile.rules.number_types import number_type

#: Date styles: number -> strftime / strptime format (DuckDB and Python share the codes).
DATE_STYLES: dict[int, str] = {
    1: "%m/%d/%y", 101: "%m/%d/%Y",
    2: "%y.%m.%d", 102: "%Y.%m.%d",
    3: "%d/%m/%y", 103: "%d/%m/%Y",
    4: "%d.%m.%y", 104: "%d.%m.%Y",
    5: "%d-%m-%y", 105: "%d-%m-%Y",
    6: "%d %b %y", 106: "%d %b %Y",
    7: "%b %d, %y", 107: "%b %d, %Y",
    10: "%m-%d-%y", 110: "%m-%d-%Y",
    11: "%y/%m/%d", 111: "%Y/%m/%d",
    12: "%y%m%d", 112: "%Y%m%d",
    23: "%Y-%m-%d",
    20: "%Y-%m-%d %H:%M:%S", 120: "%Y-%m-%d %H:%M:%S",
    21: "%Y-%m-%d %H:%M:%S.%g", 121: "%Y-%m-%d %H:%M:%S.%g",
    8: "%H:%M:%S", 108: "%H:%M:%S", 24: "%H:%M:%S",
}  # fmt: skip
_TIME_ONLY = {8, 108, 24}
_DATE_PART = {20: "%Y-%m-%d", 120: "%Y-%m-%d", 21: "%Y-%m-%d", 121: "%Y-%m-%d"}


def _cast(value: exp.Expression, to: exp.DataType, safe: bool) -> exp.Expression:
    cls = exp.TryCast if safe else exp.Cast
    return typed(cls(this=value, to=to), to)


@acts_on(exp.Convert)
def convert_styles(node: exp.Expression) -> exp.Expression:
    """CONVERT / TRY_CONVERT as CAST, STRFTIME or STRPTIME, following the style.

    >>> from sqlglot import parse_one
    >>> convert_styles(parse_one("CONVERT(int, x)", read="tsql")).sql("duckdb")
    'CAST(x AS INT)'
    >>> convert_styles(parse_one("CONVERT(date, '02/01/2011', 103)", read="tsql")).sql("duckdb")
    "CAST('2011-01-02' AS DATE)"
    """
    if not isinstance(node, exp.Convert):
        return node
    to, value, safe = node.this, node.expression, bool(node.args.get("safe"))
    style_node = node.args.get("style")
    if style_node is None:
        return _cast(value, to, safe)
    style = int_literal(style_node)
    if to.this in exp.DataType.TEXT_TYPES:
        if is_string(value):
            return _cast(value, to, safe)
        kind = number_type(value)
        if kind is not None and kind.approximate:
            cast = _cast(value, to, safe)
            cast.meta[FLOAT_STYLE] = float_style(style)  # written by the float_text rule
            return cast
        if style not in DATE_STYLES or not (is_date(value) or is_datetime(value)):
            raise TranspileError(f"{node.sql('tsql')}: style {style} is not supported here")
        return _cast(_format(value, style), to, safe)
    if to.this in exp.DataType.TEMPORAL_TYPES:
        if not is_string(value):
            return _cast(value, to, safe)
        if style not in DATE_STYLES or style in _TIME_ONLY:
            raise TranspileError(f"{node.sql('tsql')}: style {style} is not supported here")
        return _cast(_parse(value, style, as_date=to.this == exp.DType.DATE), to, safe)
    raise TranspileError(f"{node.sql('tsql')}: styles for {to.sql('tsql')} are not supported")


def _format(value: exp.Expression, style: int) -> exp.Expression:
    if is_date(value) and style in _TIME_ONLY:
        raise TranspileError(f"CONVERT style {style} of a DATE has no time to show")
    fmt = _DATE_PART.get(style, DATE_STYLES[style]) if is_date(value) else DATE_STYLES[style]
    return typed(exp.TimeToStr(this=value, format=exp.Literal.string(fmt)), "VARCHAR")


def _parse(value: exp.Expression, style: int, as_date: bool) -> exp.Expression:
    fmt = DATE_STYLES[style]
    if isinstance(value, exp.Literal):
        moment = read_styled(value.this, style)
        return exp.Literal.string(moment.date().isoformat() if as_date else str(moment))
    if "%y" in fmt:
        raise TranspileError(f"CONVERT style {style} of a column: two-digit years are ambiguous")
    return typed(exp.StrToTime(this=value, format=exp.Literal.string(fmt)), "TIMESTAMP")


def read_styled(text: str, style: int) -> dt.datetime:
    """Read a string in a CONVERT date style (two-digit years: cutoff 2049).

    >>> read_styled("02/01/11", 3)
    datetime.datetime(2011, 1, 2, 0, 0)
    """
    fmt = DATE_STYLES[style].replace(".%g", ".%f")
    try:
        value = dt.datetime.strptime(text.strip(), fmt)
    except ValueError as error:
        raise TranspileError(f"cannot read {text!r} in CONVERT style {style}") from error
    if "%y" in fmt:
        short = value.year % 100
        value = value.replace(year=short + (2000 if short < 50 else 1900))
    return value
