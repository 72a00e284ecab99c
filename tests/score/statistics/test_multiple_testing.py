"""score.statistics.multiple_testing: Holm–Bonferroni against values worked by hand and
against the step-down procedure written out as Holm (1979) states it."""

from __future__ import annotations

import random

import pytest

from score.statistics.multiple_testing import holm_adjusted, holm_rejects


def test_holm_matches_values_worked_by_hand():
    # Wikipedia's example of Holm's method: m = 4, alpha 0.05.  Sorted: 0.005 x 4 = 0.02,
    # 0.01 x 3 = 0.03, 0.03 x 2 = 0.06, 0.04 x 1 = 0.04 -> carried up to 0.06.
    raw = [0.01, 0.04, 0.03, 0.005]
    assert holm_adjusted(raw) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm_rejects(raw) == [True, False, False, True]


def test_holm_caps_at_one_and_keeps_ties_together():
    # m = 3: 0.2 x 3 = 0.6, 0.2 x 2 = 0.4 -> 0.6, 0.9 x 1 = 0.9
    assert holm_adjusted([0.9, 0.2, 0.2]) == pytest.approx([0.9, 0.6, 0.6])
    # 0.5 x 3 = 1.5 -> 1
    assert holm_adjusted([0.5, 0.6, 0.7]) == [1.0, 1.0, 1.0]
    assert holm_adjusted([0.0, 1.0]) == [0.0, 1.0]
    assert holm_adjusted([0.03]) == [0.03]  # one test: nothing to correct


def test_holm_refuses_what_is_not_a_p_value():
    for bad in ([-0.1], [float("nan")], [True], ["0.1"]):
        with pytest.raises(ValueError, match="p-value"):
            holm_adjusted(bad)
    with pytest.raises(ValueError, match="alpha"):
        holm_rejects([0.1], alpha=0.0)


def _step_down(p_values, alpha):
    """Holm's procedure as stated: reject the hypotheses in ascending order of p while
    p_(k) <= alpha / (m - k + 1); stop at the first that is not."""
    m = len(p_values)
    rejected = [False] * m
    for k, i in enumerate(sorted(range(m), key=lambda i: p_values[i])):
        if p_values[i] > alpha / (m - k):
            break
        rejected[i] = True
    return rejected


def test_adjusted_p_values_decide_as_the_step_down_procedure():
    rng = random.Random(56)
    for _ in range(500):
        m = rng.randint(1, 12)
        p = [rng.choice([rng.random() * 0.05, rng.random()]) for _ in range(m)]
        adjusted = holm_adjusted(p)
        assert all(a >= x for a, x in zip(adjusted, p, strict=True))  # never below the raw p
        for alpha in (0.01, 0.05, 0.1):
            assert holm_rejects(p, alpha) == _step_down(p, alpha), (p, alpha)
