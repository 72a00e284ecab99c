"""BIRD's VES and R-VES from measured times, worked out by hand from their definitions."""

from __future__ import annotations

import math

import pytest

from score.statistics.efficiency import (
    DEFAULT_RUNS,
    efficiency_summary,
    instance_ratio,
    instance_reward,
    kept_ratios,
    r_ves_reward,
)


def test_bird_runs_10_timings_for_ves_and_100_for_r_ves() -> None:
    assert DEFAULT_RUNS == {"ves": 10, "rves": 100, "cost": 1}


def test_runs_outside_three_deviations_are_dropped() -> None:
    # 30 ratios of 1 and one of 1000: mean 33.2, population sd 176.5, band (-496, 563)
    ratios = [1.0] * 30 + [1000.0]
    assert kept_ratios(ratios) == [1.0] * 30
    assert instance_ratio([1.0] * 30 + [1000.0], [1.0] * 31) == 1.0
    # without the outlier, the mean of every run
    assert instance_ratio([2.0, 4.0], [1.0, 1.0]) == 3.0


def test_equal_ratios_are_all_kept() -> None:
    # BIRD's strict band keeps none of them (sd 0) and scores the instance 0; sqlgold keeps them
    assert kept_ratios([0.5, 0.5, 0.5]) == [0.5, 0.5, 0.5]
    assert instance_ratio([1.0], [4.0]) == 0.25  # one run


def test_the_ratio_is_gold_time_over_prediction_time() -> None:
    assert instance_ratio([3.0, 3.0], [1.0, 1.5]) == pytest.approx((3.0 + 2.0) / 2)
    assert instance_ratio([1.0], [0.0]) == pytest.approx(1e9)  # no division by zero
    with pytest.raises(ValueError):
        instance_ratio([1.0, 2.0], [1.0])


def test_r_ves_buckets_at_their_edges() -> None:
    cases = {5.0: 1.25, 2.0: 1.25, 1.999: 1.0, 1.0: 1.0, 0.999: 0.75, 0.5: 0.75}
    cases |= {0.4999: 0.5, 0.25: 0.5, 0.2499: 0.25, 0.0: 0.25}
    assert {r: r_ves_reward(r) for r in cases} == cases


def test_rewards_are_square_roots_unbounded_for_ves() -> None:
    assert instance_reward(4.0, "ves") == 2.0 == instance_reward(4.0, "cost")
    assert instance_reward(4.0, "rves") == math.sqrt(1.25)
    assert instance_reward(0.1, "rves") == 0.5
    with pytest.raises(ValueError, match="unknown efficiency measure"):
        instance_reward(1.0, "speed")


def test_the_score_is_over_every_instance_wrong_and_unmeasured_ones_zero() -> None:
    # 5 answerable instances: right ones with ratios 4 and 0.25, one right but unmeasured
    # (a timeout: 0, as in BIRD), two wrong (0)
    ves = efficiency_summary([4.0, 0.25, None], 5, "ves", 10)
    assert ves["score"] == pytest.approx(100 * (2.0 + 0.5) / 5)
    assert (ves["n"], ves["n_correct"], ves["n_measured"], ves["n_failed"]) == (5, 3, 2, 1)
    assert (ves["ratio_median"], ves["ratio_min"], ves["ratio_max"]) == (2.125, 0.25, 4.0)
    assert ves["label"] == "VES" and ves["runs"] == 10
    rves = efficiency_summary([4.0, 0.25, None], 5, "rves", 100)
    assert rves["score"] == pytest.approx(100 * (math.sqrt(1.25) + math.sqrt(0.5)) / 5)
    assert rves["rewards"] == {"1.25": 1, "1.0": 0, "0.75": 0, "0.5": 1, "0.25": 0}
    assert efficiency_summary([], 0, "ves", 10)["score"] is None
