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
:mod:`score.comparison.profiles.bijective`), with the same verdict.

Both steps run vectorised when every column holds values whose ``str`` and equality
can be reproduced column-wise (integers, floats, booleans, DECIMAL up to 15 digits,
text, bytes, dates, naive timestamps, times, NULL; integers within 2**53 and no DECIMAL
beside floats, so every numeric equality is exact in doubles): each cell's sort key
``str(x) + str(type(x))`` is built per column, each row's cells are ranked by comparing
the keys column against column (k**2 vectorised comparisons, stable like ``sorted``),
and the sorted rows are compared by a 64-bit hash of their cells.  That step is
skipped when the permutation found pairs columns of the same Python type and no -0.0
occurs: equal values of one type print alike, so quick_rej cannot fail.  Anything else
(tz-aware timestamps, wide DECIMAL, UUID beside text, ...) runs on Python tuples
exactly as above.  LIST, STRUCT and MAP cells are unhashable: where the peer would hash
them it raises, and the verdict is no match with a reason saying so.

Not ours to emulate: the peer strips every DISTINCT from both queries before running
them and reads ``order_matters`` from the gold text ('order by' substring, so a window
ORDER BY counts).  Those act on SQL, so the caller decides: pass the flag you want
(:func:`score.comparison.order_matters.order_matters` reads a top-level ORDER BY only).

>>> from score.execution.result import QueryResult
>>> g = QueryResult.from_rows(["a", "b"], [(1.0, 1.5)])
>>> compare_spider_ts(g, QueryResult.from_rows(["a", "b"], [(1, 1.5)]), Flags()).match
False
"""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from score.comparison.profiles.base import Flags, Verdict, crash
from score.comparison.profiles.bijective import compare_mapped
from score.comparison.profiles.column_checks import Engine, combine
from score.comparison.python_values import python_class, python_values
from score.comparison.values import Rules, normalise
from score.execution.result import QueryResult

PEER = "test-suite result_eq"
RULES = Rules(
    bool_is_number=True, date_is_timestamp=False, aware_is_naive=False, nan_equals_nan=False
)
_VECTOR_CLASSES = {"null", "int", "float", "bool", "str", "bytes", "date", "ts", "time"}
_TYPE_NAME = {
    "int": "<class 'int'>",
    "float": "<class 'float'>",
    "bool": "<class 'bool'>",
    "str": "<class 'str'>",
    "bytes": "<class 'bytes'>",
    "date": "<class 'datetime.date'>",
    "ts": "<class 'datetime.datetime'>",
    "time": "<class 'datetime.time'>",
}
_NONE_KEY = "None<class 'NoneType'>"


def compare_spider_ts(gold: QueryResult, pred: QueryResult, flags: Flags) -> Verdict:
    """test-suite's verdict (``condition_cols`` ignored: the peer has none)."""
    if gold.num_rows == 0 and pred.num_rows == 0:
        return Verdict(True, f"{PEER}: both results are empty")
    if gold.num_rows != pred.num_rows:
        return Verdict(False, f"{PEER}: predicted has {pred.num_rows} rows, gold {gold.num_rows}")
    if gold.num_columns != pred.num_columns:
        return Verdict(
            False, f"{PEER}: predicted has {pred.num_columns} columns, gold {gold.num_columns}"
        )
    classes = _vector_classes(gold, pred)
    if classes is None:
        return _python(gold, pred, flags.order_matters)
    engine = Engine(RULES, None, budget=10_000)
    v, mapping = compare_mapped(gold, pred, engine, order_matters=flags.order_matters)
    if not v.match:  # no permutation works: not equal, whatever quick_rej says
        return Verdict(False, f"{PEER}: {v.reason}")
    assert mapping is not None  # a match comes with its mapping
    alike = all(classes[0][i] == classes[1][j] for i, j in mapping.items())
    if not (alike and not _has_negative_zero(gold) and not _has_negative_zero(pred)):
        if not _quick_rej(gold, pred, classes, flags.order_matters):
            return Verdict(False, f"{PEER}: quick_rej: the rows' sorted cells differ")
    return Verdict(True, f"{PEER}: {v.reason}")


def _has_negative_zero(r: QueryResult) -> bool:
    """-0.0 == 0.0 but their str() differ, so quick_rej could tell them apart."""
    for i in range(r.num_columns):
        col = r.table.column(i)
        if pa.types.is_floating(col.type):
            v = col.to_numpy()
            if np.any((v == 0) & np.signbit(v)):
                return True
    return False


