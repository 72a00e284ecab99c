"""BIRD mini-dev's soft F1 (``evaluation_f1.py``, ``calculate_f1_score``): partial
credit over cells, as its own code computes it, quirks included.

* Both results empty: 1.0.
* Duplicate rows are dropped, first occurrence kept (rows as Python tuples: 1, 1.0 and
  True are one value).
* Rows are paired by position, gold row i with predicted row i: row order matters.
* For each pair, over the gold row's width w: a predicted value found anywhere in the
  gold row counts 1/w to the matches, one not found 1/w to the predicted-only; a gold
  value not found in the predicted row counts 1/w to the gold-only.  (A predicted row
  wider than the gold's can so count more than 1 in matches.)
* A gold row with no predicted partner adds 1 to the gold-only; a predicted row with no
  gold partner adds 1 to the predicted-only.
* precision = matches / (matches + predicted-only), recall = matches / (matches +
  gold-only), each 0 when its denominator is; F1 their harmonic mean, 0 when both are 0.
* A query that fails, and a cell Python cannot hash (the peer's ``set()`` raises), give 0.

Values compare with Python's ``==`` (``in`` on a tuple), as BIRD's rows fetched from its
database do: NaN is not equal to NaN, '1' is not 1, DECIMAL 1.10 is not the float 1.1.
A run's score is the mean over its answerable instances, x100, as BIRD prints it
(:mod:`score.statistics.soft_f1`).

>>> soft_f1_rows([(1, "a"), (2, "b")], [(1, "a"), (2, "c")])
0.75
>>> soft_f1_rows([], [])
1.0
>>> soft_f1_rows([(1,), (2,)], [(2,), (1,)])
0.0
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from score.execution.result import QueryResult


def soft_f1_rows(gold: Sequence[tuple], pred: Sequence[tuple]) -> float:
    """Soft F1 of predicted rows against gold rows (see the module doc)."""
    if not pred and not gold:
        return 1.0
    try:
        gold_rows = list(dict.fromkeys(gold))
        pred_rows = list(dict.fromkeys(pred))
    except TypeError:  # an unhashable cell: the peer's set() raises, and it scores 0
        return 0.0
    matches = pred_only = gold_only = 0.0
    for i, g in enumerate(gold_rows):
        if i >= len(pred_rows):
            gold_only += 1
            continue
        p, width = pred_rows[i], len(g)
        found = sum(1 for v in p if _within(v, g))
        matches += found / width
        pred_only += (len(p) - found) / width
        gold_only += sum(1 for v in g if not _within(v, p)) / width
    pred_only += max(0, len(pred_rows) - len(gold_rows))
    precision = matches / (matches + pred_only) if matches + pred_only > 0 else 0.0
    recall = matches / (matches + gold_only) if matches + gold_only > 0 else 0.0
    if precision + recall == 0:
        return 0.0
    return 2 * precision * recall / (precision + recall)


def _within(value: Any, row: tuple) -> bool:
    """``value in row`` as Python says it (identity, then ==) for values fetched apart:
    a NaN is never found, being another object than any NaN of the other row."""
    if isinstance(value, float) and math.isnan(value):
        return False
    return value in row


def soft_f1(gold: QueryResult, pred: QueryResult) -> float:
    """Soft F1 of a predicted result against the gold's."""
    return soft_f1_rows(_rows(gold), _rows(pred))


def _rows(result: QueryResult) -> list[tuple]:
    """The rows as BIRD's driver would hand them over (a LIST cell a list: unhashable)."""
    return result.rows()
