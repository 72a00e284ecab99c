"""The statement guard: admit exactly one read-only SELECT, reject the rest by name.

Model output is hostile.  The guard is the first of the layers described in
:mod:`score.execution.executor` and works on the sqlglot AST of the query:

* exactly one statement (a comment cannot hide a second one: sqlglot splits on the
  ``;`` that follows it; a comment, whitespace or ``;`` after the one statement is no
  second statement, :func:`statements_of`);
* the statement is a ``SELECT`` (``WITH ... SELECT`` and DuckDB's ``FROM t`` form
  included) or a set operation of SELECTs (``UNION``, ``INTERSECT``, ``EXCEPT``);
* nothing inside it writes or configures (``SELECT ... INTO``, a data-modifying CTE);
* it calls no function that reads files, runs SQL text, reveals the database's
  paths or settings, or changes state that outlives the query (:func:`refused_function`;
  names are compared unquoted and case-folded, so ``"Read_Text"`` is ``read_text``);
* it reads no catalog view that reveals paths or settings and names no file as a table
  (:func:`refused_table`).

The same name rules judge the names an engine's own parser reports
(:func:`check_references`), for queries sqlglot cannot read.  SQL longer than a limit is
refused before anything parses it (:func:`check_size`), and a query nested deeper than
sqlglot can follow is a parse error, never a crash.

>>> check_statement("SELECT 1").sql()
'SELECT 1'
>>> check_statement("SELECT 1; DROP VIEW cdm.person")
Traceback (most recent call last):
...
score.execution.result.QueryError: guard_rejected: 2 statements; only one SELECT is allowed
>>> check_statement("DROP VIEW cdm.person")
Traceback (most recent call last):
...
score.execution.result.QueryError: guard_rejected: a DROP statement; only a read-only SELECT is allowed
>>> check_statement("SELECT * FROM \\"Read_Text\\"('x')")
Traceback (most recent call last):
...
score.execution.result.QueryError: guard_rejected: function read_text() reads outside the database
"""  # noqa: E501 (doctest exception lines name the module)

from __future__ import annotations

import logging
from collections.abc import Iterable
from functools import lru_cache

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from score.execution.parse_position import plain_sqlglot_message
from score.execution.result import QueryError
from score.sqlglot_quiet import quiet

_ADMITTED_ROOTS = (exp.Select, exp.SetOperation, exp.Subquery)

