"""BIRD's efficiency scores, VES and R-VES: pure functions of measured ratios.

Definitions (Li et al., "Can LLM Already Serve as A Database Interface? A BIg Bench for
Large-Scale Database Grounded Text-to-SQLs", NeurIPS 2023; the original VES in
AlibabaResearch/DAMO-ConvAI ``bird/llm/src/evaluation_ves.py``, R-VES in bird-bench/mini_dev
4d970a9 ``evaluation/evaluation_ves.py``), reimplemented here:

* for each instance whose prediction is right, both queries are timed N times (the
  prediction, then the gold, alternating); each run gives the ratio gold time /
  prediction time (above 1: the prediction is faster);
* runs whose ratio lies outside the mean +- 3 standard deviations (population) of the N
  ratios are dropped, and the instance's ratio is the mean of the rest
  (:func:`kept_ratios`, :func:`instance_ratio`);
* **VES** (N = 10 by default, as the original): the instance's reward is the square root
  of its ratio, unbounded; **R-VES** (N = 100, as mini_dev): the ratio is first bucketed
  (:func:`r_ves_reward`: >= 2 -> 1.25, [1, 2) -> 1, [0.5, 1) -> 0.75, [0.25, 0.5) -> 0.5,
  < 0.25 -> 0.25) and the reward is its square root;
* a wrong answer, or a right one whose timing could not be done (BIRD: a timeout or an
  error), has reward 0; the score is 100 x the mean reward over every instance of the
  denominator (in sqlgold, EX's: answerable instances whose gold ran as pinned).

Where sqlgold departs, on purpose: BIRD keeps a run only when its ratio is *strictly*
inside the band, so when all N ratios are equal (the standard deviation is 0, always the
case with N = 1) it keeps none, divides by zero and scores the instance 0; sqlgold keeps
them all.  ``cost`` (not BIRD's) uses the ratio of the engines' EXPLAIN estimates, gold
cost / prediction cost, in VES's formula: deterministic where timings vary from run to
run (:mod:`score.execution.engines.plan_cost`).

>>> r = instance_ratio([2.0, 2.0, 2.2], [1.0, 1.0, 1.0])
>>> round(r, 6), round(100 * math.sqrt(r), 2), r_ves_reward(r)
(2.066667, 143.76, 1.25)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

#: The efficiency measures ``score run --efficiency`` takes.
METHODS: tuple[str, ...] = ("ves", "rves", "cost")

#: Runs per instance when none is given: BIRD's VES times 10, R-VES 100; a plan cost is
#: the same every time, so it is asked once.
DEFAULT_RUNS: dict[str, int] = {"ves": 10, "rves": 100, "cost": 1}

#: How each measure is named in reports.
LABELS: dict[str, str] = {
    "ves": "VES",
    "rves": "R-VES",
    "cost": "VES on EXPLAIN cost ratios",
}

#: R-VES's buckets: (lowest ratio, reward), highest first.
R_VES_BUCKETS: tuple[tuple[float, float], ...] = ((2.0, 1.25), (1.0, 1.0), (0.5, 0.75), (0.25, 0.5))
R_VES_FLOOR = 0.25


def kept_ratios(ratios: Sequence[float]) -> list[float]:
    """The ratios strictly inside mean +- 3 population standard deviations; all of them
    when the deviation is 0.

    With n ratios none lies more than sqrt(n - 1) deviations from the mean, so fewer than
    10 runs never drop one, and an outlier among 10 sits on the band's edge:

    >>> kept_ratios([1.0] * 8 + [1000.0])[-1]
    1000.0
    >>> len(kept_ratios([1.0] * 30 + [1000.0])), kept_ratios([2.0, 2.0])
    (30, [2.0, 2.0])
    """
    if not ratios:
        raise ValueError("no ratio to keep")
    mean = sum(ratios) / len(ratios)
    sd = math.sqrt(sum((x - mean) ** 2 for x in ratios) / len(ratios))
    if sd == 0:
        return list(ratios)
    return [x for x in ratios if mean - 3 * sd < x < mean + 3 * sd]


def instance_ratio(gold_times: Sequence[float], pred_times: Sequence[float]) -> float:
    """The mean of the kept per-run ratios gold time / prediction time."""
    if len(gold_times) != len(pred_times) or not gold_times:
        raise ValueError("as many gold as prediction timings, at least one")
    ratios = [g / max(p, 1e-9) for g, p in zip(gold_times, pred_times, strict=True)]
    kept = kept_ratios(ratios)
    return sum(kept) / len(kept)


def r_ves_reward(ratio: float) -> float:
    """R-VES's bucketed reward of a time ratio.

    >>> [r_ves_reward(x) for x in (3, 2, 1.5, 1, 0.5, 0.3, 0.25, 0.1)]
    [1.25, 1.25, 1.0, 1.0, 0.75, 0.5, 0.5, 0.25]
    """
    for lowest, reward in R_VES_BUCKETS:
        if ratio >= lowest:
            return reward
    return R_VES_FLOOR


def instance_reward(ratio: float, method: str) -> float:
    """An instance's reward: sqrt(ratio) (VES, cost), sqrt(bucketed ratio) (R-VES)."""
    if method not in METHODS:
        raise ValueError(f"unknown efficiency measure {method!r} (known: {', '.join(METHODS)})")
    return math.sqrt(r_ves_reward(ratio) if method == "rves" else ratio)


def efficiency_summary(
    ratios: Iterable[float | None], denominator: int, method: str, runs: int
) -> dict[str, Any]:
    """The run's score from the ratios of its right answers (None: a right answer whose
    measurement failed, reward 0), over ``denominator`` instances (wrong ones add 0).

    >>> s = efficiency_summary([4.0, 1.0, None], 4, "ves", 10)
    >>> s["score"], s["n_correct"], s["n_failed"]
    (75.0, 3, 1)
    """
    ratios = list(ratios)
    measured = sorted(r for r in ratios if r is not None)
    rewards = [instance_reward(r, method) for r in measured]
    score = 100 * sum(rewards) / denominator if denominator else None
    out: dict[str, Any] = {
        "method": method,
        "label": LABELS[method],
        "runs": runs,
        "score": score,
        "n": denominator,
        "n_correct": len(ratios),
        "n_measured": len(measured),
        "n_failed": len(ratios) - len(measured),
        "ratio_median": _median(measured),
        "ratio_min": measured[0] if measured else None,
        "ratio_max": measured[-1] if measured else None,
    }
    if method == "rves":
        buckets = [r_ves_reward(r) for r in measured]
        out["rewards"] = {str(b): buckets.count(b) for b in (1.25, 1.0, 0.75, 0.5, 0.25)}
    return out


def _median(values: Sequence[float]) -> float | None:
    if not values:
        return None
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2
