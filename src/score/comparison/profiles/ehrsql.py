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

>>> from score.execution.result import QueryResult
>>> g = QueryResult.from_rows(["x"], [(2.0004,)])
>>> compare_ehrsql(g, QueryResult.from_rows(["x"], [("2.0",)]), Flags()).match
True
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from score.comparison.profiles.base import Flags, Verdict
from score.comparison.python_values import python_values, timestamp_parts
from score.comparison.values import round_like_python, show
from score.execution.result import QueryResult

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
            False,
            f"{PEER}: predicted rows have {pred.num_columns} values, gold rows {gold.num_columns}",
        )
    for i, (a, b) in enumerate(zip(g, p, strict=False)):
        if a != b:
            return Verdict(
                False, f"{PEER}: sorted row {i + 1} differs: predicted {_row(b)} vs gold {_row(a)}"
            )
    return Verdict(False, f"{PEER}: predicted has {len(p)} sorted row(s) in view, gold {len(g)}")


def _row(row: tuple) -> str:
    """A row of cell texts as a reason shows it (a long text cut, :func:`show`)."""
    return "[" + ", ".join(show(v) if isinstance(v, str) else repr(v) for v in row) + "]"


def _texts(arr: pa.ChunkedArray, duckdb_type: str) -> pa.Array:
    """``process_item`` of every cell of one column, as an Arrow string array."""
    arr = arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr
    t = arr.type
    if pa.types.is_dictionary(t):
        arr, t = arr.dictionary_decode(), t.value_type
    if arr.null_count == len(arr):
        return pa.array(["None"] * len(arr), pa.string())
    valid = _valid(arr)
    if (pa.types.is_integer(t) and t != pa.uint64()) or pa.types.is_boolean(t):
        doubles = pc.fill_null(arr.cast(pa.int64()), 0).to_numpy().astype(np.float64)
        return _none_where_null(_float_texts(doubles), valid)
    if pa.types.is_floating(t):
        doubles = pc.fill_null(arr.cast(pa.float64()), 0.0).to_numpy()
        return _none_where_null(_float_texts(doubles), valid)
    if pa.types.is_decimal(t) and t.precision <= 15:
        doubles = pc.fill_null(arr, 0).cast(pa.float64()).to_numpy()  # see _exact_decimal
        if _exact_decimal(arr, doubles):
            return _none_where_null(_float_texts(doubles), valid)
    if pa.types.is_date32(t):  # float() refuses a date: str(date) is its ISO text
        return _none_where_null(arr.cast(pa.string()), valid)
    if pa.types.is_timestamp(t) and not t.tz:  # str(datetime), fraction only when nonzero
        return _none_where_null(_datetime_texts(arr), valid)
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        arr = arr.cast(pa.string())
        maybe = pc.fill_null(pc.match_substring_regex(arr, _MAYBE_FLOAT), False)
        if not pc.any(maybe).as_py() and arr.null_count == 0:
            return arr  # no cell can parse as a float: the text is the text
        idx = np.flatnonzero(maybe.to_numpy(zero_copy_only=False) | ~valid)
        out = arr.to_pylist()
        for i in idx:
            out[i] = process_item(out[i])
        return pa.array(out, pa.string())
    return _by_distinct_value(arr, duckdb_type)


def _none_where_null(texts: pa.Array, valid: np.ndarray) -> pa.Array:
    if valid.all():
        return texts
    return pc.if_else(pa.array(valid), texts, "None")


_FRACTIONS = pa.array([f"{i:03d}".rstrip("0") or "0" for i in range(1000)], pa.string())


def _float_texts(x: np.ndarray) -> pa.Array:
    """``str(round(x, 3))`` for float64 values, vectorised.

    A rounded value is the double nearest to m/1000 for an integer m; below 1e12 no
    shorter decimal maps to that double, so Python's repr writes exactly the digits of
    m/1000 with trailing zeros dropped (and '-0.0' for a negative zero).  Larger,
    infinite and NaN values go through Python.
    """
    r = round_like_python(x, 3)
    with np.errstate(invalid="ignore"):
        simple = np.isfinite(r) & (np.abs(r) < 1e12)
    m = np.abs(np.rint(np.where(simple, r, 0.0) * 1000.0)).astype(np.int64)
    whole = pa.array(m // 1000).cast(pa.string())
    frac = _FRACTIONS.take(pa.array(m % 1000))
    text = pc.binary_join_element_wise(whole, frac, ".")
    text = pc.if_else(pa.array(np.signbit(r)), pc.binary_join_element_wise("-", text, ""), text)
    if simple.all():
        return text
    out = text.to_numpy(zero_copy_only=False).astype(object)
    for i in np.flatnonzero(~simple):
        out[i] = str(float(r[i]))
    return pa.array(out, pa.string())


def _datetime_texts(arr: pa.Array) -> pa.Array:
    seconds, micros, _ = timestamp_parts(arr)
    if not micros.any():
        return seconds
    frac = pc.utf8_lpad(pa.array(micros).cast(pa.string()), width=6, padding="0")
    with_frac = pc.binary_join_element_wise(seconds, frac, ".")
    return pc.if_else(pa.array(micros != 0), with_frac, seconds)


def _exact_decimal(arr: pa.Array, doubles: np.ndarray) -> bool:
    """Did Arrow's DECIMAL -> double cast give float(Decimal) (correctly rounded)?  Checked
    on the unscaled integers, which are exact in a double below 10**15."""
    words = np.frombuffer(arr.buffers()[1], dtype=np.int64)
    unscaled = words[2 * arr.offset : 2 * (arr.offset + len(arr)) : 2].astype(np.float64)
    expected = unscaled / 10.0**arr.type.scale
    return bool(np.array_equal(np.where(_valid(arr), expected, 0.0), doubles))


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
