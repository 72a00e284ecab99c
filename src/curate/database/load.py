"""``sqlgold db load``: copy an OMOP DuckDB database into PostgreSQL, schema ``cdm``.

Every CDM table present in the DuckDB file becomes a table of schema ``cdm`` with the
CDM v5.4 column types as OHDSI's PostgreSQL DDL writes them (``integer``, ``date``,
``timestamp``, ``numeric`` for the CDM's ``float``, ``varchar(n)``); a text longer than
the CDM's ``varchar`` length widens that column (reported), so no value is cut.  Rows
travel as CSV through ``COPY ... FROM STDIN``; the ids, ``person_id`` and main concept
columns are indexed as OHDSI's CDM indexes do (:func:`index_columns`).

The whole load is one transaction: the new tables are built in a scratch schema that
replaces ``cdm`` only at the end, so a failed load leaves the previous ``cdm`` as it was.
A login role ``sqlgold_reader`` gets ``USAGE`` on ``cdm``, ``SELECT`` on its tables and
nothing else (it owns nothing, creates nothing and may set ``temp_file_limit`` for its
own sessions); its URL is returned for ``--db``.  Schema ``cdm_nocase`` is built beside
it, the same tables as views under a case-insensitive collation, for curation's
collation check (:mod:`curate.database.nocase_schema`; skipped, and said so, on a server
built without ICU).
"""

from __future__ import annotations

import secrets
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote as url_quote
from urllib.parse import urlsplit, urlunsplit

import duckdb

from curate.database.nocase_schema import (
    create_nocase_schema,
    drop_nocase_schema,
    nocase_schema,
)
from score.cdm.duckdb_file import attach_read_only, cdm_tables_in, find_cdm_schema, table_columns
from score.cdm.schema import CDM_FIELD_TYPES
from score.errors import DatabaseError
from score.execution.engines.base import first_line
from score.execution.engines.kinds import redact

READER_ROLE = "sqlgold_reader"
TARGET_SCHEMA = "cdm"
_SCRATCH_SCHEMA = "sqlgold_loading"

#: DuckDB types of columns the CDM does not specify -> PostgreSQL types.
_DUCKDB_TO_POSTGRES = {
    "BOOLEAN": "boolean",
    "TINYINT": "smallint",
    "SMALLINT": "smallint",
    "INTEGER": "integer",
    "BIGINT": "bigint",
    "HUGEINT": "numeric",
    "FLOAT": "real",
    "DOUBLE": "double precision",
    "DATE": "date",
    "TIMESTAMP": "timestamp",
    "TIMESTAMP WITH TIME ZONE": "timestamptz",
    "TIME": "time",
    "VARCHAR": "text",
    "BLOB": "bytea",
    "UUID": "uuid",
}


def postgres_type(cdm_type: str) -> str:
    """The PostgreSQL type of a CDM v5.4 field type (OHDSI's PostgreSQL DDL).

    >>> postgres_type("integer"), postgres_type("float"), postgres_type("varchar(50)")
    ('integer', 'numeric', 'varchar(50)')
    >>> postgres_type("datetime")
    'timestamp'
    """
    if cdm_type.startswith("varchar"):
        return cdm_type.replace("varchar(max)", "text")
    return {"integer": "integer", "float": "numeric", "date": "date", "datetime": "timestamp"}[
        cdm_type
    ]


@dataclass(frozen=True)
class LoadedTable:
    name: str
    rows: int
    widened: tuple[str, ...] = ()  # columns whose text exceeded the CDM's varchar length


@dataclass
class LoadReport:
    source: str
    tables: list[LoadedTable] = field(default_factory=list)
    reader_url: str = ""
    nocase_schema: str | None = None  # the case-insensitive twin, when it was built
    nocase_skipped: str | None = None  # why not, when it was not


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _duck_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _column_types(
    con: duckdb.DuckDBPyConnection, source: str, table: str, columns: tuple[tuple[str, str], ...]
) -> tuple[list[tuple[str, str]], list[str]]:
    """(column, PostgreSQL type) for each column, and the columns widened to fit."""
    spec = CDM_FIELD_TYPES.get(table, {})
    typed: list[tuple[str, str]] = []
    lengths: dict[str, int] = {}
    texts = [
        n for n, t in columns if t == "VARCHAR" and spec.get(n.lower(), "").startswith("varchar(")
    ]
    if texts:
        probe = ", ".join(f"max(length({_duck_ident(n)}))" for n in texts)
        values = con.execute(f"SELECT {probe} FROM {source}").fetchone()
        lengths = {n: int(v or 0) for n, v in zip(texts, values, strict=True)}
    widened: list[str] = []
    for name, duck_type in columns:
        cdm_type = spec.get(name.lower())
        if cdm_type is None:
            pg = _DUCKDB_TO_POSTGRES.get(duck_type.split("(")[0], "text")
            if duck_type.startswith("DECIMAL"):
                pg = duck_type.lower().replace("decimal", "numeric")
        else:
            pg = postgres_type(cdm_type)
            if name in lengths and pg.startswith("varchar("):
                limit = int(pg[len("varchar(") : -1])
                if lengths[name] > limit:
                    pg = "text"
                    widened.append(name.lower())
        typed.append((name.lower(), pg))
    return typed, widened


