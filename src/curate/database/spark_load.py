"""``sqlgold db load sc://host:port``: the embedded CDM written into Spark.

Every CDM table of an OMOP DuckDB file becomes a Parquet-backed table ``cdm.<table>``
with the CDM's own types (``INTEGER`` -> int, ``VARCHAR`` -> string, ``DATE`` -> date,
``TIMESTAMP`` -> timestamp_ntz, ``DOUBLE`` -> double), sent through Spark Connect as
Arrow, so the server may be remote.  Each table is written under a temporary name and
renamed over the old one, so a failed load never leaves a half-written table; the
fingerprint of what was written (:mod:`score.cdm.fingerprint`, computed by Spark, and equal to
the source file's for the same data) is stored last in ``sqlgold.build_info``, so its
presence says the load finished.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pyarrow as pa

from score.cdm.schema import CDM_TABLES
from score.errors import DatabaseError
from score.execution.engines.spark import error_line

SPARK_TYPES = {
    "INTEGER": "int",
    "BIGINT": "bigint",
    "VARCHAR": "string",
    "DATE": "date",
    "TIMESTAMP": "timestamp_ntz",
    "DOUBLE": "double",
}
ARROW_TYPES = {
    "INTEGER": pa.int32(),
    "BIGINT": pa.int64(),
    "VARCHAR": pa.string(),
    "DATE": pa.date32(),
    "TIMESTAMP": pa.timestamp("us"),
    "DOUBLE": pa.float64(),
}
DATABASE = "cdm"
INFO_DATABASE = "sqlgold"


def spark_schema(table: str) -> str:
    """The Spark DDL schema string of a CDM table.

    >>> spark_schema("death")[:40]
    'person_id int, death_date date, death_da'
    """
    return ", ".join(f"{name} {SPARK_TYPES[dtype]}" for name, dtype, _ in CDM_TABLES[table])


def cdm_arrow(table: pa.Table, name: str) -> pa.Table:
    """``table``'s CDM columns, in CDM order, cast to the CDM types."""
    present = {c.lower(): c for c in table.column_names}
    arrays, fields = [], []
    for column, dtype, _ in CDM_TABLES[name]:
        target = ARROW_TYPES[dtype]
        if column in present:
            arrays.append(table.column(present[column]).cast(target))
        else:
            arrays.append(pa.nulls(table.num_rows, target))
        fields.append(pa.field(column, target))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def read_cdm(db_path: str | Path) -> list[tuple[str, pa.Table]]:
    """Every CDM table of an OMOP DuckDB file as ``(name, Arrow table in CDM types)``."""
    import duckdb

    from score.cdm.duckdb_file import attach_read_only, cdm_tables_in, find_cdm_schema, quote

    if not Path(db_path).is_file():
        raise DatabaseError(
            f"no database file at {db_path} (build one with `make db`)", path=str(db_path)
        )
    con = duckdb.connect(":memory:")
    try:
        attach_read_only(con, db_path, "omop")
        schema = find_cdm_schema(con, "omop", None)
        tables = cdm_tables_in(con, "omop", schema)
        return [
            (
                name,
                cdm_arrow(
                    con.sql(f"SELECT * FROM omop.{quote(schema)}.{quote(real)}").to_arrow_table(),
                    name,
                ),
            )
            for name, real in sorted(tables.items())
        ]
    finally:
        con.close()


def connect(url: str):
    """A new Spark Connect session for ``url`` (``sc://host:port``)."""
    from score.execution.engines.spark_client import new_session

    try:
        return new_session(url)
    except Exception as e:  # noqa: BLE001 - any failure to connect is one error line
        raise DatabaseError(f"cannot connect to Spark: {error_line(e)}", path=url) from None


def load_cdm(
    db_path: str | Path, url: str, progress: Callable[[str], None] | None = None
) -> tuple[list[tuple[str, int]], str]:
    """Write the CDM of ``db_path`` into Spark at ``url``; the tables written with their
    row counts, and the fingerprint of the tables written, stored with them."""
    from score.execution.engines.spark import fingerprint_tables

    tables = read_cdm(db_path)
    spark = connect(url)
    try:
        spark.conf.set("spark.sql.session.timeZone", "UTC")
        spark.sql(f"CREATE DATABASE IF NOT EXISTS {DATABASE}")
        spark.sql(f"CREATE DATABASE IF NOT EXISTS {INFO_DATABASE}")
        spark.sql(f"DROP TABLE IF EXISTS {INFO_DATABASE}.build_info")
        from concurrent.futures import ThreadPoolExecutor

        def write(item: tuple[str, pa.Table]) -> tuple[str, int]:
            name, table = item
            if progress:
                progress(name)
            write_table(spark, name, table)
            return name, table.num_rows

        # Spark runs DDL and small writes one after another per request; a few
        # requests in flight keep its two cores busy.
        with ThreadPoolExecutor(4) as pool:
            written = list(pool.map(write, tables))
        fingerprint = fingerprint_tables(spark, [name for name, _ in written])
        info = spark.createDataFrame(
            [("fingerprint", fingerprint), ("schema", DATABASE), ("source", str(db_path))],
            "key string, value string",
        )
        info.write.format("parquet").saveAsTable(f"{INFO_DATABASE}.build_info")
    except DatabaseError:
        raise
    except Exception as e:  # noqa: BLE001
        raise DatabaseError(f"loading into Spark failed: {error_line(e)}", path=url) from None
    finally:
        spark.stop()
    return written, fingerprint


#: Rows sent to the server in one request: a whole large table in one local relation
#: overruns Connect's message size and the driver's memory (a 10x copy of the embedded
#: CDM failed so), so a table goes in slices appended to its staging table.
CHUNK_ROWS = 250_000


def write_table(
    spark, name: str, table: pa.Table, chunk_rows: int = CHUNK_ROWS, database: str = DATABASE
) -> None:
    """Write CDM table ``name`` as ``<database>.<name>``: under a staging name, in slices
    of ``chunk_rows``, then renamed over the old table."""
    staging = f"{database}.`{name}__loading`"
    spark.sql(f"DROP TABLE IF EXISTS {staging}")
    if not table.num_rows:
        spark.createDataFrame([], spark_schema(name)).write.format("parquet").saveAsTable(staging)
    for offset in range(0, table.num_rows, chunk_rows):
        # Arrow's naive timestamps arrive as Spark TIMESTAMP (session time zone, UTC
        # here); every column is cast to its CDM type, TIMESTAMP to timestamp_ntz.
        frame = spark.createDataFrame(table.slice(offset, chunk_rows)).selectExpr(
            *(f"CAST(`{c}` AS {SPARK_TYPES[t]}) AS `{c}`" for c, t, _ in CDM_TABLES[name])
        )
        writer = frame.write.format("parquet")
        if offset:
            writer = writer.mode("append")
        writer.saveAsTable(staging)
    spark.sql(f"DROP TABLE IF EXISTS {database}.`{name}`")
    spark.sql(f"ALTER TABLE {staging} RENAME TO {database}.`{name}`")
