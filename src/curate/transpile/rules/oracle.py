"""Rules for gold SQL written for Oracle, read with sqlglot's Oracle reader.

sqlglot carries NVL, NVL2, DECODE (NULL matching NULL), ADD_MONTHS, MONTHS_BETWEEN, EXTRACT,
MINUS and TO_DATE into DuckDB; these rules fix what it leaves meaning something else:

* SYSDATE, SYSTIMESTAMP, CURRENT_DATE and CURRENT_TIMESTAMP are the session's local date
  and time (``oracle_now``), so a gold reading them needs ``--today`` or is dropped;
* ``FROM DUAL`` is no FROM at all; ``(+)`` outer joins are ANSI joins;
* ``ROWNUM <= n`` over an ordered subquery is ``ORDER BY ... LIMIT n`` (``oracle_rownum``);
  any other ROWNUM picks rows in the order Oracle meets them and is refused;
* the empty string is NULL, so ``''`` is NULL and text a function makes empty is NULL,
  and ``||`` skips NULLs (``'a' || NULL`` is ``'a'``) (``oracle_empty_text_is_null``);
* a DATE has a time of day: ``date + n`` adds n days, ``date - date`` is a number of days
  (fractional with SYSDATE's time), a TIMESTAMP minus a date an INTERVAL as in DuckDB;
  ``TRUNC(date, 'MM')`` truncates with Oracle's format elements (``oracle_date_arithmetic``,
  ``oracle_trunc``);
* ``TO_CHAR(date, fmt)`` with numeric format elements only (``YYYY``, ``MM``, ``DD``,
  ``HH24``, ``MI``, ``SS``...), ``TO_NUMBER(text)`` without a format (``oracle_to_text``);
  month and day names (padded to a width in Oracle) and number formats are refused.

>>> import sqlglot
>>> from curate.transpile.rules.base import apply_rule
>>> tree = sqlglot.parse_one("SELECT 1 FROM DUAL", read="oracle")
>>> apply_rule(no_dual, tree)[0].sql("duckdb")
'SELECT 1'
"""

from __future__ import annotations

import re

from sqlglot import exp
from sqlglot.transforms import eliminate_join_marks

from curate.transpile.rules.base import (
    TranspileError,
    acts_on,
    is_date,
    is_datetime,
    is_fractional,
    is_integer,
    is_string,
    typed,
)


@acts_on(exp.CurrentTimestamp, exp.Systimestamp, exp.CurrentDate)
def now(node: exp.Expression) -> exp.Expression:
    """SYSDATE, SYSTIMESTAMP, CURRENT_DATE, CURRENT_TIMESTAMP: the local date and time.

    sqlglot writes SYSDATE as UTC; Oracle's CURRENT_DATE has a time of day too.

    >>> now(exp.CurrentTimestamp(sysdate=True)).sql("duckdb")
    'LOCALTIMESTAMP'
    """
    if isinstance(node, exp.CurrentTimestamp | exp.Systimestamp | exp.CurrentDate):
        local = typed(exp.Localtimestamp(), "TIMESTAMP")
        if not isinstance(node, exp.Systimestamp):
            local.meta[DATE_WITH_TIME] = True  # an Oracle DATE: date - date is a number
        return local
    return node


#: ``node.meta`` key of a DuckDB TIMESTAMP that is an Oracle DATE (SYSDATE's time of day).
DATE_WITH_TIME = "sqlgold_oracle_date"


def _oracle_date(node: exp.Expression) -> bool:
    """An Oracle DATE: a DuckDB DATE, or SYSDATE / CURRENT_DATE (a DATE with a time)."""
    return is_date(node) or bool(node.meta.get(DATE_WITH_TIME))


@acts_on(exp.Select)
def no_dual(node: exp.Expression) -> exp.Expression:
    """``SELECT ... FROM DUAL`` has no FROM in DuckDB.

    >>> import sqlglot
    >>> no_dual(sqlglot.parse_one("SELECT 1 + 1 AS two FROM dual", read="oracle")).sql("duckdb")
    'SELECT 1 + 1 AS two'
    """
    if not isinstance(node, exp.Select):
        return node
    source = node.args.get("from_")
    table = source.this if source is not None else None
    if (
        isinstance(table, exp.Table)
        and table.name.upper() == "DUAL"
        and not table.db
        and not node.args.get("joins")
    ):
        node = node.copy()
        node.set("from_", None)
    return node


