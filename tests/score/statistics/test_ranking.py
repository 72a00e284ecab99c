"""score.statistics.ranking: standard competition ranking, ties sharing a rank."""

from __future__ import annotations

from score.statistics.ranking import RANK_RULE, competition_ranks


def test_ties_share_a_rank_and_the_next_rank_is_skipped():
    assert competition_ranks([0.9, 0.7, 0.7, 0.5]) == [1, 2, 2, 4]
    assert competition_ranks([0.5, 0.5, 0.5]) == [1, 1, 1]
    assert competition_ranks([0.1, 0.3, 0.2]) == [3, 1, 2]
    assert "1, 2, 2, 4" in RANK_RULE


def test_a_run_without_the_score_has_no_rank_and_moves_no_other():
    assert competition_ranks([None, 0.4, 0.6, None]) == [None, 2, 1, None]
    assert competition_ranks([None]) == [None]
    assert competition_ranks([]) == []


def test_equal_counts_over_the_same_instances_tie_exactly():
    n = 900
    assert competition_ranks([887 / n, 861 / n, 887 / n]) == [1, 3, 1]
