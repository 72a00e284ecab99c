"""Result columns as the content-mapped profiles compare them: normalised once per
result, hashed per row, and checked cell by cell for a gold/predicted column pair.

:class:`Engine` says how a profile sees values and how much a mapping search may spend;
:func:`columns` normalises a result's columns (kept on the result);
:func:`pair_hashes`, :func:`combine` and :func:`cells_equal` are what the mapping
(:mod:`score.comparison.profiles.column_mapping`) and the result diff compare with.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from score.comparison.hashing import small_hashing, splitmix64
from score.comparison.values import NormColumn, Rules, Tolerance, normalise, same_cells
from score.execution.result import QueryResult

_U = np.uint64


@dataclass(frozen=True)
class Engine:
    """How values are seen (``rules``), numbers compared (``tolerance``; None: exactly)
    and how many row checks the column-mapping search may spend (``budget``)."""

    rules: Rules
    tolerance: Tolerance | None
    budget: int = 64


def columns(result: QueryResult, rules: Rules, side: int) -> list[NormColumn]:
    """Every column of ``result`` normalised (``side`` 0 gold, 1 prediction); kept on
    the result, so a cached gold is normalised once for all the predictions it meets
    (the key includes the string-hash path, see :func:`score.comparison.values.hashing_for`)."""
    key = ("columns", rules, side, small_hashing())
    found = result.derived.get(key)
    if found is None:
        found = [
            normalise(result.table.column(i), name, rules, side=side)
            for i, name in enumerate(result.columns)
        ]
        result.derived[key] = found
    return found


def pair_hashes(g: NormColumn, p: NormColumn, tol: Tolerance | None):
    """The hashes to compare for a gold/predicted column pair, and whether the pair is
    compared within a tolerance (numbers, unless both are integers)."""
    if g.is_numeric and p.is_numeric:
        if g.kind == "int" and p.kind == "int":
            return g.hash, p.hash, False
        return g.fhash, p.fhash, tol is not None
    return g.hash, p.hash, False


def combine(hashes: list[np.ndarray], n: int) -> np.ndarray:
    """One hash per row from per-column hashes (order-sensitive)."""
    r = np.zeros(n, dtype=_U)
    for h in hashes:
        r = splitmix64(r ^ h)
    return r


def cells_equal(g: NormColumn, p: NormColumn, ig, ip, tol: Tolerance | None, nan_equal: bool):
    """Elementwise equality of gold rows ``ig`` and predicted rows ``ip`` of one pair
    (None for an index means all rows in order)."""
    hg, hp, tolerant = pair_hashes(g, p, tol)
    if tolerant:
        assert tol is not None and g.values is not None and p.values is not None
        vg = g.values if ig is None else g.values[ig]
        vp = p.values if ip is None else p.values[ip]
        mg = valid_rows(g, ig)
        mp = valid_rows(p, ip)
        ok = tol.close(vg, vp)
        if nan_equal:
            ok |= np.isnan(vg) & np.isnan(vp)
        return (mg == mp) & (~mg | ok)
    ok = (hg if ig is None else hg[ig]) == (hp if ip is None else hp[ip])
    if not (g.strong and p.strong) and g.check is not None and p.check is not None:
        if ok.all():  # confirm equal hashes on the values themselves
            a = g.check if ig is None else g.check.take(pa.array(ig))
            b = p.check if ip is None else p.check.take(pa.array(ip))
            ok = ok & same_cells(a, b)
    return ok


def valid_rows(c: NormColumn, idx) -> np.ndarray:
    if c.valid is None:
        return np.ones(c.n if idx is None else len(idx), dtype=bool)
    return c.valid if idx is None else c.valid[idx]


def fingerprint(h: np.ndarray) -> int:
    """An order-free multiset fingerprint of a hash array."""
    return int(np.sum(splitmix64(h), dtype=_U))


def counts_in(keys: np.ndarray, other: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """How often each of ``keys`` occurs in the sorted unique ``other`` (with ``counts``)."""
    if not len(other):
        return np.zeros(len(keys), dtype=np.int64)
    pos = np.clip(np.searchsorted(other, keys), 0, len(other) - 1)
    return np.where(other[pos] == keys, counts[pos], 0)