@acts_on(exp.Select)
def join_marks(node: exp.Expression) -> exp.Expression:
    """``WHERE a.x = b.x(+)`` is ``a LEFT JOIN b ON a.x = b.x``.

    >>> import sqlglot
    >>> print(join_marks(sqlglot.parse_one(
    ...     "SELECT a.x FROM a, b WHERE a.x = b.x(+)", read="oracle")).sql("duckdb"))
    SELECT a.x FROM a LEFT JOIN b ON a.x = b.x
    """
    if isinstance(node, exp.Select) and any(
        c.args.get("join_mark") for c in node.find_all(exp.Column)
    ):
        return eliminate_join_marks(node.copy())
    return node


def _rownum(node: exp.Expression | None) -> int | None:
    """n when ``node`` is ``ROWNUM <= n``, ``ROWNUM < n + 1`` or ``ROWNUM = 1``."""
    if not isinstance(node, exp.LTE | exp.LT | exp.EQ):
        return None
    left, right = node.this, node.expression
    if not (isinstance(left, exp.Column) and left.name.upper() == "ROWNUM" and not left.table):
        return None
    if not (isinstance(right, exp.Literal) and right.is_int):
        return None
    value = int(right.this)
    if isinstance(node, exp.EQ):
        return 1 if value == 1 else None
    return value if isinstance(node, exp.LTE) else value - 1


@acts_on(exp.Column, exp.Select)
def rownum(node: exp.Expression) -> exp.Expression:
    """``SELECT ... FROM (... ORDER BY k) WHERE ROWNUM <= n`` is ``... ORDER BY k LIMIT n``.

    Any other ROWNUM picks rows in the order Oracle meets them: refused.

    >>> import sqlglot
    >>> print(rownum(sqlglot.parse_one(
    ...     "SELECT * FROM (SELECT x FROM t ORDER BY x DESC) WHERE ROWNUM <= 3",
    ...     read="oracle")).sql("duckdb"))
    SELECT * FROM (SELECT x FROM t ORDER BY x DESC NULLS FIRST) AS _rownum ORDER BY ... LIMIT 3
    """
    if isinstance(node, exp.Column) and node.name.upper() == "ROWNUM" and not node.table:
        select = node.find_ancestor(exp.Select)
        where = select.args.get("where") if select is not None else None
        if where is None or where.this is not node.parent:
            raise TranspileError(
                f"{node.parent.sql('oracle')}: ROWNUM numbers rows in the order Oracle meets them",
                rule="oracle_rownum",
            )
        return node
    if not isinstance(node, exp.Select):
        return node
    where = node.args.get("where")
    limit = _rownum(where.this) if where is not None else None
    if limit is None:
        return node
    source = node.args.get("from_")
    inner = source.this if source is not None else None
    body = inner.this if isinstance(inner, exp.Subquery) else None
    keys = _output_keys(body) if isinstance(body, exp.Select) else None
    if node.args.get("joins") or node.args.get("group") or node.args.get("distinct") or not keys:
        raise TranspileError(
            f"{where.sql('oracle')}: ROWNUM over rows that are not one ordered subquery",
            rule="oracle_rownum",
        )
    node = node.copy()
    inner = node.args["from_"].this
    alias = inner.alias or "_rownum"
    if not inner.alias:
        inner.set("alias", exp.TableAlias(this=exp.to_identifier(alias)))
    ordered = [
        exp.Ordered(
            this=exp.column(name, table=alias),
            desc=o.args.get("desc"),
            nulls_first=o.args.get("nulls_first"),
        )
        for name, o in keys
    ]
    node.set("where", None)
    node.set("order", exp.Order(expressions=ordered))
    node.set("limit", exp.Limit(expression=exp.Literal.number(limit)))
    return node


