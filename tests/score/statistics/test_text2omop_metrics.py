"""TEXT-TO-OMOP's metrics on hand-made items, each number worked out by hand from its
evaluator's definitions (EVALUATION/evaluation_protocol.py at f5c858f)."""

from __future__ import annotations

import random

import pytest

from score.inputs.text2omop import NO_SQL
from score.statistics.text2omop_metrics import (
    Item,
    exact_match,
    normalised_match,
    rouge_l,
    text2omop_metrics,
)

A = "SELECT a FROM t;"
# (gold, pred, gold runs, outcome) and what each item exercises
ITEMS = [
    Item(A, A, True, "correct"),  # right; EM, EMN, ROUGE-L 1
    Item(A, "select  a from t", True, "mismatch"),  # EMN only; ROUGE-L 1/4 (only 'a' shared)
    Item("SELECT b FROM t;", "SELEC b FROM t;", True, "parse_error"),  # fails: ROUGE-L 3/4
    Item("SELECT c FROM t;", NO_SQL, True, "abstained"),  # declined, answerable
    Item("SELECT d FROM u;", "SELECT d FROM u;", False, "gold_error"),  # gold fails
    Item("SELECT e FROM u;", NO_SQL, False, "abstained"),  # gold fails, declined
    Item(NO_SQL, NO_SQL, True, "abstained"),  # unanswerable, declined: RS +1
    Item(NO_SQL, "SELECT 1;", True, "mismatch"),  # unanswerable, answered: FP, RS -c
]


def test_every_metric_on_hand_made_items() -> None:
    m = text2omop_metrics(ITEMS)
    # text metrics over the 6 answerable items (the ones whose gold fails included)
    assert m["n_examples"] == 8 and m["n_answerable"] == 6
    assert m["em"] == pytest.approx(2 / 6)  # items 1 and 5
    assert m["emn"] == pytest.approx(3 / 6)  # and item 2
    assert m["rouge_l"] == pytest.approx((1 + 0.25 + 0.75 + 0 + 1 + 0) / 6)
    # answering over every item: TP 1,2,3,5; FP 8; FN 4,6
    assert (m["tp_ans"], m["fp_ans"], m["fn_ans"]) == (4, 1, 2)
    assert m["prec_ans"] == pytest.approx(4 / 5)
    assert m["rec_ans"] == pytest.approx(4 / 6)
    assert m["f1_ans"] == pytest.approx(8 / 11)
    # execution over answerable items whose gold runs: 1-4; attempted 1-3; right: 1
    assert (m["gold_exec_errors"], m["pred_exec_errors"]) == (2, 1)
    assert (m["actually_answerable"], m["predicted_answerable"], m["correct_exec"]) == (4, 3, 1)
    assert m["execution_accuracy"] == pytest.approx(1 / 4) == m["rec_exe"]
    assert m["prec_exe"] == pytest.approx(1 / 3)
    assert m["f1_exe"] == pytest.approx(2 / 7)
    # RS over items 1-4, 7, 8: +1 -c -c 0 +1 -c = 2 - 3c, over 6
    assert m["rs_n"] == 6
    assert m["rs"] == pytest.approx({"0": 2 / 6, "1": -1 / 6, "10": -28 / 6, "N": (2 - 18) / 6})


def test_no_item_and_no_answerable_item_give_zeros_not_errors() -> None:
    empty = text2omop_metrics([])
    assert (
        empty["em"] == 0
        and empty["f1_ans"] == 0
        and empty["rs"]
        == {
            "0": 0.0,
            "1": 0.0,
            "10": 0.0,
            "N": 0.0,
        }
    )
    only_unanswerable = text2omop_metrics([Item(NO_SQL, NO_SQL, True, "abstained")])
    assert only_unanswerable["em"] == 0 and only_unanswerable["rs"]["10"] == 1.0
    assert only_unanswerable["execution_accuracy"] == 0 and only_unanswerable["prec_ans"] == 0


def test_other_penalties_can_be_asked_for() -> None:
    m = text2omop_metrics(ITEMS, penalties=(0.5, 2.0))
    assert set(m["rs"]) == {"0.5", "2", "N"}
    assert m["rs"]["0.5"] == pytest.approx((2 - 1.5) / 6)


def test_exact_and_normalised_matches() -> None:
    assert exact_match(" SELECT 1; ", "SELECT 1;") and not exact_match("SELECT 1;", "SELECT 1")
    assert normalised_match("SELECT\n  *   FROM person;", "select * from PERSON")
    assert not normalised_match("SELECT 1;;", "SELECT 1")  # one final ';' only


def _lcs_f1(gold: str, pred: str) -> float:
    """The definition, written out: F1 of the longest common subsequence of tokens."""
    a, b = gold.split(), pred.split()
    if not a and not b:
        return 1.0
    if not a or not b:
        return 0.0
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, x in enumerate(a, 1):
        for j, y in enumerate(b, 1):
            table[i][j] = (
                table[i - 1][j - 1] + 1 if x == y else max(table[i - 1][j], table[i][j - 1])
            )
    lcs = table[-1][-1]
    if lcs == 0:
        return 0.0
    recall, precision = lcs / len(a), lcs / len(b)
    return 2 * recall * precision / (recall + precision)


def test_rouge_l_is_the_lcs_f1_of_whitespace_tokens() -> None:
    rng = random.Random(0)
    words = ["SELECT", "select", "a", "b,", "FROM", "t;", "t", "WHERE", "x", "=", "1"]
    for _ in range(300):
        gold = " ".join(rng.choices(words, k=rng.randint(0, 12)))
        pred = " ".join(rng.choices(words, k=rng.randint(0, 12)))
        assert rouge_l(gold, pred) == pytest.approx(_lcs_f1(gold, pred)), (gold, pred)
    assert rouge_l("SELECT A", "select a") == 0.0  # case kept, unlike rouge-score's own tokens


def test_the_lcs_is_exact_past_a_machine_word() -> None:
    """The bit-parallel LCS against the table definition on texts of up to 300 tokens
    (integers of hundreds of bits), exactly: ROUGE-L must equal the evaluator's."""
    rng = random.Random(1)
    words = ["SELECT", "a", "b", "FROM", "t", "JOIN", "ON", "=", "x", "(", ")"]
    for _ in range(60):
        gold = " ".join(rng.choices(words, k=rng.randint(60, 300)))
        pred = " ".join(rng.choices(words, k=rng.randint(0, 300)))
        assert rouge_l(gold, pred) == _lcs_f1(gold, pred), (len(gold), len(pred))
