"""The only part of sqlgold that runs SQL: read-only, sandboxed, time-, memory- and
row-limited.

An :class:`Executor` opens an OMOP database (an engine, :mod:`score.execution.engines`) in sandbox
worker processes (:mod:`score.execution.processes.sandbox`) and exposes every CDM table present as
``cdm.<table>``, whatever schema the file itself uses; gold and predicted SQL always
say ``cdm.person``.

Hostile SQL is contained in layers:

1. SQL over ``max_sql_bytes`` is refused before anything parses it;
2. the sqlglot statement guard (:mod:`score.execution.guard`): one SELECT, nothing that writes,
   configures, reads files, reveals paths or settings, or sets the random seed; a query
   sqlglot cannot read is judged by the same rules on DuckDB's own parse;
3. DuckDB's own parser must agree: exactly one statement, of type SELECT;
4. every query runs in a transaction that is always rolled back, in a DuckDB session of
   its own (variables, prepared statements and the random seed end with it), so even a
   statement that slipped past both parsers cannot change what the next query sees;
5. the database is attached READ_ONLY, the views live in an in-memory catalog, spilling
   is off, external access and the local file system are disabled and the configuration
   is locked (:mod:`score.execution.engines.duckdb`);
6. each query runs in a worker process with an address-space limit, interrupted at its
   time limit and killed (and replaced) if it does not stop
   (:mod:`score.execution.processes.sandbox`).

Every query runs under a wall-clock timeout that covers parsing and the guard as well
as running, a row cap, a result-size cap and a memory limit.  A fixed "today" rewrites
current-date calls to literals first (:mod:`score.execution.fixed_today`).

Failures are :class:`~score.execution.result.QueryError` with a ``kind`` from
:data:`~score.execution.result.ERROR_KINDS`.
"""

from __future__ import annotations

import datetime as dt
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from score.cdm.fingerprint_check import FingerprintCheck
from score.errors import DatabaseError
from score.execution.engines.kinds import database_label, engine_kind, is_database_url
from score.execution.processes.messages import (
    QUERY_LANE,
    Execute,
    Fingerprint,
    Prepare,
    ReadCsv,
    Run,
    RunUnguarded,
    lane,
    time_limit,
)
from score.execution.processes.sandbox import WorkerDied, WorkerKilled, WorkerPool, WorkerSpec
from score.execution.processes.stream import WorkerStream
from score.execution.result import QueryError, QueryResult
from score.execution.settings import ExecutorSettings

__all__ = ["Executor", "ExecutorSettings", "PreparedQuery", "QueryStream"]


@dataclass(frozen=True)
class PreparedQuery:
    """SQL that passed the guard and DuckDB's parser, with a fixed today pinned.

    Only :meth:`Executor.prepare` makes one; :meth:`Executor.run` runs only these, so
    no caller can skip the guard by accident.
    """

    sql: str
    _guarded: object = None


_GUARDED = object()


