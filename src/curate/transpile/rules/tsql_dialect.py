"""SQL Server as sqlgold reads it: sqlglot's T-SQL with the date-part table and FLOAT fixed.

Two things are lost once sqlglot's T-SQL parser has built the tree, so they are fixed
while parsing (AST builders, not text edits):

* Date parts.  SQL Server's table has ``y``/``dy`` = dayofyear, ``w``/``dw`` = weekday,
  ``hh``, ``mi``/``n``, ``ss``/``s``, ``ms``, ``mcs``.  sqlglot 30.30 reads ``DATEADD(y, ...)``
  as a year, ``DATEPART(w, ...)`` as a week, and passes ``hh``/``mi``/``ss`` through as
  units DuckDB does not know; ``DATENAME`` becomes a format string in which ``day`` is
  zero-padded and ``quarter`` is literal text.  Here every date part is mapped with the
  full table before the node is built; DATENAME of a numeric part becomes the text of
  DATEPART, as SQL Server defines it.
* FLOAT.  SQL Server's FLOAT is FLOAT(53), a 64-bit DOUBLE; only REAL and FLOAT(1..24)
  are 32-bit.  sqlglot reads FLOAT and REAL as the same type, which DuckDB writes REAL.

Nodes built here carry ``meta["sqlgold_rule"]`` so :func:`curate.transpile.to_duckdb.transpile`
can report the parse rule as applied.

>>> from sqlglot import parse_one
>>> parse_one("SELECT DATEADD(y, 1, d), CAST(x AS FLOAT)", read=SqlgoldTSQL).sql("duckdb")
'SELECT d + INTERVAL 1 DAY, CAST(x AS DOUBLE)'
"""

from __future__ import annotations

import datetime as dt

from sqlglot import exp
from sqlglot.dialects.tsql import TSQL
from sqlglot.helper import seq_get
from sqlglot.tokens import TokenType

from curate.transpile.rules.base import TranspileError

META_KEY = "sqlgold_rule"
DATE_PARTS_RULE = "tsql_date_parts"
FLOAT_RULE = "float_is_double"

#: SQL Server's date-part names and abbreviations, to one canonical name each.
DATE_PARTS: dict[str, str] = {
    **dict.fromkeys(("year", "yy", "yyyy"), "YEAR"),
    **dict.fromkeys(("quarter", "qq", "q"), "QUARTER"),
    **dict.fromkeys(("month", "mm", "m"), "MONTH"),
    **dict.fromkeys(("dayofyear", "dy", "y"), "DAYOFYEAR"),
    **dict.fromkeys(("day", "dd", "d"), "DAY"),
    **dict.fromkeys(("week", "wk", "ww"), "WEEK"),
    **dict.fromkeys(("weekday", "dw", "w"), "WEEKDAY"),
    **dict.fromkeys(("hour", "hh"), "HOUR"),
    **dict.fromkeys(("minute", "mi", "n"), "MINUTE"),
    **dict.fromkeys(("second", "ss", "s"), "SECOND"),
    **dict.fromkeys(("millisecond", "ms"), "MILLISECOND"),
    **dict.fromkeys(("microsecond", "mcs"), "MICROSECOND"),
    **dict.fromkeys(("nanosecond", "ns"), "NANOSECOND"),
    **dict.fromkeys(("iso_week", "isowk", "isoww"), "ISO_WEEK"),
    **dict.fromkeys(("tzoffset", "tz"), "TZOFFSET"),
}

# DATEADD / DATEDIFF count dayofyear and weekday steps as days.
_STEP_UNITS = {"DAYOFYEAR": "DAY", "WEEKDAY": "DAY"}
_NO_STEP = {"NANOSECOND", "ISO_WEEK", "TZOFFSET"}
# DATEPART names as EXTRACT specifiers; WEEKDAY / WEEK / sub-seconds are fixed by rules.
_EXTRACT = {"WEEKDAY": "DAYOFWEEK", "ISO_WEEK": "WEEKISO"}
_NO_EXTRACT = {"NANOSECOND", "TZOFFSET"}
_SQL_SERVER_EPOCH = dt.date(1900, 1, 1)


def date_part(node: exp.Expression | None, function: str) -> str:
    """The canonical name of a SQL Server date part argument.

    >>> date_part(exp.column("dw"), "DATEPART")
    'WEEKDAY'
    """
    name = node.name.lower() if node is not None else ""
    if name not in DATE_PARTS:
        raise TranspileError(
            f"{function}: unknown SQL Server date part {name!r}", rule=DATE_PARTS_RULE
        )
    return DATE_PARTS[name]


