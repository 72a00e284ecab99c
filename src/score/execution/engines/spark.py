"""The Spark engine: an OMOP CDM in database ``cdm`` of a Spark Connect server.

``--db sc://host:port`` opens one Spark Connect session per sandbox worker.  Queries
arrive as DuckDB SQL that passed the statement guard; here they are translated to Spark
SQL (:func:`~score.execution.engines.spark_sql.to_spark`) and judged again by the Spark guard
(:func:`~score.execution.engines.spark_sql.check_spark`): Spark has no read-only transaction, so
only a SELECT over the CDM tables that calls nothing reaching the JVM or files ever
reaches it.  The session is pinned before any query runs (UTC, non-ANSI arithmetic as
in DuckDB, ``cdm`` the current database); a query cannot change it, since SET and RESET
never pass the guard.

Every query runs under a tag; a watchdog thread interrupts the tag at the deadline,
which cancels its Spark jobs on the server (Connect's ``interruptTag``); small scan
batches (:data:`SCAN_BATCH_ROWS`) make a cancelled task stop soon after, so the server
is idle again for the next query.  An error saying the server can run nothing any more
(its SparkContext stopped) is raised as a :class:`~score.errors.DatabaseError`, the
run's error, never a query's outcome (:func:`server_gone`).  The result is
``limit(cap + 1)`` of the query, fetched as Arrow, so a result over the row cap is known
without fetching it all.
"""

from __future__ import annotations

import threading
import time
import uuid

from score.cdm.fingerprint_check import FingerprintCheck
from score.errors import DatabaseError
from score.execution.engines import csv_reader
from score.execution.engines.base import (
    Limits,
    Reference,
    ServerInfo,
    first_line,
    timeout_error,
)
from score.execution.engines.spark_client import new_session, parse_url
from score.execution.engines.spark_sql import DATABASE, check_spark, to_spark
from score.execution.result import QueryError, QueryResult, duckdb_type_name
from score.execution.settings import ExecutorSettings

#: Rows per batch of the columnar Parquet and ORC readers.  A stopped task ends only where
#: its code checks whether it was killed, and a scan checks once per batch: a cross join
#: reads a batch of the outer side, then joins each of its rows with all of the inner
#: side.  At Spark's 4,096 a runaway join of a 2-million-row table went on 26-40 s after
#: its interrupt; at 64, 0.3-0.5 s, with no cost measured on honest queries (bench/spark.md).
SCAN_BATCH_ROWS = "64"

#: Session settings pinned before any query runs.
SESSION_CONF = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.ansi.enabled": "false",
    "spark.sql.parquet.columnarReaderBatchSize": SCAN_BATCH_ROWS,
    "spark.sql.orc.columnarReaderBatchSize": SCAN_BATCH_ROWS,
}


