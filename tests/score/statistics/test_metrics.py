"""score.statistics.metrics: each formula against hand-computed cases and brute-force
definitions."""

from __future__ import annotations

import random

import numpy as np
import pytest

import score.statistics.metrics as metrics
from score.scoring.outcomes import OUTCOMES, Outcome
from score.statistics.metrics import (
    check_records,
    default_scores,
    execution_accuracy,
    group_by,
    item_score,
    outcome_counts,
    outcome_rates,
    point_estimates,
    record,
    reliability,
)


def scores_of(records, c_values=(0, 5, 10)):
    scored = [r for r in records if r["outcome"] not in (Outcome.GOLD_ERROR, Outcome.GOLD_DRIFT)]
    return point_estimates(records, default_scores(c_values, n=len(scored)))


def ehrsql_example():
    """Items [+1, 0, -1, +1, -1, -1] (comparators.md, EHRSQL 2024)."""
    return [
        record("q1", "correct"),  # +1: right answer, answerable
        record("q2", "abstained"),  # 0: abstained, answerable
        record("q3", "mismatch"),  # -1: wrong answer
        record("q4", "abstained", answerable=False),  # +1: abstained, unanswerable
        record("q5", "cut_off"),  # -1: a cut-off answer counts as an answer
        record("q6", "mismatch", answerable=False),  # -1: any query on an unanswerable one
    ]


def test_reliability_score_matches_the_ehrsql_example():
    recs = ehrsql_example()
    assert [item_score(r) for r in recs] == [1, 0, -1, 1, -1, -1]
    s = scores_of(recs, c_values=(0, 5, 10))
    assert round(s["rs_0"], 2) == 33.33
    assert round(s["rs_5"], 2) == -216.67
    assert round(s["rs_10"], 2) == -466.67
    assert round(s["rs_N"], 2) == -266.67  # N = 6 scored instances
    assert round(point_estimates(recs, [reliability(6)])["rs_6"], 2) == -266.67


@pytest.mark.parametrize("outcome", OUTCOMES)
def test_item_score_of_every_outcome(outcome):
    answerable = {"correct": 1, "abstained": 0, "gold_error": None, "gold_drift": None}.get(
        outcome, -1
    )
    unanswerable = {"abstained": 1, "gold_error": None, "gold_drift": None}.get(outcome, -1)
    assert item_score(record("q", outcome)) == answerable
    assert item_score(record("q", outcome, answerable=False)) == unanswerable


def test_missing_format_failure_and_cut_off_are_penalised_answers():
    for outcome in ("missing", "format_failure", "cut_off"):
        s = scores_of([record("q1", outcome), record("q2", outcome, answerable=False)])
        assert s["rs_5"] == -500.0
        assert s["ex"] == 0.0


def test_ex_excludes_gold_error_from_numerator_and_denominator():
    recs = [
        record("q1", "correct"),
        record("q2", "mismatch"),
        record("q3", "gold_error"),
        record("q4", "gold_error", answerable=False),
    ]
    s = scores_of(recs)
    assert s["ex"] == 0.5
    assert s["rs_0"] == 50.0  # (1 + 0) / 2 scored, not / 4
    assert s["rs_N"] == 100 * (1 - 2 * 1) / 2  # N = 2 scored instances
    counts = outcome_counts(recs)
    assert counts[Outcome.GOLD_ERROR] == 2
    rates = outcome_rates(counts)
    assert Outcome.GOLD_ERROR not in rates
    assert rates["correct"] == rates["mismatch"] == 0.5


def test_ex_is_over_answerable_and_abstention_there_is_wrong():
    recs = [
        record("q1", "correct"),
        record("q2", "abstained"),
        record("q3", "missing"),
        record("q4", "correct", answerable=False),  # not in EX; -c in RS
    ]
    s = scores_of(recs)
    assert s["ex"] == pytest.approx(1 / 3)
    assert s["rs_0"] == 25.0


def test_abstention_shares_and_failure_rates():
    recs = [
        record("q1", "abstained"),
        record("q2", "correct"),
        record("q3", "cut_off"),
        record("q4", "format_failure"),
        record("q5", "abstained", answerable=False),
        record("q6", "abstained", answerable=False),
        record("q7", "mismatch", answerable=False),
        record("q8", "gold_error", answerable=False),
    ]
    s = scores_of(recs)
    assert s["abstention_answerable"] == 0.25
    assert s["abstention_unanswerable"] == pytest.approx(2 / 3)
    assert s["cut_off_rate"] == pytest.approx(1 / 7)
    assert s["format_failure_rate"] == pytest.approx(1 / 7)


def test_abstention_on_unanswerable_is_undefined_without_unanswerable():
    s = scores_of([record("q1", "abstained")])
    assert s["abstention_answerable"] == 1.0
    assert s["abstention_unanswerable"] is None


def test_lf_is_the_share_of_true_over_answerable():
    recs = [
        record("q1", "correct", lf_match=True),
        record("q2", "correct", lf_match=False),
        record("q3", "abstained", lf_match=None),  # no query: not a match
        record("q4", "mismatch", lf_match=True),  # LF and EX are separate
        record("q5", "mismatch", answerable=False, lf_match=True),  # not answerable
        record("q6", "gold_error", lf_match=True),  # not scored
    ]
    assert scores_of(recs)["lf"] == 0.5


def test_lf_is_undefined_when_no_instance_was_compared():
    assert scores_of([record("q1", "correct"), record("q2", "mismatch")])["lf"] is None


