"""SQL Server as sqlgold reads it: sqlglot's T-SQL with the date-part table and FLOAT fixed.

Two things are lost once sqlglot's T-SQL parser has built the tree, so they are fixed
while reading (AST builders, not text edits):

* Date parts.  SQL Server's table has ``y``/``dy`` = dayofyear, ``w``/``dw`` = weekday,
  ``hh``, ``mi``/``n``, ``ss``/``s``, ``ms``, ``mcs``.  sqlglot 30.30 reads ``DATEADD(y, ...)``
  as a year, ``DATEPART(w, ...)`` as a week, and passes ``hh``/``mi``/``ss`` through as
  units DuckDB does not know; ``DATENAME`` becomes a format string in which ``day`` is
  zero-padded and ``quarter`` is literal text.  Here every date part is mapped with the
  full table before the node is built; DATENAME of a numeric part becomes the text of
  DATEPART, as SQL Server defines it.
* FLOAT.  SQL Server's FLOAT is FLOAT(53), a 64-bit DOUBLE; only REAL and FLOAT(1..24)
  are 32-bit.  sqlglot reads FLOAT and REAL as the same type, which DuckDB writes REAL.

sqlglot's compiled build (``sqlglotc``) does not let a parser be subclassed, so neither
fix is a parser override: the tokens are marked before sqlglot's own T-SQL parser reads
them (the five date functions renamed so they parse as plain calls with their arguments
untouched, the keyword FLOAT given a type token T-SQL never produces), and the marked
nodes are built after it.  The same code runs on the pure and the compiled build.

Nodes built here carry ``meta["sqlgold_rule"]`` so :func:`curate.transpile.to_duckdb.transpile`
can report the parse rule as applied.

>>> from sqlglot import parse_one
>>> parse_one("SELECT DATEADD(y, 1, d), CAST(x AS FLOAT)", read=SqlgoldTSQL).sql("duckdb")
'SELECT d + INTERVAL 1 DAY, CAST(x AS DOUBLE)'
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from sqlglot import exp
from sqlglot.dialects.dialect import DialectType
from sqlglot.dialects.tsql import TSQL
from sqlglot.errors import ParseError
from sqlglot.helper import seq_get
from sqlglot.tokens import Token, TokenType

from curate.transpile.rules.base import TranspileError

if TYPE_CHECKING:
    from typing import Unpack

    from sqlglot._typing import ParserArgs

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


def build_datepart(args: list) -> exp.Expression:
    """DATEPART(part, date): EXTRACT with SQL Server's date parts."""
    return extract_part(date_part(seq_get(args, 0), "DATEPART"), seq_get(args, 1), "DATEPART")


def build_datename(args: list) -> exp.Expression:
    """DATENAME(part, date): month and weekday names, else the text of DATEPART."""
    part = date_part(seq_get(args, 0), "DATENAME")
    value = seq_get(args, 1)
    if part in ("MONTH", "WEEKDAY"):
        fmt = "%B" if part == "MONTH" else "%A"
        return _mark(exp.TimeToStr(this=value, format=exp.Literal.string(fmt)))
    return _mark(exp.cast(extract_part(part, value, "DATENAME"), exp.DType.VARCHAR))


def _integer_of(arg: exp.Expression | None) -> exp.DataType | None:
    """SQL Server's result type of ROUND / AVG of an integer: the integer (at least INT)."""
    if isinstance(arg, exp.Distinct) and len(arg.expressions) == 1:
        arg = arg.expressions[0]
    if arg is None or arg.type is None or arg.type.this not in exp.DataType.INTEGER_TYPES:
        return None
    if arg.type.this in (exp.DType.BIGINT, exp.DType.INT):
        return arg.type
    return exp.DataType.build("INT")


def _annotate_keeps_integer(self, expression: exp.Expression) -> exp.Expression:
    """ROUND(int, n) and AVG(int) are integers in SQL Server (sqlglot types them DOUBLE)."""
    kind = _integer_of(expression.this)
    return self._set_type(expression, kind if kind is not None else exp.DType.DOUBLE)


def _annotate_convert(self, expression: exp.Expression) -> exp.Expression:
    """CONVERT(type, x [, style]) is of its target type."""
    target = expression.this
    if isinstance(target, exp.DataType):
        return self._set_type(expression, target)
    return self._set_type(expression, exp.DType.UNKNOWN)


