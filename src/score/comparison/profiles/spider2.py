"""Spider 2.0's ``compare_pandas_table`` (xlang-ai/Spider2 e12c5f1,
evaluation_suite/evaluate.py), on results that went through its CSV round trip
(:mod:`score.comparison.profiles.csv_roundtrip`: '1' = 1, a date = its ISO text, a midnight
timestamp = the date, Decimal = float, '' / 'NA' / 'None' / 'null' = NULL = NaN = 0).

Column-wise: every gold column (only those listed in ``condition_cols``, 0-based, when
given) must equal *some* predicted column as a vector; there is no one-to-one
assignment, rows are not aligned across columns, extra predicted columns are allowed,
names and order ignored.  Vector equality (``vectors_match``): when order does not
matter (``ignore_order``, which is ``not order_matters``) each vector is sorted on its
own by ``(x is None, str(x), isinstance(x, (int, float)))``; lengths must be equal; two
numbers (booleans count as numbers) are equal when ``math.isclose(a, b, abs_tol=0.01)``
(relative 1e-9), anything else when ``==``.  Sorting by ``str`` is the source of the
peer's quirk: 10.0 sorts before 9.5, so [10.0, 9.5] never meets [9.5, 9.999].

Whole-frame dtype (``as_frame``): the peer takes its vectors from
``frame.transpose().values.tolist()``, where ``frame`` is the gold cut to its
condition columns (``gold.iloc[:, condition_cols]``) or the whole prediction, so every
cell gets the one NumPy dtype pandas finds for that frame.  A frame whose columns are
all int64, uint64 or float64 (as ``read_csv`` typed them) and not all of one integer
dtype (at least one float64 column, or int64 beside uint64) is float64: every integer
becomes a float, ``9223372036854775807`` -> ``9.223372036854776e+18`` and ``12`` ->
``12.0``.  That changes no value under ``isclose`` but changes the ``str`` sort key, so
such a column can pair its cells differently from the same integers in a frame that
keeps them (all integers; or any text, date, boolean or mixed column, which makes the
frame ``object``).  The gold and the prediction are two frames, typed apart: an
identical prediction fails when only one of them turns its integers into floats.

Several gold answers (``<id>_a.csv``, ``<id>_b.csv``): pass a list of gold results to
:func:`score.comparison.compare.compare`; the prediction passes if any matches.

Speed: a column whose (type, value) multiset equals a predicted column's is equal to it
whatever the sort does; that is found by fingerprints and confirmed on the sorted
numbers and on two independent 64-bit hashes of the texts (a false confirmation needs
a 128-bit collision).  Only the remaining columns are sorted by ``str`` keys and
compared with ``isclose``, as the peer does.

>>> from score.execution.result import QueryResult
>>> g = QueryResult.from_rows(["a", "b"], [(1, "x"), (2, "y")])
>>> p = QueryResult.from_rows(["b"], [(1,), (2,)])
>>> compare_spider2(g, p, Flags(condition_cols=(0,))).match
True
>>> big = QueryResult.from_rows(["n", "x", "t"], [(2**63 - 1, 1.5, "a"), (2**53, 2.5, "b")])
>>> compare_spider2(big, big, Flags(condition_cols=(0, 1))).match  # float64 gold, object pred
False
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from score.comparison.profiles.base import Flags, Verdict, check_condition_cols
from score.comparison.profiles.csv_roundtrip import (
    BOOL,
    BOOL_,
    FLOAT,
    FLOAT64,
    INT,
    INT64,
    OBJECT,
    TEXT,
    UINT64,
    CsvColumn,
    csv_column,
)
from score.comparison.values import show
from score.execution.result import QueryResult

PEER = "Spider 2.0 compare_pandas_table"
ABS_TOL = 0.01
REL_TOL = 1e-9


def csv_columns(result: QueryResult) -> list[CsvColumn]:
    """Every column of ``result`` after the CSV round trip."""
    return [csv_column(result.table.column(i), t) for i, t in enumerate(result.types)]


def as_frame(columns: list[CsvColumn]) -> list[CsvColumn]:
    """The columns as one pandas frame's ``transpose().values.tolist()`` gives them: in
    a float64 frame (see the module doc) the integer columns become floats; in any
    other frame every cell keeps its own type."""
    if frame_dtype(columns) != FLOAT64:
        return columns
    return [c.as_floats() if c.dtype in (INT64, UINT64) else c for c in columns]


def frame_dtype(columns: list[CsvColumn]) -> str:
    """The dtype pandas gives a frame of these columns' dtypes: ``object`` beside any
    text or mixed column; booleans stay ``bool`` only alone (with numbers: ``object``);
    numbers alone follow NumPy's promotion (int64 with uint64 or float64: float64)."""
    kinds = {c.dtype for c in columns}
    if OBJECT in kinds or (BOOL_ in kinds and len(kinds) > 1):
        return OBJECT
    if len(kinds) == 1:
        return kinds.pop()
    return FLOAT64 if kinds else OBJECT


