"""Spider test-suite's ``result_eq`` (taoyds/test-suite-sql-eval e97acc5, exec_eval.py).

The peer's rule, on the Python values DuckDB's client returns:

1. both results empty: equal; different row counts: not equal; different column
   counts (read from the first row): not equal;
2. ``quick_rej``: each row's cells sorted by ``str(x) + str(type(x))``; the sorted rows
   must be equal as a list (order matters) or as a set.  This is the quirk that makes
   ``(1.0, 1.5)`` differ from ``(1, 1.5)`` and ``(True, 5)`` from ``(1, 5)``: equal
   values of different types sort to different places;
3. equal if some permutation of the predicted columns makes the rows equal as a list
   (order matters) or as a multiset, with Python's ``==`` (1 == 1.0 == True, no float
   tolerance, NaN != NaN, Decimal('1.10') != 1.1, a date != its ISO string).

The peer's search tries every permutation its random row sample does not rule out; a
pruned permutation can never succeed, so its verdict is "some permutation works".  We
find that permutation by content signatures instead (see
:mod:`score.profiles.bijective`), with the same verdict.

When no two values of different Python types can be equal (at most one numeric type
among all columns, no DECIMAL wider than 15 digits, no -0.0, no tz-aware timestamps) the
quirk cannot bite and the comparison runs vectorised; otherwise the rule is run on
Python tuples exactly as above.  LIST, STRUCT and MAP cells are unhashable: where the
peer would hash them it raises, and the verdict is no match with a reason saying so.

Not ours to emulate: the peer strips every DISTINCT from both queries before running
them and reads ``order_matters`` from the gold text ('order by' substring, so a window
ORDER BY counts).  Those act on SQL, so the caller decides: pass the flag you want
(:func:`score.order.order_matters` reads a top-level ORDER BY only).

>>> from score.result import QueryResult
>>> g = QueryResult.from_rows(["a", "b"], [(1.0, 1.5)])
>>> compare_spider_ts(g, QueryResult.from_rows(["a", "b"], [(1, 1.5)]), Flags()).match
False
"""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np
import pyarrow as pa

from score.profiles.base import Flags, Verdict, crash
from score.profiles.bijective import Engine, compare_bijective
from score.result import QueryResult
from score.values import Rules, python_class, python_values

PEER = "test-suite result_eq"
RULES = Rules(
    bool_is_number=False, date_is_timestamp=False, aware_is_naive=False, nan_equals_nan=False
)
_NUMERIC = ("int", "float", "bool")


def compare_spider_ts(gold: QueryResult, pred: QueryResult, flags: Flags) -> Verdict:
    """test-suite's verdict (``condition_cols`` ignored: the peer has none)."""
    if gold.num_rows == 0 and pred.num_rows == 0:
        return Verdict(True, "both results are empty")
    if gold.num_rows != pred.num_rows:
        return Verdict(False, f"predicted has {pred.num_rows} rows, gold {gold.num_rows}")
    if gold.num_columns != pred.num_columns:
        return Verdict(False, f"predicted has {pred.num_columns} columns, gold {gold.num_columns}")
    if _vectorisable(gold, pred):
        v = compare_bijective(
            gold, pred, Engine(RULES, None, budget=10_000), order_matters=flags.order_matters
        )
        return Verdict(v.match, f"{PEER}: {v.reason}")
    return _python(gold, pred, flags.order_matters)


_VECTOR_CLASSES = {"null", "int", "float", "bool", "str", "uuid", "bytes", "date", "ts", "time"}


def _ts_class(arr: pa.ChunkedArray, duckdb_type: str) -> str | None:
    """A column's Python class when the vectorised path reproduces the peer exactly."""
    c = python_class(arr, duckdb_type)
    if c == "float":  # -0.0 == 0.0 but str() differs: the quirk could bite
        v = arr.to_numpy()
        return None if np.any((v == 0) & np.signbit(v)) else c
    return c if c in _VECTOR_CLASSES or (c or "").startswith("dec") else None


def _vectorisable(gold: QueryResult, pred: QueryResult) -> bool:
    classes = set()
    for r in (gold, pred):
        for i, ty in enumerate(r.types):
            c = _ts_class(r.table.column(i), ty)
            if c is None:
                return False
            classes.add(c)
    numeric = {c for c in classes if c in _NUMERIC or c.startswith("dec")}
    return len(numeric) <= 1


def _rows(result: QueryResult) -> list[tuple]:
    cols = [python_values(result.table.column(i), t) for i, t in enumerate(result.types)]
    return list(zip(*cols, strict=True)) if cols else [()] * result.num_rows


def _unorder_row(row: tuple) -> tuple:
    return tuple(sorted(row, key=lambda x: str(x) + str(type(x))))


def _python(gold: QueryResult, pred: QueryResult, order_matters: bool) -> Verdict:
    """The rule on Python tuples (mixed numeric types, unhashable cells, ...)."""
    r1, r2 = _rows(gold), _rows(pred)
    try:
        s1 = [_unorder_row(row) for row in r1]
        s2 = [_unorder_row(row) for row in r2]
        if not (s1 == s2 if order_matters else set(s1) == set(s2)):
            return Verdict(False, f"{PEER}: quick_rej: the rows' sorted cells differ")
        for i in range(len(r1[0])):
            {row[i] for row in r1}  # the peer hashes every gold column here
        perm = _find_permutation(r1, r2, order_matters)
    except TypeError as e:
        return crash(PEER, f"unhashable cell: {e}")
    if perm is None:
        return Verdict(False, f"{PEER}: no column permutation makes the rows equal")
    return Verdict(True, f"{PEER}: equal under column permutation {perm}")


def _find_permutation(r1: list[tuple], r2: list[tuple], order_matters: bool):
    """A permutation ``perm`` (gold position -> predicted position) under which the rows
    are equal, or None; candidates first by each column's multiset (or sequence)."""
    n = len(r1[0])
    gcols = [[row[i] for row in r1] for i in range(n)]
    pcols = [[row[j] for row in r2] for j in range(n)]
    if order_matters:
        cands = [[j for j in range(n) if pcols[j] == gcols[i]] for i in range(n)]
    else:
        gc = [Counter(c) for c in gcols]
        pc_ = [Counter(c) for c in pcols]
        cands = [[j for j in range(n) if pc_[j] == gc[i]] for i in range(n)]
    target = r1 if order_matters else Counter(r1)

    def full(perm: list[int]) -> bool:
        permuted = [tuple(row[j] for j in perm) for row in r2]
        return permuted == target if order_matters else Counter(permuted) == target

    def pairs_ok(i: int, j: int, assign: dict[int, int]) -> bool:
        """Each column already assigned agrees jointly with (i -> j): a pruning test."""
        bag = list if order_matters else Counter
        for a, b in assign.items():
            gold_pairs = bag(zip(gcols[a], gcols[i], strict=True))
            if bag(zip(pcols[b], pcols[j], strict=True)) != gold_pairs:
                return False
        return True

    order = sorted(range(n), key=lambda i: len(cands[i]))
    assign: dict[int, int] = {}
    seen: defaultdict[int, int] = defaultdict(int)

    def rec(k: int):
        if k == n:
            perm = [assign[i] for i in range(n)]
            return perm if full(perm) else None
        i = order[k]
        for j in cands[i]:
            if seen[j] or (len(cands[i]) > 1 and not pairs_ok(i, j, assign)):
                continue
            assign[i] = j
            seen[j] += 1
            found = rec(k + 1)
            if found is not None:
                return found
            del assign[i]
            seen[j] -= 1
        return None

    return rec(0)
