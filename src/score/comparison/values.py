"""Value normalisation shared by the comparison profiles.

A profile never compares Arrow cells one by one in Python when it can help it.  Instead
:func:`normalise` turns each result column into a :class:`NormColumn`: an equality
*class* (only columns of one class can ever be equal), a 64-bit hash per row that is
equal for equal values, and for numbers a float64 vector for tolerant comparison.
:class:`Rules` says how a profile sees values (is ``TRUE`` a number, is a ``DATE`` the
midnight ``TIMESTAMP``, is NaN equal to NaN, are numbers rounded first).

>>> import pyarrow as pa
>>> c = normalise(pa.array([1, None, 3]), "n")
>>> c.cls, c.kind, c.null_count
('num', 'int', 1)
>>> bool(normalise(pa.array([1.0]), "x").fhash[0] == normalise(pa.array([1]), "y").fhash[0])
True

Peers that compare Python objects get them from :mod:`score.comparison.python_values`.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

if TYPE_CHECKING:  # imported by the first large result's hashing (verify needs none)
    import duckdb

__all__ = [
    "NULL_HASH",
    "NormColumn",
    "Tolerance",
    "Rules",
    "OutOfRange",
    "cell",
    "hash_strings",
    "normalise",
    "python_list",
    "round_like_python",
    "same_cells",
    "show",
    "splitmix64",
]

_U = np.uint64
NULL_HASH = _U(0x6A09E667F3BCC908)  # the hash every NULL gets, whatever its type
_SALT = {
    "int": _U(0x243F6A8885A308D3),
    "float": _U(0x13198A2E03707344),
    "bool": _U(0xA4093822299F31D0),
    "time": _U(0x082EFA98EC4E6C89),
    "date": _U(0x3707344A4093822F),
    "timetz": _U(0x9216D5D98979FB1B),
    "tod": _U(0x452821E638D01377),
    "dur": _U(0xBE5466CF34E90C6C),
    "nan": _U(0xC0AC29B7C97C50DD),
}
_MICROS_PER_UNIT = {"s": 1_000_000, "ms": 1_000, "us": 1, "ns": None}


def splitmix64(x: np.ndarray) -> np.ndarray:
    """A bijective 64-bit mix (SplitMix64 finaliser), vectorised over ``uint64``.

    >>> splitmix64(np.array([0, 1], dtype=np.uint64)).dtype
    dtype('uint64')
    """
    z = x.astype(_U, copy=True)
    z += _U(0x9E3779B97F4A7C15)
    z ^= z >> _U(30)
    z *= _U(0xBF58476D1CE4E5B9)
    z ^= z >> _U(27)
    z *= _U(0x94D049BB133111EB)
    z ^= z >> _U(31)
    return z


_local = threading.local()


_inherited: list[duckdb.DuckDBPyConnection] = []


def _duck() -> duckdb.DuckDBPyConnection:
    """One in-memory connection per thread and process, used only to hash.  A forked
    child opens its own and never closes the parent's (closing it would wait forever on
    the parent's worker threads, which the child does not have)."""
    con, pid = getattr(_local, "con", None), getattr(_local, "pid", None)
    if con is None or pid != os.getpid():
        import duckdb

        if con is not None:
            _inherited.append(con)
        _local.con, _local.pid = duckdb.connect(), os.getpid()
    return _local.con


#: Results with at most this many rows hash their strings in-process (numpy): DuckDB's
#: vectorised hash is faster on large arrays but costs a fixed ~0.8 ms per call, more
#: than a whole small comparison.  Both results of one comparison always share a path.
SMALL_ROWS = 4096

_small: ContextVar[bool] = ContextVar("sqlgold_small_string_hash", default=False)


@contextmanager
def hashing_for(rows: int) -> Iterator[None]:
    """Within this block, :func:`hash_strings` uses the in-process path when ``rows`` (the
    largest result being compared) is at most :data:`SMALL_ROWS`.  Hashes made under
    different paths must never be compared, so one comparison sets this once.

    >>> with hashing_for(3):
    ...     a = hash_strings(pa.array(["x", "y", "x"]))
    >>> bool(a[0] == a[2]), bool(a[0] == a[1])
    (True, False)
    """
    token = _small.set(rows <= SMALL_ROWS)
    try:
        yield
    finally:
        _small.reset(token)


