"""DuckDB SQL as Spark SQL: the transpile, its fix-up rules, and the Spark guard.

Gold and predicted SQL are DuckDB SQL (the benchmark's dialect), already admitted by
the statement guard (:mod:`score.execution.guard`).  On Spark they run as sqlglot's Spark
translation with fix-ups where Spark SQL means something else (:func:`to_spark`), and
the translation is judged again by :func:`check_spark`, because Spark has no read-only
transaction to fall back on: anything that reaches it runs.

:func:`check_spark` admits one query (``SELECT``, a set operation of them) that

* reads only the CDM tables, in database ``cdm`` or unqualified, and its own CTEs:
  no other database or catalog, no file-path table (``parquet.`/path```, ``csv.``,
  ``text.``, ``json.``, ``orc.``, ``binaryFile.`` ...), no table-valued function such
  as ``read_files``;
* calls no function that reaches the JVM or the files it reads (``reflect``,
  ``java_method``, ``try_reflect``, ``input_file_name`` ...) and no function qualified
  by a database (a catalog UDF);
* holds no statement node: ``ADD JAR/FILE/ARCHIVE``, ``CREATE FUNCTION``, ``SET``,
  ``RESET``, ``CACHE``/``UNCACHE``, ``INSERT``, ``LOAD DATA``, ``MSCK``, DDL;
* multiplies no three relations without a join key (a cancelled product of three keeps
  the server's cores busy for as long as it runs:
  :mod:`score.execution.engines.spark_products`).

>>> to_spark("SELECT person_id FROM cdm.person ORDER BY year_of_birth")
'SELECT person_id FROM cdm.person ORDER BY year_of_birth NULLS LAST'
>>> check_spark("SELECT * FROM parquet.`/etc/passwd`", {"person"})
Traceback (most recent call last):
...
score.execution.result.QueryError: guard_rejected: Spark: table parquet.`/etc/passwd` is not a CDM table
>>> check_spark("SELECT reflect('java.lang.System', 'exit', '0')", {"person"})
Traceback (most recent call last):
...
score.execution.result.QueryError: guard_rejected: Spark: function reflect() reaches the JVM
"""  # noqa: E501 (doctest exception lines name the module)

from __future__ import annotations

from collections.abc import Collection

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from score.execution.engines.spark_products import unstoppable_product
from score.execution.guard import article, statements_of
from score.execution.result import QueryError

DATABASE = "cdm"

#: Spark functions that call into the JVM, reveal files or users, or touch the session.
JVM_FUNCTIONS = frozenset(
    {
        "reflect",
        "java_method",
        "try_reflect",
        "input_file_name",
        "input_file_block_start",
        "input_file_block_length",
        "current_user",
        "user",
        "session_user",
        "read_files",
        "from_avro",
        "to_avro",
        "from_protobuf",
        "to_protobuf",
    }
)

_ADMITTED = (exp.Select, exp.SetOperation, exp.Subquery)
_STATEMENTS = (
    exp.Insert,
    exp.Update,
    exp.Delete,
    exp.Merge,
    exp.Create,
    exp.Drop,
    exp.Alter,
    exp.TruncateTable,
    exp.Copy,
    exp.Set,
    exp.Command,
    exp.Use,
    exp.Cache,
    exp.Uncache,
    exp.LoadData,
    exp.Into,
    exp.Describe,
    exp.Transaction,
    exp.Commit,
    exp.Rollback,
)
_ALLOWED_SOURCES = (exp.Unnest, exp.Explode, exp.Lateral)


def to_spark(sql: str) -> str:
    """DuckDB SQL as Spark SQL, with the fix-up rules applied."""
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except (ParseError, TokenError) as e:
        raise QueryError("parse_error", f"cannot translate to Spark SQL: {_first(e)}") from None
    dates = _date_aliases(tree)
    for rule in FIXUPS:
        tree = tree.transform(rule, dates)
    return tree.sql("spark")


def _cdm_date_columns() -> frozenset[str]:
    """Column names that are DATE in every CDM table that has them."""
    from score.cdm.schema import CDM_TABLES

    types: dict[str, set[str]] = {}
    for columns in CDM_TABLES.values():
        for name, dtype, _ in columns:
            types.setdefault(name, set()).add(dtype)
    return frozenset(n for n, t in types.items() if t == {"DATE"})


_DATE_COLUMNS = _cdm_date_columns()


_DATE_KEEPING = (
    exp.Min,
    exp.Max,
    exp.AnyValue,
    exp.First,
    exp.Last,
    exp.FirstValue,
    exp.LastValue,
    exp.Lag,
    exp.Lead,
    exp.Coalesce,
)


