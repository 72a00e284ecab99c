"""The collation check's executor: the same data under a case-insensitive collation.

SQL Server's default collation ignores case; curation runs a gold whose transpile warns
about text comparison, grouping or sorting again under such a collation
(:func:`curate.verify.semantics.collation_drop`).  Each engine has its own way:

* DuckDB: the same file with ``SET default_collation = 'nocase'``;
* PostgreSQL: the twin schema ``<schema>_nocase`` that ``sqlgold db load`` builds
  (:mod:`curate.database.nocase_schema`: the tables as views whose text columns are
  under a nondeterministic ICU collation).  PostgreSQL 15 refuses LIKE, regular
  expressions and substring searches under a nondeterministic collation, where DuckDB's
  NOCASE makes them ignore case too; the gold's PostgreSQL SQL says that instead
  (:func:`case_insensitive_searches`);
* other engines (Spark), or a PostgreSQL CDM loaded without the twin: none, and the
  collation warnings stay unresolved.
"""

from __future__ import annotations

import threading
from dataclasses import replace

from sqlglot import exp

from curate.database.nocase_schema import nocase_schema
from score.execution.engines.postgres_sql import transpile_to_postgres
from score.execution.executor import Executor
from score.execution.guard import parse_statements
from score.execution.result import QueryError, QueryResult

_BINARY = "C"


def _binary(node: exp.Expression) -> exp.Expression:
    """``node COLLATE "C"``: out of the nondeterministic collation (an explicit one wins)."""
    return exp.Collate(this=node.copy(), expression=exp.to_identifier(_BINARY, quoted=True))


def case_insensitive_searches(sql: str) -> str:
    """PostgreSQL ``sql`` with its searches ignoring case as DuckDB's NOCASE makes them,
    on text that may be under a nondeterministic collation: ``LIKE`` is ``ILIKE``, a
    regular expression match ``~*``, ``STRPOS`` compares lower case, each on text taken
    out of the collation.

    >>> print(case_insensitive_searches("SELECT 1 FROM t WHERE x NOT LIKE 'a%'"))
    SELECT 1 FROM t WHERE x COLLATE "C" NOT ILIKE 'a%'
    """
    (tree,) = parse_statements(sql, "postgres")
    for like in list(tree.find_all(exp.Like, exp.ILike)):
        like.replace(_searching(exp.ILike, like))
    for match in list(tree.find_all(exp.RegexpLike)):
        match.replace(_searching(exp.RegexpILike, match))
    for pos in list(tree.find_all(exp.StrPosition)):
        for key in ("this", "substr"):
            arg = pos.args.get(key)
            if arg is not None:
                pos.set(key, exp.Lower(this=_binary(arg)))
    return tree.sql("postgres")


def _searching(kind: type[exp.Expression], node: exp.Expression) -> exp.Expression:
    """``node`` as a ``kind`` search (every argument kept: NOT, ESCAPE, flags) on its
    text taken out of the collation."""
    copy = node.copy()
    args = {k: v for k, v in copy.args.items() if k in kind.arg_types and v is not None}
    args["this"] = _binary(copy.this)
    return kind(**args)


def nocase_available(executor: Executor) -> bool:
    """Whether the collation check can run on ``executor``'s database."""
    if executor.engine == "duckdb":
        return True
    if executor.dialect != "postgres":
        return False
    twin = nocase_schema(executor.schema or "cdm").replace("'", "''")
    found = executor.try_execute(
        "SELECT count(*) FROM pg_catalog.pg_class AS c JOIN pg_catalog.pg_namespace AS n "
        f"ON n.oid = c.relnamespace WHERE n.nspname = '{twin}' AND c.relname = 'person' "
        "AND has_table_privilege(c.oid, 'SELECT')",
        dialect="postgres",
    )
    return isinstance(found, QueryResult) and found.rows() == [(1,)]


class NocaseExecutor:
    """Runs the base executor's SQL under a case-insensitive collation; opened when the
    first gold needs the check (most need none, and opening costs a query process:
    ``sqlgold verify`` of a plain pair never pays it)."""

    def __init__(self, executor: Executor) -> None:
        self._base = executor
        self._opened: Executor | None = None
        self._opening = threading.Lock()  # records are checked on two threads

    def _open(self) -> Executor:
        base = self._base
        if base.engine == "duckdb":
            settings = replace(base.settings, collation="nocase")
            return Executor(base.db_path, base.schema, settings, sql_dialect=base.sql_dialect)
        twin = nocase_schema(base.schema or "cdm")
        return Executor(base.db_path, twin, base.settings, sql_dialect=base.sql_dialect)

    def try_execute(self, sql: str) -> QueryResult | QueryError:
        with self._opening:
            if self._opened is None:
                self._opened = self._open()
        if self._base.engine == "duckdb":
            return self._opened.try_execute(sql)
        try:
            read = self._base.sql_dialect or "postgres"
            pg_sql = sql if read == "postgres" else transpile_to_postgres(sql, read)
            pg_sql = case_insensitive_searches(pg_sql)
        except QueryError as e:
            return e
        except Exception as e:  # sqlglot cannot read its own PostgreSQL text back
            return QueryError("parse_error", f"cannot read as postgres: {e}"[:300])
        return self._opened.try_execute(pg_sql, dialect="postgres")

    def close(self) -> None:
        if self._opened is not None:
            self._opened.close()
            self._opened = None


def open_nocase(executor: Executor, enabled: bool) -> NocaseExecutor | None:
    """The collation check's executor, or None when it is off or cannot run here."""
    if not enabled or not nocase_available(executor):
        return None
    return NocaseExecutor(executor)