def test_priors_score_zero_ex():
    """Seed 004's priors: abstain on every item, SELECT 0 on every item."""
    items = [("q1", True), ("q2", True), ("q3", False), ("q4", True)]
    abstain = [record(q, "abstained", answerable=a, run="prior") for q, a in items]
    select0 = [record(q, "mismatch", answerable=a, run="select0") for q, a in items]
    s = scores_of(abstain)
    assert s["ex"] == 0.0
    assert s["rs_0"] == s["rs_10"] == 25.0  # the unanswerable share, x100
    assert s["abstention_answerable"] == s["abstention_unanswerable"] == 1.0
    s = scores_of(select0)
    assert s["ex"] == 0.0 and s["rs_0"] == 0.0 and s["rs_5"] == -500.0


def test_empty_records_give_undefined_scores():
    s = scores_of([])
    assert all(v is None for v in s.values())


def test_all_correct():
    s = scores_of([record(f"q{i}", "correct") for i in range(5)])
    assert s["ex"] == 1.0 and s["rs_0"] == s["rs_N"] == 100.0


def test_scores_match_brute_force_definitions():
    rng = random.Random(7)
    recs = [
        record(
            f"q{i}",
            rng.choice(OUTCOMES),
            answerable=rng.random() < 0.7,
            language=rng.choice(["en", "ko"]),
            lf_match=rng.choice([True, False]),
        )
        for i in range(300)
    ]
    scored = [r for r in recs if r["outcome"] not in (Outcome.GOLD_ERROR, Outcome.GOLD_DRIFT)]
    answerable = [r for r in scored if r["answerable"]]
    n = len(scored)
    s = scores_of(recs)
    assert s["ex"] == pytest.approx(
        sum(r["outcome"] == "correct" for r in answerable) / len(answerable)
    )
    for c, key in ((0, "rs_0"), (5, "rs_5"), (10, "rs_10"), (n, "rs_N")):
        items = [item_score(r) for r in scored]
        expected = 100 * sum(-c if i == -1 else i for i in items) / n
        assert s[key] == pytest.approx(expected)
    assert s["lf"] == pytest.approx(sum(r["lf_match"] for r in answerable) / len(answerable))


def test_unknown_outcome_raises_naming_it():
    with pytest.raises(ValueError, match="unknown outcome 'right'"):
        check_records([record("q1", "right")])
    with pytest.raises(ValueError, match=r"\('q2', 'en'\): unknown outcome None"):
        check_records([record("q1", "correct"), record("q2", None)])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"answerable": "yes"}, "answerable must be a bool"),
        ({"answerable": 1}, "answerable must be a bool"),
        ({"lf_match": "True"}, "lf_match must be a bool or None"),
        ({"task_id": 3}, "task_id and language must be strings"),
    ],
)
def test_bad_values_are_refused_not_coerced(change, message):
    with pytest.raises(ValueError, match=message):
        check_records([{**record("q1", "correct"), **change}])


def test_missing_key_and_duplicate_instance_are_refused():
    rec = record("q1", "correct")
    del rec["tier"]
    with pytest.raises(ValueError, match="lacks tier"):
        check_records([rec])
    with pytest.raises(ValueError, match=r"\('q1', 'en'\) occurs twice"):
        check_records([record("q1", "correct"), record("q1", "mismatch")])
    assert (
        len(check_records([record("q1", "correct"), record("q1", "mismatch", language="ko")])) == 2
    )


@pytest.mark.parametrize("c", [-1, float("nan"), float("inf"), True, "5"])
def test_reliability_penalty_is_checked_when_built(c):
    with pytest.raises(ValueError, match="penalty"):
        reliability(c)


def test_default_scores_refuse_duplicate_penalties():
    with pytest.raises(ValueError, match="distinct"):
        default_scores((5, 5.0), n=3)


def test_score_is_undefined_on_an_empty_denominator():
    assert execution_accuracy().value({"base_correct": 0.0, "answerable": 0.0}) is None
    values = execution_accuracy().values(
        {"base_correct": np.array([1.0, 0.0]), "answerable": np.array([2.0, 0.0])}
    )
    assert values[0] == 0.5 and np.isnan(values[1])


def test_group_by_orders_tiers_and_names_the_empty_group():
    recs = [
        record("a", "correct", tier="schema_aware"),
        record("b", "correct", tier="any"),
        record("c", "correct", tier="simple"),
        record("d", "correct", tier="compositional"),
    ]
    assert list(group_by(recs, "tier")) == ["simple", "compositional", "schema_aware", "any"]
    assert list(group_by(recs, "category")) == [metrics.NO_GROUP]


def test_with_a_test_suite_ex_is_the_base_database_s_and_ts_the_suite_s():
    suite_verdict = {"correct": False, "told_apart_by": "v1"}
    recs = [
        record("a", "correct", base_correct=True, suite={"correct": True}),
        record("b", "mismatch", base_correct=True, suite=suite_verdict),
        record("c", "mismatch", base_correct=False, suite={"correct": False}),
        record("d", "abstained", answerable=False, base_correct=False, suite={"correct": False}),
    ]
    points = point_estimates(recs, default_scores(n=4, suite=True))
    assert points["ex"] == 2 / 3 and points["ts"] == 1 / 3
    assert "ts" not in point_estimates(recs, default_scores(n=4))
    plain = [record("a", "correct"), record("b", "mismatch")]
    assert point_estimates(plain, default_scores(n=2))["ex"] == 0.5
