"""The text of a number as SQL Server writes it: FLOAT and REAL, and NUMERIC quotients.

FLOAT and REAL (SQL Server's CAST and CONVERT documentation, "float and real styles"):

====== ==========================================================================
style  output
====== ==========================================================================
0      at most 6 significant digits, scientific notation when appropriate (CAST's)
1      always 8 digits, always scientific notation
2      always 16 digits, always scientific notation
3      always 17 digits: every distinct value gets a distinct text
====== ==========================================================================

"Other values are processed as 0"; 126, 128 and 129 are legacy styles and refused here.
These are C's ``%.6g``, ``%.7e``, ``%.15e`` and ``%.16e`` of the value with an exponent of
at least three digits (SQL Server's ``1.23457e+006``, ``1.0000000e-001``,
``1.000000000000000e+000``, ``1.0000000000000001e-001``); a REAL is written from its
exact value, widened (style 2 of REAL 0.1 is ``1.000000014901161e-001``).  DuckDB's
``printf`` formats like C, so the rule is ``printf`` with the exponent padded.

NUMERIC: DuckDB prints a DECIMAL as SQL Server does (every decimal of its scale), but it
divides DECIMALs in DOUBLE.  SQL Server divides exactly and truncates the quotient to the
result's scale (``1.0 / 3`` is ``0.333333``, NUMERIC(7, 6)), so ``CAST(a / b AS VARCHAR)``
of NUMERIC operands is computed here in integers: ``trunc(a * 10^k / b)`` written with the
quotient's scale.  Only a division of division-free operands, with a result precision
of at most 38 (no precision loss), is rewritten; anything else is refused.

A text too long for VARCHAR(n) or NVARCHAR(n) is an arithmetic overflow in SQL Server,
so the query fails; CHAR(n) pads.

>>> from sqlglot import parse_one
>>> from curate.transpile.rules.annotate import annotate
>>> from curate.transpile.rules.base import apply_rule
>>> from curate.transpile.rules.tsql_dialect import SqlgoldTSQL
>>> tree = annotate(parse_one("SELECT CAST(CAST(x AS FLOAT) AS VARCHAR)", read=SqlgoldTSQL), "tsql")
>>> print(apply_rule(float_text, tree)[0].sql("duckdb"))
SELECT REGEXP_REPLACE(PRINTF('%.6g', CAST(x AS DOUBLE)), 'e([+-])([0-9]{2})$', 'e\\10\\2', 'g')
"""

from __future__ import annotations

from sqlglot import exp

from curate.transpile.rules.base import TranspileError, acts_on, typed
from curate.transpile.rules.number_types import MAX_PRECISION, NumberType, number_type
from curate.transpile.rules.tsql_dialect import int_param

#: ``node.meta`` key set by ``convert_styles`` on a CAST that was CONVERT with a style.
FLOAT_STYLE = "sqlgold_float_style"

#: printf format of each float style, and the longest text it can give (sign included).
FLOAT_STYLES: dict[int, tuple[str, int]] = {
    0: ("%.6g", 13),
    1: ("%.7e", 15),
    2: ("%.15e", 23),
    3: ("%.16e", 24),
}
LEGACY_STYLES = frozenset({126, 128, 129})
_TEXT = frozenset(exp.DataType.TEXT_TYPES)
_FIXED = (exp.DType.CHAR, exp.DType.NCHAR)
_BOUNDED = (exp.DType.VARCHAR, exp.DType.NVARCHAR, *_FIXED)
DEFAULT_LENGTH = 30


def float_style(style: int | None) -> int:
    """The float style SQL Server applies for ``style`` (other values are 0).

    >>> float_style(None), float_style(2), float_style(101)
    (0, 2, 0)
    """
    if style in LEGACY_STYLES:
        raise TranspileError(f"CONVERT style {style} of FLOAT is a legacy style", rule="float_text")
    return style if style in FLOAT_STYLES else 0


def _to_text(node: exp.Expression) -> bool:
    return isinstance(node, exp.Cast) and node.to.this in _TEXT


def _text(
    value: exp.Expression, to: exp.DataType, widest: int, what: str, safe: bool = False
) -> exp.Expression:
    """``value`` (text) within the declared length of ``to``: overflow fails (NULL for
    TRY_CONVERT), CHAR pads."""
    size = (int_param(to) if to.expressions else DEFAULT_LENGTH) if to.this in _BOUNDED else None
    if size is None or (widest <= size and to.this not in _FIXED):
        return typed(value, "VARCHAR")
    result: exp.Expression = value
    if widest > size:
        message = f"SQL Server: arithmetic overflow converting {what} to {to.sql('tsql')}"
        too_long: exp.Expression = (
            exp.Null()
            if safe
            else exp.Anonymous(this="ERROR", expressions=[exp.Literal.string(message)])
        )
        length = exp.Anonymous(this="LENGTH", expressions=[value.copy()])
        longer = exp.GT(this=length, expression=exp.Literal.number(size))
        result = exp.Case(ifs=[exp.If(this=longer, true=too_long)], default=value)
    if to.this in _FIXED:
        result = exp.Pad(
            this=result,
            expression=exp.Literal.number(size),
            fill_pattern=exp.Literal.string(" "),
            is_left=False,
        )
    return typed(result, "VARCHAR")


