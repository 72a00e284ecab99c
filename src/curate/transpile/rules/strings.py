"""Rules for text: ``+`` concatenation, LEN, lengths of VARCHAR(n), LIKE character classes.

>>> from sqlglot import parse_one
>>> from curate.transpile.rules.annotate import annotate
>>> from curate.transpile.rules.base import apply_rule
>>> tree = annotate(parse_one("SELECT 'a' + 'b'", read="tsql"), "tsql")
>>> apply_rule(plus_concatenation, tree)[0].sql("duckdb")
"SELECT 'a' || 'b'"
"""

from __future__ import annotations

import datetime as dt

from sqlglot import exp

from curate.transpile.rules.base import (
    TranspileError,
    acts_on,
    int_literal,
    is_datetime,
    is_fractional,
    is_integer,
    is_string,
    typed,
)
from curate.transpile.rules.tsql_dialect import int_param

#: The length of VARCHAR / CHAR in CAST and CONVERT when none is given.
DEFAULT_LENGTH = 30
_FIXED_WIDTH = (exp.DType.CHAR, exp.DType.NCHAR)
_BOUNDED = (exp.DType.VARCHAR, exp.DType.NVARCHAR, *_FIXED_WIDTH)


def _is_null(node: exp.Expression) -> bool:
    return isinstance(node, exp.Null)


@acts_on(exp.Add)
def plus_concatenation(node: exp.Expression) -> exp.Expression:
    """``+`` of two strings concatenates (DuckDB ``||``); string + number adds numbers.

    >>> a, b = typed(exp.column("a"), "VARCHAR"), typed(exp.column("b"), "VARCHAR")
    >>> plus_concatenation(exp.Add(this=a, expression=b)).sql("duckdb")
    'a || b'
    >>> n = typed(exp.Literal.number(1), "INT")
    >>> plus_concatenation(exp.Add(this=a.copy(), expression=n)).sql("duckdb")
    'CAST(a AS INT) + 1'
    """
    if not isinstance(node, exp.Add):
        return node
    left, right = node.this, node.expression
    if (is_string(left) or _is_null(left)) and (is_string(right) or _is_null(right)):
        if _is_null(left) and _is_null(right):
            return node
        return typed(exp.DPipe(this=left, expression=right), "VARCHAR")
    number = right if is_string(left) else left if is_string(right) else None
    if number is None or not (is_integer(number) or is_fractional(number)):
        return node
    to = number.type.copy()
    if is_string(left):
        return typed(exp.Add(this=typed(exp.Cast(this=left, to=to), to), expression=right), to)
    return typed(exp.Add(this=left, expression=typed(exp.Cast(this=right, to=to), to)), to)


@acts_on(exp.Length)
def len_ignores_trailing_spaces(node: exp.Expression) -> exp.Expression:
    """LEN does not count trailing spaces: LENGTH(RTRIM(x, ' ')).

    >>> len_ignores_trailing_spaces(exp.Length(this=exp.column("x"))).sql("duckdb")
    "LENGTH(RTRIM(x, ' '))"
    """
    if not isinstance(node, exp.Length) or isinstance(node.this, exp.Trim):
        return node
    arg = node.this
    trimmed = exp.Trim(this=arg, expression=exp.Literal.string(" "), position="TRAILING")
    return typed(exp.Length(this=typed(trimmed, "VARCHAR")), "BIGINT")


@acts_on(exp.Cast)
def varchar_length_truncates(node: exp.Expression) -> exp.Expression:
    """CAST(text AS VARCHAR(n)) keeps the first n characters; CHAR(n) also pads to n.

    DuckDB ignores the length of VARCHAR(n).  In CAST and CONVERT a missing length is 30
    (so ``CAST(concept_name AS VARCHAR)`` keeps 30 characters); ``VARCHAR(MAX)`` keeps all.

    >>> text = typed(exp.column("s"), "VARCHAR")
    >>> varchar_length_truncates(exp.cast(text, "VARCHAR(4)")).sql("duckdb")
    'LEFT(s, 4)'
    >>> varchar_length_truncates(exp.cast(text, "VARCHAR")).sql("duckdb")
    'LEFT(s, 30)'
    """
    if not isinstance(node, exp.Cast) or node.to.this not in _BOUNDED or not is_string(node.this):
        return node
    size = int_param(node.to) if node.to.expressions else DEFAULT_LENGTH
    if size is None:
        return node
    if _formatted_length(node.this) <= size and node.to.this not in _FIXED_WIDTH:
        return node.this  # a formatted date always fits
    value: exp.Expression = typed(
        exp.Left(this=node.this, expression=exp.Literal.number(size)), "VARCHAR"
    )
    if node.to.this in _FIXED_WIDTH:
        value = exp.Pad(
            this=value,
            expression=exp.Literal.number(size),
            fill_pattern=exp.Literal.string(" "),
            is_left=False,
        )
    return typed(value, "VARCHAR")