def small_hashing() -> bool:
    """Whether :func:`hash_strings` currently takes the in-process path."""
    return _small.get()


def hash_strings(arr: pa.Array, seed: int = 0) -> np.ndarray:
    """A 64-bit hash (``uint64``) of each value of a string or binary array; another
    ``seed`` gives a second, independent hash of the same values.  DuckDB's vectorised
    ``hash()``, or inside :func:`hashing_for` a small result an in-process hash.

    >>> h = hash_strings(pa.array(["a", "b", "a"]))
    >>> bool(h[0] == h[2]), bool(h[0] == h[1])
    (True, False)
    >>> bool(hash_strings(pa.array(["a"]), seed=1)[0] != h[0])
    True
    """
    if len(arr) == 0:
        return np.zeros(0, dtype=_U)
    if _small.get():
        return _hash_strings_local(arr, seed)
    expr = "hash(v)" if seed == 0 else f"hash(v, {int(seed)}::UBIGINT)"
    rel = _duck().from_arrow(pa.table({"v": arr})).project(expr)
    return np.array(rel.to_arrow_table().column(0).to_numpy(), dtype=_U)  # writable


_K1, _K2 = _U(0x9E3779B97F4A7C15), _U(0xC2B2AE3D27D4EB4F)


def _hash_strings_local(arr: pa.Array, seed: int) -> np.ndarray:
    """In-process string hash: the sum of a SplitMix64 mix of every (byte, position)
    pair of a value, mixed again with its length and ``seed``; vectorised over the
    Arrow buffers, so no per-value Python.

    >>> h = _hash_strings_local(pa.array(["ab", "ba", "ab", ""]), 0)
    >>> bool(h[0] == h[2]), bool(h[0] == h[1]), bool(h[3] != h[0])
    (True, False, True)
    """
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    n = len(arr)
    buffers = arr.buffers()
    wide = pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type)
    offsets = np.frombuffer(buffers[1], dtype=np.int64 if wide else np.int32)
    offsets = offsets[arr.offset : arr.offset + n + 1].astype(np.int64)
    lengths = np.diff(offsets)
    first = int(offsets[0])
    total = int(offsets[-1]) - first
    if total == 0:
        sums = np.zeros(n, dtype=_U)
    else:
        data = np.frombuffer(buffers[2], dtype=np.uint8)[first : first + total].astype(_U)
        starts = offsets[:-1] - first
        pos = (np.arange(total, dtype=np.int64) - np.repeat(starts, lengths)).astype(_U)
        mixed = splitmix64((data + _U(1)) ^ (pos * _K1) ^ (_U(seed) * _K2))
        cumulative = np.concatenate([np.zeros(1, dtype=_U), np.cumsum(mixed, dtype=_U)])
        sums = cumulative[offsets[1:] - first] - cumulative[starts]
    return splitmix64(sums ^ (lengths.astype(_U) * _K2) ^ _U(seed + 1))


@dataclass(frozen=True)
class Rules:
    """How one profile sees values.

    ``bool_is_number``: TRUE is the number 1 (Python and Julia say so; SQL does not).
    ``date_is_timestamp``: a DATE equals the TIMESTAMP at midnight of that day.
    ``aware_is_naive``: a TIMESTAMPTZ and a naive TIMESTAMP compare as instants (naive
    read as UTC); otherwise they are different classes, as in Python.
    ``nan_equals_nan``: a NaN equals a NaN (else NaN equals nothing, as in Python).
    ``round_digits``: numbers are rounded first, like Python's ``round(float(x), d)``.
    """

    bool_is_number: bool = False
    date_is_timestamp: bool = True
    aware_is_naive: bool = True
    nan_equals_nan: bool = True
    round_digits: int | None = None


