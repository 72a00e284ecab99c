"""A result CSV read as a relation by a sandboxed in-memory DuckDB, on every engine.

A prediction may be a CSV file (StreamSQLBench's final relations); whatever engine holds
the CDM, the file is read in the query process by a fresh DuckDB that may read the
predictions' folder and nothing else, under the query's limits.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from score.execution.engines.base import Limits
from score.execution.engines.resources import limit_resources
from score.execution.engines.result_stream import ResultStream
from score.execution.engines.watchdog import Watchdog
from score.execution.result import QueryResult
from score.execution.settings import ExecutorSettings


def read_csv(
    path: str,
    folder: str,
    settings: ExecutorSettings,
    limits: Limits,
    watchdog: Watchdog | None = None,
) -> QueryResult:
    """The CSV file ``path`` (header row, types detected), which must lie inside
    ``folder``; ``watchdog`` is the caller's, if it has one running."""
    con = duckdb.connect(":memory:")
    own = watchdog is None
    dog = Watchdog() if watchdog is None else watchdog
    try:
        limit_resources(con, settings)
        con.execute("SET allowed_directories = [?]", [str(Path(folder)) + "/"])
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
        quoted = "'" + path.replace("'", "''") + "'"
        sql = f"SELECT * FROM read_csv({quoted}, header = true)"
        return ResultStream(con, dog).run(sql, limits)
    finally:
        if own:
            dog.close()
        con.close()
