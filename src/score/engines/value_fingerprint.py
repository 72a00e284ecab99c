"""A database fingerprint defined on values, so every engine gives the same one.

Each CDM table is hashed from the canonical text of its values (:func:`canonical_text`,
the idea of :mod:`score.result_hash` computed column by column in Arrow: an INTEGER and
a NUMERIC holding 3 are both ``n:3``, a midnight TIMESTAMP is its DATE), with its
columns taken in name order and its rows sorted, so neither the engine's types nor its
column or row order matter.
The fingerprint is the sha256 of the format line and one ``table, columns, rows,
table hash`` line per table, in table order.

The same data in DuckDB (``sqlgold db build``) and in PostgreSQL (``sqlgold db load``)
give the same value fingerprint.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from ..result_hash import number_text

FINGERPRINT_FORMAT = "sqlgold.value-fingerprint/1"


def table_line(name: str, table: pa.Table) -> str:
    """One table's fingerprint line: name, sorted column names, rows, content hash."""
    columns = sorted(table.column_names, key=str.lower)
    rows = table.num_rows
    if columns and rows:
        cells = [canonical_text(table.column(c)) for c in columns]
        lines = pc.binary_join_element_wise(*cells, "\x1f")
        ordered = pc.take(lines, pc.sort_indices(lines))
        text = "\n".join(ordered.to_pylist())
    else:
        text = ""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    names = ",".join(c.lower() for c in columns)
    return f"{name}\t{names}\t{rows}\t{digest}"


def canonical_text(column: pa.Array | pa.ChunkedArray) -> pa.Array:
    """Each value's canonical text, tagged by kind, as in :mod:`score.result_hash`:
    numbers by value (an integral value as an integer, others to 12 significant
    digits), a midnight timestamp as its date, NULL as ``\\N``; text escaped so no
    value contains the cell or row separator.

    >>> canonical_text(pa.array([3, None])).to_pylist()
    ['n:3', '\\\\N']
    >>> canonical_text(pa.array([3.0, 0.1 + 0.2])).to_pylist()
    ['n:3', 'n:0.3']
    >>> import datetime as dt
    >>> canonical_text(pa.array([dt.datetime(2020, 1, 2), dt.datetime(2020, 1, 2, 3)])).to_pylist()
    ['d:2020-01-02', 't:2020-01-02 03:00:00.000000']
    """
    arr = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    t = arr.type
    if pa.types.is_null(t):
        text = pa.nulls(len(arr), pa.string())
    elif pa.types.is_integer(t):
        text = _tag("n:", pc.cast(arr, pa.string()))
    elif pa.types.is_floating(t) or pa.types.is_decimal(t):
        text = _tag("n:", _number_text(pc.cast(arr, pa.float64())))
    elif pa.types.is_boolean(t):
        text = _tag("b:", pc.cast(arr, pa.string()))
    elif pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        text = _tag("s:", _escape(pc.cast(arr, pa.string())))
    elif pa.types.is_date(t):
        text = _tag("d:", pc.cast(pc.cast(arr, pa.date32()), pa.string()))
    elif pa.types.is_timestamp(t):
        micros = pc.cast(arr, pa.timestamp("us", tz=t.tz)) if t.unit != "us" else arr
        if t.tz is not None:
            micros = pc.cast(micros.cast(pa.int64()), pa.timestamp("us"))
        days = pc.cast(micros, pa.date32())
        midnight = pc.equal(pc.cast(days, pa.timestamp("us")), micros)
        text = pc.if_else(
            midnight,
            _tag("d:", pc.cast(days, pa.string())),
            _tag("t:", pc.cast(micros, pa.string())),
        )
    else:  # times, intervals, binary, nested: by value through Python
        text = pa.array(
            [None if v is None else f"{t}:{v!r}" for v in arr.to_pylist()], type=pa.string()
        )
        text = _escape(text)
    return pc.fill_null(text, "\\N")


def _tag(prefix: str, text: pa.Array) -> pa.Array:
    return pc.binary_join_element_wise(prefix, text, "")


def _escape(text: pa.Array) -> pa.Array:
    text = pc.replace_substring(text, "\\", "\\\\")
    text = pc.replace_substring(text, "\n", "\\n")
    return pc.replace_substring(text, "\x1f", "\\u")


def _number_text(values: pa.Array) -> pa.Array:
    """:func:`score.result_hash.number_text` of every float, vectorised where the value
    is integral (most CDM numbers), by Python for the rest."""
    finite = pc.and_(pc.is_finite(values), pc.less(pc.abs(values), float(2**53)))
    integral = pc.and_(finite, pc.equal(values, pc.floor(values)))
    integral = pc.fill_null(integral, False)
    as_int = pc.cast(pc.if_else(integral, values, 0.0), pa.int64())
    out = pc.cast(as_int, pa.string()).to_pylist()
    flags = integral.to_pylist()
    for i, (v, whole) in enumerate(zip(values.to_pylist(), flags, strict=True)):
        if v is None:
            out[i] = None
        elif not whole:
            out[i] = number_text(v)
    return pa.array(out, type=pa.string())


def fingerprint_lines(lines: Iterable[str]) -> str:
    """The fingerprint of table lines (in table order)."""
    text = "\n".join([FINGERPRINT_FORMAT, *lines])
    return hashlib.sha256(text.encode()).hexdigest()


def duckdb_value_fingerprint(db_path: str | Path, schema: str | None = None) -> str:
    """The value fingerprint of an OMOP DuckDB file's CDM tables."""
    import duckdb

    from ..database import attach_read_only, cdm_tables_in, find_cdm_schema, quote

    con = duckdb.connect()
    try:
        attach_read_only(con, db_path, "omop")
        found = find_cdm_schema(con, "omop", schema)
        tables = cdm_tables_in(con, "omop", found)
        lines = []
        for name in sorted(tables):
            arrow = con.sql(
                f"SELECT * FROM omop.{quote(found)}.{quote(tables[name])}"
            ).to_arrow_table()
            lines.append(table_line(name, arrow))
        return fingerprint_lines(lines)
    finally:
        con.close()
