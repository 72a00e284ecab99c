"""Reading an OMOP CDM DuckDB file: where its tables are, their sizes, its fingerprint.

The fingerprint identifies a database by content, not by file bytes
(:mod:`score.cdm.fingerprint` defines it on values, the same on every engine); it is always
the fingerprint of the data the file holds now, computed or taken from a cache that is
valid only for the file's exact state (:mod:`score.cdm.fingerprint_check`).  The one
``sqlgold db build`` stored in ``sqlgold.build_info`` is a cross-check, never trusted
alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb

from score.cdm.fingerprint_check import FingerprintCache, FingerprintCheck, checked_fingerprint
from score.cdm.schema import CDM_TABLES
from score.errors import DatabaseError

INFO_SCHEMA = "sqlgold"
INFO_TABLE = "build_info"


@dataclass(frozen=True)
class TableInfo:
    name: str
    rows: int
    columns: tuple[tuple[str, str], ...]  # (name, DuckDB type)


@dataclass(frozen=True)
class DatabaseInfo:
    path: str
    schema: str
    tables: tuple[TableInfo, ...]
    missing: tuple[str, ...]  # CDM tables the schema lacks
    fingerprint: str
    fingerprint_check: FingerprintCheck


def quote(name: str) -> str:
    """A DuckDB identifier in double quotes.

    >>> quote('my "odd" name')
    '"my ""odd"" name"'
    """
    return '"' + name.replace('"', '""') + '"'


def list_schemas_with_person(con: duckdb.DuckDBPyConnection, catalog: str) -> list[str]:
    rows = con.execute(
        "SELECT DISTINCT schema_name FROM duckdb_tables() "
        "WHERE database_name = ? AND lower(table_name) = 'person' "
        "UNION SELECT DISTINCT schema_name FROM duckdb_views() "
        "WHERE database_name = ? AND lower(view_name) = 'person' AND NOT internal",
        [catalog, catalog],
    ).fetchall()
    return sorted(r[0] for r in rows)


def find_cdm_schema(con: duckdb.DuckDBPyConnection, catalog: str, schema: str | None) -> str:
    """The schema of ``catalog`` holding the CDM tables: ``schema`` if given, else the
    only schema with a ``person`` table."""
    if schema is not None:
        names = {
            r[0]
            for r in con.execute(
                "SELECT schema_name FROM duckdb_schemas() WHERE database_name = ?", [catalog]
            ).fetchall()
        }
        if schema not in names:
            candidates = list_schemas_with_person(con, catalog)
            raise DatabaseError(
                f"schema {schema!r} not found (schemas with a person table: "
                f"{', '.join(candidates) or 'none'})"
            )
        return schema
    candidates = list_schemas_with_person(con, catalog)
    if len(candidates) == 1:
        return candidates[0]
    if not candidates:
        raise DatabaseError("no schema has a person table; is this an OMOP CDM database?")
    raise DatabaseError(
        f"several schemas have a person table ({', '.join(candidates)}); choose one with --schema"
    )


def use_cdm_schema(con: duckdb.DuckDBPyConnection, schema: str | None) -> None:
    """Make the CDM schema of ``con``'s database (``schema``, or the only one with a
    ``person`` table) the one unqualified names read."""
    catalog = con.execute("SELECT current_database()").fetchall()[0][0]
    con.execute(f"USE {quote(catalog)}.{quote(find_cdm_schema(con, catalog, schema))}")


def cdm_tables_in(con: duckdb.DuckDBPyConnection, catalog: str, schema: str) -> dict[str, str]:
    """CDM table name -> the real (case-preserved) table or view name in ``schema``."""
    rows = con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = ? AND schema_name = ? "
        "UNION ALL SELECT view_name FROM duckdb_views() "
        "WHERE database_name = ? AND schema_name = ? AND NOT internal",
        [catalog, schema, catalog, schema],
    ).fetchall()
    present = {r[0].lower(): r[0] for r in rows}
    return {t: present[t] for t in CDM_TABLES if t in present}


def table_columns(
    con: duckdb.DuckDBPyConnection, catalog: str, schema: str, table: str
) -> tuple[tuple[str, str], ...]:
    rows = con.execute(
        "SELECT column_name, data_type FROM duckdb_columns() "
        "WHERE database_name = ? AND schema_name = ? AND table_name = ? ORDER BY column_index",
        [catalog, schema, table],
    ).fetchall()
    return tuple((r[0], r[1]) for r in rows)


def read_build_info(con: duckdb.DuckDBPyConnection, catalog: str) -> dict[str, str]:
    """The key/value pairs ``sqlgold db build`` stored, or {} for other databases."""
    exists = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE database_name = ? AND schema_name = ? "
        "AND table_name = ?",
        [catalog, INFO_SCHEMA, INFO_TABLE],
    ).fetchone()[0]
    if not exists:
        return {}
    rows = con.execute(
        f"SELECT key, value FROM {quote(catalog)}.{INFO_SCHEMA}.{INFO_TABLE}"
    ).fetchall()
    return {k: v for k, v in rows}


def attach_read_only(con: duckdb.DuckDBPyConnection, path: str | Path, alias: str) -> None:
    path = Path(path)
    if not path.is_file():
        raise DatabaseError(
            f"no database file at {path} (build one with `make db`)", path=str(path)
        )
    try:
        con.execute(f"ATTACH {_sql_string(str(path))} AS {quote(alias)} (READ_ONLY)")
    except duckdb.Error as e:
        raise DatabaseError(f"cannot open as a DuckDB database: {e}", path=str(path)) from e


def describe_database(
    path: str | Path,
    schema: str | None = None,
    *,
    recompute: bool = False,
    cache: FingerprintCache | None = None,
) -> DatabaseInfo:
    """Tables, row counts and fingerprint of the OMOP database at ``path``.

    The fingerprint is the data's (cached only for the file's exact state; ``recompute``
    skips the cache); what ``db build`` stored is reported beside it as a cross-check.
    """
    con = duckdb.connect()
    try:
        attach_read_only(con, path, "omop")
        found = find_cdm_schema(con, "omop", schema)
        tables = cdm_tables_in(con, "omop", found)
        infos = []
        for cdm_name in sorted(tables):
            real = tables[cdm_name]
            qualified = f"omop.{quote(found)}.{quote(real)}"
            (rows,) = con.execute(f"SELECT count(*) FROM {qualified}").fetchone()
            infos.append(TableInfo(cdm_name, int(rows), table_columns(con, "omop", found, real)))
        check = checked_fingerprint(
            con, "omop", found, path, read_build_info(con, "omop"), cache=cache, recompute=recompute
        )
        missing = tuple(t for t in CDM_TABLES if t not in tables)
        return DatabaseInfo(str(path), found, tuple(infos), missing, check.fingerprint, check)
    finally:
        con.close()


def _sql_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"
