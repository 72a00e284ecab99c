"""Mismatch causes on the 39 reference cases: wherever a profile finds the two results
different (and the peer does not crash), the cause named is the one the case was written
to show; and hand-made cases for each cause."""

from __future__ import annotations

import pytest

from score.comparison.compare import compare
from score.comparison.mismatch_cause import CAUSES, MAX_CELLS, mismatch_cause
from score.execution.result import QueryResult
from tests.score.comparison.test_compare_reference import CASES, OURS, PEERS

#: The cause of each reference case that some profile finds different (38: the peers crash).
EXPECTED = {
    3: "row_order",
    4: "column_order",
    5: "column_extra",
    6: "column_missing",
    7: "column_missing",
    8: "column_values",
    9: "duplicates",
    10: "duplicates",
    11: "row_extra",
    12: "rounding",
    13: "rounding",
    14: "rounding",
    15: "rounding",
    16: "rounding",
    18: "number_type",
    19: "number_as_text",
    21: "null_vs_zero",
    22: "null_vs_empty",
    23: "null_vs_empty",
    24: "nan",
    25: "bool_as_number",
    26: "bool_as_number",
    27: "date_as_text",
    28: "date_vs_timestamp",
    29: "number_type",
    31: "row_missing",
    32: "rows_recombined",
    33: "column_missing",
    34: "rounding",
    35: "rounding",
    36: "row_missing",
    37: "null_vs_empty",
    39: "letter_case",
}


def _different_somewhere(case) -> list[str]:
    out = []
    for profile in [*PEERS, *OURS]:
        v = compare(case.gold, case.pred, profile, **case.flags())
        if not v.match and "crash" not in v.reason:
            out.append(profile)
    return out


def test_every_case_some_profile_finds_different_has_an_expected_cause() -> None:
    different = {c.n for c in CASES if _different_somewhere(c)}
    assert different == set(EXPECTED), different ^ set(EXPECTED)


@pytest.mark.parametrize("case", [c for c in CASES if c.n in EXPECTED], ids=lambda c: f"case{c.n}")
def test_the_cause_of_each_reference_case_is_named(case) -> None:
    cause = mismatch_cause(case.gold, case.pred, order_matters=case.opt == "ord")
    assert cause is not None and cause.name == EXPECTED[case.n], (case.n, cause)
    assert cause.name in CAUSES and cause.detail


@pytest.mark.parametrize(
    ("gold", "pred", "detail"),
    [
        ([(2.0004,)], [(2.0,)], "equal to 3 decimal places, not beyond"),
        ([(2.0004,)], [(2.0006,)], "equal to 2 decimal places, not beyond"),
        ([(1e9,)], [(1e9 + 1,)], "equal to 9 significant digits, not beyond"),
    ],
)
def test_rounding_names_the_precision_the_results_agree_to(gold, pred, detail) -> None:
    cause = mismatch_cause(QueryResult.from_rows(["x"], gold), QueryResult.from_rows(["x"], pred))
    assert cause is not None and cause.detail == detail


def test_a_difference_no_single_cause_explains_gets_none() -> None:
    gold = QueryResult.from_rows(["a", "b"], [(1, "x"), (2, "y")])
    pred = QueryResult.from_rows(["a", "b"], [(7, "p"), (8, "q"), (9, "r")])
    assert mismatch_cause(gold, pred) is None


def test_the_missing_column_is_named() -> None:
    gold = QueryResult.from_rows(["person_id", "n"], [(1, 3), (2, 4)])
    pred = QueryResult.from_rows(["person_id"], [(2,), (1,)])
    cause = mismatch_cause(gold, pred)
    assert cause is not None and cause.name == "column_missing" and "'n'" in cause.detail


def test_spaces_are_a_cause_of_their_own() -> None:
    gold = QueryResult.from_rows(["s"], [("Male",)])
    cause = mismatch_cause(gold, QueryResult.from_rows(["s"], [("Male ",)]))
    assert cause is not None and cause.name == "spaces"


def test_results_too_large_get_no_cause() -> None:
    rows = [(i,) for i in range(MAX_CELLS + 1)]
    gold = QueryResult.from_rows(["n"], rows)
    assert mismatch_cause(gold, QueryResult.from_rows(["n"], rows[:-1])) is None
