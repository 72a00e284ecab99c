"""What a sandbox worker can be asked to do, each a small picklable request.

A request is sent to a worker process (:mod:`score.execution.processes.sandbox`) and handled there
with the worker's :class:`Session` (its engine, its settings and the deadline of this request).
Requests with ``timed = True`` run under the query time limit, which starts when the
worker receives them: everything they do, parsing included, counts.  Other modules add
their own requests the same way (the scorer's is :class:`score.scoring.answer.Answer`).
A request's ``lane`` (default :data:`QUERY_LANE`) says which workers may handle it.
"""

from __future__ import annotations

import datetime as dt
import stat
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

from score.cdm.fingerprint_check import FingerprintCheck
from score.execution.engines.base import Engine, Limits
from score.execution.lanes import QUERY_LANE
from score.execution.result import QueryError, QueryResult
from score.execution.settings import ExecutorSettings
from score.execution.statement import Statement, prepare_statement


@dataclass
class Session:
    """What a request is handled with inside a worker."""

    engine: Engine
    settings: ExecutorSettings
    deadline: float | None = None  # time.monotonic() seconds; None: no time limit

    def limits(self) -> Limits:
        s = self.settings
        return Limits(self.deadline, s.max_rows, s.max_result_bytes, s.timeout_seconds)

    def prepare(
        self,
        sql: str,
        dialect: str | None = None,
        *,
        engine_check: bool = True,
        today: dt.date | None = None,
        private_tree: bool = False,
    ) -> Statement:
        """The guarded statement (see :func:`score.execution.statement.prepare_statement`) of
        ``sql`` written for ``dialect`` (default the engine's own), with ``today`` (else the
        settings' own) as the fixed today; leave ``engine_check`` off only when
        :meth:`run` follows, which checks it anyway."""
        settings = self.settings if today is None else replace(self.settings, today=today)
        return prepare_statement(
            sql,
            self.engine,
            settings,
            dialect,
            engine_check=engine_check,
            private_tree=private_tree,
        )

    def run(self, sql: str, *, check: bool = True, tree: Any = None) -> QueryResult:
        """Run ``sql`` (``tree``: sqlglot's parse of it, which an engine may check
        instead of parsing again)."""
        return self.engine.run(sql, self.limits(), check=check, tree=tree)


def lane(request: Any) -> str:
    """The workers that may handle ``request`` (:mod:`score.execution.processes.sandbox`): a worker
    keeps to one lane, so one that only parses never grows by running a query."""
    return getattr(type(request), "lane", QUERY_LANE)


def time_limit(request: Any, settings: ExecutorSettings) -> float:
    """Seconds a timed request may take: the time limit, or what a request that
    continues an earlier one (``seconds``: what that one left) is given."""
    left = getattr(request, "seconds", None)
    return settings.timeout_seconds if left is None else min(left, settings.timeout_seconds)


@dataclass(frozen=True)
class Prepare:
    """Guard ``sql``; the text that would run (a fixed today pinned in: ``today``,
    else the settings' own)."""

    sql: str
    today: dt.date | None = None
    timed: ClassVar[bool] = True

    def handle(self, session: Session) -> str:
        return session.prepare(self.sql, today=self.today).sql


@dataclass(frozen=True)
class Run:
    """Run SQL that :class:`Prepare` admitted (DuckDB's parser checks it again)."""

    sql: str
    timed: ClassVar[bool] = True

    def handle(self, session: Session) -> QueryResult:
        return session.run(self.sql)


@dataclass(frozen=True)
class Execute:
    """Guard and run ``sql`` (written for ``dialect``, default the engine's own; under
    ``today``, else the settings' fixed today)."""

    sql: str
    today: dt.date | None = None
    dialect: str | None = None
    timed: ClassVar[bool] = True

    def handle(self, session: Session) -> QueryResult:
        statement = session.prepare(self.sql, self.dialect, engine_check=False, today=self.today)
        return session.run(statement.sql, tree=statement.checked_tree)


@dataclass(frozen=True)
class RunUnguarded:
    """Run ``sql`` past the guard and the statement check: only tests of the sandbox's
    deeper layers send this (as if a parser bug had let a statement through)."""

    sql: str
    timed: ClassVar[bool] = True

    def handle(self, session: Session) -> QueryResult:
        return session.run(self.sql, check=False)


@dataclass(frozen=True)
class ReadCsv:
    """A result relation stored as a CSV file, which must lie inside ``folder``."""

    path: str
    folder: str
    timed: ClassVar[bool] = True

    def handle(self, session: Session) -> QueryResult:
        path = confined_file(self.path, self.folder)
        return session.engine.read_csv(
            str(path), str(Path(self.folder).resolve()), session.limits()
        )


@dataclass(frozen=True)
class Fingerprint:
    """The database's content fingerprint, computed (no time limit: it reads every table)."""

    timed: ClassVar[bool] = False

    def handle(self, session: Session) -> Any:
        check = getattr(session.engine, "fingerprint_check", None)
        if check is not None:  # a file engine: cached for the file's exact state
            return check()
        return FingerprintCheck(session.engine.compute_fingerprint(), "computed", None, None)


def confined_file(path: str, folder: str) -> Path:
    """``path`` (relative to ``folder`` unless absolute) resolved, if it is a regular file
    inside ``folder``; else a QueryError saying why.

    >>> confined_file("/etc/hostname", "/tmp")
    Traceback (most recent call last):
    ...
    score.execution.result.QueryError: runtime_error: '/etc/hostname' is outside the index's folder
    """
    root = Path(folder).resolve()
    target = Path(path)
    if not target.is_absolute():
        target = root / target
    try:
        resolved = target.resolve(strict=True)
    except (OSError, RuntimeError):
        raise QueryError("runtime_error", f"{path!r}: no such file") from None
    if not resolved.is_relative_to(root):
        raise QueryError("runtime_error", f"{path!r} is outside the index's folder")
    try:
        mode = resolved.stat().st_mode
    except OSError as e:
        raise QueryError("runtime_error", f"{path!r}: {e.strerror}") from None
    if not stat.S_ISREG(mode):
        raise QueryError("runtime_error", f"{path!r} is not a regular file")
    return resolved