def _output_keys(body: exp.Select) -> list[tuple[str, exp.Ordered]] | None:
    """The ORDER BY of a subquery as (output column name, ordering), if each key is output."""
    order = body.args.get("order")
    if order is None or body.args.get("limit"):
        return None
    names = {p.unalias().sql("oracle").lower(): p.alias_or_name for p in body.expressions}
    outputs = {p.alias_or_name.lower() for p in body.expressions}
    keys = []
    for ordered in order.expressions:
        key = ordered.this
        text = key.sql("oracle").lower()
        if isinstance(key, exp.Column) and not key.table and key.name.lower() in outputs:
            keys.append((key.name, ordered))
        elif text in names:
            keys.append((names[text], ordered))
        else:
            return None
    return keys


_TEXT_MAKERS = (exp.Substring, exp.Trim, exp.Replace, exp.Pad)


@acts_on(exp.Literal, exp.DPipe, *_TEXT_MAKERS)
def empty_text_is_null(node: exp.Expression) -> exp.Expression:
    """Oracle has no empty string: ``''`` is NULL, ``||`` skips NULLs, and text a function
    makes empty is NULL.

    >>> a, b = typed(exp.column("a"), "VARCHAR"), typed(exp.column("b"), "VARCHAR")
    >>> empty_text_is_null(exp.DPipe(this=a, expression=b)).sql("duckdb")
    "NULLIF(CONCAT(a, b), '')"
    """
    if isinstance(node, exp.Literal) and node.is_string and node.this == "":
        return typed(exp.Null(), "VARCHAR")
    if isinstance(node, exp.DPipe):
        joined = exp.Anonymous(this="CONCAT", expressions=[node.this, node.expression])
        return typed(exp.Nullif(this=joined, expression=exp.Literal.string("")), "VARCHAR")
    if isinstance(node, _TEXT_MAKERS) and not isinstance(node.parent, exp.Nullif):
        return typed(exp.Nullif(this=node, expression=exp.Literal.string("")), "VARCHAR")
    return node


@acts_on(exp.Add, exp.Sub)
def date_arithmetic(node: exp.Expression) -> exp.Expression:
    """DATE + n adds days (a DuckDB TIMESTAMP needs an INTERVAL); DATE - DATE is a number of
    days, fractional when SYSDATE's time of day is in it (DuckDB: an INTERVAL).  A
    TIMESTAMP (the CDM's datetime columns) minus a date is an INTERVAL in both.

    >>> t, d = now(exp.CurrentTimestamp(sysdate=True)), typed(exp.column("d"), "DATE")
    >>> date_arithmetic(exp.Sub(this=t, expression=d)).sql("duckdb")
    'EPOCH(LOCALTIMESTAMP - d) / 86400.0'
    """
    if not isinstance(node, exp.Add | exp.Sub):
        return node
    left, right = node.this, node.expression
    if isinstance(node, exp.Sub) and _oracle_date(left) and _oracle_date(right):
        if is_date(left) and is_date(right):
            return node  # DuckDB: whole days, as Oracle for midnight DATEs
        seconds = exp.Anonymous(this="EPOCH", expressions=[node])
        return typed(exp.Div(this=seconds, expression=exp.Literal.number("86400.0")), "DOUBLE")
    if isinstance(node, exp.Sub) and is_datetime(right):
        return node  # an INTERVAL
    if isinstance(node, exp.Add) and is_datetime(right) and not is_datetime(left):
        left, right = right, left
    if not is_datetime(left):
        return node
    if is_fractional(right):
        raise TranspileError(
            f"{node.sql('oracle')}: a fraction of a day added to a date",
            rule="oracle_date_arithmetic",
        )
    if not is_integer(right):
        return node
    step = exp.DateAdd if isinstance(node, exp.Add) else exp.DateSub
    return typed(step(this=left, expression=right, unit=exp.var("DAY")), left.type)


#: TRUNC / ROUND format elements and DuckDB's DATE_TRUNC part for each.
_TRUNC_UNITS = {
    **dict.fromkeys(("DD", "DDD", "J"), "day"),
    **dict.fromkeys(("MM", "MON", "MONTH", "RM"), "month"),
    **dict.fromkeys(("YYYY", "YYY", "YY", "Y", "YEAR", "SYYYY", "SYEAR"), "year"),
    **dict.fromkeys(("Q",), "quarter"),
    **dict.fromkeys(("HH", "HH12", "HH24"), "hour"),
    **dict.fromkeys(("MI",), "minute"),
    **dict.fromkeys(("IW",), "week"),
}


