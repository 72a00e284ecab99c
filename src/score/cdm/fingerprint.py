"""A database's content fingerprint, defined on values so every engine computes the same one.

The fingerprint says *which data* a task set was verified on and a score was computed
on.  It is defined on each cell's value, never on a file's bytes or an engine's type
names (the same data loaded into PostgreSQL or Spark has other type names), so any SQL
engine can compute it with ``md5``, string concatenation, ``ROUND`` and a sort.  It is
written once per engine (:data:`DUCKDB`, :data:`POSTGRES`, :data:`SPARK`), so each
server computes it over its own tables and no row leaves it:

1. **A cell's canonical text** (:func:`value_sql` writes it in DuckDB SQL):

   ==========================  =============================================================
   value                       canonical text
   ==========================  =============================================================
   NULL                        ``\\N`` (a backslash and N; no value's text can be it, see text)
   integer                     decimal digits, ``-`` for negatives (``42``, ``-7``)
   decimal                     rounded half away from zero to 6 decimals, printed with exactly
                               6 decimals: ``CAST(ROUND(x, 6) AS DECIMAL(38, 6))`` (``2.500000``,
                               ``0.333333``, ``-1.000000``)
   float, double               the same rounding of the float's shortest decimal text (the
                               one that reads back as the same float: ``5e-07`` is
                               ``0.000001``, never what binary arithmetic makes of the
                               tie); ``nan``, ``inf``, ``-inf``
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
fingerprint (gold cache keys and curation reports follow).  Format 3 differs from 2 in
floats only (2 rounded ``x * 10**6`` in binary, which no other engine can repeat).

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
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from score.cdm.schema import CDM_TABLES
from score.errors import DatabaseError

if TYPE_CHECKING:  # the definition needs no engine; DuckDB's computation imports it
    import duckdb

FINGERPRINT_FORMAT = "sqlgold.fingerprint/3"
NULL_TEXT = "\\N"
DECIMALS = 6

_INTEGER = re.compile(
    r"^(U?(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT)|INT\d*|UINT\d*|INT|SERIAL|BIGSERIAL)$"
)
_DOUBLE = re.compile(r"^(DOUBLE|FLOAT|REAL|FLOAT[48]|DOUBLE PRECISION)$")
_DECIMAL = re.compile(r"^(DECIMAL|NUMERIC)(\(\d+(,\s*\d+)?\))?$")
_TIMESTAMP = re.compile(r"^TIMESTAMP(_S|_MS|_NS|_NTZ)?(\(\d\))?( WITHOUT TIME ZONE)?$")
_TIMESTAMP_TZ = re.compile(r"^TIMESTAMP(\(\d\))? WITH TIME ZONE$|^TIMESTAMPTZ$|^TIMESTAMP_LTZ$")


def value_kind(type_name: str) -> str:
    """The kind of value a column type holds, from DuckDB's, PostgreSQL's or Spark's name
    for it (anything not numeric, boolean or temporal is text).

    >>> [value_kind(t) for t in ("INTEGER", "bigint", "double precision", "decimal(10,2)")]
    ['integer', 'integer', 'double', 'decimal']
    >>> [value_kind(t) for t in ("timestamp_ntz", "timestamp with time zone", "character varying")]
    ['timestamp', 'timestamptz', 'text']
    """
    t = " ".join(type_name.upper().split())
    if _INTEGER.match(t):
        return "integer"
    if _DOUBLE.match(t):
        return "double"
    if _DECIMAL.match(t):
        return "decimal"
    if t in ("BOOLEAN", "BOOL"):
        return "boolean"
    if t == "DATE":
        return "date"
    if _TIMESTAMP_TZ.match(t):
        return "timestamptz"
    if _TIMESTAMP.match(t):
        return "timestamp"
    return "text"


@dataclass(frozen=True)
class TableDigest:
    """One table's part of the fingerprint: its columns (lower-cased names, sorted),
    row count and order-independent digest; ``types`` are the engine's, for reports only."""

    name: str
    columns: tuple[str, ...]
    rows: int
    digest: str
    types: tuple[tuple[str, str], ...] = ()  # (name, engine type) in the table's order

    def line(self) -> str:
        return f"{self.name}\t{','.join(self.columns)}\t{self.rows}\t{self.digest}"


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _backtick(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


@dataclass(frozen=True)
class FingerprintDialect:
    """How one engine's SQL writes the canonical text of each kind of value: the same
    definition (the table above), in that engine's functions.  ``{c}`` is the column."""

    name: str
    quote: Callable[[str], str]
    cells: Mapping[str, str]
    null: str  # an expression of NULL's text, a backslash and N
    tab: str
    digest: str  # count and digest of ``{rows}``, a subquery of row hashes ``h``

    def value_sql(self, column: str, type_name: str) -> str:
        return self.cells[value_kind(type_name)].format(c=self.quote(column))

    def row_text_sql(self, columns: Sequence[tuple[str, str]]) -> str:
        ordered = sorted(columns, key=lambda c: c[0].lower())
        if not ordered:
            return "''"
        cells = [f"coalesce({self.value_sql(name, t)}, {self.null})" for name, t in ordered]
        return f" || {self.tab} || ".join(cells)

    def digest_sql(self, qualified: str, columns: Sequence[tuple[str, str]]) -> str:
        """A query of one row: the table's row count and digest."""
        rows = f"SELECT md5({self.row_text_sql(columns)}) AS h FROM {qualified}"
        return self.digest.format(rows=rows)

    def digests(
        self,
        tables: Iterable[tuple[str, str, Sequence[tuple[str, str]]]],
        run: Callable[[str, str], Sequence[Any]],
    ) -> tuple[TableDigest, ...]:
        """Each table's digest, computed by the engine: ``tables`` yields (CDM name,
        quoted full name, ((column, engine type), ...)); ``run(name, sql)`` returns the
        one row of a digest query (row count, digest)."""
        found = []
        for name, qualified, columns in tables:
            count, digest = run(name, self.digest_sql(qualified, columns))
            found.append(table_digest_of(name, columns, count, digest))
        return tuple(found)


# a decimal is rounded as it is; a float from its shortest decimal text (the one that
# reads back as the same float, which every engine prints), so that no engine's binary
# arithmetic decides a tie: 5e-07 is 0.000001 everywhere, 1e20 is 100000000000000000000
_FIXED = f"CAST(CAST(ROUND({{c}}, {DECIMALS}) AS DECIMAL(38, {DECIMALS})) AS VARCHAR)"
_FLOAT_FIXED = f"CAST(CAST(CAST({{c}} AS VARCHAR) AS DECIMAL(38, {DECIMALS})) AS VARCHAR)"

DUCKDB = FingerprintDialect(
    name="duckdb",
    quote=_ident,
    cells={
        "integer": "CAST({c} AS VARCHAR)",
        "decimal": _FIXED,
        "double": (
            "CASE WHEN isnan({c}) THEN 'nan' WHEN isinf({c}) AND {c} > 0 THEN 'inf' "
            "WHEN isinf({c}) THEN '-inf' ELSE " + _FLOAT_FIXED + " END"
        ),
        "boolean": "CASE WHEN {c} THEN 'true' ELSE 'false' END",
        "date": "strftime({c}, '%Y-%m-%d')",
        "timestamp": (
            "CASE WHEN CAST({c} AS TIMESTAMP) = date_trunc('day', CAST({c} AS TIMESTAMP)) "
            "THEN strftime(CAST({c} AS TIMESTAMP), '%Y-%m-%d') "
            "ELSE strftime(CAST({c} AS TIMESTAMP), '%Y-%m-%dT%H:%M:%S.%f') END"
        ),
        "timestamptz": (
            "CASE WHEN CAST(timezone('UTC', {c}) AS TIMESTAMP) = "
            "date_trunc('day', CAST(timezone('UTC', {c}) AS TIMESTAMP)) "
            "THEN strftime(CAST(timezone('UTC', {c}) AS TIMESTAMP), '%Y-%m-%d') "
            "ELSE strftime(CAST(timezone('UTC', {c}) AS TIMESTAMP), '%Y-%m-%dT%H:%M:%S.%f') END"
        ),
        "text": "replace(replace(CAST({c} AS VARCHAR), '\\', '\\\\'), chr(9), '\\t')",
    },
    null="'\\N'",
    tab="chr(9)",
    digest="SELECT count(*), md5(coalesce(string_agg(h, '' ORDER BY h), '')) FROM ({rows})",
)

_PG_TEXT = (
    "replace(replace(CAST({c} AS TEXT), chr(92), chr(92) || chr(92)), chr(9), chr(92) || 't')"
)
_PG_FIXED = f"CAST(ROUND({{c}}, {DECIMALS}) AS TEXT)"
# float8 text is the shortest that reads back (compute_fingerprint pins extra_float_digits)
_PG_FLOAT_FIXED = f"CAST(ROUND(CAST(CAST({{c}} AS TEXT) AS NUMERIC), {DECIMALS}) AS TEXT)"
_PG_TS = (
    "CASE WHEN {t} = date_trunc('day', {t}) THEN to_char({t}, 'YYYY-MM-DD') "
    "ELSE to_char({t}, 'YYYY-MM-DD\"T\"HH24:MI:SS.US') END"
)

POSTGRES = FingerprintDialect(
    name="postgres",
    quote=_ident,
    cells={
        "integer": "CAST({c} AS TEXT)",
        "decimal": _PG_FIXED,
        "double": (
            "CASE WHEN {c} = 'NaN'::float8 THEN 'nan' WHEN {c} = 'Infinity'::float8 THEN 'inf' "
            "WHEN {c} = '-Infinity'::float8 THEN '-inf' ELSE " + _PG_FLOAT_FIXED + " END"
        ),
        "boolean": "CASE WHEN {c} THEN 'true' ELSE 'false' END",
        "date": "to_char({c}, 'YYYY-MM-DD')",
        "timestamp": _PG_TS.replace("{t}", "{c}"),
        "timestamptz": _PG_TS.replace("{t}", "({c} AT TIME ZONE 'UTC')"),
        "text": _PG_TEXT,
    },
    null="chr(92) || 'N'",
    tab="chr(9)",
    digest=(
        "SELECT count(*), md5(coalesce(string_agg(h, '' ORDER BY h COLLATE \"C\"), '')) "
        "FROM ({rows}) AS fingerprint_rows"
    ),
)

_SPARK_FIXED = f"CAST(CAST(ROUND({{c}}, {DECIMALS}) AS DECIMAL(38, {DECIMALS})) AS STRING)"
_SPARK_FLOAT_FIXED = f"CAST(CAST(CAST({{c}} AS STRING) AS DECIMAL(38, {DECIMALS})) AS STRING)"
# the session time zone is UTC (score.execution.engines.spark), so a timestamp's text is its
# UTC time
_SPARK_TS = (
    "CASE WHEN date_format({c}, 'HH:mm:ss.SSSSSS') = '00:00:00.000000' "
    "THEN date_format({c}, 'yyyy-MM-dd') "
    "ELSE date_format({c}, \"yyyy-MM-dd'T'HH:mm:ss.SSSSSS\") END"
)

SPARK = FingerprintDialect(
    name="spark",
    quote=_backtick,
    cells={
        "integer": "CAST({c} AS STRING)",
        "decimal": _SPARK_FIXED,
        "double": (
            "CASE WHEN isnan({c}) THEN 'nan' WHEN {c} = CAST('Infinity' AS DOUBLE) THEN 'inf' "
            "WHEN {c} = CAST('-Infinity' AS DOUBLE) THEN '-inf' ELSE " + _SPARK_FLOAT_FIXED + " END"
        ),
        "boolean": "CASE WHEN {c} THEN 'true' ELSE 'false' END",
        "date": "date_format({c}, 'yyyy-MM-dd')",
        "timestamp": _SPARK_TS,
        "timestamptz": _SPARK_TS,
        "text": _PG_TEXT.replace("TEXT", "STRING"),
    },
    null="chr(92) || 'N'",
    tab="chr(9)",
    # collect_list's order is arbitrary; array_sort orders strings by their bytes
    digest="SELECT count(*), md5(array_join(array_sort(collect_list(h)), '')) FROM ({rows})",
)


def value_sql(column: str, type_name: str) -> str:
    """A DuckDB expression giving the canonical text of ``column`` (NULL stays NULL).

    >>> value_sql("x", "INTEGER")
    'CAST("x" AS VARCHAR)'
    >>> value_sql("d", "DATE")
    'strftime("d", \\'%Y-%m-%d\\')'
    """
    return DUCKDB.value_sql(column, type_name)


def row_text_sql(columns: Sequence[tuple[str, str]]) -> str:
    """A DuckDB expression of a row's canonical text: its cells' texts, columns in the
    order of their lower-cased names, joined by tabs, NULL as ``\\N``."""
    return DUCKDB.row_text_sql(columns)


def table_digest_of(
    name: str, columns: Sequence[tuple[str, str]], count: int, digest: str
) -> TableDigest:
    """The digest of CDM table ``name`` from its columns and what its digest query gave."""
    names = tuple(sorted(c[0].lower() for c in columns))
    return TableDigest(name, names, int(count), digest, tuple(columns))


def fingerprint_of(digests: Sequence[TableDigest]) -> str:
    """The fingerprint over table digests (see the module docstring).

    >>> fingerprint_of([])[:12]
    'ea1be098eeb0'
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
    import duckdb

    def run(name: str, sql: str) -> Sequence[Any]:
        try:
            return con.execute(sql).fetchone()
        except duckdb.Error as e:
            raise DatabaseError(f"cannot fingerprint table {name}: {e}") from e

    tables = (
        (cdm_name, f"{_ident(catalog)}.{_ident(schema)}.{_ident(real)}", columns)
        for cdm_name, (real, columns) in cdm_table_columns(con, catalog, schema).items()
    )
    digests = DUCKDB.digests(tables, run)
    return fingerprint_of(digests), digests
