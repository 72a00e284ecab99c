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

Values are hashed by :mod:`score.comparison.hashing` and read by
:mod:`score.comparison.cells`; peers that compare Python objects get them from
:mod:`score.comparison.python_values`.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from score.comparison.cells import (
    OutOfRange,
    cell,
    floats,
    ints,
    is_integer_like,
    micros,
    python_list,
    valid_mask,
)
from score.comparison.hashing import NULL_HASH, SALT, float_hash, hash_strings, splitmix64

_U = np.uint64


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
        return float_hash(self.values, self.valid, nan_equal=True, side=0)

    @cached_property
    def sorted_values(self) -> np.ndarray:
        """The non-NULL numbers sorted (NaN last), cached for tolerant column checks."""
        assert self.values is not None
        v = self.values if self.valid is None else self.values[self.valid]
        return np.sort(v)

    def display(self, i: int) -> Any:
        """The Python value of row ``i`` (for reasons and diffs)."""
        return cell(self.source, i)


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
    valid = valid_mask(arr)

    def done(cls, kind, h, strong, values=None, check=None):
        if valid is not None:
            h[~valid] = NULL_HASH
        if n == 0 or (valid is not None and not valid.any()) or pa.types.is_null(t):
            cls = "null"  # all NULL (or no rows): equal to any all-NULL column
        return NormColumn(name, cls, kind, arr, h, strong, valid, values, check)

    if pa.types.is_null(t):
        return done("null", "null", np.full(n, NULL_HASH, dtype=_U), True)
    if pa.types.is_boolean(t) and not rules.bool_is_number:
        h = splitmix64(ints(arr).astype(_U) ^ SALT["bool"])
        return done("bool", "bool", h, True)
    if is_integer_like(arr):
        whole = ints(arr)
        values = whole.astype(np.float64)
        if valid is not None:
            values[~valid] = np.nan
        if rules.round_digits is not None:  # rounding makes every number a float
            h = float_hash(values, valid, nan_equal=rules.nan_equals_nan, side=side)
            return done("num", "float", h, True, values)
        return done("num", "int", splitmix64(whole.view(_U) ^ SALT["int"]), True, values)
    if pa.types.is_floating(t) or pa.types.is_decimal(t) or pa.types.is_integer(t):
        values = floats(arr)
        if rules.round_digits is not None:
            values = round_like_python(values, rules.round_digits)
        h = float_hash(values, valid, nan_equal=rules.nan_equals_nan, side=side)
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
        h = splitmix64(micros(arr).view(_U) ^ SALT[cls])  # classes apart never collide
        return done(cls, "time", h, True)
    if pa.types.is_time(t):
        return done("tod", "tod", splitmix64(micros(arr).view(_U) ^ SALT["tod"]), True)
    if pa.types.is_duration(t):
        return done("dur", "dur", splitmix64(micros(arr).view(_U) ^ SALT["dur"]), True)
    keys = pa.array(  # nested values, intervals and the rest, by canonical text
        [None if v is None else repr(_canon(v)) for v in python_list(arr)], pa.large_string()
    )
    return done("nested", "nested", hash_strings(keys), False, check=keys)


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


#: The longest string a reason shows whole.
SHOWN_CHARACTERS = 200


def show(v: Any) -> str:
    """A cell as a reason shows it: strings quoted, NULL as NULL, dates in ISO form.

    A long string is cut (a hostile answer's 100 MB cell once made a 100 MB reason, and
    a review page no browser could open).

    >>> show(None), show("a"), show(9.999), show(dt.date(2020, 1, 2))
    ('NULL', "'a'", '9.999', '2020-01-02')
    >>> show("x" * 1000)[-24:]
    "x'... (1,000 characters)"
    """
    if v is None:
        return "NULL"
    if isinstance(v, str):
        if len(v) > SHOWN_CHARACTERS:
            return f"{v[:SHOWN_CHARACTERS]!r}... ({len(v):,} characters)"
        return repr(v)
    if isinstance(v, float | int | decimal.Decimal):
        return str(v)
    if isinstance(v, dt.date | dt.time):
        return v.isoformat(sep=" ") if isinstance(v, dt.datetime) else v.isoformat()
    if isinstance(v, OutOfRange):  # DuckDB's 'infinity' as DuckDB writes it
        return str(v)
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
