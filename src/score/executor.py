"""The only part of sqlgold that runs SQL: read-only, sandboxed, time- and row-limited.

An :class:`Executor` opens an OMOP DuckDB file and exposes every CDM table present as
``cdm.<table>``, a view over the attached file, whatever schema the file itself uses;
gold and predicted SQL always say ``cdm.person``.

Hostile SQL is contained by four layers:

1. the sqlglot statement guard (:mod:`score.guard`): one SELECT, nothing that writes,
   configures or reads files;
2. DuckDB's own parser must agree: exactly one statement, of type SELECT;
3. every query runs in a transaction that is always rolled back, so even a statement
   that slipped past both parsers cannot change what the next query sees;
4. the file is attached READ_ONLY, the views live in an in-memory catalog, and before
   any query runs ``enable_external_access`` is switched off (no files, COPY, ATTACH,
   INSTALL) and the configuration is locked (no SET, no PRAGMA that changes it).

Every query runs under a wall-clock timeout (the connection is interrupted), a row
cap (rows are streamed and reading stops at the cap) and a memory limit.  A fixed
"today" rewrites current-date calls to literals first (:mod:`score.fixed_today`).

Failures are :class:`~score.result.QueryError` with a ``kind`` from
:data:`~score.result.ERROR_KINDS`.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa

from .database import (
    attach_read_only,
    cdm_tables_in,
    find_cdm_schema,
    quote,
    read_build_info,
)
from .errors import DatabaseError
from .fingerprint_check import FingerprintCheck, checked_fingerprint
from .fixed_today import pin_today
from .guard import check_statement
from .parse_position import duckdb_parse_message
from .result import QueryError, QueryResult

SOURCE_ALIAS = "omop"
VIEW_SCHEMA = "cdm"
_BATCH_ROWS = 2048


@dataclass(frozen=True)
class PreparedQuery:
    """SQL that passed the guard and DuckDB's parser, with a fixed today pinned.

    Only :meth:`Executor.prepare` makes one; :meth:`Executor.run` runs only these, so
    no caller can skip the guard by accident.
    """

    sql: str
    _guarded: object = None


_GUARDED = object()


@dataclass(frozen=True)
class ExecutorSettings:
    """Limits and context for every query an executor runs."""

    timeout_seconds: float = 30.0
    max_rows: int = 10_000
    memory_limit: str = "4GB"
    threads: int | None = None  # None: DuckDB's default (all cores)
    today: dt.date | None = None
    collation: str | None = None  # e.g. "nocase": DuckDB's default_collation for text

    def __post_init__(self) -> None:
        if self.timeout_seconds <= 0:
            raise ValueError("timeout_seconds must be positive")
        if self.max_rows < 1:
            raise ValueError("max_rows must be at least 1")
        if self.collation is not None and not self.collation.replace(".", "").isalnum():
            raise ValueError(f"not a collation name: {self.collation!r}")


class Executor:
    """Runs read-only SELECTs on one OMOP database.  Thread-safe: each thread gets its
    own cursor on the shared database instance.

    >>> with Executor("data/omop/synthea1k.duckdb") as ex:  # doctest: +SKIP
    ...     ex.execute("SELECT count(*) AS n FROM cdm.person").rows()
    [(1130,)]
    """

    def __init__(
        self,
        db_path: str | Path,
        schema: str | None = None,
        settings: ExecutorSettings | None = None,
    ) -> None:
        self.settings = settings or ExecutorSettings()
        self.db_path = str(db_path)
        con = duckdb.connect(":memory:")
        try:
            con.execute(f"SET memory_limit = '{_setting(self.settings.memory_limit)}'")
            if self.settings.threads:
                con.execute(f"SET threads = {int(self.settings.threads)}")
            if self.settings.collation:
                con.execute(f"SET default_collation = '{self.settings.collation}'")
            attach_read_only(con, db_path, SOURCE_ALIAS)
            self.schema = find_cdm_schema(con, SOURCE_ALIAS, schema)
            self.tables = cdm_tables_in(con, SOURCE_ALIAS, self.schema)
            if "person" not in self.tables:
                raise DatabaseError(
                    f"schema {self.schema!r} has no person table", path=self.db_path
                )
            con.execute(f"CREATE SCHEMA {VIEW_SCHEMA}")
            for cdm_name, real in sorted(self.tables.items()):
                source = f"{SOURCE_ALIAS}.{quote(self.schema)}.{quote(real)}"
                # cdm.<table> is the name gold SQL uses; the same view in the default
                # schema lets a prediction that leaves out "cdm." read it too.
                for target in (VIEW_SCHEMA, "main"):
                    con.execute(f"CREATE VIEW {target}.{quote(cdm_name)} AS SELECT * FROM {source}")
            self._build_info = read_build_info(con, SOURCE_ALIAS)
            con.execute("SET enable_external_access = false")
            con.execute("SET lock_configuration = true")
        except BaseException:
            con.close()
            raise
        self._con = con
        self._local = threading.local()
        self._fingerprint: FingerprintCheck | None = None
        self._lock = threading.Lock()
        self._watchdog = _Watchdog()

    # -- context ---------------------------------------------------------------
    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._watchdog.close()
        self._con.close()

    @property
    def fingerprint(self) -> str:
        """The content fingerprint of the data in the file (checked, never taken from
        ``sqlgold.build_info`` on trust: see :mod:`score.fingerprint_check`)."""
        return self.fingerprint_check.fingerprint

    @property
    def fingerprint_check(self) -> FingerprintCheck:
        """The fingerprint, how it was obtained and whether ``db build`` stored another."""
        with self._lock:
            if self._fingerprint is None:
                self._fingerprint = checked_fingerprint(
                    self._con.cursor(), SOURCE_ALIAS, self.schema, self.db_path, self._build_info
                )
            return self._fingerprint

    # -- running ---------------------------------------------------------------
    def _cursor(self) -> duckdb.DuckDBPyConnection:
        cur = getattr(self._local, "cursor", None)
        if cur is None:
            cur = self._con.cursor()
            self._local.cursor = cur
        return cur

    def prepare(self, sql: str, *, today: dt.date | None = None) -> PreparedQuery:
        """Guard ``sql`` and pin a fixed today (``today``, else the settings' own); raise
        a QueryError if it may not run."""
        try:
            tree = check_statement(sql)
        except QueryError as e:
            if e.kind != "parse_error":
                raise
            tree = None  # sqlglot cannot read it; DuckDB's parser decides below
        today = today if today is not None else self.settings.today
        if tree is not None and today is not None:
            pinned, changed = pin_today(tree, today)
            if changed:
                sql = pinned.sql("duckdb")
        cur = self._cursor()
        try:
            statements = cur.extract_statements(sql)
        except duckdb.Error as e:
            raise QueryError("parse_error", duckdb_parse_message(str(e), sql)) from None
        if len(statements) != 1:
            raise QueryError(
                "guard_rejected", f"{len(statements)} statements; only one SELECT is allowed"
            )
        kind = statements[0].type
        if kind != duckdb.StatementType.SELECT:
            raise QueryError(
                "guard_rejected",
                f"a {kind.name} statement; only a read-only SELECT is allowed",
            )
        return PreparedQuery(sql, _GUARDED)

    def run(self, query: PreparedQuery) -> QueryResult:
        """Run a prepared query; raise a classified QueryError if it fails."""
        if not isinstance(query, PreparedQuery) or query._guarded is not _GUARDED:
            raise TypeError("run() takes a PreparedQuery made by prepare()")
        return self._run(query.sql)

    def execute(self, sql: str, *, today: dt.date | None = None) -> QueryResult:
        """Run one SELECT and return its result, or raise a classified QueryError;
        ``today`` overrides the settings' fixed today for this query."""
        return self._run(self.prepare(sql, today=today).sql)

    def try_execute(self, sql: str, *, today: dt.date | None = None) -> QueryResult | QueryError:
        """Like :meth:`execute`, but the error is returned instead of raised."""
        try:
            return self.execute(sql, today=today)
        except QueryError as e:
            return e

    def _run(self, sql: str) -> QueryResult:
        """Run already-guarded SQL inside a transaction that is always rolled back."""
        cur = self._cursor()
        state = _RunState(cur)
        start = time.perf_counter()
        reader = None
        cur.execute("BEGIN TRANSACTION")
        try:
            self._watchdog.arm(state, start + self.settings.timeout_seconds)
            try:
                rel = cur.sql(sql)
                if rel is None:
                    raise QueryError("guard_rejected", "the statement returned no result set")
                names = tuple(rel.columns)
                types = tuple(str(t) for t in rel.types)
                reader = rel.to_arrow_reader(_BATCH_ROWS)
                batches: list[pa.RecordBatch] = []
                count = 0
                for batch in reader:
                    count += batch.num_rows
                    if count > self.settings.max_rows:
                        raise QueryError(
                            "row_cap",
                            f"more than {self.settings.max_rows} rows (the row cap)",
                        )
                    batches.append(batch)
                table = pa.Table.from_batches(batches, schema=reader.schema)
            except duckdb.Error as e:
                if state.stop() and isinstance(e, duckdb.InterruptException):
                    raise QueryError(
                        "timeout",
                        f"stopped after {self.settings.timeout_seconds:g} s (the time limit)",
                    ) from None
                raise _classify(e, sql) from None
            finally:
                state.stop()
                self._watchdog.disarm(state)
        finally:
            if reader is not None:
                reader.close()
            _discard_result(cur)
            cur.execute("ROLLBACK")
        seconds = time.perf_counter() - start
        return QueryResult(names, types, table, seconds)


class _RunState:
    """Interrupt a cursor only while its query runs; report whether it fired."""

    def __init__(self, cur: duckdb.DuckDBPyConnection) -> None:
        self._cur = cur
        self._lock = threading.Lock()
        self._running = True
        self.fired = False

    def interrupt(self) -> None:
        with self._lock:
            if self._running:
                self.fired = True
                self._cur.interrupt()

    def stop(self) -> bool:
        with self._lock:
            self._running = False
            return self.fired


class _Watchdog:
    """One thread per executor that interrupts every query past its deadline.

    A thread per query (``threading.Timer``) cost about half a millisecond to start,
    as much as a small OMOP query takes to run; this one sleeps until the nearest
    deadline and is started on first use.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._deadlines: dict[_RunState, float] = {}
        self._thread: threading.Thread | None = None
        self._closed = False

    def arm(self, state: _RunState, deadline: float) -> None:
        with self._cond:
            self._deadlines[state] = deadline
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._loop, name="sqlgold-timeout", daemon=True
                )
                self._thread.start()
            self._cond.notify()

    def disarm(self, state: _RunState) -> None:
        with self._cond:
            self._deadlines.pop(state, None)

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify()

    def _loop(self) -> None:
        with self._cond:
            while not self._closed:
                now = time.perf_counter()
                due = [s for s, d in self._deadlines.items() if d <= now]
                for state in due:
                    del self._deadlines[state]
                    state.interrupt()
                wait = min(self._deadlines.values(), default=now + 60.0) - now
                self._cond.wait(timeout=max(wait, 0.001))


def _discard_result(cur: duckdb.DuckDBPyConnection) -> None:
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


def _classify(e: duckdb.Error, sql: str = "") -> QueryError:
    message = _first_line(e)
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
    return QueryError("runtime_error", message)


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def _setting(value: str) -> str:
    return value.replace("'", "")