#: The functions read here, and their builders (from the call's arguments as parsed).
_BUILDERS = {
    "DATEADD": build_dateadd,
    "DATEDIFF": _build_datediff(big_int=False),
    "DATEDIFF_BIG": _build_datediff(big_int=True),
    "DATENAME": build_datename,
    "DATEPART": build_datepart,
}
#: Prefix of a renamed date function: it parses as an anonymous call, built after the parse.
_RENAMED = "SQLGOLD_"
#: The token FLOAT becomes: a type T-SQL never reads, so each one after the parse was FLOAT.
_FLOAT_MARK = TokenType.UDOUBLE
_FLOAT_TYPE = exp.DType.UDOUBLE


def mark_tokens(tokens: list[Token]) -> list[Token]:
    """The five date functions renamed and the keyword FLOAT marked, in place.

    A call after a dot (``dbo.DATEADD(...)``) is a user's function and stays as it is.

    >>> [t.text for t in mark_tokens(TSQL().tokenize("SELECT DATEPART(dw, d)"))][:2]
    ['SELECT', 'SQLGOLD_DATEPART']
    """
    for i, token in enumerate(tokens):
        kind = token.token_type
        if kind == TokenType.VAR:
            name = token.text.upper()
            if (
                name in _BUILDERS
                and i + 1 < len(tokens)
                and tokens[i + 1].token_type == TokenType.L_PAREN
                and (i == 0 or tokens[i - 1].token_type != TokenType.DOT)
            ):
                token.text = _RENAMED + name
        elif kind == TokenType.FLOAT and token.text.upper() == "FLOAT":
            token.token_type = _FLOAT_MARK
    return tokens


def build_marked(tree: exp.Expr) -> exp.Expr:
    """The marked nodes of a parsed tree built as SQL Server means them (innermost first).

    As sqlglot's parser treats a function it knows: the call's arguments are checked
    (DATEPART, a parser of its own there, is not) and the node keeps the call's position.
    """
    marked = [
        node
        for node in tree.walk(bfs=False)
        if (isinstance(node, exp.Anonymous) and str(node.this).startswith(_RENAMED))
        or (isinstance(node, exp.DataType) and node.this == _FLOAT_TYPE)
    ]
    for node in reversed(marked):
        built = _float_type(node) if isinstance(node, exp.DataType) else _built_call(node)
        if node is tree:
            return built
        node.replace(built)
    return tree


def _built_call(node: exp.Anonymous) -> exp.Expression:
    name = str(node.this)[len(_RENAMED) :]
    args = list(node.expressions)
    built = _BUILDERS[name](args)
    if name != "DATEPART":
        errors = built.error_messages(args)
        if errors:
            raise ParseError.new(
                errors[0],
                line=node.meta.get("line"),
                col=node.meta.get("col"),
                highlight=name,
            )
        built.meta.update({k: v for k, v in node.meta.items() if k != META_KEY})
    built.add_comments(node.comments)
    return built


class SqlgoldTSQL(TSQL):
    """sqlglot's T-SQL dialect with SQL Server's date-part table and 64-bit FLOAT.

    Its type rules (used to annotate gold SQL) are sqlglot's T-SQL ones, plus ROUND and
    AVG of an integer typed as that integer, as SQL Server returns them, and CONVERT
    typed as its target.
    """

    EXPRESSION_METADATA = {
        **TSQL.EXPRESSION_METADATA,
        exp.Round: {"annotator": _annotate_keeps_integer},
        exp.Avg: {"annotator": _annotate_keeps_integer},
        exp.Convert: {"annotator": _annotate_convert},
    }

    def tokenize(self, sql: str, dialect: DialectType = None) -> list[Token]:
        return mark_tokens(super().tokenize(sql, dialect))

    def parse(self, sql: str, **opts: Unpack[ParserArgs]) -> list[exp.Expr | None]:
        return [
            build_marked(tree) if tree is not None else None for tree in super().parse(sql, **opts)
        ]

    def parse_tokens(self, tokens: list[Token], sql: str) -> list[exp.Expr | None]:
        """The statements of already tokenized ``sql`` (tokens from :meth:`tokenize`, or a
        run of them), built as :meth:`parse` builds them."""
        return [
            build_marked(tree) if tree is not None else None
            for tree in self.parser().parse(tokens, sql)
        ]


def _float_type(node: exp.DataType) -> exp.DataType:
    """FLOAT(n): DOUBLE unless n <= 24 (then REAL)."""
    size = int_param(node)
    kind = exp.DType.FLOAT if size is not None and size <= 24 else exp.DType.DOUBLE
    node = exp.DataType(this=kind)
    node.meta[META_KEY] = FLOAT_RULE
    return node


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
