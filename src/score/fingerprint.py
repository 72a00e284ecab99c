"""A database's content fingerprint, defined on values so every engine computes the same one.

The fingerprint says *which data* a task set was verified on and a score was computed
on.  It is defined on each cell's value, never on a file's bytes or an engine's type
names (the same data loaded into PostgreSQL or Spark has other type names), so any SQL
engine can compute it with ``md5``, string concatenation, ``ROUND`` and a sort:

1. **A cell's canonical text** (:func:`value_sql` writes it in DuckDB SQL):

   ==========================  =============================================================
   value                       canonical text
   ==========================  =============================================================
   NULL                        ``\\N`` (a backslash and N; no value's text can be it, see text)
   integer                     decimal digits, ``-`` for negatives (``42``, ``-7``)
   float, double, decimal      rounded half away from zero to 6 decimals, printed with exactly
                               6 decimals: ``CAST(ROUND(x, 6) AS DECIMAL(38, 6))`` (``2.500000``,
                               ``0.333333``, ``-1.000000``); ``nan``, ``inf``, ``-inf``
   boolean                     ``true`` / ``false``
   date                        ``YYYY-MM-DD``
   timestamp                   a midnight timestamp is its date; else
                               ``YYYY-MM-DDTHH:MM:SS.ffffff`` (with a time zone: in UTC)
   text (and anything else,    the text with every backslash doubled and every tab written
   as the engine's text)       ``\\t``, so a text never contains a bare tab and never is ``\\N``
   ==========================  =============================================================

2. **A row's hash**: ``md5`` of the canonical texts of its columns joined by a tab, the
   columns in the order of their lower-cased names (so a table laid out in another
   column order gives the same hash).
3. **A table's digest**: ``md5`` of its rows' hashes sorted (as ASCII text) and
   concatenated; an empty table's digest is ``md5('')``.  It does not depend on row
   order, and duplicate rows count.
4. **The fingerprint**: ``sha256`` over the line :data:`FINGERPRINT_FORMAT` and one line
   per CDM table present, ``<table>\\t<column,column,...>\\t<row count>\\t<digest>``,
   tables in name order, lines joined by ``\\n``.  Column types are not part of it.

Changing this definition changes :data:`FINGERPRINT_FORMAT`, and with it every
fingerprint (gold cache keys and curation reports follow).

>>> import duckdb
>>> con = duckdb.connect()
>>> _ = con.execute("CREATE TABLE t (a INTEGER, b DOUBLE, c VARCHAR, d DATE)")
>>> _ = con.execute("INSERT INTO t VALUES (1, 2.5, 'x\\ty', DATE '2020-01-02'), "
...                 "(NULL, NULL, NULL, NULL)")
>>> cols = [("a", "INTEGER"), ("b", "DOUBLE"), ("c", "VARCHAR"), ("d", "DATE")]
>>> con.execute(f"SELECT {row_text_sql(cols)} FROM t ORDER BY a NULLS LAST").fetchall()
[('1\\t2.500000\\tx\\\\ty\\t2020-01-02',), ('\\\\N\\t\\\\N\\t\\\\N\\t\\\\N',)]
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

import duckdb

from .cdm_schema import CDM_TABLES
from .errors import DatabaseError

FINGERPRINT_FORMAT = "sqlgold.fingerprint/2"
NULL_TEXT = "\\N"
DECIMALS = 6

_INTEGER = re.compile(r"^(U?(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT)|INT\d*|UINT\d*)$")
_FRACTIONAL = re.compile(r"^(DOUBLE|FLOAT|REAL|FLOAT[48]|DECIMAL(\(\d+,\s*\d+\))?|NUMERIC.*)$")
_TIMESTAMP = re.compile(r"^TIMESTAMP(_S|_MS|_NS)?( WITH TIME ZONE)?$|^TIMESTAMPTZ$")


@dataclass(frozen=True)
class TableDigest:
    """One table's part of the fingerprint: its columns (lower-cased names, sorted),
    row count and order-independent digest; ``types`` are DuckDB's, for reports only."""

    name: str
    columns: tuple[str, ...]
    rows: int
    digest: str
    types: tuple[tuple[str, str], ...] = ()  # (name, DuckDB type) in the table's order

    def line(self) -> str:
        return f"{self.name}\t{','.join(self.columns)}\t{self.rows}\t{self.digest}"


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def value_sql(column: str, type_name: str) -> str:
    """A DuckDB expression giving the canonical text of ``column`` (NULL stays NULL).

    >>> value_sql("x", "INTEGER")
    'CAST("x" AS VARCHAR)'
    >>> value_sql("d", "DATE")
    'strftime("d", \\'%Y-%m-%d\\')'
    """
    col = _ident(column)
    t = type_name.upper()
    if _INTEGER.match(t):
        return f"CAST({col} AS VARCHAR)"
    if _FRACTIONAL.match(t):
        fixed = f"CAST(CAST(ROUND({col}, {DECIMALS}) AS DECIMAL(38, {DECIMALS})) AS VARCHAR)"
        if t.startswith(("DECIMAL", "NUMERIC")):
            return fixed
        return (
            f"CASE WHEN isnan({col}) THEN 'nan' WHEN isinf({col}) AND {col} > 0 THEN 'inf' "
            f"WHEN isinf({col}) THEN '-inf' ELSE {fixed} END"
        )
    if t == "BOOLEAN":
        return f"CASE WHEN {col} THEN 'true' ELSE 'false' END"
    if t == "DATE":
        return f"strftime({col}, '%Y-%m-%d')"
    if _TIMESTAMP.match(t):
        ts = f"timezone('UTC', {col})" if "TIME ZONE" in t or t == "TIMESTAMPTZ" else col
        ts = f"CAST({ts} AS TIMESTAMP)"
        return (
            f"CASE WHEN {ts} = date_trunc('day', {ts}) THEN strftime({ts}, '%Y-%m-%d') "
            f"ELSE strftime({ts}, '%Y-%m-%dT%H:%M:%S.%f') END"
        )
    text = col if t == "VARCHAR" else f"CAST({col} AS VARCHAR)"
    return f"replace(replace({text}, '\\', '\\\\'), chr(9), '\\t')"


