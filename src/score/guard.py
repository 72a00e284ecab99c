"""The statement guard: admit exactly one read-only SELECT, reject the rest by name.

Model output is hostile.  The guard is the first of four layers (see
:mod:`score.executor` for the others) and works on the sqlglot AST of the query:

* exactly one statement (a comment cannot hide a second one: sqlglot splits on the
  ``;`` that follows it);
* the statement is a ``SELECT`` (``WITH ... SELECT`` and DuckDB's ``FROM t`` form
  included) or a set operation of SELECTs (``UNION``, ``INTERSECT``, ``EXCEPT``);
* nothing inside it writes or configures (``SELECT ... INTO``, a data-modifying CTE),
  and it calls no table function that reads files or runs SQL text (``read_csv``,
  ``glob``, ``query`` ...) and names no file as a table (``FROM 'x.csv'``).

>>> check_statement("SELECT 1").sql()
'SELECT 1'
>>> check_statement("SELECT 1; DROP VIEW cdm.person")
Traceback (most recent call last):
...
score.result.QueryError: guard_rejected: 2 statements; only one SELECT is allowed
>>> check_statement("DROP VIEW cdm.person")
Traceback (most recent call last):
...
score.result.QueryError: guard_rejected: a DROP statement; only a read-only SELECT is allowed
"""

from __future__ import annotations

import logging
from functools import lru_cache

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from .result import QueryError

_ADMITTED_ROOTS = (exp.Select, exp.SetOperation, exp.Subquery)

#: Nodes that write, configure or leave the query; never admitted anywhere in the tree.
_FORBIDDEN_NODES: tuple[type[exp.Expression], ...] = (
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
    exp.Pragma,
    exp.Command,
    exp.Attach,
    exp.Detach,
    exp.Install,
    exp.Use,
    exp.Transaction,
    exp.Commit,
    exp.Rollback,
    exp.Into,
)

#: Table functions that read files, reach other databases or run SQL text.
FORBIDDEN_FUNCTIONS: frozenset[str] = frozenset(
    {
        "read_csv",
        "read_csv_auto",
        "read_parquet",
        "parquet_scan",
        "parquet_metadata",
        "parquet_schema",
        "read_json",
        "read_json_auto",
        "read_json_objects",
        "read_ndjson",
        "read_ndjson_auto",
        "read_ndjson_objects",
        "read_text",
        "read_blob",
        "read_xlsx",
        "sniff_csv",
        "glob",
        "query",
        "query_table",
        "iceberg_scan",
        "delta_scan",
        "postgres_scan",
        "postgres_query",
        "sqlite_scan",
        "mysql_query",
        "duckdb_secrets",
    }
)

_STATEMENT_NAMES = {
    exp.Into: "a SELECT ... INTO",
    exp.TruncateTable: "a TRUNCATE statement",
    exp.Command: "a command",
}


def _describe(node: exp.Expression) -> str:
    for cls, name in _STATEMENT_NAMES.items():
        if isinstance(node, cls):
            return name
    return f"a {type(node).__name__.upper()} statement"


def parse_statements(sql: str, dialect: str = "duckdb") -> list[exp.Expression]:
    """Parse ``sql`` with sqlglot, dropping empty statements; raise ParseError."""
    logger = logging.getLogger("sqlglot")
    level = logger.level
    logger.setLevel(logging.ERROR)  # "falling back to Command" is a verdict, not a warning
    try:
        return [s for s in sqlglot.parse(sql, read=dialect) if s is not None]
    finally:
        logger.setLevel(level)


def check_statement(sql: str, dialect: str = "duckdb") -> exp.Expression:
    """The parsed tree of ``sql`` if it is one read-only SELECT, else a QueryError.

    Raises ``QueryError("parse_error")`` when sqlglot cannot parse the text (the
    executor then asks DuckDB's own parser before giving that verdict) and
    ``QueryError("guard_rejected")`` with the reason otherwise.

    Verdicts on admitted queries are cached by text (a gold runs several times during
    curation and scoring), so the tree returned is shared: copy it before changing it.
    """
    return _checked(sql, dialect)


@lru_cache(maxsize=4096)
def _checked(sql: str, dialect: str) -> exp.Expression:
    if not sql or not sql.strip():
        raise QueryError("guard_rejected", "empty query")
    try:
        statements = parse_statements(sql, dialect)
    except (ParseError, TokenError) as e:
        raise QueryError("parse_error", str(e).splitlines()[0]) from None
    if not statements:
        raise QueryError("guard_rejected", "no statement (only comments or semicolons)")
    if len(statements) > 1:
        raise QueryError(
            "guard_rejected", f"{len(statements)} statements; only one SELECT is allowed"
        )
    (tree,) = statements
    if not isinstance(tree, _ADMITTED_ROOTS):
        if isinstance(tree, exp.Column | exp.Identifier | exp.Literal):
            raise QueryError("guard_rejected", "not a SELECT statement")
        raise QueryError("guard_rejected", f"{_describe(tree)}; only a read-only SELECT is allowed")
    for node in tree.walk():
        if isinstance(node, _FORBIDDEN_NODES):
            raise QueryError(
                "guard_rejected", f"{_describe(node)} inside the query; only reading is allowed"
            )
        if isinstance(node, exp.Func):
            name = _function_name(node)
            if name in FORBIDDEN_FUNCTIONS:
                raise QueryError("guard_rejected", f"function {name}() reads outside the database")
        if isinstance(node, exp.Table) and isinstance(node.this, exp.Identifier):
            if node.this.quoted and _looks_like_path(node.this.name) and not node.args.get("db"):
                raise QueryError("guard_rejected", f"'{node.this.name}' names a file, not a table")
    return tree


def _function_name(node: exp.Func) -> str:
    if isinstance(node, exp.Anonymous):
        return str(node.this).lower()
    return node.sql_name().lower() if hasattr(node, "sql_name") else type(node).__name__.lower()


def _looks_like_path(name: str) -> bool:
    return "/" in name or "\\" in name or "." in name or ":" in name