class Executor:
    """Runs read-only SELECTs on one OMOP database.  Thread-safe: each thread's query
    runs in its own worker process, so N threads use N workers.

    >>> with Executor(score.database()) as ex:  # doctest: +SKIP
    ...     ex.execute("SELECT count(*) AS n FROM cdm.person").rows()
    [(1130,)]
    """

    def __init__(
        self,
        db_path: str | Path,
        schema: str | None = None,
        settings: ExecutorSettings | None = None,
        *,
        sql_dialect: str | None = None,
    ) -> None:
        self.settings = settings or ExecutorSettings()
        # the dialect the caller's SQL is written in when it is not the engine's own
        # (curation's golds are DuckDB SQL on every engine): execute() transpiles from it
        self.sql_dialect = sql_dialect
        self.db_path = str(db_path)
        self.db_label = database_label(db_path)  # no password
        if not is_database_url(db_path) and not Path(db_path).is_file():
            raise DatabaseError(
                f"no database file at {db_path} (build one with `make db`)", path=self.db_path
            )
        self._pool = WorkerPool(WorkerSpec(self.db_path, schema, self.settings))
        self._pool.release(self._pool.acquire())  # the first worker opens the database now
        info = self._pool.first_info
        assert info is not None
        self.engine = info.name
        self.kind = engine_kind(db_path)
        self.dialect = "postgres" if info.name == "postgresql" else info.name
        self.schema = info.schema
        self.tables = info.tables
        self.address_limit = info.address_limit
        #: what the engine's session fixes or the server sets that bears on a query's
        #: meaning (``{"TimeZone": "UTC", ...}``), reported in a run's summary
        self.session_settings = dict(info.session or {})
        self._fingerprint: FingerprintCheck | None = None
        self._lock = threading.Lock()

    # -- context ---------------------------------------------------------------
    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._pool.close()

    @property
    def fingerprint(self) -> str:
        """The content fingerprint of the data in the database (checked, never taken from
        ``sqlgold.build_info`` on trust: see :mod:`score.cdm.fingerprint_check`)."""
        return self.fingerprint_check.fingerprint

    @property
    def fingerprint_check(self) -> FingerprintCheck:
        """The fingerprint, how it was obtained and whether ``db build`` stored another."""
        with self._lock:
            if self._fingerprint is None:
                self._fingerprint = self._pool.call(Fingerprint(), None)
            return self._fingerprint

    # -- running ---------------------------------------------------------------
    def call(self, request: Any, *, fresh: bool = False) -> Any:
        """Handle a worker request (:mod:`score.execution.processes.messages`) under the
        time limit; a worker that must be killed or dies is this request's QueryError.
        With ``fresh`` the request runs in a newly started worker."""
        try:
            return self._pool.call(
                request, self._kill_after(request), lane=lane(request), fresh=fresh
            )
        except (WorkerKilled, WorkerDied) as e:
            raise self._ended(e) from None

    def start_workers(self, count: int) -> None:
        """Have ``count`` query processes open before they are needed (``count`` threads
        calling at once then wait for no process to start)."""
        self._pool.start_idle(count)

    def start_ahead(self, workers: dict[str, int]) -> None:
        """Have as many query processes of each lane as ``workers`` says open before they
        are needed, started at once in the background (the caller goes on meanwhile):
        the pipeline's parse and run lanes and the gold results' stream each then find
        theirs ready, instead of each waiting for a start in turn."""
        for lane_name, count in workers.items():
            self._pool.start_ahead(lane_name, count - self._pool.alive(lane_name))

    def stream(self, lane: str = QUERY_LANE) -> QueryStream:
        """Requests of ``lane`` answered in order by one of its processes, each sent
        while the one before runs (:class:`QueryStream`)."""
        return QueryStream(self, lane)

    def _kill_after(self, request: Any) -> float:
        # a request given less than the time limit (the rest of an answer's) is killed
        # as much later than its own limit as a whole one would be
        settings = self.settings
        kill_after = settings.kill_after_seconds - settings.timeout_seconds
        return kill_after + time_limit(request, settings)

    def _ended(self, e: WorkerKilled | WorkerDied) -> QueryError:
        """The QueryError of a request whose worker had to be ended, or died."""
        settings = self.settings
        if isinstance(e, WorkerKilled):
            return QueryError(
                "timeout",
                f"stopped after {settings.timeout_seconds:g} s (the time limit; "
                "the query could not be interrupted and its process was ended)",
            )
        return QueryError("runtime_error", f"{e} (memory limit {settings.memory_limit})")

    def prepare(self, sql: str, *, today: dt.date | None = None) -> PreparedQuery:
        """Guard ``sql`` and pin a fixed today (``today``, else the settings' own); raise
        a QueryError if it may not run."""
        return PreparedQuery(self.call(Prepare(sql, today)), _GUARDED)

    def run(self, query: PreparedQuery) -> QueryResult:
        """Run a prepared query; raise a classified QueryError if it fails."""
        if not isinstance(query, PreparedQuery) or query._guarded is not _GUARDED:
            raise TypeError("run() takes a PreparedQuery made by prepare()")
        return self.call(Run(query.sql))

    def execute(
        self,
        sql: str,
        *,
        today: dt.date | None = None,
        fresh: bool = False,
        dialect: str | None = None,
    ) -> QueryResult:
        """Run one SELECT and return its result, or raise a classified QueryError;
        ``today`` overrides the settings' fixed today for this query, and ``dialect``
        names the SQL dialect ``sql`` was written for when it is not the engine's own
        (``duckdb`` for a gold on PostgreSQL): it is transpiled first.  Without it, SQL is
        taken to be written in the executor's ``sql_dialect``, else the engine's own."""
        if dialect is None and self.sql_dialect not in (None, self.dialect):
            dialect = self.sql_dialect
        return self.call(Execute(sql, today, dialect), fresh=fresh)

    def try_execute(
        self,
        sql: str,
        *,
        today: dt.date | None = None,
        fresh: bool = False,
        dialect: str | None = None,
    ) -> QueryResult | QueryError:
        """Like :meth:`execute`, but the error is returned instead of raised."""
        try:
            return self.execute(sql, today=today, fresh=fresh, dialect=dialect)
        except QueryError as e:
            return e

    def read_csv(self, path: str | Path, folder: str | Path) -> QueryResult:
        """A result relation stored as CSV (header row, types detected by DuckDB), read
        in the sandbox; ``path`` must be a regular file inside ``folder``."""
        return self.call(ReadCsv(str(path), str(folder)))

    def _run(self, sql: str) -> QueryResult:
        """Run ``sql`` past the guard and DuckDB's statement check (tests of the deeper
        layers only: as if a parser bug had let a statement through)."""
        return self.call(RunUnguarded(sql))

    # -- supervision -------------------------------------------------------------
    @property
    def workers_started(self) -> int:
        return self._pool.started

    @property
    def workers_replaced(self) -> int:
        """Workers killed at their time limit or lost, and replaced."""
        return self._pool.replaced

    def workers_peak_rss_kib(self) -> int:
        """A bound, in KiB, on the resident memory this executor's worker processes have
        held at once so far (see
        :meth:`score.execution.processes.sandbox.WorkerPool.peak_rss_kib`)."""
        return self._pool.peak_rss_kib()

    def workers_peak_rss_by_lane(self) -> dict[str, int]:
        """:meth:`workers_peak_rss_kib` per lane of workers (see
        :mod:`score.execution.processes.sandbox`)."""
        return self._pool.peak_rss_by_lane()

    def worker_cpu_seconds(self) -> float:
        """CPU seconds used by this executor's worker processes so far."""
        return self._pool.cpu_seconds()