def _vector_classes(gold: QueryResult, pred: QueryResult) -> list[list[str]] | None:
    """Each column's Python class, or None when the vectorised path cannot be exact."""
    out = []
    for r in (gold, pred):
        row = []
        for i, ty in enumerate(r.types):
            c = python_class(r.table.column(i), ty)
            if c is None or not (c in _VECTOR_CLASSES or c.startswith("dec")):
                return None
            row.append(c)
        out.append(row)
    seen = set(out[0]) | set(out[1])
    decimals = {c for c in seen if c.startswith("dec")}
    if decimals and ("float" in seen or len(decimals) > 1):
        return None  # Decimal vs float is exact binary; scales print differently
    if "float" in seen:  # ints must be exact as doubles
        for r, row in zip((gold, pred), out, strict=True):
            for i, c in enumerate(row):
                if c == "int" and _max_abs(r.table.column(i)) > 2**53:
                    return None
    return out


def _max_abs(arr: pa.ChunkedArray) -> int:
    mm = pc.min_max(arr)
    return max(abs(int(mm["min"].as_py() or 0)), abs(int(mm["max"].as_py() or 0)))


def _vectorisable(gold: QueryResult, pred: QueryResult) -> bool:
    return _vector_classes(gold, pred) is not None


def _sort_keys(arr: pa.ChunkedArray, cls: str, duckdb_type: str) -> pa.Array:
    """``str(x) + str(type(x))`` of every cell of one column."""
    arr = arr.combine_chunks()
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    n = len(arr)
    if cls == "null":
        return pa.array([_NONE_KEY] * n, pa.string())
    if cls == "int" or cls == "str":
        text = arr.cast(pa.string())
        keys = pc.binary_join_element_wise(text, _TYPE_NAME[cls], "")
    elif cls == "float":
        values = arr.cast(pa.float64()).to_numpy(zero_copy_only=False)
        uniq, inverse = np.unique(values.view(np.uint64), return_inverse=True)
        reprs = np.array(
            [repr(float(x)) + _TYPE_NAME["float"] for x in uniq.view(np.float64)], dtype=object
        )
        keys = pa.array(reprs[inverse], pa.string())
    elif cls == "date" and pa.types.is_date32(arr.type):  # ISO text, as str(date)
        keys = pc.binary_join_element_wise(arr.cast(pa.string()), _TYPE_NAME[cls], "")
    else:  # booleans, decimals, timestamps, ...: str() once per distinct value
        cache: dict = {}
        out = []
        for v in python_values(arr, duckdb_type):
            key = (type(v), v)
            if key not in cache:
                cache[key] = str(v) + str(type(v))
            out.append(cache[key])
        keys = pa.array(out, pa.string())
    if arr.null_count:
        keys = pc.if_else(arr.is_valid(), keys, _NONE_KEY)
    return keys


def _unordered_rows(r: QueryResult, classes: list[str], side: int) -> np.ndarray:
    """A hash per row of ``unorder_row(row)``: its cells sorted (stably) by their key."""
    k, n = r.num_columns, r.num_rows
    keys = [
        _sort_keys(r.table.column(i), c, t)
        for i, (c, t) in enumerate(zip(classes, r.types, strict=True))
    ]
    cols = [
        normalise(r.table.column(i), name, RULES, side=side) for i, name in enumerate(r.columns)
    ]
    cells = [c.fhash if c.is_numeric else c.hash for c in cols]  # Python == as hashes
    ranks = []
    for i in range(k):
        rank = np.zeros(n, dtype=np.int64)
        for j in range(k):
            if j != i:
                before = pc.less(keys[j], keys[i]) if j > i else pc.less_equal(keys[j], keys[i])
                rank += before.to_numpy(zero_copy_only=False)
        ranks.append(rank)
    ordered = []
    for pos in range(k):
        h = np.zeros(n, dtype=np.uint64)
        for i in range(k):
            h = np.where(ranks[i] == pos, cells[i], h)
        ordered.append(h)
    return combine(ordered, n)


def _quick_rej(gold: QueryResult, pred: QueryResult, classes, order_matters: bool) -> bool:
    """``quick_rej`` on column arrays: True when it lets the pair through."""
    s1 = _unordered_rows(gold, classes[0], 0)
    s2 = _unordered_rows(pred, classes[1], 1)
    if order_matters:
        return bool(np.array_equal(s1, s2))
    return bool(np.array_equal(np.unique(s1), np.unique(s2)))


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
