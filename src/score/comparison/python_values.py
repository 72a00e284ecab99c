"""Values as peers written in Python see them.

The peers' comparators run on the Python objects a database client returns, and their
quirks live in Python's semantics (``1 == 1.0 == True``, ``str(x)``, ``round``).
:func:`python_values` gives the objects DuckDB's own client returns (``fetchall``) for
an Arrow column, :func:`python_class` names their Python type per column so a profile
can tell when a vectorised path reproduces Python exactly, and :func:`timestamp_parts`
prints timestamps as ``str(datetime)`` does (Python's ``round``, vectorised, is
:func:`score.comparison.values.round_like_python`).

>>> python_values(pa.array([12], pa.decimal128(38, 0)), "HUGEINT")
[12]
>>> python_class(pa.array([1, 2])), python_class(pa.array([[1]]))
('int', 'unhashable')
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from score.comparison.cells import is_integer_like, micros, python_list

__all__ = ["python_class", "python_values", "timestamp_parts"]


def python_values(arr: pa.Array | pa.ChunkedArray, duckdb_type: str = "") -> list[Any]:
    """The cells as DuckDB's Python client returns them (``fetchall``), for peers that
    compare Python objects.

    >>> python_values(pa.array([12], pa.decimal128(38, 0)), "HUGEINT")
    [12]
    """
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    t = arr.type
    if pa.types.is_timestamp(t) and t.unit == "ns":
        arr = pc.cast(arr, pa.timestamp("us", t.tz), safe=False)
    if pa.types.is_duration(t) and t.unit == "ns":
        arr = pc.cast(arr, pa.duration("us"), safe=False)
    values = python_list(arr)
    kind = duckdb_type.upper()
    if kind in ("HUGEINT", "UHUGEINT") and pa.types.is_decimal(t):
        return [None if v is None else int(v) for v in values]
    if kind == "UUID":
        return [None if v is None else uuid.UUID(v) for v in values]
    if pa.types.is_interval(t):
        return [None if v is None else _interval(v) for v in values]
    if pa.types.is_map(t):
        return [None if v is None else dict(v) for v in values]
    if pa.types.is_fixed_size_list(t):
        return [None if v is None else tuple(v) for v in values]
    return values


def _interval(v: Any) -> dt.timedelta:
    return dt.timedelta(days=v.months * 30 + v.days, microseconds=v.nanoseconds // 1000)


def python_class(arr: pa.Array | pa.ChunkedArray, duckdb_type: str = "") -> str | None:
    """The Python type of a column's values as DuckDB's client returns them ('int',
    'float', 'bool', 'decS' for DECIMAL(p<=15, S), 'str', 'uuid', 'bytes', 'date', 'ts',
    'tstz', 'time', 'tuple'), 'null' when every cell is NULL, 'unhashable' for LIST,
    STRUCT and MAP, and None when no vectorised equality reproduces Python's (wide
    DECIMAL, intervals, ...).

    >>> python_class(pa.array([1, 2])), python_class(pa.array([[1]]))
    ('int', 'unhashable')
    """
    t = arr.type
    if pa.types.is_dictionary(t):
        t = t.value_type
    kind = duckdb_type.upper()
    if arr.null_count == len(arr):
        return "null"
    if kind in ("HUGEINT", "UHUGEINT"):
        return "int" if is_integer_like(pa.chunked_array([arr]).combine_chunks()) else None
    if kind == "UUID":
        return "uuid"
    if pa.types.is_boolean(t):
        return "bool"
    if pa.types.is_integer(t):
        return "int" if t != pa.uint64() else None
    if pa.types.is_floating(t):
        return "float"
    if pa.types.is_decimal(t):
        return f"dec{t.scale}" if t.precision <= 15 else None
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "str"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return "bytes"
    if pa.types.is_date(t):
        return "date"
    if pa.types.is_timestamp(t):
        return "tstz" if t.tz else "ts"
    if pa.types.is_time(t):
        return "time"
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_struct(t):
        return "unhashable"
    if pa.types.is_map(t):
        return "unhashable"
    return None


def timestamp_parts(arr: pa.Array) -> tuple[pa.Array, np.ndarray, np.ndarray]:
    """A naive timestamp column as 'YYYY-MM-DD HH:MM:SS' text of its whole seconds
    (floored, also before 1970), the microseconds past the second, and the raw
    microseconds since the epoch (nanoseconds truncated, as DuckDB's client does).

    >>> text, frac, _ = timestamp_parts(pa.array([dt.datetime(1, 1, 1, 0, 0, 0, 999999)]))
    >>> text.to_pylist(), frac.tolist()
    (['0001-01-01 00:00:00'], [999999])
    """
    raw = micros(arr)
    whole = np.floor_divide(raw, 1_000_000)
    seconds = pa.array(whole, pa.int64()).cast(pa.timestamp("s"))
    text = pc.strftime(seconds, format="%Y-%m-%d %H:%M:%S")
    if arr.null_count:
        text = pc.if_else(arr.is_valid(), text, pa.scalar(None, pa.string()))
    return text, raw - whole * 1_000_000, raw
