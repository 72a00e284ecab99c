"""The engine seam: what sqlgold needs from a database, and nothing more.

An :class:`Engine` is one database opened read-only inside a sandbox worker process
(:mod:`score.execution.processes.sandbox`).  It runs one already-guarded query at a time under a
deadline, a row cap and a result-size cap, streams the result to Arrow, classifies its own errors as
:class:`~score.execution.result.QueryError` kinds, and leaves nothing behind for the next query.
Engine-independent checks (the statement guard, the SQL size limit, the fixed today)
happen before a query reaches it (:mod:`score.execution.statement`).

Each engine is a module: :mod:`score.execution.engines.duckdb` (an OMOP CDM DuckDB file) and
:mod:`score.execution.engines.postgres` (a schema of a PostgreSQL database, by URL);
:mod:`score.execution.engines.spark` (a Spark Connect server, ``sc://host:port``);
:func:`open_engine` picks the engine for a database.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from score.execution.result import QueryResult
from score.execution.settings import ExecutorSettings


@dataclass(frozen=True)
class Limits:
    """What one query may take: a deadline (``time.monotonic()`` seconds), rows, bytes."""

    deadline: float | None
    max_rows: int
    max_bytes: int
    timeout_seconds: float


@dataclass(frozen=True)
class Reference:
    """A name a query refers to, as the engine's own parser read it: ``kind`` is
    ``function``, ``table`` or ``column`` (an unqualified column name, which may be a
    keyword such as ``CURRENT_DATE``); ``schema`` is empty when not qualified."""

    kind: str
    name: str
    schema: str = ""


class Engine(Protocol):
    """One database opened read-only; every method may raise a QueryError."""

    name: str
    dialect: str  # sqlglot's name of the SQL dialect the engine runs
    schema: str  # the schema of the database holding the CDM tables
    tables: Mapping[str, str]  # CDM table name -> the real table name

    def stored_fingerprint(self) -> str | None:
        """The content fingerprint stored in the database, if any."""

    def compute_fingerprint(self) -> str:
        """The content fingerprint, computed from every CDM table."""

    def check(self, sql: str) -> None:
        """The engine's own parser must agree: exactly one read-only SELECT."""

    def check_ahead(self, tree: Any) -> bool:
        """Do now what :meth:`run` would check, if that check reads nothing but
        ``tree`` (sqlglot's parse of the SQL in the engine's dialect): True when done, so
        a :meth:`run` of that SQL in another process may leave its check off; False when
        the check needs the engine itself (its own parser, or a translation) at run."""

    def references(self, sql: str) -> list[Reference] | None:
        """Every function and table ``sql`` names, by the engine's own parser (None if
        the engine cannot tell); used when sqlglot cannot read a query."""

    def run(
        self, sql: str, limits: Limits, *, check: bool = True, tree: Any = None
    ) -> QueryResult:
        """Run guarded SQL and return its result; nothing it does outlives it.  With
        ``check`` (always, except when :meth:`check_ahead` did it, and in tests of the
        deeper layers) the engine's own parser must first agree that it is exactly one
        read-only SELECT.  ``tree`` is sqlglot's parse of exactly ``sql`` in the
        engine's dialect when the caller has one: an engine whose check reads sqlglot's
        tree checks it instead of parsing again."""

    def read_csv(self, path: str, folder: str, limits: Limits) -> QueryResult:
        """A CSV file inside ``folder`` read as a result relation (types detected)."""

    def close(self) -> None: ...


def is_database_url(db: object) -> bool:
    """Whether ``db`` names a database server (``postgresql://...``, ``sc://...``)
    rather than a file.

    >>> is_database_url("postgresql://reader@localhost:5432/omop"), is_database_url("a.duckdb")
    (True, False)
    >>> is_database_url("sc://localhost:15002")
    True
    """
    return isinstance(db, str) and db.startswith(("postgresql://", "postgres://", "sc://"))


def database_label(db: str | Path) -> str:
    """How a database is named in outputs: a path, or a URL without its password."""
    if is_database_url(db):
        from score.execution.engines.postgres import redact

        return redact(str(db))
    return str(db)


def transpile(sql: str, read: str, write: str) -> str:
    """``sql`` written for dialect ``read`` as the engine of dialect ``write`` runs it;
    a QueryError (``parse_error``) if it cannot be."""
    from score.execution.engines.postgres_sql import transpile as _transpile

    return _transpile(sql, read, write)


def engine_dialect(db: str | Path) -> str:
    """sqlglot's dialect of the engine that would open ``db``."""
    return "postgres" if is_database_url(db) else "duckdb"


def open_engine(db: str | Path, schema: str | None, settings: ExecutorSettings) -> Engine:
    """The engine for ``db`` (a DuckDB file path, a ``postgresql://`` URL, or
    ``sc://host:port`` for Spark Connect), opened read-only and sandboxed."""
    if str(db).startswith("sc://"):
        from score.execution.engines.spark import SparkEngine

        return SparkEngine(str(db), schema, settings)
    if is_database_url(db):
        from score.execution.engines.postgres import PostgresEngine

        return PostgresEngine(str(db), schema, settings)
    from score.execution.engines.duckdb import DuckDBEngine

    return DuckDBEngine(db, schema, settings)