class QueryStream:
    """Requests of one lane of an :class:`Executor` (one thread's), answered in order
    by one of its processes, each sent while the one before runs, so the process goes
    from one to the next without waiting for the caller (:mod:`score.execution.processes.stream`).
    Each request gets what :meth:`Executor.call` gives it: its time limit, and a
    QueryError if its process had to be ended or died.  A caller that makes a blocking
    call of the same lane :meth:`settle` s first, so that call reuses the process.
    """

    def __init__(self, executor: Executor, lane: str = QUERY_LANE) -> None:
        self._executor = executor
        self._lane = lane
        self._stream = WorkerStream(executor._pool, lane)

    @property
    def pending(self) -> int:
        return self._stream.pending

    def send(self, request: Any) -> None:
        if lane(request) != self._lane:
            raise ValueError(f"a {self._lane}-lane stream takes no {request!r}")
        self._stream.send(request, self._executor._kill_after(request))

    def receive(self) -> Any:
        """The oldest pending request's value; raises its QueryError."""
        try:
            return self._stream.receive()
        except (WorkerKilled, WorkerDied) as e:
            raise self._executor._ended(e) from None

    @property
    def last_seconds(self) -> float:
        """The seconds the request last received took in its query process (from when
        the process read it to its reply; to its kill if it was killed), whenever this
        thread read the reply."""
        return self._stream.last_seconds

    def settle(self) -> None:
        self._stream.settle()

    def close(self) -> None:
        self._stream.close()

    def __enter__(self) -> QueryStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class OpeningExecutor:
    """An :class:`Executor` being opened in a background thread, so a command can import
    its own machinery while the query process opens the database (the thread only waits
    on the fork server and the worker, so it holds the GIL for well under a millisecond).
    A context manager: leaving it closes the executor, opened or still opening.  With
    ``workers`` (query processes per lane), those are started too, in the background, as
    soon as the first one has opened the database (:meth:`Executor.start_ahead`).

    >>> with OpeningExecutor(score.database()) as opening:  # doctest: +SKIP
    ...     import heavy_module  # meanwhile, the database opens
    ...     opening.result().execute("SELECT 1 AS x").rows()
    [(1,)]
    """

    def __init__(
        self,
        db_path: str | Path,
        schema: str | None = None,
        settings: ExecutorSettings | None = None,
        *,
        sql_dialect: str | None = None,
        workers: dict[str, int] | None = None,
    ) -> None:
        self.settings = settings or ExecutorSettings()
        self._opened: Executor | None = None
        self._failed: BaseException | None = None
        self._thread = threading.Thread(
            target=self._open,
            args=(db_path, schema, self.settings, sql_dialect, workers),
            name="sqlgold-open",
            daemon=True,
        )
        self._thread.start()

    def _open(
        self,
        db_path: str | Path,
        schema: str | None,
        settings: Any,
        sql_dialect: str | None,
        workers: dict[str, int] | None,
    ) -> None:
        try:
            self._opened = Executor(db_path, schema, settings, sql_dialect=sql_dialect)
            if workers:  # once the database is known to open: the rest, all at once
                self._opened.start_ahead(workers)
        except BaseException as e:  # noqa: BLE001 - raised by result() in the caller's thread
            self._failed = e

    def result(self) -> Executor:
        """The open executor, once it is open; the error opening it raised, if any."""
        self._thread.join()
        if self._failed is not None:
            raise self._failed
        assert self._opened is not None
        return self._opened

    def __enter__(self) -> OpeningExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self._thread.join()
        if self._opened is not None:
            self._opened.close()
