"""Corrections for many tests at once: the Holm–Bonferroni step-down adjustment.

A leaderboard of k runs makes k(k - 1)/2 pairwise tests; read at 0.05 each, some pair
"differs" by chance alone.  Holm (1979) controls the family-wise error rate (the chance
of any false "differs" among the family) at the level chosen, for any dependence between
the tests, and rejects at least as often as Bonferroni.  The adjusted p-values here are
the usual ones: sort the m raw p-values ascending, multiply the i-th smallest (i from 1)
by m - i + 1, cap at 1, and carry the running maximum up the sorted list so the adjusted
values keep the raw ones' order.  A test is rejected at level alpha when its adjusted
p-value is at most alpha (the same decisions as the step-down procedure).

SciPy has no Holm (``scipy.stats.false_discovery_control`` is Benjamini–Hochberg, which
controls the false discovery rate instead), so it is written out here.

>>> holm_adjusted([0.01, 0.04, 0.03])
[0.03, 0.06, 0.06]
"""

from __future__ import annotations

import math
from collections.abc import Sequence

#: The family-wise error rate a leaderboard's "differs" is read at.
ALPHA = 0.05


def holm_adjusted(p_values: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values, in the order of ``p_values``.

    Ties keep their input order (a stable sort); the running maximum then gives tied
    raw p-values the same adjusted value.

    >>> holm_adjusted([0.02, 0.02, 0.5])
    [0.06, 0.06, 0.5]
    >>> holm_adjusted([])
    []
    >>> holm_adjusted([1.5])
    Traceback (most recent call last):
    ...
    ValueError: a p-value must be a number in [0, 1], not 1.5
    """
    for p in p_values:
        if isinstance(p, bool) or not isinstance(p, int | float) or not 0 <= p <= 1:
            raise ValueError(f"a p-value must be a number in [0, 1], not {p!r}")
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [math.nan] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * float(p_values[i])))
        adjusted[i] = running
    return adjusted


def holm_rejects(p_values: Sequence[float], alpha: float = ALPHA) -> list[bool]:
    """Which hypotheses Holm's procedure rejects at family-wise level ``alpha``.

    >>> holm_rejects([0.01, 0.04, 0.03])
    [True, False, False]
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), not {alpha!r}")
    return [p <= alpha for p in holm_adjusted(p_values)]
