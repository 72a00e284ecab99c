"""A reason stays short whatever the cells: a hostile answer's 100 MB string once made a
100 MB reason in results.jsonl and a review page Chromium could not open."""

from __future__ import annotations

import pytest

from score.comparison.compare import compare
from score.comparison.profiles.registry import PROFILES
from score.execution.result import QueryResult


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_a_huge_cell_is_cut_in_the_reason(profile):
    gold = QueryResult.from_rows(["n"], [(1.09,)])
    huge = QueryResult.from_rows(["s"], [("x" * 1_000_000,)])
    tie_k = {"tie_k": 1} if profile == "any_k_from_tie_set" else {}
    verdict = compare(gold, huge, profile, order_matters=False, **tie_k)
    assert not verdict.match
    assert len(verdict.reason) < 2_000, len(verdict.reason)
