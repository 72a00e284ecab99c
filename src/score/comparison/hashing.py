"""Hashes of result values: 64-bit, vectorised, equal for equal values.

A comparison hashes whole columns at once.  :func:`splitmix64` mixes 64-bit keys (numbers,
microseconds) bijectively; :func:`hash_strings` hashes text and bytes, with DuckDB's
vectorised ``hash()`` for large results and an in-process hash for small ones
(:func:`hashing_for`); :func:`float_hash` hashes numbers as float64 so that 1 and 1.0
hash alike.  Each class of value has its own salt (:data:`SALT`), so classes kept apart
never collide, and every NULL hashes to :data:`NULL_HASH`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

if TYPE_CHECKING:  # imported by the first large result's hashing (verify needs none)
    import duckdb

_U = np.uint64
NULL_HASH = _U(0x6A09E667F3BCC908)  # the hash every NULL gets, whatever its type
SALT = {
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


def float_hash(
    v: np.ndarray, valid: np.ndarray | None, *, nan_equal: bool, side: int
) -> np.ndarray:
    """The hash of each number as a float64 (-0.0 is 0.0, one NaN pattern); NULLs
    hash to :data:`NULL_HASH`; with ``nan_equal`` off every NaN of ``side`` is a value
    of its own."""
    v = v.astype(np.float64, copy=True)
    v[v == 0.0] = 0.0  # -0.0 is 0.0
    nan = np.isnan(v)
    if valid is not None:
        nan &= valid
    v[nan] = np.nan  # one canonical NaN bit pattern
    h = splitmix64(v.view(_U) ^ SALT["float"])
    if not nan_equal and nan.any():  # every NaN a value of its own
        where = np.flatnonzero(nan).astype(_U)
        h[nan] = splitmix64(where ^ SALT["nan"] ^ _U(side + 1) << _U(40))
    if valid is not None:
        h[~valid] = NULL_HASH
    return h
