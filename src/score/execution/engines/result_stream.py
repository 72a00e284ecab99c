"""One DuckDB query streamed to Arrow under a deadline, a row cap and a byte cap, its
failures classified as :class:`~score.execution.result.QueryError` kinds.

Reading stops at the row cap or the result-size cap, batch by batch; anything that
fails after the watchdog fired is a timeout, whatever DuckDB or Arrow called it.
"""

from __future__ import annotations

import time

import duckdb
import pyarrow as pa

from score.execution.engines.base import Limits, first_line, timeout_error
from score.execution.engines.watchdog import RunState, Watchdog
from score.execution.parse_position import duckdb_parse_message
from score.execution.result import QueryError, QueryResult

#: Rows per Arrow batch read from DuckDB.
BATCH_ROWS = 2048


class ResultStream:
    """Runs queries on one DuckDB cursor, each interrupted at its deadline by
    ``watchdog``."""

    def __init__(self, cur: duckdb.DuckDBPyConnection, watchdog: Watchdog) -> None:
        self._cur = cur
        self._watchdog = watchdog

    def run(self, sql: str | duckdb.Statement, limits: Limits) -> QueryResult:
        cur = self._cur
        state = RunState(cur)
        start = time.perf_counter()
        reader = None
        if limits.deadline is not None:
            self._watchdog.arm(state, limits.deadline)
        try:
            rel = cur.sql(sql)
            if rel is None:
                raise QueryError("guard_rejected", "the statement returned no result set")
            names = tuple(rel.columns)
            types = tuple(str(t) for t in rel.types)
            reader = rel.to_arrow_reader(BATCH_ROWS)
            batches: list[pa.RecordBatch] = []
            rows = size = 0
            for batch in reader:
                rows += batch.num_rows
                size += batch.nbytes
                if rows > limits.max_rows:
                    raise QueryError("row_cap", f"more than {limits.max_rows} rows (the row cap)")
                if size > limits.max_bytes:
                    raise QueryError(
                        "runtime_error",
                        f"the result is over {limits.max_bytes / 2**20:g} MiB "
                        "(the result size limit)",
                    )
                batches.append(batch)
            table = pa.Table.from_batches(batches, schema=reader.schema)
        except QueryError:
            raise
        except Exception as e:  # DuckDB, Arrow (OSError, ArrowInvalid), MemoryError ...
            if state.stop():
                raise timeout_error(limits) from None
            raise classify(e, sql if isinstance(sql, str) else sql.query) from None
        finally:
            state.stop()
            self._watchdog.disarm(state)
            if reader is not None:
                try:
                    reader.close()
                except Exception:
                    pass
            discard_result(cur)
        return QueryResult(names, types, table, time.perf_counter() - start)


def discard_result(cur: duckdb.DuckDBPyConnection) -> None:
    """Drop any unfinished result so the ROLLBACK can run (duckdb 2.0 refuses otherwise)."""
    try:
        cur.abort()
    except duckdb.Error:
        pass


_MISSING_NAME_HINTS = (
    "not found in FROM clause",
    "does not have a column named",
    "Referenced column",
    "Referenced table",
    "does not exist",
)


def classify(e: BaseException, sql: str = "") -> QueryError:
    """The :class:`~score.execution.result.QueryError` kind of a DuckDB failure."""
    message = first_line(e)
    if isinstance(e, duckdb.ParserException):
        return QueryError("parse_error", duckdb_parse_message(str(e), sql))
    if isinstance(e, duckdb.CatalogException):
        return QueryError("catalog_error", message)
    if isinstance(e, duckdb.BinderException):
        if any(h in str(e) for h in _MISSING_NAME_HINTS):
            return QueryError("catalog_error", message)
        return QueryError("binder_error", message)
    if isinstance(e, duckdb.InterruptException):
        return QueryError("timeout", message)
    if isinstance(e, duckdb.PermissionException):
        return QueryError("guard_rejected", f"sandbox: {message}")
    if isinstance(e, duckdb.InvalidInputException) and "configuration has been locked" in str(e):
        return QueryError("guard_rejected", f"sandbox: {message}")
    if isinstance(e, MemoryError):
        return QueryError("runtime_error", "out of memory (the memory limit)")
    if not isinstance(e, duckdb.Error):
        return QueryError("runtime_error", f"{type(e).__name__}: {message}")
    return QueryError("runtime_error", message)
