"""BIRD EX (bird-bench/mini_dev evaluation_ex.py) and BULL / FinSQL EX (seed 001):
``set(predicted_rows) == set(gold_rows)``.

Duplicates and row order are ignored, column order matters (rows are tuples), values are
exact with Python's ``==``: 1 == 1.0 == True, NaN != NaN, Decimal('1.10') != 1.1, '1' != 1,
a date != its ISO string and != a datetime.  A LIST, STRUCT or MAP cell cannot be hashed:
the peer's ``set()`` raises, and the verdict is no match with a reason saying so.

Each column pair is turned into exact codes (vectorised when Python's equality allows,
on Python objects otherwise), rows into a combined hash, and the distinct row hashes of
both sides compared; equal hashes are confirmed on the values.

>>> from score.execution.result import QueryResult
>>> g = QueryResult.from_rows(["n"], [(1,), (1,), (2,)])
>>> compare_bird(g, QueryResult.from_rows(["n"], [(2,), (1,)]), Flags()).match
True
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from score.comparison.cells import cell
from score.comparison.hashing import NULL_HASH, splitmix64
from score.comparison.profiles.base import Flags, Verdict, crash
from score.comparison.profiles.column_checks import combine
from score.comparison.python_values import python_class, python_values
from score.comparison.values import Rules, normalise, same_cells, show
from score.execution.result import QueryResult

RULES = Rules(
    bool_is_number=True, date_is_timestamp=False, aware_is_naive=False, nan_equals_nan=False
)
_NUMERIC = {"int", "bool", "float"}
_MISMATCH = np.uint64(0x3C6EF372FE94F82B)


def compare_bird(gold: QueryResult, pred: QueryResult, flags: Flags) -> Verdict:
    """BIRD's EX verdict (``order_matters`` and ``condition_cols`` ignored, as BIRD does)."""
    return set_equality(gold, pred, "BIRD set equality")


def compare_set(gold: QueryResult, pred: QueryResult, flags: Flags) -> Verdict:
    """BULL / FinSQL's EX verdict: the same set equality."""
    return set_equality(gold, pred, "BULL set equality")


def set_equality(gold: QueryResult, pred: QueryResult, peer: str) -> Verdict:
    """``set(pred) == set(gold)`` on Python rows, vectorised where exact."""
    for r in (pred, gold):  # the peer builds set(pred) first, then set(gold)
        for i, ty in enumerate(r.types):
            if r.num_rows and python_class(r.table.column(i), ty) == "unhashable":
                return crash(peer, f"unhashable {ty} cell in column {r.columns[i]!r}")
    if gold.num_rows == 0 or pred.num_rows == 0:
        if gold.num_rows == pred.num_rows:
            return Verdict(True, f"{peer}: both results are empty")
        return Verdict(False, f"{peer}: predicted has {pred.num_rows} rows, gold {gold.num_rows}")
    if gold.num_columns != pred.num_columns:
        return Verdict(
            False,
            f"{peer}: predicted rows have {pred.num_columns} values, gold rows "
            f"{gold.num_columns}, so no row is in both",
        )
    try:
        pairs = [_pair(gold, pred, i) for i in range(gold.num_columns)]
    except TypeError as e:
        return crash(peer, f"unhashable cell: {e}")
    rg = combine([p[0] for p in pairs], gold.num_rows)
    rp = combine([p[1] for p in pairs], pred.num_rows)
    ug, ig = np.unique(rg, return_index=True)
    up, ip = np.unique(rp, return_index=True)
    if np.array_equal(ug, up) and _confirmed(pairs, ig, ip):
        return Verdict(True, f"{peer}: the same {len(ug)} distinct row(s)")
    missing = np.flatnonzero(~np.isin(rg, rp))
    extra = np.flatnonzero(~np.isin(rp, rg))
    parts = []
    if len(missing):
        parts.append(
            f"{len(np.unique(rg[missing]))} gold row(s) not in the prediction, "
            f"e.g. {_row(gold, int(missing[0]))}"
        )
    if len(extra):
        parts.append(
            f"{len(np.unique(rp[extra]))} predicted row(s) not in gold, "
            f"e.g. {_row(pred, int(extra[0]))}"
        )
    return Verdict(False, f"{peer}: " + ("; ".join(parts) or "rows differ"))


def _row(r: QueryResult, i: int) -> str:
    return "(" + ", ".join(show(cell(r.table.column(j), i)) for j in range(r.num_columns)) + ")"


def _pair(gold: QueryResult, pred: QueryResult, i: int):
    """Exact codes of column ``i`` on both sides (equal iff Python-equal, up to the
    confirmation of string hashes) and the arrays that confirm them (or None)."""
    ga, pa_ = gold.table.column(i), pred.table.column(i)
    gt, pt = gold.types[i], pred.types[i]
    cg, cp = python_class(ga, gt), python_class(pa_, pt)
    if _vectorised(cg, cp, ga, pa_):
        g = normalise(ga, gold.columns[i], RULES, side=0)
        p = normalise(pa_, pred.columns[i], RULES, side=1)
        if g.is_numeric and p.is_numeric:
            same_int = g.kind == p.kind == "int"
            return (g.hash, p.hash, None) if same_int else (g.fhash, p.fhash, None)
        hp = p.hash
        if cg != cp and "null" not in (cg, cp):  # different types: only NULL can be equal
            hp = np.where(hp == NULL_HASH, hp, splitmix64(hp ^ _MISMATCH))
        checks = (g.check, p.check) if g.check is not None and p.check is not None else None
        return g.hash, hp, checks
    codes: dict = {}  # Python's own equality and hashing (NaN objects stay distinct)
    hg = np.fromiter((codes.setdefault(v, len(codes)) for v in python_values(ga, gt)), np.int64)
    hp = np.fromiter((codes.setdefault(v, len(codes)) for v in python_values(pa_, pt)), np.int64)
    return splitmix64(hg.view(np.uint64)), splitmix64(hp.view(np.uint64)), None


def _vectorised(cg: str | None, cp: str | None, ga, pa_) -> bool:
    if cg is None or cp is None or "tstz" in (cg, cp):
        return False
    num_g = cg in _NUMERIC or cg.startswith("dec")
    num_p = cp in _NUMERIC or cp.startswith("dec")
    if not (num_g and num_p) or cg == cp:
        return True
    if "float" in (cg, cp):  # ints must be exact as doubles; DECIMAL vs float is exact
        other, arr = (cp, pa_) if cg == "float" else (cg, ga)
        if other.startswith("dec"):
            return False
        return _max_abs(arr) <= 2**53
    return True  # int, bool and DECIMAL(<=15 digits) compare exactly as doubles


def _max_abs(arr: pa.ChunkedArray) -> int:
    import pyarrow.compute as pc

    mm = pc.min_max(arr)
    lo, hi = mm["min"].as_py(), mm["max"].as_py()
    return max(abs(int(lo or 0)), abs(int(hi or 0)))


def _confirmed(pairs, ig: np.ndarray, ip: np.ndarray) -> bool:
    """Equal row hashes are equal rows: codes equal, strings equal."""
    for hg, hp, checks in pairs:
        if not np.array_equal(hg[ig], hp[ip]):
            return False
        if checks is not None:
            a, b = checks[0].take(pa.array(ig)), checks[1].take(pa.array(ip))
            if not same_cells(a, b).all():
                return False
    return True