#: The longest text of each integer type (sign included).
_INTEGER_WIDTH = {
    exp.DType.TINYINT: 3,
    exp.DType.UTINYINT: 3,
    exp.DType.SMALLINT: 6,
    exp.DType.INT: 11,
    exp.DType.BIGINT: 20,
}


def _widest_text(value: exp.Expression) -> int | None:
    """The longest text ``value`` can print as, if its type says (a count has no sign)."""
    dtype = value.type
    if dtype is None:
        return None
    if dtype.this in _INTEGER_WIDTH:
        return _INTEGER_WIDTH[dtype.this] - (1 if isinstance(value, exp.Count) else 0)
    if dtype.this == exp.DType.DECIMAL:
        precision = int_param(dtype) if dtype.expressions else 18
        scale_param = dtype.expressions[1:2]
        scale = int(scale_param[0].name) if scale_param and scale_param[0].name.isdigit() else 0
        if precision is not None:
            return precision + 1 + (1 if scale else 0)
    return None


@acts_on(exp.Cast)
def number_text_overflow(node: exp.Expression) -> exp.Expression:
    """CAST(number AS VARCHAR(n) / CHAR(n)) as SQL Server prints it when it does not fit.

    An integer too long for VARCHAR(n) / CHAR(n) is ``*``; for NVARCHAR(n) / NCHAR(n),
    and a DECIMAL for any of them, SQL Server fails (arithmetic overflow), so the query
    does too.  CHAR(n) pads to n.  (DuckDB ignores n: CAST(1974 AS VARCHAR(2)) is '1974'.)

    >>> value = typed(exp.column("year_of_birth"), "INT")
    >>> print(number_text_overflow(exp.cast(value, "VARCHAR(2)")).sql("duckdb"))
    CASE WHEN LENGTH(CAST(year_of_birth AS TEXT)) > 2 THEN '*' ELSE CAST(year_of_birth AS ...
    """
    if not isinstance(node, exp.Cast) or node.to.this not in _BOUNDED:
        return node
    value = node.this
    if not (is_integer(value) or is_fractional(value)) or value.type.this == exp.DType.BIT:
        return node
    size = int_param(node.to) if node.to.expressions else DEFAULT_LENGTH
    widest = _widest_text(value)
    if size is None or (widest is not None and widest <= size and node.to.this not in _FIXED_WIDTH):
        return node

    def text() -> exp.Expression:
        return typed(exp.cast(value.copy(), "VARCHAR"), "VARCHAR")

    if is_integer(value) and node.to.this in (exp.DType.VARCHAR, exp.DType.CHAR):
        too_long: exp.Expression = exp.Literal.string("*")
    else:
        message = (
            f"SQL Server: arithmetic overflow converting {value.type.sql('tsql')} to "
            f"{node.to.sql('tsql')}"
        )
        too_long = exp.Anonymous(this="ERROR", expressions=[exp.Literal.string(message)])
    length = exp.Anonymous(this="LENGTH", expressions=[text()])  # not T-SQL's LEN
    longer = exp.GT(this=length, expression=exp.Literal.number(size))
    result: exp.Expression = exp.Case(ifs=[exp.If(this=longer, true=too_long)], default=text())
    if node.to.this in _FIXED_WIDTH:
        result = exp.Pad(
            this=result,
            expression=exp.Literal.number(size),
            fill_pattern=exp.Literal.string(" "),
            is_left=False,
        )
    return typed(result, "VARCHAR")


def _formatted_length(node: exp.Expression) -> int:
    """The longest text STRFTIME(x, fmt) can give for a literal fmt, else a large number."""
    fmt = node.args.get("format") if isinstance(node, exp.TimeToStr) else None
    if not isinstance(fmt, exp.Literal):
        return 1 << 30
    widest = dt.datetime(2000, 9, 28, 23, 59, 59, 999999)  # September: the longest %B
    return len(widest.strftime(fmt.this.replace("%g", "000").replace("%-", "%")))


@acts_on(exp.Cast)
def redundant_text_casts(node: exp.Expression) -> exp.Expression:
    """CAST(text AS TEXT) changes nothing; sqlglot adds it around LEN/LEFT/RIGHT arguments.

    >>> value = typed(exp.column("s"), "VARCHAR")
    >>> redundant_text_casts(exp.cast(value, "TEXT")).sql("duckdb")
    's'
    """
    if isinstance(node, exp.Cast) and node.to.this == exp.DType.TEXT and is_string(node.this):
        if not node.to.expressions:
            return node.this
    return node


@acts_on(exp.National)
def national_strings(node: exp.Expression) -> exp.Expression:
    """N'text' is plain text in DuckDB (every VARCHAR is Unicode), and is typed as text.

    >>> from sqlglot import parse_one
    >>> national_strings(parse_one("N'abc'", read="tsql")).sql("duckdb")
    "'abc'"
    """
    if isinstance(node, exp.National):
        return exp.Literal.string(node.name)
    return node