def load_into_postgres(
    url: str,
    source_db: str | Path,
    *,
    schema: str | None = None,
    reader_password: str | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> LoadReport:
    """Copy every CDM table of ``source_db`` into schema ``cdm`` at ``url`` and grant
    ``sqlgold_reader`` read access; ``progress(table, done, total)`` after each table."""
    import psycopg

    report = LoadReport(str(source_db))
    duck = duckdb.connect()
    try:
        attach_read_only(duck, source_db, "src")
        found = find_cdm_schema(duck, "src", schema)
        tables = cdm_tables_in(duck, "src", found)
        try:
            pg = psycopg.connect(url, autocommit=False)
        except psycopg.Error as e:
            raise DatabaseError(
                f"cannot connect to PostgreSQL: {first_line(e)}", path=redact(url)
            ) from None
        with pg, tempfile.TemporaryDirectory(prefix="sqlgold-load-") as scratch:
            try:
                _check_admin(pg)
                pg.execute(f"DROP SCHEMA IF EXISTS {_SCRATCH_SCHEMA} CASCADE")
                pg.execute(f"CREATE SCHEMA {_SCRATCH_SCHEMA}")
                total = len(tables)
                for done, cdm_name in enumerate(sorted(tables), start=1):
                    real = tables[cdm_name]
                    loaded = _copy_table(
                        duck, pg, found, real, cdm_name, Path(scratch) / f"{cdm_name}.csv"
                    )
                    report.tables.append(loaded)
                    if progress is not None:
                        progress(cdm_name, done, total)
                drop_nocase_schema(pg, TARGET_SCHEMA)
                pg.execute(f"DROP SCHEMA IF EXISTS {TARGET_SCHEMA} CASCADE")
                pg.execute(f"ALTER SCHEMA {_SCRATCH_SCHEMA} RENAME TO {TARGET_SCHEMA}")
                for t in report.tables:
                    pg.execute(f"ANALYZE {TARGET_SCHEMA}.{_ident(t.name)}")
                password = reader_password or secrets.token_urlsafe(18)
                _grant_reader(pg, password)
                _build_nocase(pg, report)
                pg.commit()
            except psycopg.Error as e:
                pg.rollback()
                raise DatabaseError(
                    f"loading into PostgreSQL failed: {first_line(e)}", path=redact(url)
                ) from None
        report.reader_url = reader_url(url, password)
        return report
    finally:
        duck.close()


def _build_nocase(pg, report: LoadReport) -> None:
    """The case-insensitive twin of schema ``cdm``, or why not (a server without ICU)."""
    import psycopg

    try:
        with pg.transaction():  # a savepoint: the load stands without the twin
            create_nocase_schema(pg, TARGET_SCHEMA, READER_ROLE)
        report.nocase_schema = nocase_schema(TARGET_SCHEMA)
    except psycopg.errors.FeatureNotSupported as e:
        report.nocase_skipped = first_line(e)


def _check_admin(pg) -> None:
    """The loading role must be able to create schemas and roles."""
    row = pg.execute(
        "SELECT rolsuper OR rolcreaterole, has_database_privilege(current_database(), 'CREATE') "
        "FROM pg_roles WHERE rolname = current_user"
    ).fetchone()
    if not row or not row[0] or not row[1]:
        raise DatabaseError(
            "the role in the URL must be able to create schemas and roles (a superuser or "
            "a role with CREATEROLE and CREATE on the database) to load the CDM"
        )


def _copy_table(duck, pg, schema: str, real: str, cdm_name: str, csv_path: Path) -> LoadedTable:
    source = f"src.{_duck_ident(schema)}.{_duck_ident(real)}"
    columns = table_columns(duck, "src", schema, real)
    typed, widened = _column_types(duck, source, cdm_name, columns)
    body = ", ".join(f"{_ident(n)} {t}" for n, t in typed)
    pg.execute(f"CREATE TABLE {_SCRATCH_SCHEMA}.{_ident(cdm_name)} ({body})")
    select = ", ".join(_duck_ident(n) for n, _ in columns)
    duck.execute(
        f"COPY (SELECT {select} FROM {source}) TO '{_sql_text(str(csv_path))}' "
        "(FORMAT csv, HEADER false, QUOTE '\"', ESCAPE '\"', NULL '', "
        "DATEFORMAT '%Y-%m-%d', TIMESTAMPFORMAT '%Y-%m-%d %H:%M:%S.%f')"
    )
    names = ", ".join(_ident(n) for n, _ in typed)
    with pg.cursor() as cur:
        with (
            cur.copy(
                f"COPY {_SCRATCH_SCHEMA}.{_ident(cdm_name)} ({names}) FROM STDIN (FORMAT csv)"
            ) as copy,
            csv_path.open("rb") as f,
        ):
            while chunk := f.read(1 << 20):
                copy.write(chunk)
        rows = cur.rowcount
    csv_path.unlink()
    for i, column in enumerate(index_columns(cdm_name, [n for n, _ in typed])):
        pg.execute(
            f"CREATE INDEX {_ident(f'idx_{cdm_name}_{i}')} "
            f"ON {_SCRATCH_SCHEMA}.{_ident(cdm_name)} ({_ident(column)})"
        )
    return LoadedTable(cdm_name, max(rows, 0), tuple(widened))


_EXTRA_INDEXES = {
    "concept_ancestor": ("ancestor_concept_id", "descendant_concept_id"),
    "concept_relationship": ("concept_id_1", "concept_id_2"),
    "concept_synonym": ("concept_id",),
    "drug_strength": ("drug_concept_id", "ingredient_concept_id"),
}


def index_columns(table: str, columns: list[str]) -> list[str]:
    """Columns indexed as OHDSI's CDM indexes do: the table's own id, ``person_id``,
    its main concept and the vocabulary's lookups.

    >>> index_columns("drug_exposure", ["drug_exposure_id", "person_id", "drug_concept_id"])
    ['drug_exposure_id', 'person_id', 'drug_concept_id']
    >>> index_columns("concept_ancestor", ["ancestor_concept_id", "descendant_concept_id"])
    ['ancestor_concept_id', 'descendant_concept_id']
    """
    stem = table.split("_")[0]
    wanted = [f"{table}_id", f"{stem}_id", "person_id", f"{stem}_concept_id"]
    wanted += list(_EXTRA_INDEXES.get(table, ()))
    found: list[str] = []
    for column in wanted:
        if column in columns and column not in found:
            found.append(column)
    return found


def _grant_reader(pg, password: str) -> None:
    exists = pg.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [READER_ROLE]).fetchone()
    verb = "ALTER" if exists else "CREATE"
    pg.execute(
        f"{verb} ROLE {READER_ROLE} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT "
        f"NOREPLICATION NOBYPASSRLS PASSWORD {_sql_literal(password)}"
    )
    pg.execute(f"GRANT USAGE ON SCHEMA {TARGET_SCHEMA} TO {READER_ROLE}")
    pg.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA {TARGET_SCHEMA} TO {READER_ROLE}")
    # temp_file_limit can only be set by superusers unless granted (PostgreSQL 15+); the
    # engine sets it for every session of the reader.
    version = pg.info.server_version
    if version >= 150000:
        pg.execute(f"GRANT SET ON PARAMETER temp_file_limit TO {READER_ROLE}")
    else:
        pg.execute(f"ALTER ROLE {READER_ROLE} SET temp_file_limit = '1GB'")


def reader_url(admin_url: str, password: str) -> str:
    """``admin_url`` with the reader role and its password as the user.

    >>> reader_url("postgresql://admin:x@localhost:5432/omop", "s3cret")
    'postgresql://sqlgold_reader:s3cret@localhost:5432/omop'
    """
    parts = urlsplit(admin_url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{READER_ROLE}:{url_quote(password, safe='')}@{host}"
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def _sql_text(value: str) -> str:
    return value.replace("'", "''")


def _sql_literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"
