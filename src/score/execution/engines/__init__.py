"""The engine seam: opening the engine a database needs.

What an engine is and what every engine shares live in modules of their own:
:mod:`~score.execution.engines.base` (the :class:`~score.execution.engines.base.Engine`
protocol and a query's limits), :mod:`~score.execution.engines.watchdog`,
:mod:`~score.execution.engines.result_stream`,
:mod:`~score.execution.engines.resources` and :mod:`~score.execution.engines.csv_reader`.
Each engine is a module: :mod:`~score.execution.engines.duckdb` (an OMOP CDM DuckDB
file), :mod:`~score.execution.engines.postgres` (a schema of a PostgreSQL database, by
URL) and :mod:`~score.execution.engines.spark` (a Spark Connect server,
``sc://host:port``).  Which one a database needs is decided in one place,
:func:`score.execution.engines.kinds.engine_kind`; this module imports an engine only to
open it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from score.execution.engines.kinds import EngineKind, engine_kind

if TYPE_CHECKING:
    from score.execution.engines.base import Engine
    from score.execution.settings import ExecutorSettings


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


def engine_sql(kind: EngineKind, sql: str, read: str = "duckdb") -> str:
    """The SQL an engine of ``kind`` runs for ``sql`` written in dialect ``read``: the
    executor's translation (PostgreSQL) or the engine's own (Spark translates DuckDB SQL
    itself); a QueryError when it cannot be translated."""
    if kind is EngineKind.SPARK and read == "duckdb":
        from score.execution.engines.spark_sql import to_spark

        return to_spark(sql)
    return transpile(sql, read, kind.value)
