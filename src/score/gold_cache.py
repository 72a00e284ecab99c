"""Gold results computed once and kept on disk, so rescoring runs no gold query.

A gold result is keyed by the database's content fingerprint (checked on open, see
:mod:`score.fingerprint_check`), the sha256 of the gold SQL, and what can change a
result: the fixed today (the task's own, else the executor's) and the row cap.  Results
are Arrow IPC files (column names and DuckDB types in the schema metadata); a gold that
failed is kept as its classified error, except a timeout, which may not recur.  Files
are written to a temporary name and renamed.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import threading
from pathlib import Path

import pyarrow as pa
import pyarrow.ipc as ipc

from .executor import Executor
from .result import QueryError, QueryResult

CACHE_FORMAT = "sqlgold.gold-cache/1"


class GoldCache:
    """Gold results of one database under one set of executor settings."""

    def __init__(self, directory: str | Path | None, executor: Executor) -> None:
        self.directory = Path(directory) if directory is not None else None
        self.executor = executor
        self._prefix = f"{CACHE_FORMAT}\n{executor.fingerprint}\n"
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
            with self._lock:
                if key in self._memory:
                    return self._memory[key]
            found = self._read(key)
            if found is None:
                found = self.executor.try_execute(sql, today=today)
                with self._lock:
                    self.executions += 1
                self._write(key, found)
            with self._lock:
                self._memory[key] = found
            return found

    # -- disk --------------------------------------------------------------------
    def _paths(self, key: str) -> tuple[Path, Path]:
        assert self.directory is not None
        sub = self.directory / key[:2]
        return sub / f"{key}.arrow", sub / f"{key}.error.json"

    def _read(self, key: str) -> QueryResult | QueryError | None:
        if self.directory is None:
            return None
        data, error = self._paths(key)
        try:
            if data.is_file():
                with pa.memory_map(str(data)) as source:
                    table = ipc.open_file(source).read_all()
                meta = table.schema.metadata or {}
                names = tuple(json.loads(meta[b"sqlgold.columns"]))
                types = tuple(json.loads(meta[b"sqlgold.types"]))
                table = table.rename_columns(list(names)).replace_schema_metadata(None)
                return QueryResult(names, types, table)
            if error.is_file():
                payload = json.loads(error.read_text(encoding="utf-8"))
                return QueryError(payload["kind"], payload["message"])
        except (OSError, KeyError, ValueError, pa.ArrowInvalid):
            return None  # a damaged entry is recomputed, never trusted
        return None

    def _write(self, key: str, found: QueryResult | QueryError) -> None:
        if self.directory is None:
            return
        if isinstance(found, QueryError) and found.kind == "timeout":
            return
        data, error = self._paths(key)
        data.parent.mkdir(parents=True, exist_ok=True)
        target = error if isinstance(found, QueryError) else data
        tmp = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            if isinstance(found, QueryError):
                tmp.write_text(json.dumps({"kind": found.kind, "message": found.message}))
            else:
                positional = found.table.rename_columns([f"c{i}" for i in range(found.num_columns)])
                positional = positional.replace_schema_metadata(
                    {
                        "sqlgold.columns": json.dumps(list(found.columns)),
                        "sqlgold.types": json.dumps(list(found.types)),
                    }
                )
                with pa.OSFile(str(tmp), "wb") as sink:
                    with ipc.new_file(sink, positional.schema) as writer:
                        writer.write_table(positional)
            os.replace(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)
