"""DuckDB SQL as Spark SQL: the transpile, its fix-up rules, and the Spark guard.

Gold and predicted SQL are DuckDB SQL (the benchmark's dialect), already admitted by
the statement guard (:mod:`score.guard`).  On Spark they run as sqlglot's Spark
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
  ``RESET``, ``CACHE``/``UNCACHE``, ``INSERT``, ``LOAD DATA``, ``MSCK``, DDL.

>>> to_spark("SELECT person_id FROM cdm.person ORDER BY year_of_birth")
'SELECT person_id FROM cdm.person ORDER BY year_of_birth NULLS LAST'
>>> check_spark("SELECT * FROM parquet.`/etc/passwd`", {"person"})
Traceback (most recent call last):
...
score.result.QueryError: guard_rejected: Spark: table parquet.`/etc/passwd` is not a CDM table
>>> check_spark("SELECT reflect('java.lang.System', 'exit', '0')", {"person"})
Traceback (most recent call last):
...
score.result.QueryError: guard_rejected: Spark: function reflect() reaches the JVM
"""

from __future__ import annotations

from collections.abc import Collection

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from ..result import QueryError

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
    exp.Insert, exp.Update, exp.Delete, exp.Merge, exp.Create, exp.Drop, exp.Alter,
    exp.TruncateTable, exp.Copy, exp.Set, exp.Command, exp.Use, exp.Cache, exp.Uncache,
    exp.LoadData, exp.Into, exp.Describe, exp.Transaction, exp.Commit, exp.Rollback,
)
_ALLOWED_SOURCES = (exp.Unnest, exp.Explode, exp.Lateral)


def to_spark(sql: str) -> str:
    """DuckDB SQL as Spark SQL, with the fix-up rules applied."""
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except (ParseError, TokenError) as e:
        raise QueryError("parse_error", f"cannot translate to Spark SQL: {_first(e)}") from None
    for rule in FIXUPS:
        tree = tree.transform(rule)
    return tree.sql("spark")


def _date_minus_date(node: exp.Expression) -> exp.Expression:
    """DuckDB ``date - date`` is a number of days; in Spark it is an interval.  When
    both sides are casts to DATE (the only form the type is known), use DATEDIFF."""
    if isinstance(node, exp.Sub):
        left, right = node.left, node.right
        if _is_date(left) and _is_date(right):
            return exp.DateDiff(this=left, expression=right, unit=exp.var("DAY"))
    return node


def _is_date(node: exp.Expression) -> bool:
    if isinstance(node, exp.Cast):
        return node.to.is_type(exp.DataType.Type.DATE)
    return isinstance(node, exp.CurrentDate | exp.DateAdd | exp.DateSub)


FIXUPS = (_date_minus_date,)


def check_spark(sql: str, tables: Collection[str]) -> exp.Expression:
    """Admit ``sql`` (Spark SQL) or raise ``guard_rejected``; ``tables`` are the CDM
    table names the database holds."""
    try:
        statements = [s for s in sqlglot.parse(sql, read="spark") if s is not None]
    except (ParseError, TokenError) as e:
        raise QueryError("parse_error", f"Spark: {_first(e)}") from None
    if len(statements) != 1:
        raise _refuse(f"{len(statements)} statements; only one SELECT is allowed")
    tree = statements[0]
    if not isinstance(tree, _ADMITTED):
        raise _refuse(f"a {type(tree).__name__.upper()} statement; only a SELECT is allowed")
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    known = {t.lower() for t in tables}
    for node in tree.walk():
        if isinstance(node, _STATEMENTS):
            raise _refuse(f"a {type(node).__name__.upper()} inside the query")
        if isinstance(node, exp.Table):
            _check_table(node, known, ctes)
        elif isinstance(node, exp.Func):
            _check_function(node)
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