@acts_on(exp.Anonymous, exp.DateTrunc)
def trunc(node: exp.Expression) -> exp.Expression:
    """TRUNC(date[, fmt]) with Oracle's format elements ('DD' by default).

    >>> d = typed(exp.column("d"), "DATE")
    >>> trunc(exp.DateTrunc(this=d, unit=exp.Literal.string("MM"))).sql("duckdb")
    "DATE_TRUNC('MONTH', d)"
    """
    if (
        isinstance(node, exp.Anonymous)
        and node.name.upper() == "TRUNC"
        and len(node.expressions) == 1
        and (is_date(node.expressions[0]) or is_datetime(node.expressions[0]))
    ):
        value = node.expressions[0]
        day = typed(exp.DateTrunc(this=value, unit=exp.var("DAY")), value.type)
        day.meta[DATE_WITH_TIME] = True  # Oracle's TRUNC gives a DATE
        return day
    if not isinstance(node, exp.DateTrunc):
        return node
    unit = node.args.get("unit")
    if not isinstance(unit, exp.Literal):
        return node
    part = _TRUNC_UNITS.get(unit.this.upper())
    if part is None:
        raise TranspileError(
            f"{node.sql('oracle')}: TRUNC to {unit.this!r} (weeks by the first day of the year "
            "or month, ...) has no DuckDB counterpart",
            rule="oracle_trunc",
        )
    new = exp.DateTrunc(this=node.this, unit=exp.var(part.upper()))
    new.meta[DATE_WITH_TIME] = True  # Oracle's TRUNC gives a DATE
    return typed(new, node.type) if node.type is not None else new


_NUMERIC_ELEMENTS = {
    "YYYY": "%Y",
    "YY": "%y",
    "MM": "%m",
    "DD": "%d",
    "DDD": "%j",
    "HH24": "%H",
    "HH12": "%I",
    "HH": "%I",
    "MI": "%M",
    "SS": "%S",
}
_ELEMENT = re.compile(r"YYYY|YY|MM|DDD|DD|HH24|HH12|HH|MI|SS|[-/.,: ]|\"[^\"]*\"", re.I)


def _strftime(fmt: str) -> str | None:
    """An Oracle format of numeric elements and separators as a strftime format."""
    out, at = [], 0
    while at < len(fmt):
        match = _ELEMENT.match(fmt, at)
        if match is None:
            return None
        token = match.group(0)
        if token.startswith('"'):
            out.append(token[1:-1].replace("%", "%%"))
        else:
            out.append(_NUMERIC_ELEMENTS.get(token.upper(), token))
        at = match.end()
    return "".join(out)


@acts_on(exp.ToNumber, exp.ToChar)
def to_text(node: exp.Expression) -> exp.Expression:
    """TO_CHAR(date, fmt) with numeric elements is STRFTIME; TO_NUMBER(text) a DOUBLE.

    >>> d = typed(exp.column("d"), "DATE")
    >>> to_text(exp.ToChar(this=d, format=exp.Literal.string("YYYY-MM"))).sql("duckdb")
    "STRFTIME(d, '%Y-%m')"
    """
    if isinstance(node, exp.ToNumber):
        if node.args.get("format") is not None or not is_string(node.this):
            raise TranspileError(
                f"{node.sql('oracle')}: TO_NUMBER with a format", rule="oracle_to_text"
            )
        return typed(exp.Cast(this=node.this, to=exp.DataType.build("DOUBLE")), "DOUBLE")
    if not isinstance(node, exp.ToChar):
        return node
    fmt = node.args.get("format")
    value = node.this
    pattern = _strftime(fmt.this) if isinstance(fmt, exp.Literal) and fmt.is_string else None
    if is_string(value) and fmt is None:
        return value
    if pattern is None or not (is_date(value) or is_datetime(value)):
        raise TranspileError(
            f"{node.sql('oracle')}: TO_CHAR is read only for a date with numeric format "
            "elements (names and number formats are padded and spelled by Oracle's settings)",
            rule="oracle_to_text",
        )
    return typed(exp.TimeToStr(this=value, format=exp.Literal.string(pattern)), "VARCHAR")