class SparkEngine:
    """A CDM in database ``cdm`` of a Spark Connect server, queried read-only."""

    name = "spark"
    #: The dialect of the SQL it takes: DuckDB's, which :meth:`run` translates to Spark SQL
    #: itself (:func:`score.execution.engines.spark_sql.to_spark`), so the guard reads the
    #: query as DuckDB SQL and the Spark guard reads the translation.
    dialect = "duckdb"
    session_settings = {"TimeZone": "UTC"}  # spark.sql.session.timeZone, fixed
    #: The query a new worker runs before its address space is limited (see
    #: :mod:`score.execution.processes.worker`): one round trip, so gRPC's threads exist.
    warm_up_sql = "SELECT count(*) AS n FROM cdm.person"

    def __init__(self, url: str, schema: str | None, settings: ExecutorSettings) -> None:
        self.url = url
        self.settings = settings
        self.broken = False
        try:
            parse_url(url)
        except ValueError as e:
            raise DatabaseError(str(e), path=url) from None
        self.schema = schema or DATABASE
        if self.schema != DATABASE:
            raise DatabaseError(
                f"on Spark the CDM must be in database {DATABASE!r}, not {self.schema!r}", path=url
            )
        try:
            spark = new_session(url)
        except Exception as e:  # noqa: BLE001 - any failure to connect is one error line
            raise DatabaseError(f"cannot connect to Spark: {error_line(e)}", path=url) from None
        try:
            for key, value in SESSION_CONF.items():
                spark.conf.set(key, value)
            names = {t.name.lower() for t in spark.catalog.listTables(DATABASE)}
        except Exception as e:  # noqa: BLE001
            spark.stop()
            raise DatabaseError(
                f"no CDM in database {DATABASE!r} ({error_line(e)}); "
                "load one with `sqlgold db load`",
                path=url,
            ) from None
        from score.cdm.schema import CDM_TABLES

        self.tables = {t: t for t in CDM_TABLES if t in names}
        if "person" not in self.tables:
            spark.stop()
            raise DatabaseError(f"database {DATABASE!r} has no person table", path=url)
        spark.catalog.setCurrentDatabase(DATABASE)
        self._spark = spark
        self._stored: str | None = None

    def close(self) -> None:
        try:
            self._spark.stop()
        except Exception:  # noqa: BLE001 - the server may be gone already
            pass

    # -- facts -------------------------------------------------------------------
    def stored_fingerprint(self) -> str | None:
        """The fingerprint ``sqlgold db load`` stored in ``sqlgold.build_info``."""
        try:
            rows = (
                self._spark.sql("SELECT key, value FROM sqlgold.build_info").toArrow().to_pylist()
            )
        except Exception:  # noqa: BLE001 - no build info: not loaded by sqlgold
            return None
        info = {r["key"]: r["value"] for r in rows}
        if info.get("schema") == DATABASE:
            return info.get("fingerprint")
        return None

    def fingerprint_check(self, *, recompute: bool = False) -> FingerprintCheck:
        """The fingerprint, computed by a full pass only when a change marker moved since
        the last one (or with ``recompute``): :mod:`score.cdm.server_fingerprint`."""
        from score.cdm.server_fingerprint import checked_server_fingerprint

        return checked_server_fingerprint(
            self.url, self.schema, self.change_markers, self.compute_fingerprint,
            recompute=recompute,
        )  # fmt: skip

    def change_markers(self) -> dict[str, list]:
        """Per CDM table, what Spark changes whenever its rows do: the files it reads
        (every write makes new ones) and its columns with their types."""
        markers: dict[str, list] = {}
        for name in sorted(self.tables):
            frame = self._spark.table(f"{DATABASE}.`{name}`")
            markers[name] = [sorted(frame.inputFiles()), [list(d) for d in frame.dtypes]]
        return markers

    def compute_fingerprint(self) -> str:
        """The fingerprint (:mod:`score.cdm.fingerprint`) of the CDM, computed by Spark."""
        return fingerprint_tables(self._spark, sorted(self.tables))

    # -- checking ----------------------------------------------------------------
    def check(self, sql: str) -> None:
        check_spark(to_spark(sql), self.tables)

    def check_ahead(self, tree: object) -> bool:
        return False  # the translation is judged at run, always (see run)

    def references(self, sql: str) -> list[Reference] | None:
        return None  # only SQL sqlglot can read is translated, so nothing to report

    # -- running -----------------------------------------------------------------
    def run(
        self, sql: str, limits: Limits, *, check: bool = True, tree: object = None
    ) -> QueryResult:
        """Translate, guard again and run; the Spark jobs end at the deadline.  The
        Spark guard judges the translation whatever ``check`` says: on Spark there is
        no rollback behind it, so it is the last layer, not a repeated one."""
        spark_sql = to_spark(sql)
        check_spark(spark_sql, self.tables)
        return self._fetch(spark_sql, limits)

    def read_csv(self, path: str, folder: str, limits: Limits) -> QueryResult:
        """CSV results are read by DuckDB in the worker, never by the server
        (:mod:`score.execution.engines.csv_reader`)."""
        return csv_reader.read_csv(path, folder, self.settings, limits)

    def _fetch(self, spark_sql: str, limits: Limits) -> QueryResult:
        spark = self._spark
        tag = f"sqlgold-{uuid.uuid4().hex}"
        start = time.perf_counter()
        timer = None
        fired = threading.Event()
        spark.addTag(tag)
        try:
            if limits.deadline is not None:

                def interrupt() -> None:
                    fired.set()
                    try:
                        spark.interruptTag(tag)
                    except Exception:  # noqa: BLE001 - the query may have ended
                        pass

                wait = max(limits.deadline - time.monotonic(), 0.0)
                timer = threading.Timer(wait, interrupt)
                timer.daemon = True
                timer.start()
            frame = spark.sql(spark_sql)
            table = frame.limit(limits.max_rows + 1).toArrow()
        except Exception as e:  # noqa: BLE001 - pyspark, gRPC, Arrow ...
            if fired.is_set():
                raise timeout_error(limits) from None
            gone = server_gone(e)
            if gone:
                self.broken = True
                raise DatabaseError(gone, path=self.url) from None
            raise _classify(e) from None
        finally:
            if timer is not None:
                timer.cancel()
            spark.removeTag(tag)
        if fired.is_set():
            raise timeout_error(limits)
        if table.num_rows > limits.max_rows:
            raise QueryError("row_cap", f"more than {limits.max_rows} rows (the row cap)")
        if table.nbytes > limits.max_bytes:
            raise QueryError(
                "runtime_error",
                f"the result is over {limits.max_bytes / 2**20:g} MiB (the result size limit)",
            )
        names = tuple(table.column_names)
        types = tuple(duckdb_type_name(f.type) for f in table.schema)
        return QueryResult(names, types, table, time.perf_counter() - start)


