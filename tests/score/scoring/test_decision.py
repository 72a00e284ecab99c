"""score.scoring.decision: every step of one instance's decision, without a database."""

from __future__ import annotations

import pytest

from score.comparison.profiles.base import Verdict
from score.execution.result import QueryError, QueryResult
from score.inputs.predictions import Prediction
from score.scoring.answer import AnswerReply
from score.scoring.decision import UNDECIDED, Decision, decide
from score.scoring.outcomes import Outcome

RESULT = QueryResult.from_rows(["n"], [(1,)])
RAN = AnswerReply("sql", "", "SELECT 1", "SELECT 1", False, result=RESULT)


def failed(kind: str, message: str = "no") -> AnswerReply:
    return AnswerReply("sql", "", "SELECT x", "SELECT x", False, error=QueryError(kind, message))


def test_no_prediction_is_missing_and_a_failed_model_call_a_generation_error() -> None:
    assert decide(True, None).outcome is Outcome.MISSING
    said = Prediction("q", status="generation_error")
    assert decide(True, said, reply=RAN, gold=RESULT).outcome is Outcome.GENERATION_ERROR


@pytest.mark.parametrize(
    ("kind", "outcome"),
    [
        ("abstain", Outcome.ABSTAINED),
        ("cut_off", Outcome.CUT_OFF),
        ("format_failure", Outcome.FORMAT_FAILURE),
    ],
)
def test_an_answer_without_sql_is_decided_by_its_extraction(kind: str, outcome: Outcome) -> None:
    reply = AnswerReply(kind, "why")
    assert decide(True, Prediction("q"), reply=reply) == Decision(outcome, "why")
    # also on an unanswerable question, and before any gold
    assert decide(False, Prediction("q"), reply=reply).outcome is outcome


@pytest.mark.parametrize(
    ("kind", "outcome"),
    [
        ("guard_rejected", Outcome.BUILD_ERROR),
        ("parse_error", Outcome.PARSE_ERROR),
        ("catalog_error", Outcome.RENDER_ERROR),
        ("binder_error", Outcome.EXECUTE_ERROR),
        ("timeout", Outcome.EXECUTE_ERROR),
        ("row_cap", Outcome.EXECUTE_ERROR),
        ("runtime_error", Outcome.EXECUTE_ERROR),
    ],
)
def test_a_failed_query_is_its_errors_outcome(kind: str, outcome: Outcome) -> None:
    assert decide(True, Prediction("q"), reply=failed(kind)) == Decision(outcome, "no")
    lost = decide(True, Prediction("q"), reply=QueryError(kind, "ended"))
    assert lost == Decision(outcome, "ended")


def test_a_query_of_an_output_cut_off_that_fails_is_cut_off() -> None:
    cut = Prediction("q", status="cut_off")
    decided = decide(True, cut, reply=failed("parse_error", "at the end"))
    assert decided.outcome is Outcome.CUT_OFF and "parse_error: at the end" in decided.reason


def test_any_answer_to_an_unanswerable_question_is_a_mismatch_before_the_gold() -> None:
    decided = decide(False, Prediction("q"), reply=RAN, gold=QueryError("timeout", "x"))
    assert decided.outcome is Outcome.MISMATCH and "unanswerable" in decided.reason


def test_a_failing_or_drifted_gold_is_excluded_whatever_the_verdict() -> None:
    gold_failed = decide(True, Prediction("q"), reply=RAN, gold=QueryError("timeout", "slow"))
    assert gold_failed == Decision(Outcome.GOLD_ERROR, "the gold failed: timeout: slow")
    drifted = decide(True, Prediction("q"), reply=RAN, gold=RESULT, drift="hash a, pinned b",
                     verdict=Verdict(True, ""))  # fmt: skip
    assert drifted == Decision(Outcome.GOLD_DRIFT, "hash a, pinned b")


def test_the_verdict_decides_the_rest_and_an_uncomparable_value_is_a_mismatch() -> None:
    right = decide(True, Prediction("q"), reply=RAN, gold=RESULT, verdict=Verdict(True, "same"))
    wrong = decide(True, Prediction("q"), reply=RAN, gold=RESULT, verdict=Verdict(False, "2 rows"))
    odd = decide(True, Prediction("q"), reply=RAN, gold=RESULT, verdict=TypeError("a list"))
    assert right == Decision(Outcome.CORRECT, "same")
    assert wrong == Decision(Outcome.MISMATCH, "2 rows")
    assert odd.outcome is Outcome.MISMATCH and "TypeError: a list" in odd.reason


def test_a_result_csv_marked_failed_or_unreadable_is_an_execute_error() -> None:
    null = Prediction("q", kind="csv", csv=None)
    assert decide(True, null).reason == "terminal failure (null in the index)"
    unreadable = Prediction("q", kind="csv", csv="r.csv")
    decided = decide(True, unreadable, csv=QueryError("runtime_error", "no such file"))
    assert decided == Decision(Outcome.EXECUTE_ERROR, "cannot read the result CSV: no such file")
    read = decide(True, unreadable, csv=RESULT, gold=RESULT, verdict=Verdict(True, ""))
    assert read.outcome is Outcome.CORRECT


def test_facts_missing_for_a_decision_leave_it_undecided_never_correct() -> None:
    assert decide(True, Prediction("q")) is UNDECIDED
    assert decide(True, Prediction("q"), reply=RAN) is UNDECIDED
    assert decide(True, Prediction("q"), reply=RAN, gold=RESULT) is UNDECIDED
