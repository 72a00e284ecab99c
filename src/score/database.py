"""Reading an OMOP CDM DuckDB file: where its tables are, their sizes, its fingerprint.

The fingerprint identifies a database by content, not by file bytes: for every CDM
table present, the md5 of each row's text is computed, the row hashes are sorted and
hashed again; the database fingerprint is the sha256 over ``table, column types, row
count, table hash`` lines in table order.  Two builds of the same data therefore give
the same fingerprint even though their files differ.  ``sqlgold db build`` stores the
fingerprint in the table ``sqlgold.build_info`` so it is not recomputed on every open.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import duckdb

from .cdm_schema import CDM_TABLES
from .errors import DatabaseError

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
    fingerprint_stored: bool


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
    candidates = list_schemas_with_person(con, catalog)
    if schema is not None:
        names = {
            r[0]
            for r in con.execute(
                "SELECT schema_name FROM duckdb_schemas() WHERE database_name = ?", [catalog]
            ).fetchall()
        }
        if schema not in names:
            raise DatabaseError(
                f"schema {schema!r} not found (schemas with a person table: "
                f"{', '.join(candidates) or 'none'})"
            )
        return schema
    if len(candidates) == 1:
        return candidates[0]
    if not candidates:
        raise DatabaseError("no schema has a person table; is this an OMOP CDM database?")
    raise DatabaseError(
        f"several schemas have a person table ({', '.join(candidates)}); choose one with --schema"
    )


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


def table_hash(con: duckdb.DuckDBPyConnection, qualified: str) -> tuple[int, str]:
    """(row count, md5 over the sorted md5s of every row's text) of one table."""
    count, digest = con.execute(
        f"SELECT count(*), coalesce(md5(string_agg(h, '' ORDER BY h)), '') "
        f"FROM (SELECT md5(CAST(t AS VARCHAR)) AS h FROM {qualified} AS t)"
    ).fetchone()
    return int(count), digest


def compute_fingerprint(
    con: duckdb.DuckDBPyConnection, catalog: str, schema: str
) -> tuple[str, tuple[TableInfo, ...]]:
    """Hash every CDM table's sorted content; return the fingerprint and the tables."""
    tables = cdm_tables_in(con, catalog, schema)
    lines: list[str] = []
    infos: list[TableInfo] = []
    for cdm_name in sorted(tables):
        real = tables[cdm_name]
        cols = table_columns(con, catalog, schema, real)
        rows, digest = table_hash(con, f"{quote(catalog)}.{quote(schema)}.{quote(real)}")
        types = ",".join(f"{n.lower()}:{t}" for n, t in cols)
        lines.append(f"{cdm_name}\t{types}\t{rows}\t{digest}")
        infos.append(TableInfo(cdm_name, rows, cols))
    fingerprint = hashlib.sha256("\n".join(lines).encode()).hexdigest()
    return fingerprint, tuple(infos)


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
    path: str | Path, schema: str | None = None, *, recompute: bool = False
) -> DatabaseInfo:
    """Tables, row counts and fingerprint of the OMOP database at ``path``.

    The stored fingerprint is used when the file has one and ``recompute`` is false.
    """
    con = duckdb.connect()
    try:
        attach_read_only(con, path, "omop")
        found = find_cdm_schema(con, "omop", schema)
        stored = read_build_info(con, "omop")
        tables = cdm_tables_in(con, "omop", found)
        if stored.get("fingerprint") and stored.get("schema") == found and not recompute:
            infos = []
            for cdm_name in sorted(tables):
                real = tables[cdm_name]
                (rows,) = con.execute(
                    f"SELECT count(*) FROM omop.{quote(found)}.{quote(real)}"
                ).fetchone()
                infos.append(
                    TableInfo(cdm_name, int(rows), table_columns(con, "omop", found, real))
                )
            fingerprint, stored_flag = stored["fingerprint"], True
            infos_t = tuple(infos)
        else:
            fingerprint, infos_t = compute_fingerprint(con, "omop", found)
            stored_flag = False
        missing = tuple(t for t in CDM_TABLES if t not in tables)
        return DatabaseInfo(str(path), found, infos_t, missing, fingerprint, stored_flag)
    finally:
        con.close()


def _sql_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"
