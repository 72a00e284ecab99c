"""Gold results computed once and kept on disk, so rescoring runs no gold query.

A gold result is keyed by the database's content fingerprint (checked on open, see
:mod:`score.cdm.fingerprint_check`), the sha256 of the gold SQL, and what can change a
result: the fixed today (the task's own, else the executor's) and the row cap.  Results
are Arrow IPC files (column names and DuckDB types in the schema metadata; the values a
driver returns that the table holds only approximately, PostgreSQL's NUMERIC, as their exact
text in columns of their own), written to a temporary name and renamed.

:meth:`GoldCache.run_ahead` runs the golds a scoring will compare with on a query process
of its own, in a thread, before they are asked for: the comparisons find them ready, and
the process running the predictions never waits for a gold.

Only verified successes are stored on disk.  A gold that fails for want of time or
memory (``timeout``, ``runtime_error``; under ``--jobs`` other queries may have been
competing) is run once more in a freshly started worker before its failure is
reported; a failure is remembered for the rest of the run only (so a task's other
languages do not run it again) and never written, so a later run tries again.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import threading
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.ipc as ipc

from score.execution.executor import Executor
from score.execution.result import QueryError, QueryResult
from score.files import write_atomic

CACHE_FORMAT = "sqlgold.gold-cache/1"

#: The dialect every task's gold SQL is written in (transpiled on other engines).
GOLD_DIALECT = "duckdb"

#: Gold failures that may be the machine's and not the query's: retried in a fresh worker.
RETRIED_KINDS = frozenset({"timeout", "runtime_error"})


class GoldCache:
    """Gold results of one database under one set of executor settings."""

    def __init__(self, directory: str | Path | None, executor: Executor) -> None:
        self.directory = Path(directory) if directory is not None else None
        self.executor = executor
        engine = "" if executor.engine == "duckdb" else f"{executor.engine}\n"
        self._prefix = f"{CACHE_FORMAT}\n{engine}{executor.fingerprint}\n"
        self._rows = executor.settings.max_rows
        self._memory: dict[str, QueryResult | QueryError] = {}
        self._lock = threading.Lock()
        self._key_locks: dict[str, threading.Lock] = {}
        self.executions = 0  # gold queries actually run (not served from the cache)
        self._ahead: dict[str, threading.Event] = {}  # keys run_ahead will settle
        self._failed_ahead: dict[str, QueryError] = {}  # its run's failure, to retry
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if self.directory is not None:
            self.directory.mkdir(parents=True, exist_ok=True)

    def key(self, sql: str, today: dt.date | None = None) -> str:
        today = today if today is not None else self.executor.settings.today
        day = today.isoformat() if today else "-"
        return hashlib.sha256(f"{self._prefix}{day}\n{self._rows}\n{sql}".encode()).hexdigest()

    def result(self, sql: str, *, today: dt.date | None = None) -> QueryResult | QueryError:
        """The gold result of ``sql`` (under ``today``, else the executor's fixed today):
        from memory, from disk, or by running it once."""
        key = self._settled(self.key(sql, today))
        with self._lock:
            if key in self._memory:
                return self._memory[key]
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        with key_lock:  # two threads asking for the same gold run it once
            found = self._stored(key)
            if found is None:
                found = self._run(sql, today, self._failed_ahead.pop(key, None))
                if isinstance(found, QueryResult):
                    self._write(key, found)
                with self._lock:
                    self._memory[key] = found
            return found

    def put(self, sql: str, result: QueryResult, *, today: dt.date | None = None) -> None:
        """Keep ``result`` as the gold result of ``sql`` (under ``today``), in memory and
        on disk: curation, which verified it, leaves it for the scorings to come."""
        key = self.key(sql, today)
        self._write(key, result)
        with self._lock:
            self._memory[key] = result

    def known(self, sql: str, *, today: dt.date | None = None) -> bool:
        """Whether :meth:`result` would give the gold result of ``sql`` without running
        it: it is in memory, or read from disk now (and kept in memory)."""
        return self._stored(self.key(sql, today)) is not None

    # -- ahead of need -------------------------------------------------------------
    def run_ahead(self, golds: list[tuple[str, dt.date | None]]) -> None:
        """Run the gold queries of ``golds`` (SQL and fixed today, in the order they will
        be asked for) in a thread of this cache, through a stream of one query process,
        so :meth:`result` finds them ready.  Those in memory or on disk are not run; a
        failure that may be the machine's (:data:`RETRIED_KINDS`) is left to
        :meth:`result`, which runs it again in a fresh process.  :meth:`close` stops it."""
        todo: list[tuple[str, str, dt.date | None]] = []
        with self._lock:
            for sql, today in golds:
                key = self.key(sql, today)
                if key in self._memory or key in self._ahead:
                    continue
                self._ahead[key] = threading.Event()
                todo.append((key, sql, today))
        if not todo:
            return
        self._thread = threading.Thread(
            target=self._ahead_of_need, args=(todo,), name="sqlgold-golds", daemon=True
        )
        self._thread.start()

    def _ahead_of_need(self, todo: list[tuple[str, str, dt.date | None]]) -> None:
        from score.execution.processes.messages import Execute

        sent: list[tuple[str, str]] = []
        try:
            with self.executor.stream() as stream:
                for key, sql, today in todo:
                    if self._stop.is_set():
                        break
                    if self._stored(key) is None:
                        stream.send(Execute(sql, today, GOLD_DIALECT))
                        sent.append((key, sql))
                        while stream.pending > 2:
                            self._take_ahead(stream, *sent.pop(0))
                    else:
                        self._ahead[key].set()
                while sent and not self._stop.is_set():
                    self._take_ahead(stream, *sent.pop(0))
        except Exception:  # noqa: BLE001 - result() runs whatever is left, and says why
            pass
        finally:
            for event in self._ahead.values():
                event.set()

    def _take_ahead(self, stream, key: str, sql: str) -> None:
        try:
            found: QueryResult | QueryError = stream.receive()
        except QueryError as e:
            found = e
        with self._lock:
            self.executions += 1
        if isinstance(found, QueryResult):
            self._write(key, found)
        with self._lock:
            if isinstance(found, QueryResult) or found.kind not in RETRIED_KINDS:
                self._memory.setdefault(key, found)
            else:  # result() retries it in a fresh process, as it retries its own runs
                self._failed_ahead[key] = found
        self._ahead[key].set()

    def _settled(self, key: str) -> str:
        """``key``, once :meth:`run_ahead` is done with it (at once when it has no part)."""
        event = self._ahead.get(key)
        if event is not None:
            event.wait()
        return key

    def close(self) -> None:
        """Stop running golds ahead (those under way are waited for)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _stored(self, key: str) -> QueryResult | QueryError | None:
        """The result under ``key`` in memory, else read from disk into memory; None."""
        with self._lock:
            if key in self._memory:
                return self._memory[key]
        found = self._read(key)
        if found is not None:
            with self._lock:
                found = self._memory.setdefault(key, found)
        return found

    def _run(
        self, sql: str, today: dt.date | None, failed: QueryError | None = None
    ) -> QueryResult | QueryError:
        """Run the gold, and once more in a fresh process if it failed for want of time
        or memory; ``failed``: its first run's failure (run ahead), only retried."""
        runs = 0
        found: QueryResult | QueryError | None = failed
        if found is None:
            found = self.executor.try_execute(sql, today=today, dialect=GOLD_DIALECT)
            runs = 1
        if isinstance(found, QueryError) and found.kind in RETRIED_KINDS:
            found = self.executor.try_execute(sql, today=today, fresh=True, dialect=GOLD_DIALECT)
            runs += 1
        with self._lock:
            self.executions += runs
        return found

    # -- disk --------------------------------------------------------------------
    def _path(self, key: str) -> Path:
        assert self.directory is not None
        return self.directory / key[:2] / f"{key}.arrow"

    def _read(self, key: str) -> QueryResult | None:
        if self.directory is None:
            return None
        data = self._path(key)
        try:
            if data.is_file():
                with pa.memory_map(str(data)) as source:
                    table = ipc.open_file(source).read_all()
                meta = table.schema.metadata or {}
                names = tuple(json.loads(meta[b"sqlgold.columns"]))
                types = tuple(json.loads(meta[b"sqlgold.types"]))
                exact_at = json.loads(meta.get(b"sqlgold.exact", b"[]"))
                exact = {
                    i: [
                        None if v is None else Decimal(v) for v in table.column(f"x{i}").to_pylist()
                    ]
                    for i in exact_at
                }
                table = table.select(list(range(len(names))))
                table = table.rename_columns(list(names)).replace_schema_metadata(None)
                return QueryResult(names, types, table, exact_values=exact or None)
        except (OSError, KeyError, ValueError, pa.ArrowInvalid):
            return None  # a damaged entry is recomputed, never trusted
        return None

    def _write(self, key: str, found: QueryResult) -> None:
        if self.directory is None:
            return
        positional = found.table.rename_columns([f"c{i}" for i in range(found.num_columns)])
        exact = found.exact_values or {}
        for i, values in sorted(exact.items()):
            texts = pa.array([None if v is None else str(v) for v in values], pa.string())
            positional = positional.append_column(f"x{i}", texts)
        positional = positional.replace_schema_metadata(
            {
                "sqlgold.columns": json.dumps(list(found.columns)),
                "sqlgold.types": json.dumps(list(found.types)),
                **({"sqlgold.exact": json.dumps(sorted(exact))} if exact else {}),
            }
        )
        sink = pa.BufferOutputStream()
        with ipc.new_file(sink, positional.schema) as writer:
            writer.write_table(positional)
        data = sink.getvalue().to_pybytes()
        path = self._path(key)
        if _holds(path, data):
            return  # a recuration: renaming over a file costs a flush to disk on ext4
        write_atomic(path, data)


def _holds(path: Path, data: bytes) -> bool:
    """Whether the file at ``path`` holds exactly ``data`` (False if it cannot be read)."""
    try:
        if path.stat().st_size != len(data):
            return False
        return path.read_bytes() == data
    except OSError:
        return False
