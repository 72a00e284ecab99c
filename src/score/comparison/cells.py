"""Single cells and raw vectors of Arrow result columns, as the comparators read them.

:func:`cell` and :func:`python_list` give Python values, with an :class:`OutOfRange`
where Python has none (DuckDB's ``'infinity'::DATE``, a year past 9999);
:func:`ints`, :func:`floats` and :func:`micros` give numpy vectors (dates and times as
microseconds), :func:`valid_mask` the non-NULL rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_MICROS_PER_UNIT = {"s": 1_000_000, "ms": 1_000, "us": 1, "ns": None}


@dataclass(frozen=True)
class OutOfRange:
    """A cell Python cannot hold (DuckDB's ``'infinity'::DATE``, a year past 9999):
    its Arrow type and raw stored value, shown as such in reasons.

    >>> cell(pa.array([2147483647], pa.date32()), 0)
    <date32[day] 2147483647, outside Python's range>
    """

    type: str
    raw: Any

    def __repr__(self) -> str:
        return f"<{self.type} {self.raw}, outside Python's range>"

    def __str__(self) -> str:
        """DuckDB's text for an infinity (``'infinity'``, ``'-infinity'``), else the repr.

        >>> str(cell(pa.array([-2147483647], pa.date32()), 0))
        '-infinity'
        """
        if self.raw in _INFINITIES:
            return "infinity" if self.raw > 0 else "-infinity"
        return repr(self)


#: The raw values DuckDB stores for ``'infinity'`` and ``'-infinity'`` dates (int32
#: days) and timestamps (int64 in any unit).
_INFINITIES = frozenset({2**31 - 1, -(2**31 - 1), 2**63 - 1, -(2**63 - 1)})


def cell(arr: pa.Array | pa.ChunkedArray, i: int) -> Any:
    """The Python value of ``arr[i]``, or an :class:`OutOfRange` when Python has none."""
    scalar = arr[i]
    try:
        return scalar.as_py()
    except (OverflowError, ValueError):
        t = arr.type
        if pa.types.is_nested(t):  # a list, struct or map holding such a cell
            return _nested(arr, i)
        width = pa.int32() if pa.types.is_date32(t) or pa.types.is_time32(t) else pa.int64()
        try:
            raw = scalar.cast(width).as_py()
        except (pa.ArrowException, ValueError, OverflowError):
            raw = "?"
        return OutOfRange(str(t), raw)


def _nested(arr: pa.Array | pa.ChunkedArray, i: int) -> Any:
    """A nested cell as ``as_py`` gives it, each item that Python cannot hold an
    :class:`OutOfRange` (so ``[infinity]`` equals itself and not ``[9999-12-31]``)."""
    one = arr.slice(i, 1)
    if isinstance(one, pa.ChunkedArray):
        one = one.combine_chunks()
    t = one.type
    if not one[0].is_valid:
        return None
    if pa.types.is_struct(t):
        return {t.field(k).name: cell(child, 0) for k, child in enumerate(one.flatten())}
    items = one[0].values  # a list's, a fixed-size list's or a map's entries
    if pa.types.is_map(t):
        keys, values = python_list(items.field(0)), python_list(items.field(1))
        return list(zip(keys, values, strict=True))
    return python_list(items)


def python_list(arr: pa.Array | pa.ChunkedArray) -> list[Any]:
    """``arr.to_pylist()``, with :class:`OutOfRange` for the cells Python cannot hold.

    >>> python_list(pa.array([0, 2147483647], pa.date32()))[1]
    <date32[day] 2147483647, outside Python's range>
    """
    try:
        return arr.to_pylist()
    except (OverflowError, ValueError):
        return [cell(arr, i) for i in range(len(arr))]


def valid_mask(arr: pa.Array) -> np.ndarray | None:
    if arr.null_count == 0:
        return None
    return arr.is_valid().to_numpy(zero_copy_only=False)


def ints(arr: pa.Array) -> np.ndarray:
    as_int = arr.cast(pa.int64())
    filled = pc.fill_null(as_int, 0) if as_int.null_count else as_int
    return np.asarray(filled.to_numpy(zero_copy_only=False), dtype=np.int64)


def floats(arr: pa.Array) -> np.ndarray:
    """The nearest doubles (unchecked: UBIGINT's 2**64 - 1 or a HUGEINT past 2**53 is the
    double nearest it, as ``float()`` gives)."""
    as_float = arr.cast(pa.float64(), safe=False)
    return np.asarray(as_float.to_numpy(zero_copy_only=False), dtype=np.float64)


def micros(arr: pa.Array) -> np.ndarray:
    """Dates, timestamps, times and durations as int64 microseconds (UTC for instants)."""
    t = arr.type
    if pa.types.is_date32(t):
        return ints(arr.cast(pa.int32())) * 86_400_000_000
    if pa.types.is_date64(t):
        return ints(arr.cast(pa.int64())) * 1_000
    if pa.types.is_time32(t) or pa.types.is_time64(t):
        raw = ints(arr.cast(pa.int64() if pa.types.is_time64(t) else pa.int32()))
    else:  # timestamp or duration
        raw = ints(arr.cast(pa.int64()))
    unit = t.unit
    if unit == "ns":
        return raw // 1_000  # DuckDB's Python client truncates to microseconds too
    return raw * _MICROS_PER_UNIT[unit]


def is_integer_like(arr: pa.Array) -> bool:
    """Integers (and booleans read as numbers, DECIMAL(p,0)) that fit in int64."""
    t = arr.type
    if pa.types.is_boolean(t):
        return True
    if pa.types.is_integer(t):
        if t == pa.uint64() and len(arr) and (pc.max(arr).as_py() or 0) > 2**63 - 1:
            return False
        return True
    if pa.types.is_decimal(t) and t.scale == 0 and len(arr):
        mm = pc.min_max(arr)
        lo, hi = mm["min"].as_py(), mm["max"].as_py()
        return lo is None or (-(2**63) <= lo and hi < 2**63)
    return False