@dataclass(eq=False)
class NormColumn:
    """One result column seen through a profile's :class:`Rules`.

    ``hash`` is equal for equal values (exactly, for numbers compared exactly);
    ``strong`` says the converse also holds (a bijective hash); for strings and nested
    values equal hashes are checked against ``source`` before two values are called equal.
    ``values`` holds float64 numbers (NaN where NULL) for numeric columns; ``check``
    is an array whose cell equality is value equality, for the kinds whose hash is not
    bijective (strings, bytes, nested values).
    """

    name: str
    cls: str
    kind: str
    source: pa.Array
    hash: np.ndarray
    strong: bool
    valid: np.ndarray | None = None
    values: np.ndarray | None = None
    check: pa.Array | None = field(default=None, repr=False)

    @property
    def n(self) -> int:
        return len(self.hash)

    @property
    def null_count(self) -> int:
        return 0 if self.valid is None else int(self.n - np.count_nonzero(self.valid))

    @property
    def is_numeric(self) -> bool:
        return self.values is not None

    @cached_property
    def fhash(self) -> np.ndarray:
        """The hash of each number as a float64 (so 1 and 1.0 hash alike)."""
        if self.values is None or self.kind == "float":
            return self.hash
        return _float_hash(self.values, self.valid, nan_equal=True, side=0)

    @cached_property
    def sorted_values(self) -> np.ndarray:
        """The non-NULL numbers sorted (NaN last), cached for tolerant column checks."""
        assert self.values is not None
        v = self.values if self.valid is None else self.values[self.valid]
        return np.sort(v)

    def display(self, i: int) -> Any:
        """The Python value of row ``i`` (for reasons and diffs)."""
        return cell(self.source, i)


@dataclass(frozen=True)
class OutOfRange:
    """A cell Python cannot hold (DuckDB's ``'infinity'::DATE``, a year past 9999):
    its Arrow type and raw stored value, shown as such in reasons.

    >>> print(show(cell(pa.array([2147483647], pa.date32()), 0)))
    <date32[day] 2147483647, outside Python's range>
    """

    type: str
    raw: Any

    def __repr__(self) -> str:
        return f"<{self.type} {self.raw}, outside Python's range>"


def cell(arr: pa.Array | pa.ChunkedArray, i: int) -> Any:
    """The Python value of ``arr[i]``, or an :class:`OutOfRange` when Python has none."""
    scalar = arr[i]
    try:
        return scalar.as_py()
    except (OverflowError, ValueError):
        t = arr.type
        width = pa.int32() if pa.types.is_date32(t) or pa.types.is_time32(t) else pa.int64()
        try:
            raw = scalar.cast(width).as_py()
        except (pa.ArrowException, ValueError, OverflowError):
            raw = "?"  # a nested value holding such a cell
        return OutOfRange(str(t), raw)


def python_list(arr: pa.Array | pa.ChunkedArray) -> list[Any]:
    """``arr.to_pylist()``, with :class:`OutOfRange` for the cells Python cannot hold.

    >>> python_list(pa.array([0, 2147483647], pa.date32()))[1]
    <date32[day] 2147483647, outside Python's range>
    """
    try:
        return arr.to_pylist()
    except (OverflowError, ValueError):
        return [cell(arr, i) for i in range(len(arr))]


def _float_hash(v: np.ndarray, valid: np.ndarray | None, *, nan_equal: bool, side: int):
    v = v.astype(np.float64, copy=True)
    v[v == 0.0] = 0.0  # -0.0 is 0.0
    nan = np.isnan(v)
    if valid is not None:
        nan &= valid
    v[nan] = np.nan  # one canonical NaN bit pattern
    h = splitmix64(v.view(_U) ^ _SALT["float"])
    if not nan_equal and nan.any():  # every NaN a value of its own
        where = np.flatnonzero(nan).astype(_U)
        h[nan] = splitmix64(where ^ _SALT["nan"] ^ _U(side + 1) << _U(40))
    if valid is not None:
        h[~valid] = NULL_HASH
    return h


def _valid(arr: pa.Array) -> np.ndarray | None:
    if arr.null_count == 0:
        return None
    return arr.is_valid().to_numpy(zero_copy_only=False)


def _ints(arr: pa.Array) -> np.ndarray:
    as_int = arr.cast(pa.int64())
    filled = pc.fill_null(as_int, 0) if as_int.null_count else as_int
    return np.asarray(filled.to_numpy(zero_copy_only=False), dtype=np.int64)


def _floats(arr: pa.Array) -> np.ndarray:
    return np.asarray(arr.cast(pa.float64()).to_numpy(zero_copy_only=False), dtype=np.float64)