def _mark(node: exp.Expression, rule: str = DATE_PARTS_RULE) -> exp.Expression:
    node.meta[META_KEY] = rule
    return node


def _step_unit(part: str, function: str) -> exp.Var:
    if part in _NO_STEP:
        raise TranspileError(
            f"{function}({part.lower()}, ...) has no DuckDB counterpart", rule=DATE_PARTS_RULE
        )
    return exp.var(_STEP_UNITS.get(part, part))


def _day_number(node: exp.Expression | None) -> exp.Expression | None:
    """An integer where SQL Server wants a date means days after 1900-01-01."""
    if isinstance(node, exp.Literal) and node.is_int:
        day = _SQL_SERVER_EPOCH + dt.timedelta(days=int(node.this))
        return exp.Literal.string(day.isoformat())
    return node


def build_dateadd(args: list) -> exp.Expression:
    """DATEADD(part, number, date) with SQL Server's date parts."""
    unit = _step_unit(date_part(seq_get(args, 0), "DATEADD"), "DATEADD")
    return _mark(exp.DateAdd(this=seq_get(args, 2), expression=seq_get(args, 1), unit=unit))


def _build_datediff(big_int: bool):
    def build(args: list) -> exp.Expression:
        unit = _step_unit(date_part(seq_get(args, 0), "DATEDIFF"), "DATEDIFF")
        start, end = _day_number(seq_get(args, 1)), _day_number(seq_get(args, 2))
        return _mark(exp.DateDiff(this=end, expression=start, unit=unit, big_int=big_int))

    return build


def extract_part(part: str, value: exp.Expression | None, function: str) -> exp.Expression:
    """EXTRACT of a canonical SQL Server date part."""
    if part in _NO_EXTRACT:
        raise TranspileError(
            f"{function}({part.lower()}, ...) has no DuckDB counterpart", rule=DATE_PARTS_RULE
        )
    return _mark(exp.Extract(this=exp.var(_EXTRACT.get(part, part)), expression=value))


def build_datename(args: list) -> exp.Expression:
    """DATENAME(part, date): month and weekday names, else the text of DATEPART."""
    part = date_part(seq_get(args, 0), "DATENAME")
    value = seq_get(args, 1)
    if part in ("MONTH", "WEEKDAY"):
        fmt = "%B" if part == "MONTH" else "%A"
        return _mark(exp.TimeToStr(this=value, format=exp.Literal.string(fmt)))
    return _mark(exp.cast(extract_part(part, value, "DATENAME"), exp.DType.VARCHAR))


class SqlgoldTSQL(TSQL):
    """sqlglot's T-SQL dialect with SQL Server's date-part table and 64-bit FLOAT."""

    class Parser(TSQL.Parser):
        FUNCTIONS = {
            **TSQL.Parser.FUNCTIONS,
            "DATEADD": build_dateadd,
            "DATEDIFF": _build_datediff(big_int=False),
            "DATEDIFF_BIG": _build_datediff(big_int=True),
            "DATENAME": build_datename,
        }

        FUNCTION_PARSERS = {
            **TSQL.Parser.FUNCTION_PARSERS,
            "DATEPART": lambda self: self._parse_sqlgold_datepart(),
        }

        def _parse_sqlgold_datepart(self) -> exp.Expression:
            part = self._parse_var(any_token=True)
            value = self._match(TokenType.COMMA) and self._parse_bitwise()
            return extract_part(date_part(part, "DATEPART"), value or None, "DATEPART")

        def _parse_types(self, *args, **kwargs):
            keyword = self._curr.text.upper() if self._curr else ""
            result = super()._parse_types(*args, **kwargs)
            if keyword == "FLOAT" and isinstance(result, exp.DataType):
                result = _float_type(result)
            return result


def _float_type(node: exp.DataType) -> exp.DataType:
    """FLOAT(n): DOUBLE unless n <= 24 (then REAL)."""
    size = int_param(node)
    kind = exp.DType.FLOAT if size is not None and size <= 24 else exp.DType.DOUBLE
    return _mark(exp.DataType(this=kind), FLOAT_RULE)


def int_param(node: exp.DataType) -> int | None:
    """The first parameter of a type such as VARCHAR(10), if it is a number.

    >>> int_param(exp.DataType.build("VARCHAR(10)"))
    10
    """
    params = node.expressions
    if not params:
        return None
    first = params[0].this if isinstance(params[0], exp.DataTypeParam) else params[0]
    if isinstance(first, exp.Literal) and first.is_int:
        return int(first.this)
    return None
