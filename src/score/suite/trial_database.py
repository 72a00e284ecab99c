"""A candidate variant tried in this process, before any file is written for it.

Distillation tries hundreds of candidates and keeps a few dozen.  Each is first loaded
into one in-memory DuckDB database (the vocabulary loaded once, the clinical tables
replaced per candidate, every CDM table with its CDM types, as
:func:`score.suite.suite_file.write_duckdb` makes them) and the golds and neighbours,
already guarded by the executor (:meth:`score.execution.executor.Executor.prepare`), run
there under a time limit and a row cap.  Only a candidate that tells something apart
here is written and run again through the executor, the very path scoring takes: what
the suite keeps is decided there, never here.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping

import duckdb
import pyarrow as pa

from score.cdm.schema import CDM_TABLES, create_table_sql
from score.execution.result import QueryError, QueryResult


class TrialDatabase:
    """One in-memory CDM: the vocabulary kept, the clinical tables replaced by
    :meth:`load`; :meth:`run` returns a result or the error, never raises."""

    def __init__(
        self,
        vocabulary: Mapping[str, pa.Table],
        *,
        timeout_seconds: float,
        max_rows: int,
        collation: str | None = None,
    ) -> None:
        self.timeout_seconds = timeout_seconds
        self.max_rows = max_rows
        self.con = duckdb.connect(":memory:")
        self.con.execute("SET threads = 1")
        self.con.execute("SET memory_limit = '2GB'")
        if collation:
            self.con.execute(f"SET default_collation = '{collation}'")
        self.con.execute("CREATE SCHEMA cdm")
        for table in sorted(CDM_TABLES):
            self.con.execute(create_table_sql(table, "cdm", bigint_ids=True))
        for table, rows in sorted(vocabulary.items()):
            self._insert(table, rows)
        self.clinical = sorted(set(CDM_TABLES) - set(vocabulary))
        self._watchdog = _Watchdog()

    def _insert(self, table: str, rows: pa.Table) -> None:
        self.con.register("_rows", rows)
        try:
            self.con.execute(f'INSERT INTO cdm."{table}" BY NAME SELECT * FROM _rows')
        finally:
            self.con.unregister("_rows")

    def load(self, tables: Mapping[str, pa.Table]) -> None:
        """Replace every clinical table's rows with ``tables``' (absent ones empty)."""
        for table in self.clinical:
            self.con.execute(f'DELETE FROM cdm."{table}"')
            if table in tables and tables[table].num_rows:
                self._insert(table, tables[table])

    def run(self, sql: str) -> QueryResult | QueryError:
        cur = self.con.cursor()
        self._watchdog.arm(cur, self.timeout_seconds)
        try:
            rel = cur.sql(sql)
            if rel is None:
                return QueryError("guard_rejected", "the statement returned no result set")
            names = tuple(rel.columns)
            types = tuple(str(t) for t in rel.types)
            table = rel.limit(self.max_rows + 1).to_arrow_table()
            if table.num_rows > self.max_rows:
                return QueryError("row_cap", f"more than {self.max_rows} rows (the row cap)")
            return QueryResult(names, types, table)
        except duckdb.InterruptException:
            return QueryError("timeout", f"stopped after {self.timeout_seconds:g} s")
        except (duckdb.Error, pa.ArrowException, MemoryError) as e:
            return QueryError("runtime_error", str(e).splitlines()[0][:300])
        finally:
            self._watchdog.disarm()
            cur.close()

    def close(self) -> None:
        self._watchdog.stop()
        self.con.close()


class _Watchdog:
    """One thread that interrupts the query running past its deadline (a thread per
    query cost more than the query itself)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._cursor: duckdb.DuckDBPyConnection | None = None
        self._deadline = 0.0
        self._stopped = False
        self._thread = threading.Thread(target=self._watch, daemon=True, name="trial-watchdog")
        self._thread.start()

    def arm(self, cursor: duckdb.DuckDBPyConnection, seconds: float) -> None:
        with self._cond:
            self._cursor, self._deadline = cursor, time.monotonic() + seconds
            self._cond.notify()

    def disarm(self) -> None:
        with self._cond:
            self._cursor = None

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify()
        self._thread.join()

    def _watch(self) -> None:
        with self._cond:
            while not self._stopped:
                if self._cursor is None:
                    self._cond.wait()
                    continue
                left = self._deadline - time.monotonic()
                if left > 0:
                    self._cond.wait(left)
                    continue
                self._cursor.interrupt()
                self._cursor = None
