"""BIRD mini-dev's soft F1 on the 39 reference cases and on cases of its own quirks:
the values its evaluation_f1.py (bird-bench/mini_dev 4d970a9) computes, run outside the
project on the same rows; a failure in the peer (case 38: its set() cannot hash a list)
is its 0."""

from __future__ import annotations

import pytest

from score.comparison.soft_f1 import soft_f1, soft_f1_rows
from tests.score.comparison.test_compare_reference import CASES

#: calculate_f1_score(predicted rows, gold rows) of each reference case, as BIRD computes it.
BIRD = {
    1: 1.0, 2: 0, 3: 0, 4: 1.0, 5: 0.8, 6: 2 / 3, 7: 2 / 3, 8: 0.5, 9: 1.0, 10: 1.0,
    11: 2 / 3, 12: 0, 13: 0, 14: 0, 15: 0, 16: 0, 17: 1.0, 18: 1.0, 19: 0, 20: 1.0,
    21: 0, 22: 0, 23: 0, 24: 0, 25: 1.0, 26: 1.0, 27: 0, 28: 0, 29: 0, 30: 1.0,
    31: 0, 32: 0.5, 33: 1.0, 34: 0, 35: 0.5, 36: 0.8, 37: 0, 38: 0, 39: 0,
}  # fmt: skip

#: (gold rows, predicted rows, BIRD's value) for its quirks.
QUIRKS = {
    "a predicted row wider than the gold's counts its extra matches": ([(1,)], [(1, 1)], 1.0),
    "partial credit over cells": ([(1, "a"), (2, "b"), (3, "c")], [(1, "a"), (2, "x")], 0.6),
    "duplicates dropped on both sides": ([(1,), (1,), (2,)], [(1,), (2,), (2,)], 1.0),
    "NaN is never found": ([(float("nan"),)], [(float("nan"),)], 0.0),
    "an empty prediction": ([(1,)], [], 0.0),
    "an empty gold": ([], [(1,)], 0.0),
    "values found anywhere in the row": ([(1, 2)], [(2, 1)], 1.0),
    "predicted rows beyond the gold's": ([(1, "a")], [(1, "a"), (2, "b"), (3, "c")], 0.5),
}


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"case{c.n}")
def test_soft_f1_equals_bird_s_on_each_reference_case(case) -> None:
    assert soft_f1(case.gold, case.pred) == pytest.approx(BIRD[case.n], abs=1e-12)


@pytest.mark.parametrize(("gold", "pred", "expected"), QUIRKS.values(), ids=list(QUIRKS))
def test_soft_f1_keeps_bird_s_quirks(gold, pred, expected) -> None:
    assert soft_f1_rows(gold, pred) == pytest.approx(expected, abs=1e-12)


def test_every_reference_case_is_listed() -> None:
    assert sorted(BIRD) == [c.n for c in CASES]
