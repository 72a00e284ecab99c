"""Which gold the right answers matched, for a run whose tasks have alternative golds
(:mod:`score.scoring.alternative_golds`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def alternative_summary(records: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """Which gold the right answers to tasks with alternative golds matched: the gold
    itself or an alternative (None when no task scored has alternatives).

    >>> alternative_summary([{"matched_gold": 0, "outcome": "correct"},
    ...                      {"matched_gold": 2, "outcome": "correct"},
    ...                      {"matched_gold": 0, "outcome": "mismatch"}, {"outcome": "correct"}])
    {'instances': 3, 'correct_by_gold': 1, 'correct_by_alternative': 1}
    """
    found = [r for r in records if r.get("matched_gold") is not None]
    if not found:
        return None
    right = [r for r in found if r["outcome"] == "correct"]
    by_alternative = sum(1 for r in right if r["matched_gold"] > 0)
    return {
        "instances": len(found),
        "correct_by_gold": len(right) - by_alternative,
        "correct_by_alternative": by_alternative,
    }
