"""The engine seam: which engine holds a database, and opening it.

What an engine is and what every engine shares live in modules of their own:
:mod:`~score.execution.engines.base` (the :class:`~score.execution.engines.base.Engine`
protocol and a query's limits), :mod:`~score.execution.engines.watchdog`,
:mod:`~score.execution.engines.result_stream`,
:mod:`~score.execution.engines.resources` and :mod:`~score.execution.engines.csv_reader`.
Each engine is a module: :mod:`~score.execution.engines.duckdb` (an OMOP CDM DuckDB
file), :mod:`~score.execution.engines.postgres` (a schema of a PostgreSQL database, by
URL) and :mod:`~score.execution.engines.spark` (a Spark Connect server,
``sc://host:port``).  This module is the one place that decides, from ``--db``, which
engine a database needs (:func:`engine_kind`); it imports an engine only to open it.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from score.errors import DatabaseError
from score.execution.engines.base import redact

if TYPE_CHECKING:
    from score.execution.engines.base import Engine
    from score.execution.settings import ExecutorSettings


class EngineKind(StrEnum):
    """The engines sqlgold runs queries on; the value is sqlglot's dialect name."""

    DUCKDB = "duckdb"
    POSTGRES = "postgres"
    SPARK = "spark"


#: URL schemes by engine (anything else with ``://`` is refused by name).
URL_SCHEMES = {
    "postgresql": EngineKind.POSTGRES,
    "postgres": EngineKind.POSTGRES,
    "sc": EngineKind.SPARK,
}


def engine_kind(db: str | Path) -> EngineKind:
    """The engine that opens ``db``: a DuckDB file path, ``postgresql://...`` or
    ``sc://host:port``; a URL of any other scheme is a DatabaseError naming those.

    >>> [engine_kind(d).value for d in ("a.duckdb", "postgresql://u@h/omop", "sc://h:15002")]
    ['duckdb', 'postgres', 'spark']
    >>> engine_kind("mysql://x@y/z")
    Traceback (most recent call last):
    ...
    score.errors.DatabaseError: [database] mysql://x@y/z: sqlgold cannot open a mysql:// \
database; --db takes a DuckDB file, postgresql://USER:PASSWORD@HOST:PORT/DB or sc://HOST:PORT
    """
    text = str(db)
    scheme, sep, _ = text.partition("://")
    if not sep or not scheme.replace("+", "").isalnum():
        return EngineKind.DUCKDB
    kind = URL_SCHEMES.get(scheme.lower())
    if kind is None:
        raise DatabaseError(
            f"sqlgold cannot open a {scheme}:// database; --db takes a DuckDB file, "
            "postgresql://USER:PASSWORD@HOST:PORT/DB or sc://HOST:PORT",
            path=redact(text),
        )
    return kind


def is_database_url(db: object) -> bool:
    """Whether ``db`` names a database server rather than a file.

    >>> is_database_url("postgresql://reader@localhost:5432/omop"), is_database_url("a.duckdb")
    (True, False)
    >>> is_database_url("sc://localhost:15002")
    True
    """
    return isinstance(db, str | Path) and engine_kind(db) is not EngineKind.DUCKDB


def database_label(db: str | Path) -> str:
    """How a database is named in outputs: a path, or a URL without its password."""
    return redact(str(db)) if is_database_url(db) else str(db)


def transpile(sql: str, read: str, write: str) -> str:
    """``sql`` written for dialect ``read`` as the engine of dialect ``write`` runs it;
    a QueryError (``parse_error``) if it cannot be."""
    from score.execution.engines.postgres_sql import transpile as _transpile

    return _transpile(sql, read, write)


def open_engine(db: str | Path, schema: str | None, settings: ExecutorSettings) -> Engine:
    """The engine for ``db`` (see :func:`engine_kind`), opened read-only and sandboxed."""
    kind = engine_kind(db)
    if kind is EngineKind.SPARK:
        from score.execution.engines.spark import SparkEngine

        return SparkEngine(str(db), schema, settings)
    if kind is EngineKind.POSTGRES:
        from score.execution.engines.postgres import PostgresEngine

        return PostgresEngine(str(db), schema, settings)
    from score.execution.engines.duckdb import DuckDBEngine

    return DuckDBEngine(db, schema, settings)
