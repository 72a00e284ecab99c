"""What running a query gives: a typed, columnar result or a classified error.

A :class:`QueryResult` holds the column names, the DuckDB type of each column and the
rows as a ``pyarrow.Table`` (columnar, so comparators can work on whole columns).
A :class:`QueryError` says why a query produced no result, with a ``kind`` that the
scorer later maps to an outcome class.

>>> r = QueryResult.from_rows(["n"], [(1,), (2,)])
>>> r.num_rows, r.rows()
(2, [(1,), (2,)])
>>> QueryError("catalog_error", "Table with name x does not exist").kind
'catalog_error'
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

#: Every kind of failure the executor reports, in pipeline order.
ERROR_KINDS: tuple[str, ...] = (
    "guard_rejected",  # not exactly one read-only SELECT
    "parse_error",  # DuckDB cannot parse it
    "catalog_error",  # unknown table, column or function
    "binder_error",  # other binding errors (types, ambiguous names, GROUP BY ...)
    "timeout",  # ran longer than the wall-clock limit
    "row_cap",  # returned more rows than allowed
    "runtime_error",  # failed while running (conversion, out of memory, ...)
)


class QueryError(Exception):
    """A query that produced no result, and why."""

    def __init__(self, kind: str, message: str) -> None:
        if kind not in ERROR_KINDS:
            raise ValueError(f"unknown query error kind {kind!r}")
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message

    def __eq__(self, other: object) -> bool:
        return isinstance(other, QueryError) and (self.kind, self.message) == (
            other.kind,
            other.message,
        )

    def __hash__(self) -> int:
        return hash((self.kind, self.message))

    def __reduce__(self):  # picklable across worker processes
        return (QueryError, (self.kind, self.message))


@dataclass(frozen=True, eq=False)
class QueryResult:
    """Column names, DuckDB column types and the rows of one query result."""

    columns: tuple[str, ...]
    types: tuple[str, ...]
    table: pa.Table
    seconds: float = 0.0
    _rows: list[tuple] | None = field(default=None, repr=False, compare=False)
    #: What comparators derive from this result (normalised columns), kept so a gold
    #: result compared with many predictions is prepared once.
    derived: dict = field(default_factory=dict, repr=False, compare=False)
    #: The values, as the engine's driver returns them, of the columns the table holds
    #: only approximately, by column index: PostgreSQL's NUMERIC (``Decimal``, with its
    #: scale) is a float in the table.  Profiles that compare a driver's Python objects
    #: read them (:meth:`driver_values`); None: the table holds every value exactly.
    exact_values: dict[int, list] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if len(self.columns) != len(self.types) or len(self.columns) != self.table.num_columns:
            raise ValueError(
                f"result has {len(self.columns)} names, {len(self.types)} types and "
                f"{self.table.num_columns} columns"
            )

    @property
    def num_rows(self) -> int:
        return self.table.num_rows

    @property
    def num_columns(self) -> int:
        return len(self.columns)

    def rows(self) -> list[tuple]:
        """The rows as Python tuples (computed once, then cached); a cell Python cannot
        hold (``'-infinity'::TIMESTAMPTZ``, a year past 9999) is an
        :class:`~score.comparison.cells.OutOfRange`, shown as DuckDB shows it."""
        if self._rows is None:
            from score.comparison.cells import python_list

            cols = [python_list(col) for col in self.table.columns]
            object.__setattr__(self, "_rows", list(zip(*cols, strict=True)) if cols else [])
        return self._rows  # type: ignore[return-value]

    def column(self, index: int) -> list[Any]:
        from score.comparison.cells import python_list

        return python_list(self.table.column(index))

    def driver_values(self, index: int) -> list[Any] | None:
        """The column's values as the engine's driver returns them, where the table holds
        them only approximately (see :attr:`exact_values`); else None."""
        if self.exact_values is None:
            return None
        return self.exact_values.get(index)

    @classmethod
    def from_rows(
        cls,
        columns: Sequence[str],
        rows: Iterable[Sequence[Any]],
        types: Sequence[str] | None = None,
    ) -> QueryResult:
        """Build a result from Python rows (tests, CSV files, peer formats).

        Column types are inferred by Arrow unless given; a column whose values have
        no common Arrow type (``1`` beside ``'1'``) raises ``pyarrow.ArrowInvalid``.
        """
        rows = [tuple(r) for r in rows]
        names = list(columns)
        for i, row in enumerate(rows):
            if len(row) != len(names):
                raise ValueError(f"row {i} has {len(row)} values, expected {len(names)}")
        arrays = [pa.array([row[j] for row in rows]) for j in range(len(names))]
        table = pa.Table.from_arrays(arrays, names=names) if names else pa.table({})
        inferred = tuple(duckdb_type_name(a.type) for a in arrays)
        result = cls(tuple(names), tuple(types) if types else inferred, table)
        object.__setattr__(result, "_rows", rows)
        return result

    @classmethod
    def from_arrow(cls, table: pa.Table, types: Sequence[str] | None = None) -> QueryResult:
        names = tuple(table.column_names)
        inferred = tuple(duckdb_type_name(f.type) for f in table.schema)
        return cls(names, tuple(types) if types else inferred, table)


_ARROW_TO_DUCKDB = {
    "int8": "TINYINT",
    "int16": "SMALLINT",
    "int32": "INTEGER",
    "int64": "BIGINT",
    "uint8": "UTINYINT",
    "uint16": "USMALLINT",
    "uint32": "UINTEGER",
    "uint64": "UBIGINT",
    "float": "FLOAT",
    "double": "DOUBLE",
    "bool": "BOOLEAN",
    "string": "VARCHAR",
    "large_string": "VARCHAR",
    "string_view": "VARCHAR",
    "date32[day]": "DATE",
    "null": "NULL",
}


def duckdb_type_name(arrow_type: pa.DataType) -> str:
    """The DuckDB name of an Arrow type, for results not produced by DuckDB."""
    name = str(arrow_type)
    if name in _ARROW_TO_DUCKDB:
        return _ARROW_TO_DUCKDB[name]
    if pa.types.is_timestamp(arrow_type):
        return "TIMESTAMP WITH TIME ZONE" if arrow_type.tz else "TIMESTAMP"
    if pa.types.is_decimal(arrow_type):
        return f"DECIMAL({arrow_type.precision},{arrow_type.scale})"
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        return f"{duckdb_type_name(arrow_type.value_type)}[]"
    return name.upper()
