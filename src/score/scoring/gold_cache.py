"""Gold results computed once and kept on disk, so rescoring runs no gold query.

A gold result is keyed by the database's content fingerprint (checked on open, see
:mod:`score.cdm.fingerprint_check`), the sha256 of the gold SQL, and what can change a
result: the fixed today (the task's own, else the executor's) and the row cap.  Results
are Arrow IPC files (column names and DuckDB types in the schema metadata; the values a
driver returns that the table holds only approximately, PostgreSQL's NUMERIC, as their exact
text in columns of their own), written to a temporary name and renamed.

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
from score.files import replacing

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
        if self.directory is not None:
            self.directory.mkdir(parents=True, exist_ok=True)

    def key(self, sql: str, today: dt.date | None = None) -> str:
        today = today if today is not None else self.executor.settings.today
        day = today.isoformat() if today else "-"
        return hashlib.sha256(f"{self._prefix}{day}\n{self._rows}\n{sql}".encode()).hexdigest()

    def result(self, sql: str, *, today: dt.date | None = None) -> QueryResult | QueryError:
        """The gold result of ``sql`` (under ``today``, else the executor's fixed today):
        from memory, from disk, or by running it once."""
        key = self.key(sql, today)
        with self._lock:
            if key in self._memory:
                return self._memory[key]
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        with key_lock:  # two threads asking for the same gold run it once
            found = self._stored(key)
            if found is None:
                found = self._run(sql, today)
                if isinstance(found, QueryResult):
                    self._write(key, found)
                with self._lock:
                    self._memory[key] = found
            return found

    def known(self, sql: str, *, today: dt.date | None = None) -> bool:
        """Whether :meth:`result` would give the gold result of ``sql`` without running
        it: it is in memory, or read from disk now (and kept in memory)."""
        return self._stored(self.key(sql, today)) is not None

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

    def _run(self, sql: str, today: dt.date | None) -> QueryResult | QueryError:
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
        with replacing(self._path(key)) as tmp, pa.OSFile(str(tmp), "wb") as sink:
            with ipc.new_file(sink, positional.schema) as writer:
                writer.write_table(positional)
