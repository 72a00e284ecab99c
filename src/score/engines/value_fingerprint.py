"""A content fingerprint computed from values, the same on every engine.

Each engine's own hash functions differ (DuckDB's ``md5`` of a row's text is not
Spark's), so this fingerprint is computed in Python from the Arrow tables an engine
returns.  Every CDM column is first cast to one Arrow type per CDM type (``INTEGER`` ->
int64, ``VARCHAR`` -> string, ``DATE`` -> date32, ``TIMESTAMP`` -> timestamp[us],
``DOUBLE`` -> float64), then rendered as text by Arrow; a row's digest is the sha256 of
its fields joined by tabs (``\\N`` for NULL), a table's digest the sha256 of its sorted
row digests, and the fingerprint the sha256 over ``table, column:CDM type ..., row
count, digest`` lines in table order.  Two engines holding the same values in the same
CDM types give the same fingerprint.

>>> import pyarrow as pa
>>> t = pa.table({"location_id": pa.array([2, 1], pa.int32()), "city": ["b", None]})
>>> u = pa.table({"location_id": pa.array([1, 2], pa.int64()), "city": [None, "b"]})
>>> table_line("location", t) == table_line("location", u)
True
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

import pyarrow as pa
import pyarrow.compute as pc

from ..cdm_schema import CDM_TABLES

ARROW_TYPES = {
    "INTEGER": pa.int64(),
    "BIGINT": pa.int64(),
    "VARCHAR": pa.string(),
    "DATE": pa.date32(),
    "TIMESTAMP": pa.timestamp("us"),
    "DOUBLE": pa.float64(),
}


def _text(column: pa.ChunkedArray, cdm_type: str | None) -> list[str]:
    if cdm_type in ARROW_TYPES:
        column = column.cast(ARROW_TYPES[cdm_type])
    if pa.types.is_timestamp(column.type) and column.type.tz is not None:
        column = column.cast(pa.timestamp("us", tz="UTC"))
    text = pc.cast(column, pa.string()) if not pa.types.is_string(column.type) else column
    return [r"\N" if v is None else v for v in text.to_pylist()]


def table_line(name: str, table: pa.Table) -> str:
    """``name, column:type ..., rows, digest`` for one CDM table's values."""
    cdm_types = {col: dtype for col, dtype, _ in CDM_TABLES.get(name, ())}
    names = sorted(table.column_names, key=str.lower)
    columns = [_text(table.column(n), cdm_types.get(n.lower())) for n in names]
    digests = sorted(
        hashlib.sha256("\t".join(row).encode()).hexdigest() for row in zip(*columns, strict=True)
    ) if columns else []
    types = ",".join(f"{n.lower()}:{cdm_types.get(n.lower(), str(table.schema.field(n).type))}"
                     for n in names)
    digest = hashlib.sha256("".join(digests).encode()).hexdigest()
    return f"{name}\t{types}\t{table.num_rows}\t{digest}"


def value_fingerprint(tables: Iterable[tuple[str, pa.Table]]) -> str:
    """The fingerprint of CDM tables given as ``(cdm name, Arrow table)`` pairs."""
    lines = sorted(table_line(name, table) for name, table in tables)
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def duckdb_value_fingerprint(db_path: str) -> str:
    """The value fingerprint of an OMOP DuckDB file's CDM tables (read-only)."""
    import duckdb

    from ..database import attach_read_only, cdm_tables_in, find_cdm_schema, quote

    con = duckdb.connect(":memory:")
    try:
        attach_read_only(con, db_path, "omop")
        schema = find_cdm_schema(con, "omop", None)
        tables = cdm_tables_in(con, "omop", schema)
        return value_fingerprint(
            (name, con.sql(f"SELECT * FROM omop.{quote(schema)}.{quote(real)}").to_arrow_table())
            for name, real in tables.items()
        )
    finally:
        con.close()
