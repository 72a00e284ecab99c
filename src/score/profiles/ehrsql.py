"""EHRSQL 2024 (glee4810/ehrsql-2024 4659789, scoring_program/scoring_utils.py).

``process_answer``: each cell becomes ``str(round(float(x), 3))`` when ``float(x)``
succeeds, else ``str(x)``; the rows (lists of those strings) are sorted and only the
first 100 kept; two answers match when those canonical texts are equal.  Hence column
order matters, row order never does (``order_matters`` is ignored), duplicates count,
2.0004 = 2.0 but 2.0004 != 2.0006, '1' = 1 = 1.0 = True, NULL = 'None', NaN = NaN, a
DATE = its ISO text, a LIST is its text, and rows past the 100th sorted row are never
seen.

Cells are converted once per distinct value (integers vectorised, strings that cannot
parse as a float skipped by a pattern) and the rows sorted by Arrow on the texts, which
orders UTF-8 by code point exactly as Python orders str.

>>> from score.result import QueryResult
>>> g = QueryResult.from_rows(["x"], [(2.0004,)])
>>> compare_ehrsql(g, QueryResult.from_rows(["x"], [("2.0",)]), Flags()).match
True
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from score.profiles.base import Flags, Verdict
from score.result import QueryResult
from score.values import python_values

PEER = "EHRSQL process_answer"
LIMIT = 100
# A str that float() might accept starts (after whitespace) with a sign, digit, point,
# underscore, 'inf' or 'nan'; anything non-ASCII goes to Python too (Unicode digits).
_MAYBE_FLOAT = r"(?i)^[\t\n\v\f\r \x1c-\x1f]*[+-]?([0-9._]|inf|nan)|[^\x00-\x7f]"


def process_item(x: Any) -> str:
    """One cell as the peer writes it.

    >>> process_item(2.0004), process_item("1"), process_item(None), process_item(True)
    ('2.0', '1.0', 'None', '1.0')
    """
    try:
        return str(round(float(x), 3))
    except Exception:  # the peer keeps any value float() refuses as its str()
        return str(x)


def canonical_rows(result: QueryResult, limit: int = LIMIT) -> list[tuple[str, ...]]:
    """The first ``limit`` rows of ``sorted([[process_item(c) for c in row] ...])``."""
    if result.num_rows == 0:
        return []
    texts = [_texts(result.table.column(i), t) for i, t in enumerate(result.types)]
    if not texts:
        return [()] * min(result.num_rows, limit)
    table = pa.table({f"c{i}": t for i, t in enumerate(texts)})
    keys = [(f"c{i}", "ascending") for i in range(len(texts))]
    top = pc.select_k_unstable(table, k=min(limit, result.num_rows), sort_keys=keys)
    head = table.take(top)
    head = head.take(pc.sort_indices(head, sort_keys=keys))
    return list(zip(*(c.to_pylist() for c in head.columns), strict=True))


def compare_ehrsql(gold: QueryResult, pred: QueryResult, flags: Flags) -> Verdict:
    """EHRSQL 2024's verdict."""
    g, p = canonical_rows(gold), canonical_rows(pred)
    if g == p:
        seen = f"first {LIMIT} of " if max(gold.num_rows, pred.num_rows) > LIMIT else ""
        return Verdict(True, f"{PEER}: the same {seen}{len(g)} sorted row text(s)")
    if gold.num_rows and pred.num_rows and gold.num_columns != pred.num_columns:
        return Verdict(
            False, f"{PEER}: predicted rows have {pred.num_columns} values, gold rows "
            f"{gold.num_columns}"
        )
    for i, (a, b) in enumerate(zip(g, p, strict=False)):
        if a != b:
            return Verdict(
                False, f"{PEER}: sorted row {i + 1} differs: predicted {list(b)} vs gold {list(a)}"
            )
    return Verdict(
        False, f"{PEER}: predicted has {len(p)} sorted row(s) in view, gold {len(g)}"
    )


def _texts(arr: pa.ChunkedArray, duckdb_type: str) -> pa.Array:
    """``process_item`` of every cell of one column, as an Arrow string array."""
    arr = arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr
    t = arr.type
    if pa.types.is_dictionary(t):
        arr, t = arr.dictionary_decode(), t.value_type
    if arr.null_count == len(arr):
        return pa.array(["None"] * len(arr), pa.string())
    if (pa.types.is_integer(t) or pa.types.is_boolean(t)) and arr.null_count == 0:
        ints = arr.cast(pa.int64()).to_numpy() if t != pa.uint64() else None
        if ints is not None:  # str(float(i)) for |i| < 1e16 is the digits of the double + '.0'
            as_double = ints.astype(np.float64)
            if np.all(np.abs(as_double) < 1e16):
                digits = pa.array(as_double.astype(np.int64)).cast(pa.string())
                return pc.binary_join_element_wise(digits, ".0", "")
    if pa.types.is_floating(t):  # once per distinct bit pattern (so -0.0 stays '-0.0')
        bits = arr.cast(pa.float64()).to_numpy(zero_copy_only=False).view(np.uint64)
        uniq, inverse = np.unique(bits, return_inverse=True)
        texts = np.array([process_item(float(x)) for x in uniq.view(np.float64)], dtype=object)
        out = texts[inverse]
        out[~_valid(arr)] = "None"
        return pa.array(out, pa.string())
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        arr = arr.cast(pa.string())
        maybe = pc.fill_null(pc.match_substring_regex(arr, _MAYBE_FLOAT), False)
        if not pc.any(maybe).as_py() and arr.null_count == 0:
            return arr  # no cell can parse as a float: the text is the text
        idx = np.flatnonzero(maybe.to_numpy(zero_copy_only=False) | ~_valid(arr))
        out = arr.to_pylist()
        for i in idx:
            out[i] = process_item(out[i])
        return pa.array(out, pa.string())
    return _by_distinct_value(arr, duckdb_type)


def _valid(arr: pa.Array) -> np.ndarray:
    return arr.is_valid().to_numpy(zero_copy_only=False)


def _by_distinct_value(arr: pa.Array, duckdb_type: str) -> pa.Array:
    """process_item once per distinct value (every value when they are unhashable)."""
    values = python_values(arr, duckdb_type)
    try:
        cache: dict = {}
        out = []
        for v in values:
            key = (type(v), v)
            if key not in cache:
                cache[key] = process_item(v)
            out.append(cache[key])
    except TypeError:  # lists, dicts: convert each one
        out = [process_item(v) for v in values]
    return pa.array(out, pa.string())