#: Nodes that write, configure or leave the query; never admitted anywhere in the tree.
_FORBIDDEN_NODES: tuple[type[exp.Expr], ...] = (
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

#: Functions that read files, reach other databases or run SQL text.
FORBIDDEN_FUNCTIONS: frozenset[str] = frozenset(
    {
        "read_csv",
        "read_csv_auto",
        "read_single_csv_file",
        "read_parquet",
        "read_single_parquet_file",
        "parquet_scan",
        "parquet_metadata",
        "parquet_file_metadata",
        "parquet_full_metadata",
        "parquet_kv_metadata",
        "parquet_schema",
        "parquet_page_index",
        "parquet_bloom_probe",
        "read_json",
        "read_json_auto",
        "read_json_objects",
        "read_json_objects_auto",
        "read_single_json_file",
        "read_ndjson",
        "read_ndjson_auto",
        "read_ndjson_objects",
        "read_text",
        "read_blob",
        "read_xlsx",
        "read_duckdb",
        "sniff_csv",
        "glob",
        "query",
        "query_table",
        "json_execute_serialized_sql",
        "iceberg_scan",
        "delta_scan",
        "postgres_scan",
        "postgres_query",
        "sqlite_scan",
        "mysql_query",
    }
)

#: Functions that reveal the database's paths, the settings or the secrets, or change
#: state that outlives a query's rolled-back transaction (the random seed, logging,
#: profiling, checkpoints, registered resources).
PRIVILEGED_FUNCTIONS: frozenset[str] = frozenset(
    {
        "current_setting",
        "getvariable",
        "getenv",
        "setseed",
        "which_secret",
        "checkpoint",
        "force_checkpoint",
        "enable_logging",
        "disable_logging",
        "truncate_duckdb_logs",
        "enable_profiling",
        "disable_profiling",
        "add_grammar_extension",
        "remove_grammar_extension",
        "register_external_resource",
        "register_external_resource_type",
        "create_external_resource",
        "destroy_external_resource",
        "deregister_external_resource",
    }
)

#: Name prefixes of DuckDB's catalog functions and views (``duckdb_databases()`` shows
#: the database file's path, ``duckdb_settings()`` the home directory,
#: ``pragma_database_list`` both): refused as functions and as tables.
CATALOG_PREFIXES: tuple[str, ...] = ("duckdb_", "pragma_")

#: Catalog views refused as tables besides the prefixed ones.
PRIVILEGED_TABLES: frozenset[str] = frozenset({"pg_settings"})

_STATEMENT_NAMES = {
    exp.Into: "a SELECT ... INTO",
    exp.TruncateTable: "a TRUNCATE statement",
    exp.Command: "a command",
}


def _describe(node: exp.Expr) -> str:
    for cls, name in _STATEMENT_NAMES.items():
        if isinstance(node, cls):
            return name
    return article(f"{type(node).__name__.upper()} statement")


def article(words: str) -> str:
    """``words`` after "a" or "an", as they are said.

    >>> article("ATTACH statement"), article("DROP statement")
    ('an ATTACH statement', 'a DROP statement')
    """
    return f"{'an' if words[:1].upper() in 'AEIOU' and words[:1] else 'a'} {words}"


def refused_function(name: str) -> str | None:
    """Why a call of function ``name`` is refused, or None if it may run.

    >>> refused_function("READ_CSV"), refused_function("upper")
    ('function read_csv() reads outside the database', None)
    >>> refused_function("duckdb_databases")
    'function duckdb_databases() reveals the database catalog, paths or settings'
    """
    name = name.lower()
    if name in FORBIDDEN_FUNCTIONS:
        return f"function {name}() reads outside the database"
    if name == "getenv":
        return "function getenv() reads the query process's environment (paths, user names)"
    if name in PRIVILEGED_FUNCTIONS or name.startswith(CATALOG_PREFIXES):
        if name.startswith(CATALOG_PREFIXES) or name in ("current_setting", "getvariable"):
            return f"function {name}() reveals the database catalog, paths or settings"
        return f"function {name}() changes state that outlives the query"
    return None


def refused_table(name: str, *, quoted: bool = True) -> str | None:
    """Why reading the table or view ``name`` is refused, or None.

    >>> refused_table("duckdb_settings"), refused_table("person")
    ('duckdb_settings reveals the database catalog, paths or settings', None)
    >>> refused_table("data.csv")
    "'data.csv' names a file, not a table"
    """
    lowered = name.lower()
    if lowered.startswith(CATALOG_PREFIXES) or lowered in PRIVILEGED_TABLES:
        return f"{lowered} reveals the database catalog, paths or settings"
    if quoted and _looks_like_path(name):
        return f"'{name}' names a file, not a table"
    return None


def check_size(sql: str, max_bytes: int) -> None:
    """Refuse SQL longer than ``max_bytes`` (UTF-8) before anything parses it.

    >>> check_size("SELECT 1", 100)
    >>> check_size("SELECT " + "1+" * 60 + "1", 100)
    Traceback (most recent call last):
    ...
    score.execution.result.QueryError: guard_rejected: the SQL text is 128 bytes, over the limit of 100 bytes
    """  # noqa: E501 (a doctest exception line names the module)
    size = len(sql) if len(sql) * 4 <= max_bytes else len(sql.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise QueryError(
            "guard_rejected",
            f"the SQL text is {size:,} bytes, over the limit of {max_bytes:,} bytes",
        )


def check_references(names: Iterable[tuple[str, str]]) -> None:
    """Apply the name rules to ``(kind, name)`` pairs (kind ``function`` or ``table``;
    others are ignored) that an engine's own parser read from a query."""
    for kind, name in names:
        if kind == "function":
            reason = refused_function(name)
        elif kind == "table":
            reason = refused_table(name)
        else:
            continue
        if reason is not None:
            raise QueryError("guard_rejected", reason)


def silence_sqlglot() -> None:
    """Drop sqlglot's log records in this process (a query process): what it logs on a
    prediction ("... Falling back to parsing as a 'Command'", "unsupported ...") is
    already in the verdict the reply carries, and is never a line on the user's stderr
    (with no handler set up, Python would print it raw, under ``-q`` too)."""
    logger = logging.getLogger("sqlglot")
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
    logger.addHandler(logging.NullHandler())
    logger.propagate = False


def statements_of(parsed: Iterable[exp.Expr | None]) -> list[exp.Expr]:
    """The statements of a sqlglot parse: what holds only whitespace, a ``;`` or a
    comment (sqlglot's ``Semicolon``, as after ``SELECT 1; -- note``) is none.

    >>> [type(s).__name__ for s in statements_of(sqlglot.parse("SELECT 1; -- note"))]
    ['Select']
    """
    return [s for s in parsed if s is not None and not isinstance(s, exp.Semicolon)]


def parse_statements(sql: str, dialect: str = "duckdb") -> list[exp.Expr]:
    """Parse ``sql`` with sqlglot, dropping empty statements; raise ParseError."""
    with quiet():  # "falling back to Command" is a verdict, not a warning
        return statements_of(sqlglot.parse(sql, read=dialect))


#: Verdicts on admitted queries are cached for texts up to this length only: a parse
#: tree takes about a hundred times its text, so the cache stays under ~60 MB.
CACHED_TEXT_CHARS = 8_000
_CACHE_ENTRIES = 64


def check_statement(sql: str, dialect: str = "duckdb", *, cached: bool = True) -> exp.Expr:
    """The parsed tree of ``sql`` if it is one read-only SELECT, else a QueryError.

    Raises ``QueryError("parse_error")`` when sqlglot cannot parse the text (also when
    it nests deeper than sqlglot can follow) and ``QueryError("guard_rejected")`` with
    the reason otherwise.

    Verdicts on short admitted queries are cached by text (a gold runs several times
    during curation), so the tree returned may be shared: copy it before changing it.
    With ``cached`` off the text is parsed anew and the tree is the caller's own (a
    model's prediction, seen once: caching it would only cost memory).
    """
    if cached and len(sql) <= CACHED_TEXT_CHARS:
        return _checked_cached(sql, dialect)
    return _checked(sql, dialect)


def _checked(sql: str, dialect: str) -> exp.Expr:
    if not sql or not sql.strip():
        raise QueryError("guard_rejected", "empty query")
    try:
        statements = parse_statements(sql, dialect)
    except (ParseError, TokenError) as e:
        raise QueryError("parse_error", plain_sqlglot_message(str(e).splitlines()[0])) from None
    except RecursionError:
        raise QueryError("parse_error", "nested too deeply for the SQL parser") from None
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
            reason = refused_function(_function_name(node))
            if reason is not None:
                raise QueryError("guard_rejected", reason)
        if isinstance(node, exp.Table) and isinstance(node.this, exp.Identifier):
            ident = node.this
            # a quoted name with a dot is a file only when unqualified ("FROM 'x.csv'")
            reason = refused_table(ident.name, quoted=ident.quoted and not node.args.get("db"))
            if reason is not None:
                raise QueryError("guard_rejected", reason)
    return tree


_checked_cached = lru_cache(maxsize=_CACHE_ENTRIES)(_checked)


def _function_name(node: exp.Func) -> str:
    """A function's name as DuckDB resolves it: unquoted and case-folded."""
    if isinstance(node, exp.Anonymous):
        this = node.this
        return (this.name if isinstance(this, exp.Identifier) else str(this)).lower()
    return node.sql_name().lower() if hasattr(node, "sql_name") else type(node).__name__.lower()


def _looks_like_path(name: str) -> bool:
    return "/" in name or "\\" in name or "." in name or ":" in name
