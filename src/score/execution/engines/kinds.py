"""Which engine a database needs, from what ``--db`` says: the one place that decides.

A DuckDB file path, ``postgresql://USER:PASSWORD@HOST:PORT/DB`` (or ``postgres://``) and
``sc://HOST:PORT`` (Spark Connect) are the forms sqlgold opens; a URL of any other scheme is
refused by name.  This module imports no engine, so a command can decide before it loads
one.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from urllib.parse import urlsplit

from score.errors import DatabaseError


class EngineKind(StrEnum):
    """The engines sqlgold runs queries on; the value is sqlglot's dialect name."""

    DUCKDB = "duckdb"
    POSTGRES = "postgres"
    SPARK = "spark"


#: URL schemes by engine (anything else with ``://`` is refused by name).
URL_SCHEMES = {
    "postgresql": EngineKind.POSTGRES,
    "postgres": EngineKind.POSTGRES,
    "sc": EngineKind.SPARK,
}


def engine_kind(db: str | Path) -> EngineKind:
    """The engine that opens ``db``: a DuckDB file path, ``postgresql://...`` or
    ``sc://host:port``; a URL of any other scheme is a DatabaseError naming those.

    >>> [engine_kind(d).value for d in ("a.duckdb", "postgresql://u@h/omop", "sc://h:15002")]
    ['duckdb', 'postgres', 'spark']
    >>> engine_kind("mysql://x@y/z")
    Traceback (most recent call last):
    ...
    score.errors.DatabaseError: [database] mysql://x@y/z: sqlgold cannot open a mysql:// \
database; --db takes a DuckDB file, postgresql://USER:PASSWORD@HOST:PORT/DB or sc://HOST:PORT
    """
    text = str(db)
    scheme, sep, _ = text.partition("://")
    if not sep or not scheme.replace("+", "").isalnum():
        return EngineKind.DUCKDB
    kind = URL_SCHEMES.get(scheme.lower())
    if kind is None:
        raise DatabaseError(
            f"sqlgold cannot open a {scheme}:// database; --db takes a DuckDB file, "
            "postgresql://USER:PASSWORD@HOST:PORT/DB or sc://HOST:PORT",
            path=redact(text),
        )
    return kind


def is_database_url(db: object) -> bool:
    """Whether ``db`` names a database server rather than a file.

    >>> is_database_url("postgresql://reader@localhost:5432/omop"), is_database_url("a.duckdb")
    (True, False)
    >>> is_database_url("sc://localhost:15002")
    True
    """
    return isinstance(db, str | Path) and engine_kind(db) is not EngineKind.DUCKDB


def database_label(db: str | Path) -> str:
    """How a database is named in outputs: a URL without its password, or a path as given,
    one in the home folder written from ``~`` (the embedded database, in the user cache
    folder, is named alike on every machine: outputs stay byte-identical).

    >>> database_label(Path.home() / ".cache" / "sqlgold" / "omop" / "synthea1k.duckdb")
    '~/.cache/sqlgold/omop/synthea1k.duckdb'
    >>> database_label("data/cdm.duckdb")
    'data/cdm.duckdb'
    """
    if is_database_url(db):
        return redact(str(db))
    path = Path(db)
    if path.is_absolute():
        try:
            return "~/" + path.relative_to(Path.home()).as_posix()
        except ValueError:
            pass
    return str(db)


def redact(url: str) -> str:
    """A URL fit to print: the password replaced.

    >>> redact("postgresql://reader:s3cret@db:5432/omop")
    'postgresql://reader:***@db:5432/omop'
    """
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user, _, host = parts.netloc.rpartition("@")
    return url.replace(parts.netloc, f"{user.split(':')[0]}:***@{host}", 1)