_CATALOG_CLASSES = (
    "TABLE_OR_VIEW_NOT_FOUND",
    "UNRESOLVED_COLUMN",
    "UNRESOLVED_ROUTINE",
    "SCHEMA_NOT_FOUND",
    "UNRESOLVED_FIELD",
)


def server_gone(e: BaseException) -> str | None:
    """What to tell the user when ``e`` says the server can run no query any more (its
    SparkContext stopped, or it stopped answering); None for a query's own error.

    Such an error is no outcome of the query that met it: every query after it would
    fail the same way.  A local-mode server's SparkContext stops when a task runs out of
    the driver's heap (the executors live in the driver's JVM); see ``docs/explanation/spark.md``.

    >>> server_gone(RuntimeError("Cannot call methods on a stopped SparkContext."))[:31]
    "the Spark server's SparkContext"
    >>> server_gone(RuntimeError("[UNRESOLVED_COLUMN] x")) is None
    True
    """
    text = str(e)
    if "stopped SparkContext" in text or "SparkContext has been shutdown" in text:
        return (
            "the Spark server's SparkContext has stopped (in local mode a query out of the "
            "driver's memory stops it): restart the server, then run the command again "
            "(score run --resume keeps what was scored)"
        )
    if _grpc_status(e) == "UNAVAILABLE":
        return f"the Spark server stopped answering ({error_line(e)})"
    return None


def _classify(e: BaseException) -> QueryError:
    message = error_line(e)
    name = type(e).__name__
    if name == "ParseException":
        return QueryError("parse_error", message)
    if name == "AnalysisException":
        if any(c in str(e) for c in _CATALOG_CLASSES):
            return QueryError("catalog_error", message)
        return QueryError("binder_error", message)
    if isinstance(e, MemoryError):
        return QueryError("runtime_error", "out of memory (the memory limit)")
    return QueryError("runtime_error", f"{name}: {message}"[:500])


def error_line(e: BaseException) -> str:
    """One line saying what went wrong: a gRPC error's status and details (its text's
    first line says only that the call ended), else the message's first line.

    >>> error_line(ValueError("bad\\nmore"))
    'bad'
    """
    status, details = _grpc_status(e), getattr(e, "details", None)
    if status is not None and callable(details):
        try:
            said = (details() or "").strip().splitlines()
        except Exception:  # noqa: BLE001 - not a gRPC error after all
            pass
        else:
            return f"{status}: {said[0]}" if said else status
    return first_line(e)


def _grpc_status(e: BaseException) -> str | None:
    """The gRPC status of ``e`` (``UNAVAILABLE``, ...), None if it is no gRPC error."""
    code = getattr(e, "code", None)
    if not callable(code):
        return None
    try:
        found = code()
    except Exception:  # noqa: BLE001 - not a gRPC error after all
        return None
    return getattr(found, "name", str(found))


def describe_spark(url: str, schema: str | None = None, *, recompute: bool = False) -> ServerInfo:
    """Tables, row counts and fingerprint of the CDM at ``url`` (database ``cdm``); the
    fingerprint by a full pass when a change marker moved or ``recompute`` is given."""
    from score.cdm.schema import CDM_TABLES

    engine = SparkEngine(url, schema, ExecutorSettings(timeout_seconds=3600))
    try:
        counts = []
        for name in sorted(engine.tables):
            frame = engine._spark.sql(f"SELECT count(*) AS n FROM {DATABASE}.`{name}`")
            counts.append((name, int(frame.toArrow().column(0)[0].as_py())))
        check = engine.fingerprint_check(recompute=recompute)
    finally:
        engine.close()
    missing = tuple(t for t in CDM_TABLES if t not in engine.tables)
    return ServerInfo(url, engine.schema, tuple(counts), missing, check.fingerprint, check.how)


def fingerprint_tables(spark, tables: list[str]) -> str:
    """The fingerprint (:mod:`score.cdm.fingerprint`) of CDM tables ``cdm.<table>``, computed
    in Spark SQL: each table's rows hashed and their hashes sorted by the server, so no
    row comes to the client."""
    from score.cdm.fingerprint import SPARK, fingerprint_of

    def described():
        for name in sorted(tables):
            qualified = f"{DATABASE}.`{name}`"
            yield name, qualified, list(spark.table(qualified).dtypes)

    def run(_: str, sql: str) -> tuple:
        return tuple(spark.sql(sql).toArrow().to_pylist()[0].values())

    return fingerprint_of(SPARK.digests(described(), run))