def _micros(arr: pa.Array) -> np.ndarray:
    """Dates, timestamps, times and durations as int64 microseconds (UTC for instants)."""
    t = arr.type
    if pa.types.is_date32(t):
        return _ints(arr.cast(pa.int32())) * 86_400_000_000
    if pa.types.is_date64(t):
        return _ints(arr.cast(pa.int64())) * 1_000
    if pa.types.is_time32(t) or pa.types.is_time64(t):
        raw = _ints(arr.cast(pa.int64() if pa.types.is_time64(t) else pa.int32()))
    else:  # timestamp or duration
        raw = _ints(arr.cast(pa.int64()))
    unit = t.unit
    if unit == "ns":
        return raw // 1_000  # DuckDB's Python client truncates to microseconds too
    return raw * _MICROS_PER_UNIT[unit]


def round_like_python(values: np.ndarray, digits: int) -> np.ndarray:
    """``round(float(x), digits)`` for each element, vectorised where that is exact.

    numpy rounds ``x * 10**d`` to an integer and divides; that equals Python's
    correctly rounded result except near a half (where the product is inexact) and for
    large magnitudes, which are redone with Python's ``round``.

    >>> round_like_python(np.array([2.0004, 2.675, 0.1 + 0.2]), 3).tolist()
    [2.0, 2.675, 0.3]
    >>> round_like_python(np.array([2.6745]), 3).tolist() == [round(2.6745, 3)]
    True
    """
    v = np.asarray(values, dtype=np.float64)
    scale = 10.0**digits
    with np.errstate(invalid="ignore", over="ignore"):
        y = v * scale
        out = np.rint(y) / scale
        frac = np.abs(y - np.trunc(y))
        risky = ~np.isfinite(y) | (np.abs(y) >= 2.0**30) | (np.abs(frac - 0.5) < 1e-6)
    integral = np.isfinite(v) & (v == np.trunc(v))
    out[integral] = v[integral]
    redo = np.flatnonzero(risky & ~integral)
    for i in redo:
        out[i] = round(float(v[i]), digits)
    return out


