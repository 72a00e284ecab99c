"""What a DuckDB connection of sqlgold's may use: memory, threads, no spill files, no
folder of the machine named in its settings.

Every DuckDB connection that runs a query for sqlgold (the DuckDB engine's, and the
in-memory one that reads a result CSV on any engine) is limited the same way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from score.execution.settings import ExecutorSettings

if TYPE_CHECKING:
    import duckdb


#: DuckDB's settings that name a folder of the machine (by default under the user's
#: home: ``~/.duckdb/stored_secrets``, the extension folder): emptied, so that even a
#: query past the guard's ban on ``current_setting`` learns no path from them.
HIDDEN_FOLDERS = ("home_directory", "extension_directory", "secret_directory")


def limit_resources(con: duckdb.DuckDBPyConnection, settings: ExecutorSettings) -> None:
    """DuckDB's ``memory_limit`` and ``threads`` from ``settings``; spilling off, so
    there is no temp directory a query could read; no home, extension or secret folder
    named (:data:`HIDDEN_FOLDERS`)."""
    memory_limit = settings.memory_limit.replace("'", "")
    con.execute(f"SET memory_limit = '{memory_limit}'")
    con.execute("SET temp_directory = ''")
    for folder in HIDDEN_FOLDERS:  # nothing a query may use: none to show either
        con.execute(f"SET {folder} = ''")
    if settings.threads:
        con.execute(f"SET threads = {int(settings.threads)}")
