"""Ranks of runs under a score, ties sharing a rank.

The convention is *standard competition ranking* ("1224"): a run's rank is one more
than the number of runs with a strictly higher score, so two runs tied for second are
both 2 and the next is 4.  Scores are compared exactly: runs scored on the same
instances have the same denominators, so equal counts give equal scores.  A run with
no score (None: e.g. no test suite) has no rank and does not move the others.

>>> competition_ranks([0.5, 0.7, 0.5, 0.2])
[2, 1, 2, 4]
"""

from __future__ import annotations

from collections.abc import Sequence

#: How the ranks are read, for the outputs that show them.
RANK_RULE = (
    "standard competition ranking (1, 2, 2, 4): one more than the number of runs with a "
    "strictly higher score; equal scores share a rank"
)


def competition_ranks(values: Sequence[float | None]) -> list[int | None]:
    """Each value's rank, highest first; None for a None value.

    >>> competition_ranks([0.3, None, 0.3])
    [1, None, 1]
    >>> competition_ranks([])
    []
    """
    present = [v for v in values if v is not None]
    return [None if v is None else 1 + sum(1 for w in present if w > v) for v in values]