@acts_on(exp.Cast)
def float_text(node: exp.Expression) -> exp.Expression:
    """CAST / CONVERT of a FLOAT or REAL to text, as SQL Server writes it (see module doc).

    >>> value = typed(exp.Cast(this=exp.column("x"), to=exp.DataType.build("DOUBLE")), "DOUBLE")
    >>> cast = exp.Cast(this=value, to=exp.DataType.build("VARCHAR(8)"))
    >>> cast.meta[FLOAT_STYLE] = 1
    >>> print(float_text(cast).sql("duckdb"))  # doctest: +ELLIPSIS
    CASE WHEN LENGTH(REGEXP_REPLACE(PRINTF('%.7e', ...)) > 8 THEN ERROR('SQL Server: ...') ...
    """
    if not _to_text(node):
        return node
    kind = number_type(node.this)
    if kind is None or not kind.approximate:
        return node
    fmt, widest = FLOAT_STYLES[float_style(node.meta.get(FLOAT_STYLE))]
    double = node.this
    if kind.kind == "real" or not (double.type and double.type.this == exp.DType.DOUBLE):
        double = exp.Cast(this=double, to=exp.DataType.build("DOUBLE"))
    printed = exp.Anonymous(this="PRINTF", expressions=[exp.Literal.string(fmt), double])
    padded = exp.RegexpReplace(
        this=printed,
        expression=exp.Literal.string("e([+-])([0-9]{2})$"),
        replacement=exp.Literal.string("e\\10\\2"),
    )
    return _text(padded, node.to, widest, str(kind), isinstance(node, exp.TryCast))


@acts_on(exp.Cast)
def decimal_quotient_text(node: exp.Expression) -> exp.Expression:
    """CAST(a / b AS VARCHAR) of NUMERIC operands: the quotient truncated to its scale.

    >>> from sqlglot import parse_one
    >>> from curate.transpile.rules.annotate import annotate
    >>> from curate.transpile.rules.base import apply_rule
    >>> tree = annotate(parse_one("SELECT CAST(1.0 / 3 AS VARCHAR)", read="tsql"), "tsql")
    >>> import duckdb
    >>> sql = apply_rule(decimal_quotient_text, tree)[0].sql("duckdb")
    >>> duckdb.connect().execute(sql).fetchall()
    [('0.333333',)]
    """
    if not _to_text(node):
        return node
    kind = number_type(node.this)
    if kind is None or kind.kind != "decimal" or not kind.divides:
        return node
    division = node.this
    while isinstance(division, exp.Paren | exp.Alias):
        division = division.this
    left = number_type(division.left) if isinstance(division, exp.Div) else None
    right = number_type(division.right) if isinstance(division, exp.Div) else None
    if left is None or right is None or left.divides or right.divides:
        raise TranspileError(
            f"{node.sql('tsql')}: SQL Server writes this NUMERIC with its own scale and "
            "DuckDB divides in DOUBLE; only a single division is computed exactly",
            rule="decimal_quotient_text",
        )
    if kind.precision > MAX_PRECISION:
        raise TranspileError(
            f"{node.sql('tsql')}: the quotient's precision {kind.precision} is over 38 and SQL "
            "Server reduces its scale",
            rule="decimal_quotient_text",
        )
    text = _quotient_text(division.left, left, division.right, right, kind.scale)
    return _text(text, node.to, kind.precision + 2, str(kind), isinstance(node, exp.TryCast))


def _hugeint(value: exp.Expression, kind: NumberType, *, wide: bool) -> exp.Expression:
    """``value`` times 10^scale, exactly: an INT128 (``wide``) or the integer it is."""
    decimal = kind.as_decimal()
    scaled = value.copy()
    if not isinstance(scaled, exp.Column | exp.Literal | exp.Paren | exp.Func):
        scaled = exp.Paren(this=scaled)
    if decimal.scale:
        widened = exp.Cast(this=scaled, to=exp.DataType.build(f"DECIMAL(38, {decimal.scale})"))
        scaled = exp.Mul(this=widened, expression=_power(decimal.scale))
    elif not wide:
        return scaled  # an integer: DuckDB divides an INT128 by it exactly
    return exp.Cast(this=scaled, to=exp.DataType.build("INT128"))


def _power(k: int) -> exp.Expression:
    """10^k: an integer literal (DuckDB multiplies DECIMAL and INT128 by it exactly)."""
    if k <= 18:
        return exp.Literal.number(10**k)
    return exp.Cast(this=exp.Literal.number(10**k), to=exp.DataType.build("INT128"))


def _quotient_text(
    left: exp.Expression, ltype: NumberType, right: exp.Expression, rtype: NumberType, scale: int
) -> exp.Expression:
    """The text of trunc(left / right, scale): the integer quotient scaled back exactly
    (DuckDB multiplies DECIMALs exactly and writes them with every decimal of the scale)."""
    k = scale + rtype.as_decimal().scale - ltype.as_decimal().scale
    numerator = exp.Mul(this=_hugeint(left, ltype, wide=True), expression=_power(k))
    divisor = _hugeint(right, rtype, wide=False)
    quotient = exp.Paren(this=exp.IntDiv(this=numerator, expression=divisor))
    whole = exp.Cast(this=quotient, to=exp.DataType.build("DECIMAL(38, 0)"))
    unit = exp.Cast(
        this=exp.Literal.number("0." + "0" * (scale - 1) + "1"),
        to=exp.DataType.build(f"DECIMAL({scale + 1}, {scale})"),
    )
    return typed(exp.cast(exp.Mul(this=whole, expression=unit), "VARCHAR"), "VARCHAR")
