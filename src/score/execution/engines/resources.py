"""What a DuckDB connection of sqlgold's may use: memory, threads, and no spill files.

Every DuckDB connection that runs a query for sqlgold (the DuckDB engine's, and the
in-memory one that reads a result CSV on any engine) is limited the same way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from score.execution.settings import ExecutorSettings

if TYPE_CHECKING:
    import duckdb


def limit_resources(con: duckdb.DuckDBPyConnection, settings: ExecutorSettings) -> None:
    """DuckDB's ``memory_limit`` and ``threads`` from ``settings``; spilling off, so
    there is no temp directory a query could read."""
    memory_limit = settings.memory_limit.replace("'", "")
    con.execute(f"SET memory_limit = '{memory_limit}'")
    con.execute("SET temp_directory = ''")
    if settings.threads:
        con.execute(f"SET threads = {int(settings.threads)}")