def compare_spider2(gold: QueryResult, pred: QueryResult, flags: Flags) -> Verdict:
    """Spider 2.0's verdict (``ignore_order = not flags.order_matters``)."""
    wanted = check_condition_cols(flags, gold.num_columns)
    return compare_csv(
        csv_columns(gold), csv_columns(pred), gold.columns, wanted, not flags.order_matters
    )


def compare_csv(
    gold: list[CsvColumn],
    pred: list[CsvColumn],
    names: tuple[str, ...],
    wanted: tuple[int, ...] | None,
    ignore_order: bool,
) -> Verdict:
    """``compare_pandas_table`` on round-tripped columns (each side typed as one frame:
    the gold's ``wanted`` columns, the whole prediction)."""
    positions = list(range(len(gold))) if wanted is None else list(wanted)
    pred = as_frame(pred)
    for i, g in zip(positions, as_frame([gold[i] for i in positions]), strict=True):
        if ignore_order:
            twins = [p for p in pred if len(p) == len(g) and p.fingerprint == g.fingerprint]
            if any(same_multiset(g, p) for p in twins):
                continue  # equal cells: a match whatever the sort does
        if not any(vectors_match(g, p, ignore_order) for p in pred):
            return Verdict(False, f"{PEER}: {_lonely(g, i, names, pred, ignore_order)}")
    how = "sorted on its own" if ignore_order else "in row order"
    return Verdict(True, f"{PEER}: every gold column equals some predicted column ({how})")


def _lonely(g: CsvColumn, i: int, names, pred: list[CsvColumn], ignore_order: bool) -> str:
    """Why gold column ``i`` equals no predicted column, shown against the predicted
    column in the same place (or the first)."""
    text = f"gold column {i + 1} {names[i]!r} equals no predicted column"
    if not pred:
        return text + " (the prediction has no columns)"
    j = i if i < len(pred) else 0
    p = pred[j]
    versus = f"; predicted column {j + 1}"
    if len(g) != len(p):
        return text + f"{versus} has {len(p)} rows, gold {len(g)}"
    texts_g, texts_p = np.flatnonzero(g.tags == TEXT), np.flatnonzero(p.tags == TEXT)
    if ignore_order and len(texts_g) != len(texts_p):
        return text + f"{versus} has {len(texts_p)} text cells, gold {len(texts_g)}"
    if ignore_order and not np.array_equal(g.sorted_text_hashes, p.sorted_text_hashes):
        ug, cg = np.unique(g.text_hashes[0], return_counts=True)
        up, cp = np.unique(p.text_hashes[0], return_counts=True)
        pos = np.clip(np.searchsorted(up, ug), 0, max(len(up) - 1, 0))
        have = np.where(up[pos] == ug, cp[pos], 0) if len(up) else np.zeros_like(cg)
        short = ug[np.flatnonzero(have != cg)[0]]
        row = int(texts_g[np.flatnonzero(g.text_hashes[0] == short)[0]])
        n_g = int(cg[np.searchsorted(ug, short)])
        n_p = int(have[np.searchsorted(ug, short)])
        return text + (
            f"{versus} holds the text {show(g.python_at(row))} {n_p} time(s), gold {n_g}"
        )
    if ignore_order:
        a, b = g.sorted_number_values, p.sorted_number_values
        bad = np.flatnonzero(~_close(a, b))
        if len(bad):
            k = int(bad[0])
            return (
                text + f"{versus}, sorted by value, has {float(b[k])!r} where gold has "
                f"{float(a[k])!r}"
            )
    og = _order(g) if ignore_order else np.arange(len(g))  # the peer's own str sort
    op = _order(p) if ignore_order else np.arange(len(p))
    bad = np.flatnonzero(~_cells_match(g, p, og, op))
    if len(bad):
        k = int(bad[0])
        where = "sorted position" if ignore_order else "row"
        text += (
            f"{versus} at {where} {k + 1}: predicted {show(p.python_at(op[k]))} vs gold "
            f"{show(g.python_at(og[k]))}"
        )
    return text