def row_text_sql(columns: Sequence[tuple[str, str]]) -> str:
    """A DuckDB expression of a row's canonical text: its cells' texts, columns in the
    order of their lower-cased names, joined by tabs, NULL as ``\\N``."""
    ordered = sorted(columns, key=lambda c: c[0].lower())
    if not ordered:
        return "''"
    cells = [f"coalesce({value_sql(name, t)}, '\\N')" for name, t in ordered]
    return " || chr(9) || ".join(cells)


def table_digest(
    con: duckdb.DuckDBPyConnection,
    qualified: str,
    name: str,
    columns: Sequence[tuple[str, str]],
) -> TableDigest:
    """Row count and digest of one table (``qualified`` is its quoted full name)."""
    try:
        count, digest = con.execute(
            f"SELECT count(*), md5(coalesce(string_agg(h, '' ORDER BY h), '')) "
            f"FROM (SELECT md5({row_text_sql(columns)}) AS h FROM {qualified})"
        ).fetchone()
    except duckdb.Error as e:
        raise DatabaseError(f"cannot fingerprint table {name}: {e}") from e
    names = tuple(sorted(c[0].lower() for c in columns))
    return TableDigest(name, names, int(count), digest, tuple(columns))


def fingerprint_of(digests: Sequence[TableDigest]) -> str:
    """The fingerprint over table digests (see the module docstring).

    >>> fingerprint_of([])[:12]
    'ed3cf6afcf16'
    """
    lines = [FINGERPRINT_FORMAT, *(d.line() for d in sorted(digests, key=lambda d: d.name))]
    return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()


def cdm_table_columns(
    con: duckdb.DuckDBPyConnection, catalog: str, schema: str
) -> dict[str, tuple[str, tuple[tuple[str, str], ...]]]:
    """CDM table name -> (real name, ((column, DuckDB type), ...)) of the tables present."""
    rows = con.execute(
        "SELECT table_name, column_name, data_type FROM duckdb_columns() "
        "WHERE database_name = ? AND schema_name = ? ORDER BY table_name, column_index",
        [catalog, schema],
    ).fetchall()
    found: dict[str, tuple[str, list[tuple[str, str]]]] = {}
    for table, column, dtype in rows:
        key = table.lower()
        if key in CDM_TABLES:
            found.setdefault(key, (table, []))[1].append((column, dtype))
    return {k: (real, tuple(cols)) for k, (real, cols) in sorted(found.items())}


def compute_fingerprint(
    con: duckdb.DuckDBPyConnection, catalog: str, schema: str
) -> tuple[str, tuple[TableDigest, ...]]:
    """Fingerprint every CDM table of ``catalog.schema``: the fingerprint and the digests."""
    digests = []
    for cdm_name, (real, columns) in cdm_table_columns(con, catalog, schema).items():
        qualified = f"{_ident(catalog)}.{_ident(schema)}.{_ident(real)}"
        digests.append(table_digest(con, qualified, cdm_name, columns))
    return fingerprint_of(digests), tuple(digests)
