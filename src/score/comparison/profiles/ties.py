"""StreamSQLBench's tie adapters (seed 002), layered over the Spider 2.0 comparison.

For a tie task the gold result stores every legal row, so it can have more rows than a
right answer.  ``any_k_from_tie_set``: the prediction passes when its rows are a legal
choice of ``k`` of them (``tie_k``, the count the task asks for): exactly ``k`` rows,
each one a gold row, no gold row used more often than gold holds it, and Spider 2.0's
own comparison (:func:`score.comparison.profiles.spider2.compare_csv`, after the CSV round trip)
passes between the prediction and the chosen gold rows.  ``any_one_argmax``: the same
with ``k = 1`` (any one of the tied best rows).

How rows are chosen (our reading; the adapter's code is not in the reference set): a
gold column maps to a predicted column whose every cell equals some cell of it (Spider
2.0 cell equality: numbers within abs 0.01, text exact; several gold columns may share
one predicted column, as in Spider 2.0); for each such mapping (at most 256 are tried)
the predicted rows are matched one-to-one to gold rows equal in every mapped column,
and the first full matching is confirmed with Spider 2.0's comparison.  Row order is
never checked (``order_matters`` is ignored).  The chosen rows keep the dtypes their
columns had in the whole gold, so Spider 2.0's whole-frame dtype rule (see
:mod:`score.comparison.profiles.spider2`) applies to them, and to the prediction, as there.

>>> from score.execution.result import QueryResult
>>> gold = QueryResult.from_rows(["who", "n"], [("a", 5), ("b", 5), ("c", 5)])
>>> pred = QueryResult.from_rows(["who", "n"], [("c", 5), ("a", 5)])
>>> compare_any_k(gold, pred, Flags(tie_k=2)).match
True
>>> compare_any_one(gold, pred, Flags()).reason
'StreamSQLBench any_one_argmax: the prediction has 2 rows, the task asks for 1'
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_bipartite_matching

from score.comparison.profiles.base import Flags, Verdict, check_condition_cols
from score.comparison.profiles.csv_roundtrip import TEXT, CsvColumn
from score.comparison.profiles.spider2 import ABS_TOL, REL_TOL, as_frame, compare_csv, csv_columns
from score.execution.result import QueryResult

MAX_MAPPINGS = 256


def compare_any_k(gold: QueryResult, pred: QueryResult, flags: Flags) -> Verdict:
    """any_k_from_tie_set: ``flags.tie_k`` rows chosen legally from gold's tie set."""
    if flags.tie_k is None:
        raise ValueError("any_k_from_tie_set needs tie_k (how many rows the task asks for)")
    return tie_choice(gold, pred, flags, flags.tie_k, "StreamSQLBench any_k_from_tie_set")


def compare_any_one(gold: QueryResult, pred: QueryResult, flags: Flags) -> Verdict:
    """any_one_argmax: one row, any of gold's tied best rows."""
    return tie_choice(gold, pred, flags, 1, "StreamSQLBench any_one_argmax")


def tie_choice(gold: QueryResult, pred: QueryResult, flags: Flags, k: int, peer: str) -> Verdict:
    """Do the prediction's rows form a legal choice of ``k`` gold rows?"""
    if pred.num_rows != k:
        why = f"the prediction has {pred.num_rows} rows, the task asks for {k}"
        return Verdict(False, f"{peer}: {why}")
    if gold.num_rows < k:
        why = f"gold holds only {gold.num_rows} legal rows, the task asks for {k}"
        return Verdict(False, f"{peer}: {why}")
    wanted = check_condition_cols(flags, gold.num_columns)
    positions = list(range(gold.num_columns)) if wanted is None else list(wanted)
    G, P = csv_columns(gold), as_frame(csv_columns(pred))  # typed once, not per mapping
    eq = {(j, m): _cell_equal(G[j], P[m]) for j in positions for m in range(len(P))}
    cands = [[m for m in range(len(P)) if eq[j, m].any(axis=0).all()] for j in positions]
    for j, c in zip(positions, cands, strict=True):
        if not c:
            return Verdict(
                False,
                f"{peer}: gold column {j + 1} {gold.columns[j]!r} has no "
                f"predicted column whose cells are all among its values",
            )
    for mapping in itertools.islice(itertools.product(*cands), MAX_MAPPINGS):
        fits = np.ones((gold.num_rows, k), dtype=bool)
        for j, m in zip(positions, mapping, strict=True):
            fits &= eq[j, m]
        if k == 0:
            chosen = np.zeros(0, dtype=np.int64)
        else:
            match = maximum_bipartite_matching(csr_matrix(fits.T), perm_type="column")
            if (match < 0).any():
                continue
            chosen = match.astype(np.int64)
        subset = [c.take(chosen) for c in G]
        v = compare_csv(subset, P, gold.columns, wanted, ignore_order=True)
        if v.match:
            rows = ", ".join(str(int(r) + 1) for r in chosen) or "none"
            return Verdict(True, f"{peer}: the prediction is gold rows {rows} ({v.reason})")
    return Verdict(False, f"{peer}: no choice of {k} gold rows equals the prediction row for row")


def _cell_equal(g: CsvColumn, p: CsvColumn) -> np.ndarray:
    """Spider 2.0 cell equality of every gold cell (rows) with every predicted cell."""
    a, b = g.numbers[:, None], p.numbers[None, :]
    num = (g.tags != TEXT)[:, None] & (p.tags != TEXT)[None, :]
    with np.errstate(invalid="ignore", over="ignore"):
        bound = np.maximum(REL_TOL * np.maximum(np.abs(a), np.abs(b)), ABS_TOL)
        close = (a == b) | (np.isfinite(a) & np.isfinite(b) & (np.abs(a - b) <= bound))
    texts_g = np.array(g.texts.to_pylist(), dtype=object)[:, None]
    texts_p = np.array(p.texts.to_pylist(), dtype=object)[None, :]
    text = (g.tags == TEXT)[:, None] & (p.tags == TEXT)[None, :] & (texts_g == texts_p)
    return (num & close) | text