def _is_date(node: exp.Expr, aliases: frozenset[str] = frozenset()) -> bool:
    """Whether ``node`` is known to be a DATE: a CDM DATE column, a name the query
    gave to a date, a cast to DATE, current_date, or min/max/lag/lead/coalesce (and
    a window over them) of a date."""
    if isinstance(node, exp.Paren | exp.Window | exp.Filter):
        return _is_date(node.this, aliases)
    if isinstance(node, exp.Cast):
        return node.to.is_type(exp.DataType.Type.DATE)
    if isinstance(node, exp.Column):
        name = node.name.lower()
        return name in _DATE_COLUMNS or name in aliases
    if isinstance(node, _DATE_KEEPING):
        return _is_date(node.this, aliases)
    return isinstance(node, exp.CurrentDate)


def _date_aliases(tree: exp.Expr) -> frozenset[str]:
    """Names the query gives to dates (``MIN(procedure_date) AS d``), to a fixpoint."""
    found: frozenset[str] = frozenset()
    while True:
        more = (
            frozenset(a.alias.lower() for a in tree.find_all(exp.Alias) if _is_date(a.this, found))
            | found
        )
        if more == found:
            return found
        found = more


def _datediff_days(end: exp.Expr, start: exp.Expr, dates: frozenset[str] = frozenset()) -> exp.Expr:
    as_date = [e.copy() if _is_date(e, dates) else exp.cast(e.copy(), "DATE") for e in (end, start)]
    return exp.Anonymous(this="DATEDIFF", expressions=as_date)


def _date_minus_date(node: exp.Expr, dates: frozenset[str]) -> exp.Expr:
    """DuckDB ``date - date`` is a number of days; in Spark it is an interval.  When
    both sides are known dates (:func:`_is_date`), the difference becomes
    ``DATEDIFF(end, start)``."""
    if isinstance(node, exp.Sub) and _is_date(node.left, dates) and _is_date(node.right, dates):
        return _datediff_days(node.left, node.right, dates)
    return node


def _format_string(node: exp.Expr, dates: frozenset[str]) -> exp.Expr:
    """DuckDB's ``format('{} to {}', a, b)`` is fmt-style; Spark's FORMAT_STRING is
    printf-style: each ``{}`` becomes ``%s`` (and a literal ``%`` becomes ``%%``)."""
    if isinstance(node, exp.Format) and isinstance(node.this, exp.Literal):
        text = node.this.name.replace("%", "%%").replace("{}", "%s")
        node = node.copy()
        node.set("this", exp.Literal.string(text))
    return node


def _regexp_flags(node: exp.Expr, dates: frozenset[str]) -> exp.Expr:
    """``regexp_matches(x, p, 'i')``: Spark's RLIKE takes no flags, so the flag goes
    into the pattern as ``(?i)`` (sqlglot drops it otherwise)."""
    if isinstance(node, exp.RegexpLike) and node.args.get("flag") is not None:
        flag = node.args["flag"]
        if isinstance(flag, exp.Literal) and set(flag.name) <= set("ismx"):
            pattern = exp.Concat(
                expressions=[exp.Literal.string(f"(?{flag.name})"), node.expression.copy()]
            )
            return exp.RegexpLike(this=node.this.copy(), expression=pattern)
    return node


def _year(e: exp.Expr) -> exp.Expr:
    return exp.Anonymous(this="YEAR", expressions=[e.copy()])


def _boundary_diff(node: exp.Expr, dates: frozenset[str]) -> exp.Expr:
    """DuckDB's ``date_diff(part, a, b)`` counts the part boundaries crossed (a birth on
    31 Dec and 1 Jan are one year apart); Spark's ``DATEDIFF(part, a, b)`` counts whole
    parts.  Year, quarter, month and day differences are rewritten as boundary counts."""
    if not isinstance(node, exp.DateDiff) or not node.args.get("date_part_boundary"):
        return node
    unit = (node.unit.name if node.unit else "DAY").upper()
    end, start = node.this, node.expression
    years = exp.Sub(this=_year(end), expression=_year(start))
    if unit == "YEAR":
        return exp.paren(years)
    if unit in ("MONTH", "QUARTER"):
        fn, per_year = ("MONTH", 12) if unit == "MONTH" else ("QUARTER", 4)
        parts = exp.Sub(
            this=exp.Anonymous(this=fn, expressions=[end.copy()]),
            expression=exp.Anonymous(this=fn, expressions=[start.copy()]),
        )
        scaled = exp.Mul(this=exp.paren(years), expression=exp.Literal.number(per_year))
        return exp.paren(exp.Add(this=scaled, expression=parts))
    if unit == "DAY":
        return _datediff_days(end, start, dates)
    return node