def vectors_match(g: CsvColumn, p: CsvColumn, ignore_order: bool) -> bool:
    """Spider 2.0's ``vectors_match`` on two round-tripped columns."""
    if len(g) != len(p):
        return False
    if ignore_order and not _could_match(g, p):
        return False
    og = _order(g) if ignore_order else None
    op = _order(p) if ignore_order else None
    return bool(_cells_match(g, p, og, op).all())


def _could_match(g: CsvColumn, p: CsvColumn) -> bool:
    """Necessary for ``vectors_match`` whatever the sort: as many texts on both sides and
    the same texts (each text must meet an equal one), and numbers that pair up within
    the tolerance, which they do in some order only if they do sorted by value."""
    if np.count_nonzero(g.tags == TEXT) != np.count_nonzero(p.tags == TEXT):
        return False
    if not np.array_equal(g.sorted_text_hashes, p.sorted_text_hashes):
        return False
    return bool(_close(g.sorted_number_values, p.sorted_number_values).all())


def _close(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``math.isclose(a, b, rel_tol=1e-9, abs_tol=0.01)`` elementwise."""
    with np.errstate(invalid="ignore", over="ignore"):
        bound = np.maximum(REL_TOL * np.maximum(np.abs(a), np.abs(b)), ABS_TOL)
        return (a == b) | (np.isfinite(a) & np.isfinite(b) & (np.abs(a - b) <= bound))


def _order(c: CsvColumn) -> np.ndarray:
    """The positions sorted by ``(str(x), is number)`` (None never occurs after NaN -> 0)."""
    if c.order is None:
        table = pa.table({"k": c.sort_keys, "n": pa.array(c.is_number)})
        keys = [("k", "ascending"), ("n", "ascending")]
        c.order = pc.sort_indices(table, sort_keys=keys).to_numpy()
    return c.order


def _cells_match(g: CsvColumn, p: CsvColumn, og, op) -> np.ndarray:
    tg = g.tags if og is None else g.tags[og]
    tp = p.tags if op is None else p.tags[op]
    a = g.numbers if og is None else g.numbers[og]
    b = p.numbers if op is None else p.numbers[op]
    num_g, num_p = tg != TEXT, tp != TEXT
    ok = num_g & num_p & _close(a, b)
    both_text = ~num_g & ~num_p
    if both_text.any():
        ta = g.texts if og is None else g.texts.take(pa.array(og))
        tb = p.texts if op is None else p.texts.take(pa.array(op))
        eq = pc.fill_null(pc.equal(ta, tb), False).to_numpy(zero_copy_only=False)
        ok |= both_text & eq
    return ok


def same_multiset(g: CsvColumn, p: CsvColumn) -> bool:
    """The two columns hold the same (type, value) cells, in any order: then they match
    whatever the sorting, since equal cells sort alike and compare equal."""
    if len(g) != len(p) or not np.array_equal(
        np.bincount(g.tags, minlength=4), np.bincount(p.tags, minlength=4)
    ):
        return False
    for tag in (INT, FLOAT, BOOL):
        a, b = g.sorted_numbers[tag], p.sorted_numbers[tag]
        if isinstance(a, list) or isinstance(b, list):  # integers beyond doubles
            if _exact_ints(g) != _exact_ints(p):
                return False
        elif not np.array_equal(a, b):
            return False
    if (g.tags == TEXT).any():  # texts by two independent 64-bit hashes (128 bits)
        return all(
            np.array_equal(np.sort(a), np.sort(b))
            for a, b in zip(g.text_hashes, p.text_hashes, strict=True)
        )
    return True


def _exact_ints(c: CsvColumn) -> list[int]:
    """The INT cells as exact Python integers, sorted."""
    sel = np.flatnonzero(c.tags == INT)
    if c.ints is None:
        return sorted(int(x) for x in c.numbers[sel])
    return sorted(int(c.ints[i]) for i in sel)