def normalise(
    arr: pa.Array | pa.ChunkedArray, name: str, rules: Rules = Rules(), *, side: int = 0
) -> NormColumn:
    """One column seen through ``rules``; ``side`` (0 gold, 1 prediction) keeps NaNs apart
    when NaN equals nothing."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    t = arr.type
    n = len(arr)
    valid = _valid(arr)

    def done(cls, kind, h, strong, values=None, check=None):
        if valid is not None:
            h[~valid] = NULL_HASH
        if n == 0 or (valid is not None and not valid.any()) or pa.types.is_null(t):
            cls = "null"  # all NULL (or no rows): equal to any all-NULL column
        return NormColumn(name, cls, kind, arr, h, strong, valid, values, check)

    if pa.types.is_null(t):
        return done("null", "null", np.full(n, NULL_HASH, dtype=_U), True)
    if pa.types.is_boolean(t) and not rules.bool_is_number:
        h = splitmix64(_ints(arr).astype(_U) ^ _SALT["bool"])
        return done("bool", "bool", h, True)
    if _is_integer_like(arr):
        ints = _ints(arr)
        values = ints.astype(np.float64)
        if valid is not None:
            values[~valid] = np.nan
        if rules.round_digits is not None:  # rounding makes every number a float
            h = _float_hash(values, valid, nan_equal=rules.nan_equals_nan, side=side)
            return done("num", "float", h, True, values)
        return done("num", "int", splitmix64(ints.view(_U) ^ _SALT["int"]), True, values)
    if pa.types.is_floating(t) or pa.types.is_decimal(t) or pa.types.is_integer(t):
        values = _floats(arr)
        if rules.round_digits is not None:
            values = round_like_python(values, rules.round_digits)
        h = _float_hash(values, valid, nan_equal=rules.nan_equals_nan, side=side)
        return done("num", "float", h, True, values)
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        text = arr if pa.types.is_string(t) else arr.cast(pa.large_string())
        return done("str", "str", hash_strings(text), False, check=text)
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        raw = arr if pa.types.is_binary(t) else arr.cast(pa.large_binary())
        return done("bytes", "bytes", hash_strings(raw), False, check=raw)
    if pa.types.is_date(t) or pa.types.is_timestamp(t):
        cls = "time"
        if not rules.date_is_timestamp and pa.types.is_date(t):
            cls = "date"
        elif pa.types.is_timestamp(t) and t.tz and not rules.aware_is_naive:
            cls = "timetz"
        h = splitmix64(_micros(arr).view(_U) ^ _SALT[cls])  # classes apart never collide
        return done(cls, "time", h, True)
    if pa.types.is_time(t):
        return done("tod", "tod", splitmix64(_micros(arr).view(_U) ^ _SALT["tod"]), True)
    if pa.types.is_duration(t):
        return done("dur", "dur", splitmix64(_micros(arr).view(_U) ^ _SALT["dur"]), True)
    keys = pa.array(  # nested values, intervals and the rest, by canonical text
        [None if v is None else repr(_canon(v)) for v in python_list(arr)], pa.large_string()
    )
    return done("nested", "nested", hash_strings(keys), False, check=keys)


def _is_integer_like(arr: pa.Array) -> bool:
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


def _canon(v: Any) -> Any:
    """A structure whose repr is equal for equal nested values (numbers as numbers)."""
    if v is None or isinstance(v, str | bytes):
        return v
    if isinstance(v, bool):
        return ("bool", v)
    if isinstance(v, int | float | decimal.Decimal):
        f = float(v)
        if math.isnan(f):
            return ("nan",)
        return int(v) if f.is_integer() and abs(f) < 2**63 else f
    if isinstance(v, dict):
        return tuple((k, _canon(x)) for k, x in v.items())
    if isinstance(v, list | tuple):
        return tuple(_canon(x) for x in v)
    if isinstance(v, dt.datetime | dt.date | dt.time):
        return ("t", v.isoformat())
    if isinstance(v, dt.timedelta):
        return ("d", v // dt.timedelta(microseconds=1))
    return (type(v).__name__, str(v))


def show(v: Any) -> str:
    """A cell as a reason shows it: strings quoted, NULL as NULL, dates in ISO form.

    >>> show(None), show("a"), show(9.999), show(dt.date(2020, 1, 2))
    ('NULL', "'a'", '9.999', '2020-01-02')
    """
    if v is None:
        return "NULL"
    if isinstance(v, str):
        return repr(v)
    if isinstance(v, float | int | decimal.Decimal):
        return str(v)
    if isinstance(v, dt.date | dt.time):
        return v.isoformat(sep=" ") if isinstance(v, dt.datetime) else v.isoformat()
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


@dataclass(frozen=True)
class Tolerance:
    """Numbers ``a`` and ``b`` are equal when ``|a - b| <= abs + rel * max(|a|, |b|)``.

    >>> t = Tolerance()
    >>> bool(t.close(np.array([0.3]), np.array([0.1 + 0.2]))[0])
    True
    >>> bool(t.close(np.array([10.0]), np.array([9.999]))[0])
    False
    """

    rel: float = 1e-6
    abs: float = 1e-9

    def __post_init__(self) -> None:
        if not (self.rel >= 0 and self.abs >= 0):  # also refuses NaN
            raise ValueError(f"tolerance must be non-negative, got rel={self.rel} abs={self.abs}")

    def close(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Elementwise closeness; infinities equal only themselves; NaN is not close."""
        with np.errstate(invalid="ignore", over="ignore"):
            bound = self.abs + self.rel * np.maximum(np.abs(a), np.abs(b))
            near = np.isfinite(a) & np.isfinite(b) & (np.abs(a - b) <= bound)
            return (a == b) | near


def same_cells(a: pa.Array, b: pa.Array) -> np.ndarray:
    """Elementwise equality of two aligned arrays, NULL equal to NULL; arrays of
    different types (text beside bytes) are equal only where both are NULL.

    >>> same_cells(pa.array(["a", None, "b"]), pa.array(["a", None, "c"], pa.large_string()))
    array([ True,  True, False])
    """
    if a.type != b.type:
        try:
            b = b.cast(a.type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return a.is_null().to_numpy(zero_copy_only=False) & b.is_null().to_numpy(
                zero_copy_only=False
            )
    if a.equals(b):
        return np.ones(len(a), dtype=bool)
    eq = pc.fill_null(pc.equal(a, b), False).to_numpy(zero_copy_only=False)
    both_null = a.is_null().to_numpy(zero_copy_only=False) & b.is_null().to_numpy(
        zero_copy_only=False
    )
    return eq | both_null