@acts_on(exp.DataType)
def varchar_max(node: exp.Expression) -> exp.Expression:
    """VARCHAR(MAX) / NVARCHAR(MAX) is DuckDB's VARCHAR (which rejects MAX).

    >>> varchar_max(exp.DataType.build("NVARCHAR(MAX)", dialect="tsql")).sql("duckdb")
    'TEXT'
    """
    if isinstance(node, exp.DataType) and node.this in exp.DataType.TEXT_TYPES:
        if node.expressions and int_param(node) is None:
            return exp.DataType.build("VARCHAR")
    return node


@acts_on(exp.Cast)
def text_of_number_or_time(node: exp.Expression) -> exp.Expression:
    """Refuse CAST(number AS VARCHAR) whose text is not proven, and CAST(datetime AS VARCHAR).

    FLOAT, REAL and NUMERIC quotients whose SQL Server type is proven have been written
    as SQL Server writes them (``float_text``, ``decimal_quotient_text``); what is left
    typed as a fraction here is a number whose SQL Server type cannot be told (a DOUBLE
    for sqlglot that SQL Server could type NUMERIC, which prints differently).  SQL Server
    prints DATETIME as ``mon dd yyyy hh:miAM``, which DuckDB does not.  (DATE prints as
    ISO in both, and integers and decimals print the same.)

    >>> value = typed(exp.column("x"), "DOUBLE")
    >>> text_of_number_or_time(exp.cast(value, "VARCHAR"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    curate.transpile.rules.base.TranspileError: [transpile] CAST(x AS VARCHAR): SQL Server ...
    """
    if not isinstance(node, exp.Cast) or node.to.this not in exp.DataType.TEXT_TYPES:
        return node
    value = node.this
    kind = value.type.this if value.type is not None else None
    if kind in (exp.DType.FLOAT, exp.DType.DOUBLE):
        raise TranspileError(
            f"{node.sql('tsql')}: SQL Server writes FLOAT with 6 significant digits and NUMERIC"
            " with its scale, and this value's SQL Server type cannot be told"
        )
    if is_datetime(value):
        raise TranspileError(
            f"{node.sql('tsql')}: SQL Server prints DATETIME as 'mon dd yyyy hh:miAM';"
            " give CONVERT a style"
        )
    return node


@acts_on(exp.StrPosition)
def charindex_start(node: exp.Expression) -> exp.Expression:
    """CHARINDEX(s, x, start) with start <= 1 searches from the first character.

    >>> from sqlglot import parse_one
    >>> charindex_start(parse_one("CHARINDEX('a', x, 0)", read="tsql")).sql("duckdb")
    "STRPOS(x, 'a')"
    """
    if isinstance(node, exp.StrPosition):
        start = int_literal(node.args.get("position"))
        if start is not None and start <= 1:
            new = node.copy()
            new.set("position", None)
            return typed(new, "INT")
    return node


@acts_on(exp.Like)
def like_bracket_classes(node: exp.Expression) -> exp.Expression:
    """LIKE patterns with ``[...]`` character classes become an anchored regular expression.

    DuckDB's LIKE reads ``[`` as an ordinary character.

    >>> from sqlglot import parse_one
    >>> like_bracket_classes(parse_one("x LIKE '[A-C]%'", read="tsql")).sql("duckdb")
    "REGEXP_MATCHES(x, '^(?s:[A-C].*)$')"
    """
    if not isinstance(node, exp.Like) or not isinstance(node.expression, exp.Literal):
        return node
    pattern = node.expression.this
    if not node.expression.is_string or "[" not in pattern:
        return node
    if isinstance(node.parent, exp.Escape):
        raise TranspileError(f"{node.sql('tsql')}: LIKE with [ ] and ESCAPE is not supported")
    regex = "^(?s:" + like_to_regex(pattern) + ")$"
    match = exp.RegexpLike(this=node.this, expression=exp.Literal.string(regex))
    if node.args.get("negate"):  # sqlglot reads NOT LIKE as LIKE with negate=True
        return typed(exp.Not(this=match), "BOOLEAN")
    return typed(match, "BOOLEAN")


def like_to_regex(pattern: str) -> str:
    """A SQL Server LIKE pattern as an RE2 regular expression (unanchored).

    >>> like_to_regex("a_[^0-9]%")
    'a.[^0-9].*'
    """
    out: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "%":
            out.append(".*")
        elif char == "_":
            out.append(".")
        elif char == "[":
            end = pattern.find("]", i + 2)
            if end < 0:
                raise TranspileError(f"LIKE pattern {pattern!r}: unclosed [")
            out.append(_char_class(pattern[i + 1 : end]))
            i = end
        else:
            out.append(_escape(char))
        i += 1
    return "".join(out)


def _char_class(body: str) -> str:
    negate = body.startswith("^") and len(body) > 1
    members = body[1:] if negate else body
    if len(members) == 1 and not negate:
        return _escape(members)
    escaped = "".join("\\" + c if c in "\\]^[" else c for c in members)
    return "[" + ("^" if negate else "") + escaped + "]"


def _escape(char: str) -> str:
    return "\\" + char if not char.isalnum() and char not in " _" else char