#: DuckDB date parts Spark's EXTRACT lacks or numbers differently, as Spark SQL
#: templates over the value ``{}``.
_PARTS = {
    "decade": "CAST(FLOOR(YEAR({}) / 10) AS BIGINT)",
    "century": "CAST(CEIL(YEAR({}) / 100) AS BIGINT)",
    "millennium": "CAST(CEIL(YEAR({}) / 1000) AS BIGINT)",
    "dow": "(DAYOFWEEK({}) - 1)",
    "dayofweek": "(DAYOFWEEK({}) - 1)",
    "isodow": "EXTRACT(DAYOFWEEK_ISO FROM {})",
    "doy": "DAYOFYEAR({})",
    "dayofyear": "DAYOFYEAR({})",
}


def _date_part(node: exp.Expr, dates: frozenset[str]) -> exp.Expr:
    """``date_part('decade', x)`` / ``EXTRACT(decade FROM x)`` and the other parts
    DuckDB has and Spark names or numbers differently (DuckDB's ``dow`` is 0 on
    Sunday, Spark's DAYOFWEEK 1)."""
    if isinstance(node, exp.Extract):
        part, value = node.this.name.lower(), node.expression
    elif (
        isinstance(node, exp.Anonymous)
        and str(node.this).lower() in ("date_part", "datepart")
        and len(node.expressions) == 2
        and isinstance(node.expressions[0], exp.Literal)
    ):
        part, value = node.expressions[0].name.lower(), node.expressions[1]
        if part not in _PARTS:
            return exp.Extract(this=exp.var(part.upper()), expression=value.copy())
    else:
        return node
    template = _PARTS.get(part)
    if template is None:
        return node
    return sqlglot.parse_one(template.format(value.sql("spark")), read="spark")


#: Each rule takes a node and the names the query gives to dates.
FIXUPS = (_date_part, _boundary_diff, _date_minus_date, _format_string, _regexp_flags)


def check_spark(sql: str, tables: Collection[str]) -> exp.Expr:
    """Admit ``sql`` (Spark SQL) or raise ``guard_rejected``; ``tables`` are the CDM
    table names the database holds."""
    try:
        statements = statements_of(sqlglot.parse(sql, read="spark"))
    except (ParseError, TokenError) as e:
        raise QueryError("parse_error", f"Spark: {_first(e)}") from None
    if len(statements) != 1:
        raise _refuse(f"{len(statements)} statements; only one SELECT is allowed")
    tree = statements[0]
    if not isinstance(tree, _ADMITTED):
        statement = article(f"{type(tree).__name__.upper()} statement")
        raise _refuse(f"{statement}; only a SELECT is allowed")
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    known = {t.lower() for t in tables}
    for node in tree.walk():
        if isinstance(node, _STATEMENTS):
            raise _refuse(f"{article(type(node).__name__.upper())} inside the query")
        if isinstance(node, exp.Table):
            _check_table(node, known, ctes)
        elif isinstance(node, exp.Func):
            _check_function(node)
    product = unstoppable_product(tree)
    if product is not None:
        raise _refuse(
            f"{product}: it cannot end within the time limit, and Spark cannot stop it once "
            "it runs (its tasks would hold the server's cores)"
        )
    return tree


def _check_table(node: exp.Table, known: set[str], ctes: set[str]) -> None:
    if not isinstance(node.this, exp.Identifier):
        if isinstance(node.this, _ALLOWED_SOURCES):
            return
        raise _refuse(f"table source {node.this.sql('spark')} is not a CDM table")
    name = node.name.lower()
    db = node.db.lower() if node.db else ""
    if node.catalog or db not in ("", DATABASE) or name not in (known | ctes if not db else known):
        raise _refuse(f"table {node.sql('spark')} is not a CDM table")


def _check_function(node: exp.Func) -> None:
    if isinstance(node, exp.Anonymous):
        name = str(node.this).lower()
    else:
        name = node.sql_name().lower()
    if name in JVM_FUNCTIONS:
        raise _refuse(f"function {name}() reaches the JVM")
    parent = node.parent
    if isinstance(parent, exp.Dot):
        raise _refuse(f"qualified function {parent.sql('spark')} is not a built-in")


def _refuse(message: str) -> QueryError:
    return QueryError("guard_rejected", f"Spark: {message}")


def _first(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__
