"""What every engine is and shares: the :class:`Engine` protocol, the limits one query
runs under, the names a query refers to, and the errors every engine words alike.

An :class:`Engine` is one database opened read-only inside a sandbox worker process
(:mod:`score.execution.processes.sandbox`).  It runs one already-guarded query at a time
under a deadline, a row cap and a result-size cap, streams the result to Arrow,
classifies its own errors as :class:`~score.execution.result.QueryError` kinds, and
leaves nothing behind for the next query.  Engine-independent checks (the statement
guard, the SQL size limit, the fixed today) happen before a query reaches it
(:mod:`score.execution.statement`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from score.execution.result import QueryError, QueryResult


@dataclass(frozen=True)
class Limits:
    """What one query may take: a deadline (``time.monotonic()`` seconds), rows, bytes."""

    deadline: float | None
    max_rows: int
    max_bytes: int
    timeout_seconds: float


@dataclass(frozen=True)
class Reference:
    """A name a query refers to, as the engine's own parser read it: ``kind`` is
    ``function``, ``table`` or ``column`` (an unqualified column name, which may be a
    keyword such as ``CURRENT_DATE``); ``schema`` is empty when not qualified."""

    kind: str
    name: str
    schema: str = ""


@dataclass(frozen=True)
class ServerInfo:
    """What ``sqlgold db info`` says of a CDM on a server: where (a URL without its
    password), the schema, every CDM table's rows, the CDM tables missing, and the
    fingerprint the server computed."""

    where: str
    schema: str
    tables: tuple[tuple[str, int], ...]  # (CDM table, rows)
    missing: tuple[str, ...]
    fingerprint: str
    how: str = "computed by the server"  # how the fingerprint was had (FingerprintCheck.how)


class Engine(Protocol):
    """One database opened read-only; every method may raise a QueryError."""

    @property
    def name(self) -> str: ...

    @property
    def dialect(self) -> str:
        """sqlglot's name of the SQL dialect the engine runs."""

    @property
    def schema(self) -> str:
        """The schema of the database holding the CDM tables."""

    @property
    def tables(self) -> Mapping[str, str]:
        """CDM table name -> the real table name."""

    @property
    def broken(self) -> bool:
        """Set when the connection cannot be trusted for another query."""

    def stored_fingerprint(self) -> str | None:
        """The content fingerprint stored in the database, if any."""

    def compute_fingerprint(self) -> str:
        """The content fingerprint, computed from every CDM table."""

    def check(self, sql: str) -> None:
        """The engine's own parser must agree: exactly one read-only SELECT."""

    def check_ahead(self, tree: Any) -> bool:
        """Do now what :meth:`run` would check, if that check reads nothing but
        ``tree`` (sqlglot's parse of the SQL in the engine's dialect): True when done, so
        a :meth:`run` of that SQL in another process may leave its check off; False when
        the check needs the engine itself (its own parser, or a translation) at run."""

    def references(self, sql: str) -> list[Reference] | None:
        """Every function and table ``sql`` names, by the engine's own parser (None if
        the engine cannot tell); used when sqlglot cannot read a query."""

    def run(self, sql: str, limits: Limits, *, check: bool = True, tree: Any = None) -> QueryResult:
        """Run guarded SQL and return its result; nothing it does outlives it.  With
        ``check`` (always, except when :meth:`check_ahead` did it, and in tests of the
        deeper layers) the engine's own parser must first agree that it is exactly one
        read-only SELECT.  ``tree`` is sqlglot's parse of exactly ``sql`` in the
        engine's dialect when the caller has one: an engine whose check reads sqlglot's
        tree checks it instead of parsing again."""

    def read_csv(self, path: str, folder: str, limits: Limits) -> QueryResult:
        """A CSV file inside ``folder`` read as a result relation (types detected)."""

    def close(self) -> None: ...


def timeout_error(limits: Limits) -> QueryError:
    """The error of a query stopped at its time limit, worded alike on every engine.

    >>> timeout_error(Limits(None, 10, 10, 2.5)).message
    'stopped after 2.5 s (the time limit)'
    """
    return QueryError("timeout", f"stopped after {limits.timeout_seconds:g} s (the time limit)")


def first_line(e: BaseException) -> str:
    """The first line of an error's text, or its type's name if it has none.

    >>> first_line(ValueError("bad value\\nmore detail")), first_line(KeyError())
    ('bad value', 'KeyError')
    """
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__
